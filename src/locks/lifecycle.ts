// The R4 protocol (acquire / heartbeat / release / status / gc) as functions over a repository, a clock
// and a session. The CLI (`offhost lock`, `offhost run`) is a thin door over these.
//
// Concurrency model:
// - in one checkout: every step runs under a per-checkout mutex (store.withMutex) and creates the lock file
//   with an atomic exclusive create (store.createExclusive), so two acquires never both win;
// - across machines (push): the shared remote is the coordinator. The lock change is rebuilt on top of the
//   freshly fetched remote tip in a private index and pushed as a fast-forward (a compare-and-swap). A
//   rejected push means someone moved first: fetch, re-decide; if the VM is now another's, the local lock
//   commit is backed out (HEAD moved back only if it is still our commit, and only our paths' index
//   entries and files restored), else the push is retried on the new tip.
// - every commit holds only its own lock paths (repo.commitPaths); a failed commit rolls the files back.
import { hostname } from 'node:os';
import { join } from 'node:path';
import { readdirSync } from 'node:fs';
import { LockError, UsageError } from '../errors.js';
import type { Clock, Lock } from '../types.js';
import {
  commitOnto,
  commitPaths,
  existsAt,
  fetchTip,
  gitOut,
  moveHeadIfAt,
  pushFastForward,
  pushTarget,
  readAt,
  restoreIndexEntries,
  treeEntries,
  type Repo,
} from '../git/repo.js';
import { parseLockText, readFrontmatterLoose, serializeLock } from './parse.js';
import { lockState } from './expiry.js';
import { activeLockPath, archiveLockPath, componentLockPath, DEFAULT_NOTICES_DIR } from './paths.js';
import { formatUtc, parseUtc, isCanonicalVmId, vmIdProblem, DEFAULT_TTL_MINUTES } from './schema.js';
import { archiveMove, createExclusive, fileExists, readText, removeFile, unarchive, withMutex, writeAtomic } from './store.js';

export type LockTarget = { kind: 'vm'; vm: string } | { kind: 'component'; slug: string };

export interface PushConfig {
  remote?: string;
  branch?: string;
}

export interface LifecycleContext {
  repo: Repo;
  clock: Clock;
  session: string;
  ai: string;
  /** Relative to the repository root; default meta/context/notices. */
  noticesDir?: string;
  /** Push lock changes to the shared remote (compare-and-swap); null/undefined: local only. */
  push?: PushConfig | null;
  skewSeconds?: number;
  /** Progress lines (to stderr in the CLI). */
  log?: (line: string) => void;
  /** Run the repository's commit hooks on lock commits (default false). */
  verifyCommits?: boolean;
}

/** Who holds a lock, for messages and `status --json`. */
export interface Holder extends Pick<Lock, 'session' | 'ai' | 'started' | 'heartbeat' | 'ttlMinutes' | 'reason'> {
  target: string;
  kind: 'vm' | 'component';
  file: string;
  state: 'live' | 'expired' | 'future';
  why: string;
  expiresAt: Date;
}

export type AcquireResult =
  | { status: 'acquired'; target: string; file: string; commit: string; archived: string | null; pushed: boolean }
  | { status: 'mine'; target: string; file: string }
  | { status: 'held'; target: string; holder: Holder; where: 'local' | 'remote' };

export type HeartbeatResult =
  | { status: 'beat'; target: string; file: string; heartbeat: Date; commit: string | null; pushed: boolean }
  | { status: 'held'; target: string; holder: Holder; where: 'local' | 'remote' }
  | { status: 'absent'; target: string; file: string };

export type ReleaseResult =
  | { status: 'released'; target: string; file: string; archive: string; commit: string; pushed: boolean }
  | { status: 'held'; target: string; holder: Holder }
  | { status: 'absent'; target: string; file: string }
  | { status: 'order'; target: string; vmLocks: Holder[] };

// ---------------------------------------------------------------------------------------------------
// Pure helpers

export function targetName(t: LockTarget): string {
  return t.kind === 'vm' ? t.vm : t.slug;
}

export function notices(ctx: { noticesDir?: string }): string {
  return (ctx.noticesDir ?? DEFAULT_NOTICES_DIR).replace(/\/+$/, '');
}

export function lockPathOf(t: LockTarget, noticesDir: string): string {
  return t.kind === 'vm' ? activeLockPath(t.vm, noticesDir) : componentLockPath(t.slug, noticesDir);
}

/** Where a component lock is archived: `<notices>/archive/lock-<slug>-[expired-]<date>[-N].md`. */
export function componentArchivePath(slug: string, date: Date, kind: 'released' | 'expired', exists: (p: string) => boolean, noticesDir: string): string {
  const day = date.toISOString().slice(0, 10);
  const stem = `${noticesDir}/archive/lock-${slug}-${kind === 'expired' ? 'expired-' : ''}${day}`;
  if (!exists(`${stem}.md`)) return `${stem}.md`;
  for (let n = 2; ; n++) if (!exists(`${stem}-${n}.md`)) return `${stem}-${n}.md`;
}

