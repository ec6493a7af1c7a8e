// The R4 protocol (acquire / heartbeat / release / status / gc) as short decisions on the store's one
// transaction (store.ts). Each decision reads the lock ref's snapshot and returns a result and the file
// changes that make it true; the store commits them atomically or re-runs the decision on a newer tip.
import { hostname } from 'node:os';
import { LockError } from '../errors.js';
import { deadClaim, newClaimId, pruneClaims, type ClaimSpec } from './claims.js';
import { endedRunsIn, holderIdentity, type EndedRun } from './holder-process.js';
import { DEFAULT_SKEW_SECONDS } from './expiry.js';
import { holderOf, LockLostError, type Holder } from './holder.js';
import { legacyHolder, legacyLocks } from './legacy.js';
import { archiveLockPath, componentArchivePath } from './paths.js';
import { lockPathOf, parseRecord, renderRecord, stateOf, targetName, toSecond, type Claim, type LockRecord, type LockTarget } from './record.js';
import { DEFAULT_TTL_MINUTES, formatUtc, MAX_TTL_MINUTES, vmIdProblem } from './schema.js';
import { firstSighting } from './sightings.js';
import { takeoverDecision, type Takeover } from './takeover.js';
import { heartbeatIntervalMs } from './schedule.js';
import { LOCK_REF, type Committed, type LockStore, type Snapshot } from './store.js';
import { viewConflict } from './view.js';

export type { Holder, LockTarget };
export { LockLostError };

export interface TargetArg {
  /** A canonical VM id; or `component` for a component lock (POLICY R7). */
  vm?: string;
  component?: string;
}

export interface AcquireArgs extends TargetArg {
  session: string;
  ai: string;
  reason: string;
  ttlMinutes?: number;
  /** Present: a run's claim on the lock (released with it); absent: an explicit hold (`offhost lock acquire`). */
  claim?: ClaimSpec;
  body?: string;
}

type AcquireOutcome =
    | { status: 'acquired'; target: string; file: string; archived: string | null; claim: string | null }
    | { status: 'mine'; target: string; file: string; claim: string | null }
    | { status: 'held'; target: string; holder: Holder }
    /** This session holds it, but a live claim (another run) is on it: a claim never rides along. */
    | { status: 'busy'; target: string; holder: Holder; claims: Claim[] };
export type AcquireResult = Committed & AcquireOutcome;

export type HeartbeatResult = Committed & { status: 'beat'; target: string; file: string; heartbeat: Date; expiresAt: Date };

type ReleaseOutcome =
    | { status: 'released'; target: string; file: string; archive: string }
    | { status: 'kept'; target: string; file: string; why: 'explicit' | 'claims' }
    | { status: 'absent'; target: string; file: string }
    | { status: 'held'; target: string; holder: Holder }
    | { status: 'busy'; target: string; holder: Holder; claims: Claim[] }
    | { status: 'order'; target: string; vmLocks: Holder[] };
export type ReleaseResult = Committed & ReleaseOutcome;

export function targetOf(a: TargetArg): LockTarget {
  if (a.component !== undefined) return { kind: 'component', slug: a.component };
  if (a.vm === undefined) throw new LockError('no VM given');
  const p = vmIdProblem(a.vm);
  if (p) throw new LockError(`'${a.vm}' ${p}`);
  return { kind: 'vm', vm: a.vm };
}

const skewOf = (s: LockStore) => s.opts.skewSeconds ?? DEFAULT_SKEW_SECONDS;

/** The record at `path` in the snapshot, or null. */
function recordAt(s: LockStore, snap: Snapshot, t: LockTarget, path: string): LockRecord | null {
  const data = snap.files.get(path);
  return data === undefined ? null : parseRecord(data, t, path, `${LOCK_REF}:${path}`);
}

