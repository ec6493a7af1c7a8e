// Per-run claims on a lock: a session holds the lock, each `offhost run` under it holds a claim (id, pid,
// host, command, started, heartbeat). Pure, except the liveness probe of a same-host pid.
import { randomBytes } from 'node:crypto';
import type { Claim, LockRecord } from './lock-types.js';
import { parseUtc } from './schema.js';
import { holderGone, jobConfirmedGone } from './holder-process.js';

export interface ClaimSpec {
  /** Default: a fresh random id. */
  id?: string;
  /** Default: this process. */
  pid?: number;
  /** Default: this host. */
  host?: string;
  command: string;
  /** Default: this process's start time and the host's boot id (./holder-process.ts). */
  start?: string;
  boot?: string;
  /** The run's job on the VM. */
  job?: string;
}

export function newClaimId(): string {
  return `run-${randomBytes(5).toString('hex')}`;
}

/**
 * Why a claim is dead, or null when it may still be running: on this host its process is gone (and its
 * job on the VM, when it names one, was confirmed gone: holder-process.ts); on another host (which
 * offhost cannot probe), or when that job could not be confirmed gone, its last heartbeat is older than
 * the lock's ttl plus the skew margin.
 */
export function deadClaim(c: Claim, rec: LockRecord, now: Date, host: string, skewSeconds: number): string | null {
  const last = (c.heartbeat ?? c.started).getTime();
  const aged = now.getTime() - last > rec.ttlMinutes * 60_000 + skewSeconds * 1000;
  if (c.host === host) {
    const gone = holderGone(c, host);
    if (!gone) return null;
    if (!c.job) return gone;
    const confirmed = jobConfirmedGone(c.id);
    if (confirmed) return `${gone}; ${confirmed}`;
    return aged ? `${gone}, and no heartbeat since ${new Date(last).toISOString()}` : null;
  }
  return aged ? `no heartbeat from ${c.host} since ${new Date(last).toISOString()}` : null;
}

/** The record without its dead claims, and what was removed (for `lock status`). */
export function pruneClaims(rec: LockRecord, now: Date, host: string, skewSeconds: number): { rec: LockRecord; removed: string[] } {
  const removed: string[] = [];
  const claims = rec.claims.filter((c) => {
    const why = deadClaim(c, rec, now, host, skewSeconds);
    if (why) removed.push(`claim ${c.id} (${c.command || 'run'}) on ${c.host}: ${why}`);
    return !why;
  });
  return { rec: removed.length ? { ...rec, claims } : rec, removed };
}

/** The `claims:` list of a frontmatter (entries that are not well-formed claims are left out). */
export function parseClaims(raw: unknown): Claim[] {
  if (!Array.isArray(raw)) return [];
  const out: Claim[] = [];
  for (const c of raw) {
    if (!c || typeof c !== 'object') continue;
    const o = c as Record<string, unknown>;
    const started = typeof o.started === 'string' ? parseUtc(o.started) : null;
    if (typeof o.id !== 'string' || typeof o.pid !== 'number' || typeof o.host !== 'string' || !started) continue;
    const claim: Claim = { id: o.id, pid: o.pid, host: o.host, command: typeof o.command === 'string' ? o.command : '', started };
    const hb = typeof o.heartbeat === 'string' ? parseUtc(o.heartbeat) : null;
    if (hb) claim.heartbeat = hb;
    for (const k of ['start', 'boot', 'job'] as const) if (typeof o[k] === 'string' || typeof o[k] === 'number') claim[k] = String(o[k]);
    out.push(claim);
  }
  return out;
}