function archivePathOf(t: LockTarget, date: Date, kind: 'released' | 'expired', exists: (p: string) => boolean, noticesDir: string): string {
  return t.kind === 'vm' ? archiveLockPath(t.vm, date, kind, exists, noticesDir) : componentArchivePath(t.slug, date, kind, exists, noticesDir);
}

const SESSION_RE = /^[A-Za-z0-9][A-Za-z0-9._:@+-]*$/;
const AI_RE = /^[a-z][a-z0-9._-]*$/;
const SLUG_RE = /^[a-z0-9][a-z0-9._-]*$/;

export function checkSession(session: string | undefined, ai: string | undefined): { session: string; ai: string } {
  if (!session) {
    throw new UsageError(
      'no session: pass --session <tag> or set OFFHOST_SESSION (e.g. export OFFHOST_SESSION=claude-2026-05-19-rfc019), ' +
        'so the lock names who holds the VM',
    );
  }
  if (!SESSION_RE.test(session)) throw new UsageError(`session '${session}' must be one word (letters, digits, . _ - : @ +), e.g. claude-2026-05-19-rfc019`);
  const a = ai ?? 'human';
  if (!AI_RE.test(a)) throw new UsageError(`ai '${a}' must be a lowercase name: claude, codex, gemini, human or another lowercase word`);
  return { session, ai: a };
}

export function checkTarget(t: LockTarget): void {
  if (t.kind === 'vm') {
    const p = vmIdProblem(t.vm);
    if (p) throw new UsageError(`'${t.vm}' ${p}`);
  } else if (!SLUG_RE.test(t.slug)) {
    throw new UsageError(`component slug '${t.slug}' must be lowercase letters, digits, . _ - (e.g. koda-parser)`);
  }
}

/** The text of a new lock file (R3 frontmatter). */
export function renderLock(fields: {
  target: LockTarget;
  session: string;
  ai: string;
  started: Date;
  reason: string;
  heartbeat?: Date;
  ttlMinutes: number;
  body?: string;
}): string {
  if (fields.target.kind === 'vm') {
    return serializeLock({
      vm: fields.target.vm,
      session: fields.session,
      ai: fields.ai,
      started: fields.started,
      reason: fields.reason,
      heartbeat: fields.heartbeat,
      ttlMinutes: fields.ttlMinutes,
      body: fields.body,
    });
  }
  const reason = fields.reason
    .trim()
    .split(/\r?\n/)
    .map((l) => `  ${l.trimEnd()}`)
    .join('\n');
  const head = `component: ${fields.target.slug}`;
  const lines = [
    '---',
    head,
    `session: ${fields.session}`,
    `ai: ${fields.ai}`,
    `started: ${formatUtc(fields.started)}`,
    'reason: |',
    reason,
  ];
  if (fields.heartbeat) lines.push(`heartbeat: ${formatUtc(fields.heartbeat)}`);
  lines.push(`ttl_minutes: ${fields.ttlMinutes}`, '---');
  const body = fields.body ?? '';
  return `${lines.join('\n')}\n${body}${body && !body.endsWith('\n') ? '\n' : ''}`;
}

/**
 * Sets one top-level frontmatter field (`heartbeat: ...`) in place, keeping every other byte; inserts it
 * before `ttl_minutes:` or the closing `---` when absent.
 */
export function setFrontmatterField(text: string, field: string, value: string): string {
  const m = /^(---[ \t]*\r?\n)([\s\S]*?\r?\n)(---[ \t]*(?:\r?\n|$))/.exec(text);
  if (!m) throw new LockError('the lock file has no frontmatter to update');
  const fm = m[2]!;
  const re = new RegExp(`^${field}:.*$`, 'm');
  let next: string;
  if (re.test(fm)) next = fm.replace(re, `${field}: ${value}`);
  else if (/^ttl_minutes:/m.test(fm)) next = fm.replace(/^ttl_minutes:/m, `${field}: ${value}\nttl_minutes:`);
  else next = `${fm}${field}: ${value}\n`;
  return `${m[1]}${next}${m[3]}${text.slice(m[0].length)}`;
}

/** The heartbeat to write: now, but never before the previous heartbeat or `started`. */
/** `date` without its milliseconds (lock timestamps are written to the second). */
export function toSecond(date: Date): Date {
  return new Date(Math.floor(date.getTime() / 1000) * 1000);
}

export function nextHeartbeat(now: Date, previous: Date | undefined, started: Date): Date {
  let t = now.getTime();
  if (previous && previous.getTime() > t) t = previous.getTime();
  if (started.getTime() > t) t = started.getTime();
  return new Date(t);
}