async function archivePath(s: LockStore, snap: Snapshot, t: LockTarget, now: Date, kind: 'released' | 'expired'): Promise<string> {
  const pathFor = (taken: (p: string) => boolean) => (t.kind === 'vm' ? archiveLockPath(t.vm, now, kind, taken, s.nd) : componentArchivePath(t.slug, now, kind, taken, s.nd));
  // Only the names this archive may take (its first, `-0002`, ...: the same stem) are looked up, so a release
  // costs the same after thousands of archived locks as after ten.
  const names = await snap.archiveNamesLike(pathFor(() => false).replace(/\.md$/, ''));
  return pathFor((p) => names.has(p));
}

function note(kind: 'released' | 'expired', s: LockStore, who: string, now: Date, how: string, why?: string): string {
  const by = `session ${who} on ${hostname()}`;
  return kind === 'expired'
    ? `\n## Archived as expired\n\nArchived ${formatUtc(now)} by ${by} with \`${how}\`: ${why ?? 'expired'}. Treated as orphaned (POLICY R4).\n`
    : `\n## Released\n\nReleased ${formatUtc(now)} by ${by} with \`${how}\`.\n`;
}

function archived(rec: LockRecord, extra: string): string {
  const text = renderRecord({ ...rec, claims: [] });
  return `${text.endsWith('\n') ? text : `${text}\n`}${extra}`;
}

/** The lock files of the snapshot that name a target and parse (gc and the ended-runs sweep pass the rest by). */
function* readableLocks(s: LockStore, snap: Snapshot): Generator<{ p: string; t: LockTarget; rec: LockRecord }> {
  for (const [p] of snap.files) {
    const t = targetFromPath(s, p);
    if (!t) continue;
    let rec: LockRecord;
    try {
      rec = recordAt(s, snap, t, p)!;
    } catch {
      continue;
    }
    yield { p, t, rec };
  }
}

function dropDead(s: LockStore, rec: LockRecord, now: Date): LockRecord {
  return dropDeadEnded(s, rec, now).rec;
}

/**
 * dropDead, and why the lock itself has ended: it was held only by runs' claims (not `offhost lock
 * acquire`) and the last of them is dead (its process gone: holder-process.ts). Such a lock frees the VM
 * at once, archived with the reason, instead of holding it for the rest of its ttl.
 */
function dropDeadEnded(s: LockStore, rec: LockRecord, now: Date): { rec: LockRecord; ended: string | null } {
  const { rec: kept, removed } = pruneClaims(rec, now, hostname(), skewOf(s));
  for (const r of removed) s.note(`removed dead ${r}`);
  const ended = !kept.explicit && rec.claims.length > 0 && kept.claims.length === 0 ? `the run holding it has ended without releasing it: ${removed.join('; ')}` : null;
  return { rec: kept, ended };
}

/**
 * May another session's lock at `path` be taken over now (takeover.ts)? Records this machine's first
 * sighting of its version when it is not live, so that the wait for another host's lock counts from then.
 */
export function mayTakeOver(s: LockStore, snap: Snapshot, path: string, rec: LockRecord, h: Holder): Takeover {
  let seenForMs = 0;
  const version = snap.versions.get(path);
  if (h.state !== 'live' && version && s.opts.sightingsDir) {
    // Only a lock that is not live needs watching: a live one changes or expires first.
    seenForMs = firstSighting(s.opts.sightingsDir, s.opts.hub?.identity ?? s.repo.commonDir, path, version, s.monotonic).agoMs;
  }
  let gone: string | null = null;
  try {
    gone = s.opts.holderGone?.(rec, path) ?? null;
  } catch {
    gone = null; // a liveness probe that fails proves nothing
  }
  return takeoverDecision({ state: h.state, why: h.why, ttlMinutes: rec.ttlMinutes, skewSeconds: skewOf(s), lockHost: rec.host, thisHost: hostname(), gone, seenForMs });
}

