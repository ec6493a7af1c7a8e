// How lock holders and lock status read to people and to JSON readers (`offhost lock`, `offhost run`).
import type { Holder } from '../locks/holder.js';
import { formatUtc } from '../locks/schema.js';
import { formatDuration } from './duration.js';

/** A lock's ages and deadlines, written the one way every message writes a duration (`59m 8s`, `2h`). */
export function humanDuration(ms: number): string {
  return `${ms < 0 ? '-' : ''}${formatDuration(ms)}`;
}

const WHERE = { ref: '', remote: ' (on the shared remote)', branch: ' (committed by hand to the checked-out branch)' } as const;

/** "VM X is held by session S (claude) since T (2h ago) for: ...; expires in 40m (at T). Lock file: F". */
export function describeHolder(h: Holder, now: Date): string {
  const since = `${formatUtc(h.started)} (${humanDuration(now.getTime() - h.started.getTime())} ago)`;
  const beat = h.heartbeat ? `, last heartbeat ${formatUtc(h.heartbeat)}` : '';
  const left = h.expiresAt.getTime() - now.getTime();
  const exp =
    h.state === 'expired'
      ? `expired ${humanDuration(-left)} ago (${h.why})`
      : h.state === 'future'
        ? `its timestamps are in the future (${h.why}); not taken over`
        : `expires in ${humanDuration(left)} (at ${formatUtc(h.expiresAt)}) unless refreshed`;
  const runs = h.claims.length ? `; ${h.claims.length === 1 ? 'a run holds it' : `${h.claims.length} runs hold it`}: ${h.claims.map((c) => `${c.id} (pid ${c.pid} on ${c.host}: ${c.command})`).join(', ')}` : '';
  return `${h.kind === 'vm' ? 'VM' : 'component'} ${h.target} is held by session ${h.session} (${h.ai}) since ${since}${beat}, for: ${h.reason.trim().replace(/\s+/g, ' ')}; ${exp}${runs}. Lock file: ${h.file}${WHERE[h.where]}`;
}

export function holderJson(h: Holder, now: Date, session: string | undefined) {
  return {
    file: h.file,
    kind: h.kind,
    target: h.target,
    session: h.session,
    ai: h.ai,
    started: formatUtc(h.started),
    heartbeat: h.heartbeat ? formatUtc(h.heartbeat) : null,
    ttl_minutes: h.ttlMinutes,
    reason: h.reason.trim(),
    state: h.state,
    why: h.why,
    expires_at: formatUtc(h.expiresAt),
    expires_in_seconds: Math.round((h.expiresAt.getTime() - now.getTime()) / 1000),
    mine: session !== undefined && h.session === session,
    explicit: h.explicit,
    where: h.where,
    claims: h.claims.map((c) => ({ id: c.id, pid: c.pid, host: c.host, command: c.command, started: formatUtc(c.started), heartbeat: c.heartbeat ? formatUtc(c.heartbeat) : null })),
  };
}

/** One status line pair per lock (`offhost lock status`). */
export function statusLines(h: Holder, now: Date, me: string | undefined): string {
  const left = h.expiresAt.getTime() - now.getTime();
  const when = h.state === 'expired' ? `EXPIRED ${humanDuration(-left)} ago` : h.state === 'future' ? 'timestamps in the future' : `expires in ${humanDuration(left)}`;
  const mine = me !== undefined && h.session === me ? ' (you)' : '';
  const runs = h.claims.length ? `  runs: ${h.claims.map((c) => `${c.id} pid ${c.pid}@${c.host}`).join(', ')}` : '';
  return (
    `${h.kind === 'vm' ? 'vm       ' : 'component'} ${h.target}  ${h.session}${mine} (${h.ai}) since ${formatUtc(h.started)}  ${when}${h.where === 'branch' ? '  [committed to the branch]' : ''}${runs}\n` +
    `          ${h.reason.trim().replace(/\s+/g, ' ')}\n`
  );
}