export function humanDuration(ms: number): string {
  const neg = ms < 0;
  let s = Math.round(Math.abs(ms) / 1000);
  const d = Math.floor(s / 86400);
  s -= d * 86400;
  const h = Math.floor(s / 3600);
  s -= h * 3600;
  const m = Math.floor(s / 60);
  s -= m * 60;
  const parts: string[] = [];
  if (d) parts.push(`${d} d`);
  if (h) parts.push(`${h} h`);
  if (m && !d) parts.push(`${m} min`);
  if (!d && !h && (s || parts.length === 0)) parts.push(`${s} s`);
  return `${neg ? '-' : ''}${parts.join(' ')}`;
}

/** "s.khost1.dev-linux-koda is held by session X (claude) since T (2 h ago) for: ...; expires in 40 min (at T)". */
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
  return `${h.kind === 'vm' ? 'VM' : 'component'} ${h.target} is held by session ${h.session} (${h.ai}) since ${since}${beat}, for: ${h.reason.trim().replace(/\s+/g, ' ')}; ${exp}. Lock file: ${h.file}`;
}

function archiveNote(kind: 'released' | 'expired', ctx: LifecycleContext, now: Date, why?: string): string {
  const who = `session ${ctx.session} (${ctx.ai}) on ${hostname()}`;
  if (kind === 'expired') {
    return `\n## Archived as expired\n\nArchived ${formatUtc(now)} by ${who} with \`offhost lock\`: ${why ?? 'expired'}. Treated as orphaned (POLICY R4).\n`;
  }
  return `\n## Released\n\nReleased ${formatUtc(now)} by ${who} with \`offhost lock release\`.\n`;
}

// ---------------------------------------------------------------------------------------------------
// Reading locks

interface Read {
  text: string;
  holder: Holder;
}

function readHolder(t: LockTarget, file: string, text: string, now: Date, skewSeconds: number | undefined): Holder {
  if (t.kind === 'vm') {
    const { lock, findings } = parseLockText(text, file);
    const errors = findings.filter((f) => f.severity === 'error');
    if (!lock) {
      const first = errors[0];
      throw new LockError(
        `cannot be read as a lock (${first ? `${first.line ? `line ${first.line}: ` : ''}${first.message}` : 'invalid'}); fix or archive it by hand (run \`offhost lint ${file}\`); nothing was changed`,
        file,
      );
    }
    return holderOf(t, file, lock, now, skewSeconds);
  }
  const fm = readFrontmatterLoose(text);
  const session = typeof fm?.session === 'string' ? fm.session : null;
  const started = typeof fm?.started === 'string' ? parseUtc(fm.started) : null;
  if (!fm || !session || !started) {
    throw new LockError('cannot be read as a component lock (needs session and started in a YAML frontmatter); nothing was changed', file);
  }
  const hb = typeof fm.heartbeat === 'string' ? parseUtc(fm.heartbeat) ?? undefined : undefined;
  const ttl = typeof fm.ttl_minutes === 'number' && fm.ttl_minutes > 0 ? fm.ttl_minutes : DEFAULT_TTL_MINUTES;
  const lock: Lock = {
    vm: t.slug,
    session,
    ai: typeof fm.ai === 'string' ? fm.ai : 'unknown',
    started,
    ttlMinutes: ttl,
    reason: typeof fm.reason === 'string' ? fm.reason : '',
    body: '',
    file,
    positions: {},
  };
  if (hb) lock.heartbeat = hb;
  return holderOf(t, file, lock, now, skewSeconds);
}

function holderOf(t: LockTarget, file: string, lock: Lock, now: Date, skewSeconds: number | undefined): Holder {
  const st = lockState(lock, now, skewSeconds === undefined ? undefined : { skewSeconds });
  const h: Holder = {
    target: targetName(t),
    kind: t.kind,
    file,
    session: lock.session,
    ai: lock.ai,
    started: lock.started,
    ttlMinutes: lock.ttlMinutes,
    reason: lock.reason,
    state: st.state,
    why: st.why,
    expiresAt: st.expiresAt,
  };
  if (lock.heartbeat) h.heartbeat = lock.heartbeat;
  return h;
}

function readLocal(ctx: LifecycleContext, t: LockTarget, rel: string, now: Date): Read | null {
  const text = readText(join(ctx.repo.root, rel));
  if (text === null) return null;
  return { text, holder: readHolder(t, rel, text, now, ctx.skewSeconds) };
}

// ---------------------------------------------------------------------------------------------------
// Local file changes with rollback