/** Acquire a VM or component lock, or add a run's claim to the session's lock. */
export async function acquire(s: LockStore, a: AcquireArgs): Promise<AcquireResult> {
  const t = targetOf(a);
  const path = lockPathOf(t, s.nd);
  const name = targetName(t);
  const ttl = a.ttlMinutes ?? DEFAULT_TTL_MINUTES;
  if (!Number.isInteger(ttl) || ttl <= 0 || ttl > MAX_TTL_MINUTES) throw new LockError(`ttl_minutes must be a whole number of minutes from 1 to ${MAX_TTL_MINUTES} (24 h), not ${ttl}`);
  if (!a.reason.trim()) throw new LockError('a lock needs a reason: one sentence saying which test or operation, and the ticket');
  const conflict = await viewConflict(s.repo, path);
  if (conflict) throw new LockError(conflict.why, conflict.path);
  const claimId = a.claim ? (a.claim.id ?? newClaimId()) : null;
  return s.transact<AcquireOutcome>(async (snap) => {
    const now = toSecond(s.clock.now());
    const claim: Claim[] = a.claim ? [newClaim(a.claim, claimId!, now)] : [];
    const base = { target: name, session: a.session };
    const fresh: LockRecord = {
      target: t,
      session: a.session,
      ai: a.ai,
      started: now,
      ttlMinutes: ttl,
      reason: a.reason,
      body: a.body ?? (a.claim ? `Acquired by \`offhost run\` on ${hostname()} for: ${a.claim.command}\n` : `Acquired with \`offhost lock acquire\` on ${hostname()}.\n`),
      explicit: !a.claim,
      claims: claim,
      host: hostname(),
    };
    let cur = recordAt(s, snap, t, path);
    if (!cur) {
      const legacy = await legacyHolder(s, snap, t, now);
      if (legacy && legacy.session !== a.session && legacy.state !== 'expired') return { result: { status: 'held', target: name, holder: legacy } };
      return { result: { status: 'acquired', target: name, file: path, archived: null, claim: claimId }, changes: new Map([[path, renderRecord(fresh)]]), action: 'lock', ...base };
    }
    const dropped = dropDeadEnded(s, cur, now);
    cur = dropped.rec;
    const holder = holderOf(cur, path, now, s.mode === 'remote' ? 'remote' : 'ref', skewOf(s));
    // Another session's lock whose runs have all ended (holder-process.ts) is free now (archived with why);
    // this session's own simply loses the dead claim and gets the new one.
    if (dropped.ended && cur.session !== a.session) {
      holder.state = 'expired';
      holder.why = dropped.ended;
    }
    if (holder.state === 'future' && cur.session === a.session) {
      throw new LockError(`${holder.why}; this session's lock cannot be renewed while the clock disagrees by more than the skew margin; nothing was changed`, path);
    }
    if (holder.state === 'expired' || cur.session !== a.session) {
      let why = holder.why;
      if (cur.session !== a.session && !dropped.ended) {
        const d = mayTakeOver(s, snap, path, cur, holder);
        if (!d.take) return { result: { status: 'held', target: name, holder: { ...holder, why: d.why } } };
        why = d.why;
      }
      const arch = await archivePath(s, snap, t, now, 'expired');
      s.log(`archived the expired lock of session ${cur.session} as ${arch} (${why})`);
      const changes = new Map<string, string | null>([
        [arch, archived(cur, note('expired', s, `${a.session} (${a.ai})`, now, a.claim ? 'offhost run' : 'offhost lock acquire', why))],
        [path, renderRecord(fresh)],
      ]);
      return { result: { status: 'acquired', target: name, file: path, archived: arch, claim: claimId }, changes, action: 'lock', ...base };
    }
    if (a.claim && cur.claims.length) return { result: { status: 'busy', target: name, holder, claims: cur.claims } };
    const next: LockRecord = { ...cur, heartbeat: now, explicit: cur.explicit || !a.claim, claims: [...cur.claims, ...claim] };
    return { result: { status: 'mine', target: name, file: path, claim: claimId }, changes: new Map([[path, renderRecord(next)]]), action: a.claim ? 'claim' : 'refresh', ...base };
  });
}