/** A set of file changes made in the working tree, each undoable. */
class Changes {
  private undo: (() => void)[] = [];
  readonly paths: string[] = [];
  constructor(private readonly root: string) {}
  abs(rel: string): string {
    return join(this.root, rel);
  }
  create(rel: string, content: string): boolean {
    const ok = createExclusive(this.abs(rel), content);
    if (ok) {
      this.paths.push(rel);
      this.undo.push(() => {
        if (readText(this.abs(rel)) === content) removeFile(this.abs(rel));
      });
    }
    return ok;
  }
  archive(from: string, to: string, note: string): string {
    const original = archiveMove(this.abs(from), this.abs(to), note);
    this.paths.push(from, to);
    this.undo.push(() => unarchive(this.abs(from), this.abs(to), original));
    return original;
  }
  rewrite(rel: string, content: string): void {
    const before = readText(this.abs(rel));
    writeAtomic(this.abs(rel), content);
    this.paths.push(rel);
    this.undo.push(() => {
      if (before === null) removeFile(this.abs(rel));
      else writeAtomic(this.abs(rel), before);
    });
  }
  rollback(): void {
    for (const u of this.undo.reverse()) {
      try {
        u();
      } catch {
        /* keep undoing the rest */
      }
    }
    this.undo = [];
  }
  /** The final content of every touched path (null: deleted), for building a remote commit. */
  contents(): Map<string, string | null> {
    const m = new Map<string, string | null>();
    for (const p of new Set(this.paths)) m.set(p, readText(this.abs(p)));
    return m;
  }
}

async function commitChanges(ctx: LifecycleContext, ch: Changes, message: string): Promise<string> {
  try {
    return await commitPaths(ctx.repo, [...new Set(ch.paths)], message, { verify: ctx.verifyCommits ?? false });
  } catch (err) {
    ch.rollback();
    throw err;
  }
}

// ---------------------------------------------------------------------------------------------------
// Remote (push) side

interface RemoteView {
  remote: string;
  branch: string;
  tip: string | null;
}

async function fetchRemote(ctx: LifecycleContext): Promise<RemoteView> {
  const { remote, branch } = await pushTarget(ctx.repo.root, ctx.push?.remote, ctx.push?.branch);
  const tip = await fetchTip(ctx.repo.root, remote, branch);
  return { remote, branch, tip };
}

async function remoteHolder(ctx: LifecycleContext, view: RemoteView, t: LockTarget, rel: string, now: Date): Promise<Read | null> {
  if (!view.tip) return null;
  const text = await readAt(ctx.repo.root, view.tip, rel);
  if (text === null) return null;
  return { text, holder: readHolder(t, rel, text, now, ctx.skewSeconds) };
}

/**
 * Pushes a lock change to the remote as a fast-forward on top of the remote tip, re-deciding on every
 * rejection. `decide(view)` returns the changes to apply on that tip, or a reason to give up.
 */
async function pushLoop(
  ctx: LifecycleContext,
  first: RemoteView,
  message: string,
  decide: (view: RemoteView) => Promise<{ changes: Map<string, string | null> } | { giveUp: Holder | string }>,
): Promise<{ ok: true } | { ok: false; giveUp: Holder | string }> {
  let view = first;
  for (let attempt = 0; attempt < 8; attempt++) {
    if (!view.tip) throw new LockError(`the remote ${view.remote} has no branch ${view.branch} yet: push the branch once, then lock with --push`);
    const d = await decide(view);
    if ('giveUp' in d) return { ok: false, giveUp: d.giveUp };
    const sha = await commitOnto(ctx.repo.root, view.tip, d.changes, message);
    const r = await pushFastForward(ctx.repo.root, view.remote, sha, view.branch);
    if (r === 'ok') return { ok: true };
    ctx.log?.(`push to ${view.remote}/${view.branch} rejected (someone moved first): fetching and re-deciding`);
    await new Promise((res) => setTimeout(res, 20 + Math.random() * 80 * (attempt + 1)));
    view = await fetchRemote(ctx);
  }
  throw new LockError(`the remote ${first.remote}/${first.branch} kept moving: gave up pushing after 8 attempts`);
}

/**
 * Backs out our local lock commit `commit` (paths `paths`): if HEAD is still that commit, move the branch
 * back to its parent and restore our paths' index entries and files to the parent's; otherwise (someone
 * committed after us) commit the parent's state of our paths on top. Never touches other paths.
 */
export async function backOut(ctx: LifecycleContext, commit: string, paths: string[], message: string): Promise<void> {
  const root = ctx.repo.root;
  const p = await gitOut(root, ['rev-parse', `${commit}^`]);
  const restoreFiles = async () => {
    for (const path of paths) {
      const content = await readAt(root, p, path);
      if (content === null) removeFile(join(root, path));
      else writeAtomic(join(root, path), content);
    }
  };
  if (await moveHeadIfAt(root, commit, p, `offhost: back out ${message}`)) {
    await restoreIndexEntries(root, paths, await treeEntries(root, p, paths));
    await restoreFiles();
    return;
  }
  await restoreFiles();
  await commitPaths(ctx.repo, paths, `offhost: back out ${message}`, { verify: false });
}

// ---------------------------------------------------------------------------------------------------
// acquire

export interface AcquireOptions {
  reason: string;
  ttlMinutes?: number;
  body?: string;
}

export async function acquire(ctx: LifecycleContext, t: LockTarget, opts: AcquireOptions): Promise<AcquireResult> {
  checkTarget(t);
  if (!opts.reason.trim()) throw new UsageError('--reason is required: say in one sentence which test or operation, and the ticket');
  const ttl = opts.ttlMinutes ?? DEFAULT_TTL_MINUTES;
  if (!Number.isInteger(ttl) || ttl <= 0) throw new UsageError('--ttl must be a positive whole number of minutes');
  const nd = notices(ctx);
  const rel = lockPathOf(t, nd);
  const name = targetName(t);

  return withMutex(ctx.repo.gitDir, async () => {
    const now = toSecond(ctx.clock.now());
    const local = readLocal(ctx, t, rel, now);
    if (local && local.holder.session === ctx.session) return { status: 'mine', target: name, file: rel };
    if (local && local.holder.state !== 'expired') return { status: 'held', target: name, holder: local.holder, where: 'local' };

    // Across machines: look at the remote first, so a lock already pushed by another is never intruded on.
    let view: RemoteView | null = null;
    if (ctx.push) {
      view = await fetchRemote(ctx);
      const remote = await remoteHolder(ctx, view, t, rel, now);
      if (remote && remote.holder.session !== ctx.session && remote.holder.state !== 'expired') {
        return { status: 'held', target: name, holder: remote.holder, where: 'remote' };
      }
    }

    const ch = new Changes(ctx.repo.root);
    let archived: string | null = null;
    if (local) {
      const exists = (p: string) => fileExists(join(ctx.repo.root, p));
      archived = archivePathOf(t, now, 'expired', exists, nd);
      ch.archive(rel, archived, archiveNote('expired', ctx, now, local.holder.why));
      ctx.log?.(`archived the expired lock of session ${local.holder.session} as ${archived} (${local.holder.why})`);
    }
    const text = renderLock({
      target: t,
      session: ctx.session,
      ai: ctx.ai,
      started: now,
      reason: opts.reason,
      ttlMinutes: ttl,
      body: opts.body ?? `Acquired with \`offhost lock acquire\` on ${hostname()}.\n`,
    });
    if (!ch.create(rel, text)) {
      // Someone outside offhost's mutex created it in between: never overwrite.
      ch.rollback();
      const again = readLocal(ctx, t, rel, now);
      if (again && again.holder.session === ctx.session) return { status: 'mine', target: name, file: rel };
      if (again) return { status: 'held', target: name, holder: again.holder, where: 'local' };
      throw new LockError('the lock file appeared and vanished while acquiring; try again', rel);
    }
    const message = `offhost: lock ${name} for ${ctx.session}`;
    const commit = await commitChanges(ctx, ch, `${message}${archived ? ` (archived expired ${archived})` : ''}`);

    if (!ctx.push || !view) return { status: 'acquired', target: name, file: rel, commit, archived, pushed: false };

    const ourText = text;
    const res = await pushLoop(ctx, view, message, async (v) => {
      const nowR = ctx.clock.now();
      const remote = await remoteHolder(ctx, v, t, rel, nowR);
      const changes = new Map<string, string | null>([[rel, ourText]]);
      if (remote && remote.holder.session !== ctx.session) {
        if (remote.holder.state !== 'expired') return { giveUp: remote.holder };
        // Archive the remote's expired lock too: under the name used here when the remote has no such file,
        // else under a name free both here and there.
        const tip = v.tip!;
        let arch: string;
        if (archived && !(await existsAt(ctx.repo.root, tip, archived))) arch = archived;
        else {
          const taken = new Set<string>();
          const exists = (p: string) => taken.has(p) || fileExists(join(ctx.repo.root, p));
          arch = archivePathOf(t, nowR, 'expired', exists, nd);
          while (await existsAt(ctx.repo.root, tip, arch)) {
            taken.add(arch);
            arch = archivePathOf(t, nowR, 'expired', exists, nd);
          }
        }
        const body = remote.text.endsWith('\n') ? remote.text : `${remote.text}\n`;
        changes.set(arch, `${body}${archiveNote('expired', ctx, nowR, remote.holder.why)}`);
      }
      return { changes };
    });
    if (res.ok) return { status: 'acquired', target: name, file: rel, commit, archived, pushed: true };
    await backOut(ctx, commit, [...new Set(ch.paths)], message);
    const holder = res.giveUp;
    if (typeof holder === 'string') throw new LockError(holder);
    return { status: 'held', target: name, holder, where: 'remote' };
  });
}