/**
 * The least time between two written heartbeats of one lock: a tenth of the ttl's heartbeat interval
 * (R4.3's intervals are ttl/4 here), at least 1 s (timestamps are to the second), at most 60 s.
 */
export function heartbeatSpacingMs(ttlMinutes: number): number {
  return Math.min(60_000, Math.max(1000, Math.floor(heartbeatIntervalMs(ttlMinutes) / 10)));
}

/** The heartbeat of the last successful renewal per lock (and claim), for "could not renew in time". */
const renewedUntil = new Map<string, number>();

/** Refresh the lock (and the claim's) heartbeat. Throws LockLostError when the lock is no longer ours. */
export async function heartbeat(s: LockStore, a: TargetArg & { session: string; claim?: string }): Promise<HeartbeatResult> {
  const t = targetOf(a);
  const path = lockPathOf(t, s.nd);
  const name = targetName(t);
  const key = `${s.repo.commonDir}\0${path}\0${a.session}\0${a.claim ?? ''}`;
  const lost = (msg: string, reason: LockLostError['reason'], h?: Holder) => new LockLostError(`${name}: ${msg}`, reason, name, h);
  try {
    const r = await s.transact(async (snap) => {
      const now = toSecond(s.clock.now());
      let cur = recordAt(s, snap, t, path);
      if (!cur) throw lost(`the lock is gone from ${LOCK_REF} (released or archived)`, 'absent');
      const h = holderOf(cur, path, now, s.mode === 'remote' ? 'remote' : 'ref', skewOf(s));
      if (cur.session !== a.session) throw lost(`the lock was taken over by session ${cur.session}`, 'taken', h);
      if (h.state === 'expired') throw lost(`the lock expired before it was renewed (${h.why})`, 'expired', h);
      const last = cur.heartbeat ?? cur.started;
      if (last.getTime() - now.getTime() > skewOf(s) * 1000) throw lost(`the clock is ${Math.round((last.getTime() - now.getTime()) / 1000)} s behind the lock's last heartbeat, more than the ${skewOf(s)} s skew margin`, 'clock', h);
      const before = cur;
      cur = dropDead(s, cur, now);
      const pruned = cur !== before;
      const beat = new Date(Math.max(now.getTime(), last.getTime()));
      let claims = cur.claims;
      if (a.claim) {
        if (!claims.some((c) => c.id === a.claim)) throw lost(`the run's claim ${a.claim} is no longer on the lock`, 'claim-gone', h);
        claims = claims.map((c) => (c.id === a.claim ? { ...c, heartbeat: beat } : c));
      }
      const next: LockRecord = { ...cur, heartbeat: beat, claims };
      // A heartbeat soon after the last one is not written: each lock's heartbeats commit at most once per
      // spacing, so a process beating in a tight loop cannot win every compare-and-swap of the ref and
      // starve the other writers. Skipping loses nothing: the lock still expires a whole ttl after the last one.
      const spacing = heartbeatSpacingMs(cur.ttlMinutes);
      const recent = (d: Date | undefined) => d !== undefined && now.getTime() - d.getTime() < spacing;
      const claimBeat = a.claim ? cur.claims.find((c) => c.id === a.claim)?.heartbeat : undefined;
      if (!pruned && recent(cur.heartbeat) && (!a.claim || recent(claimBeat))) {
        const at = cur.heartbeat!;
        return { result: { status: 'beat' as const, target: name, file: path, heartbeat: at, expiresAt: new Date(at.getTime() + cur.ttlMinutes * 60_000) } };
      }
      const expiresAt = new Date(beat.getTime() + cur.ttlMinutes * 60_000);
      return { result: { status: 'beat' as const, target: name, file: path, heartbeat: beat, expiresAt }, changes: new Map([[path, renderRecord(next)]]), action: 'heartbeat', target: name, session: a.session };
    });
    renewedUntil.set(key, r.expiresAt.getTime());
    return r;
  } catch (err) {
    if (err instanceof LockLostError) throw err;
    const until = renewedUntil.get(key);
    if (until !== undefined && s.clock.now().getTime() > until) {
      throw lost(`the lock could not be renewed before it expired at ${formatUtc(new Date(until))} (${(err as Error).message})`, 'not-renewed');
    }
    throw err;
  }
}

/** Release the session's hold, or a run's claim (then archived only when no claim and no explicit hold remain). */
export async function release(s: LockStore, a: TargetArg & { session: string; ai?: string; claim?: string; record?: string }): Promise<ReleaseResult> {
  const t = targetOf(a);
  const path = lockPathOf(t, s.nd);
  const name = targetName(t);
  const conflict = a.claim ? null : await viewConflict(s.repo, path);
  if (conflict) throw new LockError(conflict.why, conflict.path);
  return s.transact<ReleaseOutcome>(async (snap) => {
    const now = toSecond(s.clock.now());
    let cur = recordAt(s, snap, t, path);
    if (!cur) return { result: { status: 'absent', target: name, file: path } };
    cur = dropDead(s, cur, now);
    const holder = holderOf(cur, path, now, s.mode === 'remote' ? 'remote' : 'ref', skewOf(s));
    const base = { target: name, session: a.session };
    const how = a.claim ? 'offhost run' : 'offhost lock release';
    if (cur.session !== a.session) {
      const d = mayTakeOver(s, snap, path, cur, holder);
      if (!d.take) return { result: { status: 'held', target: name, holder: { ...holder, why: d.why } } };
      const arch = await archivePath(s, snap, t, now, 'expired');
      const changes = new Map<string, string | null>([[path, null], [arch, archived(cur, note('expired', s, a.ai ? `${a.session} (${a.ai})` : a.session, now, how, d.why))]]);
      return { result: { status: 'released', target: name, file: path, archive: arch }, changes, action: 'archive expired', ...base };
    }
    if (t.kind === 'component') {
      const vmLocks = sessionVmLocks(s, snap, a.session, now);
      if (vmLocks.length) return { result: { status: 'order', target: name, vmLocks } };
    }
    const record = a.record ? `\n${a.record.endsWith('\n') ? a.record : `${a.record}\n`}` : '';
    const claims = a.claim ? cur.claims.filter((c) => c.id !== a.claim) : cur.claims;
    if (a.claim ? claims.length > 0 || cur.explicit : claims.length > 0) {
      if (!a.claim) return { result: { status: 'busy', target: name, holder, claims } };
      const next: LockRecord = { ...cur, claims, body: `${cur.body}${record}` };
      const changes = new Map([[path, renderRecord(next)]]);
      return { result: { status: 'kept', target: name, file: path, why: cur.explicit ? 'explicit' : 'claims' }, changes, action: 'unclaim', ...base };
    }
    const arch = await archivePath(s, snap, t, now, 'released');
    const changes = new Map<string, string | null>([[path, null], [arch, `${archived(cur, note('released', s, a.ai ? `${a.session} (${a.ai})` : a.session, now, how))}${record}`]]);
    return { result: { status: 'released', target: name, file: path, archive: arch }, changes, action: 'release', ...base };
  });
}

/** Live VM locks of `session` in a snapshot (R7 order). */
function sessionVmLocks(s: LockStore, snap: Snapshot, session: string, now: Date): Holder[] {
  const out: Holder[] = [];
  for (const [p, data] of snap.files) {
    const m = /\/lock-(.+)\.md$/.exec(p);
    if (!m || !p.startsWith(`${s.dirs.active}/`)) continue;
    try {
      const rec = parseRecord(data, { kind: 'vm', vm: m[1]! }, p, p);
      const h = holderOf(rec, p, now, 'ref', skewOf(s));
      if (rec.session === session && h.state !== 'expired') out.push(h);
    } catch {
      /* an unreadable lock is not this session's to judge here */
    }
  }
  return out;
}