export interface WaitOptions {
  /** Give up after this long (ms); undefined: wait until free. */
  limitMs?: number;
  /** Poll interval (ms); R4 says 30 s. */
  pollMs: number;
  sleep?: (ms: number) => Promise<void>;
  /** Wall-clock for the wait limit (defaults to Date.now). */
  elapsedNow?: () => number;
}

/**
 * Acquires the first free target of `candidates` (a pool), polling while all are held when `wait` is
 * given. Returns the last 'held' result when the wait runs out.
 */
export async function acquireFirstFree(
  ctx: LifecycleContext,
  candidates: LockTarget[],
  opts: AcquireOptions,
  wait?: WaitOptions,
): Promise<AcquireResult> {
  if (candidates.length === 0) throw new UsageError('no VM to lock');
  const sleep = wait?.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  const elapsedNow = wait?.elapsedNow ?? Date.now;
  const start = elapsedNow();
  let announced = false;
  for (;;) {
    let last: AcquireResult | null = null;
    // Prefer one this session holds already.
    for (const c of candidates) {
      const rel = lockPathOf(c, notices(ctx));
      const local = readText(join(ctx.repo.root, rel));
      if (local !== null) {
        try {
          const h = readHolder(c, rel, local, ctx.clock.now(), ctx.skewSeconds);
          if (h.session === ctx.session) return { status: 'mine', target: targetName(c), file: rel };
        } catch {
          /* judged below */
        }
      }
    }
    for (const c of candidates) {
      const r = await acquire(ctx, c, opts);
      if (r.status !== 'held') return r;
      last = r;
    }
    if (!wait || !last) return last!;
    const left = wait.limitMs === undefined ? Infinity : wait.limitMs - (elapsedNow() - start);
    if (left <= 0) return last;
    if (!announced && last.status === 'held') {
      ctx.log?.(`${describeHolder(last.holder, ctx.clock.now())}\nwaiting (polling every ${Math.round(wait.pollMs / 1000)} s)...`);
      announced = true;
    }
    await sleep(Math.min(wait.pollMs, left));
  }
}

// ---------------------------------------------------------------------------------------------------
// heartbeat

export async function heartbeat(ctx: LifecycleContext, t: LockTarget): Promise<HeartbeatResult> {
  checkTarget(t);
  const rel = lockPathOf(t, notices(ctx));
  const name = targetName(t);
  return withMutex(ctx.repo.gitDir, async () => {
    const now = ctx.clock.now();
    const local = readLocal(ctx, t, rel, now);
    if (!local) return { status: 'absent', target: name, file: rel };
    if (local.holder.session !== ctx.session) return { status: 'held', target: name, holder: local.holder, where: 'local' };
    let view: RemoteView | null = null;
    if (ctx.push) {
      view = await fetchRemote(ctx);
      const remote = await remoteHolder(ctx, view, t, rel, now);
      if (remote && remote.holder.session !== ctx.session) return { status: 'held', target: name, holder: remote.holder, where: 'remote' };
    }
    const beat = nextHeartbeat(toSecond(now), local.holder.heartbeat, local.holder.started);
    const next = setFrontmatterField(local.text, 'heartbeat', formatUtc(beat));
    if (next === local.text) return { status: 'beat', target: name, file: rel, heartbeat: beat, commit: null, pushed: false };
    const ch = new Changes(ctx.repo.root);
    ch.rewrite(rel, next);
    const message = `offhost: heartbeat ${name} for ${ctx.session}`;
    const commit = await commitChanges(ctx, ch, message);
    let pushed = false;
    if (ctx.push && view) {
      const res = await pushLoop(ctx, view, message, async (v) => {
        const remote = await remoteHolder(ctx, v, t, rel, ctx.clock.now());
        if (remote && remote.holder.session !== ctx.session) return { giveUp: remote.holder };
        return { changes: new Map([[rel, next]]) };
      });
      if (!res.ok) {
        if (typeof res.giveUp === 'string') throw new LockError(res.giveUp);
        return { status: 'held', target: name, holder: res.giveUp, where: 'remote' };
      }
      pushed = true;
    }
    return { status: 'beat', target: name, file: rel, heartbeat: beat, commit, pushed };
  });
}

// ---------------------------------------------------------------------------------------------------
// release

/** Live VM locks of this session in the working tree (for R7). */
export function sessionVmLocks(ctx: LifecycleContext): Holder[] {
  const nd = notices(ctx);
  const dir = join(ctx.repo.root, nd, 'vm-active');
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  const now = ctx.clock.now();
  const out: Holder[] = [];
  for (const n of names.sort()) {
    const m = /^lock-(.+)\.md$/.exec(n);
    if (!m || !isCanonicalVmId(m[1]!)) continue;
    const rel = `${nd}/vm-active/${n}`;
    try {
      const r = readLocal(ctx, { kind: 'vm', vm: m[1]! }, rel, now);
      if (r && r.holder.session === ctx.session && r.holder.state !== 'expired') out.push(r.holder);
    } catch {
      /* unreadable: not ours to judge here */
    }
  }
  return out;
}