export interface StatusEntry {
  file: string;
  holder: Holder | null;
  error?: string;
  /** Dead claims on it (removed by the next change of this lock). */
  deadClaims?: string[];
  /** For an expired or future lock: whether this machine may take it over now, or why not yet. */
  takeover?: string;
}

export interface StoreStatus {
  tip: string | null;
  locks: StatusEntry[];
  /** Locks committed by hand to the checked-out branch that the ref does not supersede. */
  branch: StatusEntry[];
  /** What was found and repaired (crash leftovers, dead claims) and view problems. */
  recovered: string[];
  view: { path: string; why: string }[];
  sharing: Sharing;
}

function targetFromPath(s: LockStore, p: string): LockTarget | null {
  const m = /\/lock-(.+)\.md$/.exec(p);
  if (!m) return null;
  return p.startsWith(`${s.dirs.active}/`) ? { kind: 'vm', vm: m[1]! } : { kind: 'component', slug: m[1]! };
}

export async function status(s: LockStore): Promise<StoreStatus> {
  const r = await s.transact(async (snap) => {
    const now = s.clock.now();
    const locks: StatusEntry[] = [];
    for (const p of [...snap.files.keys()].sort((x, y) => Number(x.startsWith(`${s.dirs.components}/`)) - Number(y.startsWith(`${s.dirs.components}/`)) || (x < y ? -1 : 1))) {
      const t = targetFromPath(s, p);
      if (!t) continue;
      try {
        const rec = recordAt(s, snap, t, p)!;
        const dead = rec.claims.map((c) => deadClaim(c, rec, now, hostname(), skewOf(s)) && `claim ${c.id} (${c.command}): ${deadClaim(c, rec, now, hostname(), skewOf(s))}`).filter((x): x is string => Boolean(x));
        const h = holderOf(rec, p, now, s.mode === 'remote' ? 'remote' : 'ref', skewOf(s));
        const take = h.state === 'live' ? null : mayTakeOver(s, snap, p, rec, h);
        locks.push({ file: p, holder: h, ...(dead.length ? { deadClaims: dead } : {}), ...(take ? { takeover: take.take ? 'may be taken over now' : take.why } : {}) });
      } catch (err) {
        locks.push({ file: p, holder: null, error: (err as Error).message });
      }
    }
    const branch: StatusEntry[] = [];
    for (const l of await legacyLocks(s, snap, now)) branch.push(l.holder ? { file: l.file, holder: l.holder } : { file: l.file, holder: null, error: l.error ?? 'unreadable' });
    return { result: { tip: snap.tip, locks, branch } };
  }, { readOnly: true });
  return { tip: r.tip, locks: r.locks, branch: r.branch, recovered: [...s.recovered], view: s.viewProblems, sharing: sharingOf(s) };
}

/** Which clones and machines see this store's locks (docs/LOCKS.md "Which clones share a lock"). */
export interface Sharing {
  mode: 'remote' | 'user' | 'clone';
  /** The remote, the user store's path, or this clone's git directory. */
  location: string;
  /** One sentence: who sees these locks. */
  covers: string;
  /** Whether every clone that can reach the VMs sees them (false: some clones or machines do not). */
  shared: boolean;
  notes: string[];
}

export function sharingOf(s: LockStore): Sharing {
  const notes = [...s.sharing];
  if (s.mode === 'remote') {
    return { mode: 'remote', location: s.opts.remote!, covers: `shared through the remote ${s.opts.remote}: every clone, on every machine, whose lock commands go through it (each clone switches on its first lock command once this repository's locks are there)`, shared: true, notes };
  }
  if (s.mode === 'user') {
    const remote = s.opts.hub?.shareRemote;
    return {
      mode: 'user',
      location: s.opts.remote!,
      covers:
        `shared by every clone and worktree of this repository on this machine (user store ${s.opts.remote}), not with other machines: ` +
        (remote ? `to share with them, set locks.push: true in offhost.config.yaml or run one lock command with --push (through ${remote})` : 'this clone has no remote to share them through'),
      shared: false,
      notes,
    };
  }
  return {
    mode: 'clone',
    location: s.repo.commonDir,
    covers: `this clone's own (${LOCK_REF} in ${s.repo.commonDir}): the repository has no commit yet, so its other clones cannot be recognised; make the first commit`,
    shared: false,
    notes,
  };
}

export interface GcResult extends Committed {
  archived: { file: string; archive: string; session: string; why: string }[];
  /** Expired (or future) locks of other hosts not yet seen unchanged long enough here to be archived. */
  waiting: { file: string; session: string; why: string }[];
  migrated: string[];
}

/** Archive every expired lock, drop dead claims, and migrate live locks committed by hand to the branch. */
export async function gc(s: LockStore, a: { session: string }): Promise<GcResult> {
  return s.transact(async (snap) => {
    const now = toSecond(s.clock.now());
    const changes = new Map<string, string | null>();
    const done: GcResult['archived'] = [];
    const waiting: GcResult['waiting'] = [];
    const migrated: string[] = [];
    const names = await snap.archiveNames();
    const taken = (p: string) => names.has(p) || changes.has(p);
    const archiveOf = (t: LockTarget) => (t.kind === 'vm' ? archiveLockPath(t.vm, now, 'expired', taken, s.nd) : componentArchivePath(t.slug, now, 'expired', taken, s.nd));
    for (const { p, t, rec } of readableLocks(s, snap)) {
      const dropped = dropDeadEnded(s, rec, now);
      const st = stateOf(rec, now, skewOf(s));
      const h = holderOf(rec, p, now, 'ref', skewOf(s));
      const d = dropped.ended ? { take: true as const, why: dropped.ended } : st.state === 'live' ? null : mayTakeOver(s, snap, p, rec, h);
      if (d?.take) {
        const arch = archiveOf(t);
        const future = st.state === 'future' ? ` Its timestamps were in the future beyond the ${skewOf(s)} s skew margin (a wrong clock): archived by this machine's own observation, not by them.` : '';
        changes.set(p, null);
        changes.set(arch, archived(rec, `${note('expired', s, a.session, now, 'offhost lock gc', d.why)}${future ? `${future}\n` : ''}`));
        done.push({ file: p, archive: arch, session: rec.session, why: d.why });
      } else if (d) {
        waiting.push({ file: p, session: rec.session, why: d.why });
      } else if (dropped.rec !== rec) changes.set(p, renderRecord(dropped.rec));
    }
    for (const l of await legacyLocks(s, snap, now)) {
      if (!l.holder || !l.text || snap.files.has(l.path)) continue;
      if (l.holder.state === 'expired') {
        const t = targetFromPath(s, l.path)!;
        const arch = archiveOf(t);
        changes.set(arch, `${l.text.endsWith('\n') ? l.text : `${l.text}\n`}${note('expired', s, a.session, now, 'offhost lock gc', l.holder.why)}`);
        done.push({ file: l.file, archive: arch, session: l.holder.session, why: l.holder.why });
      } else {
        changes.set(l.path, l.text);
        migrated.push(l.file);
      }
    }
    return { result: { archived: done, migrated, waiting }, changes, action: 'gc', target: `${done.length + migrated.length} lock(s)`, session: a.session };
  });
}

/** A claim as the store keeps it: the spec's fields, this process and host by default, with what proves its process gone. */
function newClaim(c: ClaimSpec, id: string, now: Date): Claim {
  const pid = c.pid ?? process.pid;
  const ident = c.start !== undefined || c.boot !== undefined ? { ...(c.start ? { start: c.start } : {}), ...(c.boot ? { boot: c.boot } : {}) } : (c.host ?? hostname()) === hostname() ? holderIdentity(pid) : {};
  return { id, pid, host: c.host ?? hostname(), command: c.command, started: now, ...ident, ...(c.job ? { job: c.job } : {}) };
}