export async function release(ctx: LifecycleContext, t: LockTarget): Promise<ReleaseResult> {
  checkTarget(t);
  const nd = notices(ctx);
  const rel = lockPathOf(t, nd);
  const name = targetName(t);
  return withMutex(ctx.repo.gitDir, async () => {
    const now = toSecond(ctx.clock.now());
    const local = readLocal(ctx, t, rel, now);
    if (!local) return { status: 'absent', target: name, file: rel };
    if (local.holder.session !== ctx.session && local.holder.state !== 'expired') return { status: 'held', target: name, holder: local.holder };
    if (t.kind === 'component' && local.holder.session === ctx.session) {
      const vms = sessionVmLocks(ctx);
      if (vms.length) return { status: 'order', target: name, vmLocks: vms };
    }
    const mine = local.holder.session === ctx.session;
    const exists = (p: string) => fileExists(join(ctx.repo.root, p));
    const kind = mine ? 'released' : 'expired';
    const archive = archivePathOf(t, now, kind, exists, nd);
    const ch = new Changes(ctx.repo.root);
    const note = mine ? archiveNote('released', ctx, now) : archiveNote('expired', ctx, now, local.holder.why);
    ch.archive(rel, archive, note);
    const message = `offhost: ${mine ? 'release' : 'archive expired'} ${name} (${ctx.session})`;
    const commit = await commitChanges(ctx, ch, message);
    let pushed = false;
    if (ctx.push) {
      const view = await fetchRemote(ctx);
      const archived = readText(join(ctx.repo.root, archive));
      const res = await pushLoop(ctx, view, message, async (v) => {
        const remote = await remoteHolder(ctx, v, t, rel, ctx.clock.now());
        // Archive the remote's copy only when it is the same hold (same session and start); its content may
        // differ from ours by an unpushed heartbeat, and then the remote's own text is archived.
        if (!remote || remote.holder.session !== local.holder.session || remote.holder.started.getTime() !== local.holder.started.getTime()) {
          return { giveUp: 'the remote has no lock of this hold to archive' };
        }
        let arch = archive;
        const taken = new Set<string>();
        while (await existsAt(ctx.repo.root, v.tip!, arch)) {
          taken.add(arch);
          arch = archivePathOf(t, now, kind, (p) => taken.has(p) || exists(p), nd);
        }
        const content = remote.text === local.text ? archived : `${remote.text.endsWith('\n') ? remote.text : `${remote.text}\n`}${note}`;
        return { changes: new Map<string, string | null>([[rel, null], [arch, content]]) };
      });
      if (res.ok) pushed = true;
      else ctx.log?.(`not pushed: ${typeof res.giveUp === 'string' ? res.giveUp : describeHolder(res.giveUp, now)}`);
    }
    return { status: 'released', target: name, file: rel, archive, commit, pushed };
  });
}

// ---------------------------------------------------------------------------------------------------
// status and gc

export interface StatusEntry {
  file: string;
  holder: Holder | null;
  /** Why the file could not be read, when it could not. */
  error?: string;
}

function activeFiles(ctx: LifecycleContext): { rel: string; target: LockTarget }[] {
  const nd = notices(ctx);
  const out: { rel: string; target: LockTarget }[] = [];
  for (const [sub, kind] of [
    ['vm-active', 'vm'],
    ['active', 'component'],
  ] as const) {
    let names: string[] = [];
    try {
      names = readdirSync(join(ctx.repo.root, nd, sub));
    } catch {
      continue;
    }
    for (const n of names.sort()) {
      const m = /^lock-(.+)\.md$/.exec(n);
      if (!m) continue;
      out.push({ rel: `${nd}/${sub}/${n}`, target: kind === 'vm' ? { kind: 'vm', vm: m[1]! } : { kind: 'component', slug: m[1]! } });
    }
  }
  return out;
}

export function status(ctx: Omit<LifecycleContext, 'session' | 'ai'> & { session?: string; ai?: string }): StatusEntry[] {
  const now = ctx.clock.now();
  const c = ctx as LifecycleContext;
  return activeFiles(c).map(({ rel, target }) => {
    try {
      const r = readLocal(c, target, rel, now);
      return { file: rel, holder: r ? r.holder : null };
    } catch (err) {
      return { file: rel, holder: null, error: (err as Error).message };
    }
  });
}

export interface GcResult {
  archived: { file: string; archive: string; session: string; why: string }[];
  commit: string | null;
  pushed: boolean;
}