/**
 * Frees what runs that ended left held (their process gone, their remote job confirmed gone:
 * holder-process.ts): drops their claims, and archives, with the reason, each lock only they held. The
 * step every offhost command on this host takes when it opens the store (src/run/lock-context.ts).
 */
export async function endRuns(s: LockStore, a: { session: string }): Promise<Committed & { archived: { file: string; archive: string; session: string; why: string }[] }> {
  return s.transact(async (snap) => {
    const now = toSecond(s.clock.now());
    const changes = new Map<string, string | null>();
    const done: { file: string; archive: string; session: string; why: string }[] = [];
    const names = await snap.archiveNames();
    const taken = (p: string) => names.has(p) || changes.has(p);
    for (const { p, t, rec } of readableLocks(s, snap)) {
      const { rec: kept, ended } = dropDeadEnded(s, rec, now);
      if (ended) {
        const arch = t.kind === 'vm' ? archiveLockPath(t.vm, now, 'expired', taken, s.nd) : componentArchivePath(t.slug, now, 'expired', taken, s.nd);
        changes.set(p, null);
        changes.set(arch, archived(rec, note('expired', s, a.session, now, 'offhost (an ended run)', ended)));
        done.push({ file: p, archive: arch, session: rec.session, why: ended });
      } else if (kept !== rec) changes.set(p, renderRecord(kept));
    }
    return { result: { archived: done }, changes, action: 'end runs', target: `${done.length} lock(s)`, session: a.session };
  });
}

/** Same-host claims whose process is gone but whose remote job is not confirmed gone yet (to reap first). */
export async function endedRuns(s: LockStore): Promise<EndedRun[]> {
  const r = await s.transact(async (snap) => {
    const out: EndedRun[] = [];
    for (const [p] of snap.files) {
      const t = targetFromPath(s, p);
      if (!t || t.kind !== 'vm') continue;
      try {
        out.push(...endedRunsIn(t.vm, recordAt(s, snap, t, p)!.claims));
      } catch {
        /* unreadable: not ours to judge here */
      }
    }
    return { result: { runs: out } };
    // The sweep every command starts with: the command's own read or write refreshes the view.
  }, { readOnly: true, view: false });
  return r.runs;
}

export interface WaitOptions {
  /** Give up after this long (ms); undefined: wait until free. */
  limitMs?: number;
  /** Poll interval (ms); R4 says 30 s. */
  pollMs: number;
  sleep?: (ms: number) => Promise<void>;
  elapsedNow?: () => number;
  /** Told once when the first wait starts. */
  onWait?: (last: AcquireResult) => void;
}

/** Acquire the first free target of a pool (one this session holds first), polling while all are held. */
export async function acquireFirstFree(s: LockStore, candidates: TargetArg[], a: Omit<AcquireArgs, 'vm' | 'component'>, wait?: WaitOptions): Promise<AcquireResult> {
  if (candidates.length === 0) throw new LockError('no VM to lock');
  const sleep = wait?.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  const elapsed = wait?.elapsedNow ?? Date.now;
  const start = elapsed();
  let told = false;
  for (;;) {
    const st = candidates.length > 1 ? await status(s) : { locks: [] as StatusEntry[] };
    const mine = candidates.filter((c) => st.locks.some((e) => e.holder !== null && e.holder.target === (c.vm ?? c.component) && e.holder.session === a.session && e.holder.state === 'live'));
    let last: AcquireResult | null = null;
    for (const c of [...mine, ...candidates.filter((x) => !mine.includes(x))]) {
      const r = await acquire(s, { ...a, ...c });
      if (r.status !== 'held' && r.status !== 'busy') return r;
      last = r;
    }
    const left = wait ? (wait.limitMs === undefined ? Infinity : wait.limitMs - (elapsed() - start)) : 0;
    if (!wait || left <= 0) return last!;
    if (!told) (wait.onWait?.(last!), (told = true));
    await sleep(Math.min(wait.pollMs, left));
  }
}