export async function gc(ctx: LifecycleContext): Promise<GcResult> {
  const nd = notices(ctx);
  return withMutex(ctx.repo.gitDir, async () => {
    const now = toSecond(ctx.clock.now());
    const ch = new Changes(ctx.repo.root);
    const archived: GcResult['archived'] = [];
    const before = new Map<string, string>();
    for (const { rel, target } of activeFiles(ctx)) {
      let r: Read | null;
      try {
        r = readLocal(ctx, target, rel, now);
      } catch {
        continue;
      }
      if (!r || r.holder.state !== 'expired') continue;
      const exists = (p: string) => fileExists(join(ctx.repo.root, p));
      const archive = archivePathOf(target, now, 'expired', exists, nd);
      ch.archive(rel, archive, archiveNote('expired', ctx, now, r.holder.why));
      before.set(rel, r.text);
      archived.push({ file: rel, archive, session: r.holder.session, why: r.holder.why });
    }
    if (archived.length === 0) return { archived, commit: null, pushed: false };
    const message = `offhost: gc ${archived.length} expired lock${archived.length === 1 ? '' : 's'}`;
    const commit = await commitChanges(ctx, ch, message);
    let pushed = false;
    if (ctx.push) {
      const view = await fetchRemote(ctx);
      const res = await pushLoop(ctx, view, message, async (v) => {
        const changes = new Map<string, string | null>();
        for (const a of archived) {
          const remoteText = v.tip ? await readAt(ctx.repo.root, v.tip, a.file) : null;
          if (remoteText !== before.get(a.file)) continue;
          if (v.tip && (await existsAt(ctx.repo.root, v.tip, a.archive))) continue;
          changes.set(a.file, null);
          changes.set(a.archive, readText(join(ctx.repo.root, a.archive)));
        }
        if (changes.size === 0) return { giveUp: 'nothing to push: the remote has moved on' };
        return { changes };
      });
      pushed = res.ok;
    }
    return { archived, commit, pushed };
  });
}


// ---------------------------------------------------------------------------------------------------
// Heartbeat schedule (for `offhost run`): pure, driven by a Clock and an injected timer.

/**
 * The heartbeat interval for a lock of `ttlMinutes`: a quarter of the ttl (R4 wants intervals under
 * ttl/3), at least 1 s. `overrideMs` (tests, `--heartbeat`) must itself be under ttl/3.
 */
export function heartbeatIntervalMs(ttlMinutes: number, overrideMs?: number): number {
  const third = (ttlMinutes * 60_000) / 3;
  if (overrideMs !== undefined) {
    if (!(overrideMs > 0) || overrideMs >= third) {
      throw new UsageError(`the heartbeat interval must be positive and under ttl_minutes/3 (${Math.round(third / 1000)} s for ttl ${ttlMinutes} min)`);
    }
    return overrideMs;
  }
  return Math.max(1000, Math.floor((ttlMinutes * 60_000) / 4));
}

/** ms until the next heartbeat is due, given the last one (0: due now). */
export function heartbeatDelay(last: Date, now: Date, intervalMs: number): number {
  return Math.max(0, last.getTime() + intervalMs - now.getTime());
}

export interface Timers {
  set(fn: () => void, ms: number): unknown;
  clear(handle: unknown): void;
}

export const realTimers: Timers = {
  set: (fn, ms) => {
    const t = setTimeout(fn, ms);
    t.unref?.();
    return t;
  },
  clear: (h) => clearTimeout(h as NodeJS.Timeout),
};

/**
 * Calls `beat()` every `intervalMs` (measured on `clock`) until stopped; a beat that is still running
 * delays the next one (never two at once). `stop()` resolves once any beat in flight has finished.
 */
export function startHeartbeats(opts: {
  clock: Clock;
  intervalMs: number;
  beat: () => Promise<void>;
  timers?: Timers;
  /** When the last heartbeat (or the acquire) happened; default now. */
  last?: Date;
}): { stop(): Promise<void>; beats(): number } {
  const timers = opts.timers ?? realTimers;
  let last = opts.last ?? opts.clock.now();
  let handle: unknown = null;
  let stopped = false;
  let inflight: Promise<void> | null = null;
  let count = 0;
  const schedule = () => {
    if (stopped) return;
    handle = timers.set(tick, heartbeatDelay(last, opts.clock.now(), opts.intervalMs));
  };
  const tick = () => {
    handle = null;
    if (stopped) return;
    const now = opts.clock.now();
    if (heartbeatDelay(last, now, opts.intervalMs) > 0) return schedule();
    inflight = opts
      .beat()
      .catch(() => undefined)
      .then(() => {
        count++;
        last = opts.clock.now();
        inflight = null;
        schedule();
      });
  };
  schedule();
  return {
    async stop() {
      stopped = true;
      if (handle !== null) timers.clear(handle);
      handle = null;
      if (inflight) await inflight;
    },
    beats: () => count,
  };
}
