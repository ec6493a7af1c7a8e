// What `offhost lock` and `offhost run` share: lock settings from the configuration, the store for the
// repository at hand, the session checks, the `--wait`/`--poll` validator, and (for run.ts) the session-
// bound lock calls with a per-run claim.
import { existsSync, readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join, resolve } from 'node:path';
import { EXIT, UsageError, isOffhostError } from '../errors.js';
import type { Clock } from '../types.js';
import type { Io } from '../io.js';
import { parseNowOption } from '../locks/schema.js';
import { loadConfig } from '../config/load-config.js';
import type { ResolvedConfig } from '../config/resolve.js';
import { isCanonicalVmId, vmIdProblem } from '../locks/schema.js';
import { openLockStore, type LockStore } from '../locks/store.js';
import type { Repo } from '../git/ref-tree.js';
import { freeEndedRuns } from '../locks/end-runs.js';
import * as life from '../locks/lifecycle.js';
import { isLockLost, type Holder } from '../locks/holder.js';
import type { LockTarget } from '../locks/record.js';
import { describeHolder } from '../report/locks.js';

export { describeHolder };
export { heartbeatIntervalMs, startHeartbeats } from '../locks/schedule.js';
export type { LockTarget };

/** What `offhost lock` takes from the configuration. */
export interface LockSettings {
  noticesDir?: string;
  push: boolean;
  remote?: string;
  skewSeconds?: number;
  root?: string;
  pollSeconds?: number;
  pools: Map<string, string[]>;
  /** Lock-ref commit message template ({action} {target} {session}). */
  message?: string;
}

export function settingsFrom(config: ResolvedConfig, env: NodeJS.ProcessEnv): LockSettings {
  const s: LockSettings = {
    noticesDir: config.locks.noticesDir,
    push: config.locks.push,
    skewSeconds: config.locks.skewSeconds,
    pollSeconds: config.locks.pollSeconds,
    pools: new Map([...config.routes].map(([name, r]) => [name, [...r.vms]])),
  };
  if (config.root) s.root = config.root;
  if (config.locks.remote) s.remote = config.locks.remote;
  if (config.locks.commitMessage) s.message = config.locks.commitMessage;
  if (env.OFFHOST_NOTICES_DIR) s.noticesDir = env.OFFHOST_NOTICES_DIR;
  if (env.OFFHOST_LOCK_PUSH !== undefined && env.OFFHOST_LOCK_PUSH !== '') s.push = /^(1|true|yes)$/i.test(env.OFFHOST_LOCK_PUSH);
  if (env.OFFHOST_LOCK_REMOTE) s.remote = env.OFFHOST_LOCK_REMOTE;
  if (env.OFFHOST_LOCK_MESSAGE) s.message = env.OFFHOST_LOCK_MESSAGE;
  return s;
}

export function loadLockSettings(cwd: string, env: NodeJS.ProcessEnv, configFile?: string): LockSettings {
  return settingsFrom(loadConfig(configFile === undefined ? { cwd, env } : { cwd, env, configFile }), env);
}

/** Whether the repository lints commit messages with commitlint (then lock commits are conventional). */
export function usesCommitlint(root: string): boolean {
  const names = ['commitlint.config.js', 'commitlint.config.cjs', 'commitlint.config.mjs', 'commitlint.config.ts', '.commitlintrc', '.commitlintrc.json', '.commitlintrc.yaml', '.commitlintrc.yml', '.commitlintrc.js', '.commitlintrc.cjs'];
  if (names.some((n) => existsSync(join(root, n)))) return true;
  try {
    const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as Record<string, Record<string, unknown> | undefined>;
    return Boolean(pkg.commitlint || pkg.devDependencies?.['@commitlint/cli'] || pkg.dependencies?.['@commitlint/cli']);
  } catch {
    return false;
  }
}

export const CONVENTIONAL_MESSAGE = 'chore(locks): {action} {target} ({session})';

const SESSION_RE = /^[A-Za-z0-9][A-Za-z0-9._:@+-]*$/;
const AI_RE = /^[a-z][a-z0-9._-]*$/;

export function checkSession(session: string | undefined, ai: string | undefined): { session: string; ai: string } {
  if (!session) {
    throw new UsageError(
      'no session: pass --session <tag> or set OFFHOST_SESSION (e.g. export OFFHOST_SESSION=claude-2026-05-19-rfc019), so the lock names who holds the VM',
    );
  }
  if (!SESSION_RE.test(session)) throw new UsageError(`session '${session}' must be one word (letters, digits, . _ - : @ +), e.g. claude-2026-05-19-rfc019`);
  const a = ai ?? 'human';
  if (!AI_RE.test(a)) throw new UsageError(`ai '${a}' must be a lowercase name: claude, codex, gemini, human or another lowercase word`);
  return { session, ai: a };
}

/**
 * `--wait[=SECONDS]` and `--poll SECONDS`, validated once for `lock acquire` and `run`: undefined (no
 * wait), `forever` (the bare flag), or a finite number of seconds >= 0; the poll a number of seconds > 0.
 */
export function parseWait(wait: string | undefined, poll: string | undefined, defaultPollSeconds = 30): { pollMs: number; limitMs?: number } | undefined {
  if (wait === undefined) return undefined;
  const num = (v: string, name: string, min: number) => {
    const n = Number(v);
    if (v.trim() === '' || !Number.isFinite(n) || n < min || (min > 0 && n === 0)) {
      throw new UsageError(`${name} must be a number of seconds${min > 0 ? ' above 0' : ''}, not '${v}'`);
    }
    return n;
  };
  const pollMs = num(poll ?? String(defaultPollSeconds), '--poll', 0.001) * 1000;
  if (wait === 'forever' || wait === 'true') return { pollMs };
  return { pollMs, limitMs: num(wait, '--wait', 0) * 1000 };
}

/** A fixed clock for `--now ISO`, else the Io's clock. */
export function clockFor(now: string | undefined, io: Io): Clock {
  if (now === undefined) return io.clock;
  const d = parseNowOption(now);
  return { now: () => new Date(d.getTime()) };
}

export interface CommonOpts {
  config?: string;
  settings?: LockSettings;
  session?: string;
  ai?: string;
  now?: string;
  push?: boolean;
  cwd?: string;
  /** The repository of `cwd` as the caller opened it already (openRepoAt(cwd)): not asked of git again. */
  repo?: Repo;
  /** `offhost run`: a kept answer about the remote up to REMOTE_PROBE_STALE_MS old stands (see there). */
  staleProbe?: boolean;
}

/** A session's lock context: the store plus who is asking (`offhost run` holds claims through it). */
export interface LifecycleContext {
  store: LockStore;
  clock: Clock;
  session: string;
  ai: string;
  log: (line: string) => void;
  /** The claim of this process's run, per target (set by acquireFirstFree). */
  claims: Map<string, string>;
  command?: string;
}

/**
 * Opens the store of the repository at `cwd` (else the configured monorepo root, POLICY R6), where the
 * repository's locks are shared (src/locks/hub.ts): `push` is this call's --push (true) / --no-push (false).
 */
/**
 * How long a lock command uses the answer "the remote holds no locks of this repository" (or "could not be
 * asked") before asking again: a network round trip (`git ls-remote`, 0.2-1 s to a hosted remote) is not
 * paid by every run for a change another machine makes once (docs/LOCKS.md "Which clones share a lock").
 */
export const REMOTE_PROBE_KEEP_MS = 60_000;
/**
 * `offhost run` does not wait for that round trip while the answer is less than this old: it uses the kept
 * answer and asks again while its command runs (LockStore.refreshRemoteProbe), for the next command. Runs a
 * few minutes apart (an agent's builds) never wait for the remote; another machine's first `--push` is seen
 * by the second run after it, and by the first one after a pause of this length.
 */
export const REMOTE_PROBE_STALE_MS = 10 * 60_000;

export async function storeFor(io: Io, cwd: string, settings: LockSettings, clock: Clock, push: boolean | undefined, repo?: Repo, staleProbe = false): Promise<LockStore> {
  const opts = (dir: string) => ({
    repoDir: dir,
    ...(repo && dir === cwd ? { repo } : {}),
    clock,
    env: io.env,
    log: (line: string) => io.stderr(`offhost lock: ${line}\n`),
    ...(settings.noticesDir ? { noticesDir: settings.noticesDir } : {}),
    ...(settings.skewSeconds !== undefined ? { skewSeconds: settings.skewSeconds } : {}),
    // Whether the remote holds the locks already is asked at most once a minute (REMOTE_PROBE_KEEP_MS).
    share: { remoteName: settings.remote ?? 'origin', configPush: settings.push, probeRemote: true, probeKeepMs: REMOTE_PROBE_KEEP_MS, ...(staleProbe ? { probeStaleMs: REMOTE_PROBE_STALE_MS } : {}), ...(push !== undefined ? { flag: push } : {}) },
  });
  let store: LockStore;
  try {
    store = await openLockStore(opts(cwd));
  } catch (err) {
    if (!settings.root || !/not inside a git repository/.test((err as Error).message)) throw err;
    store = await openLockStore(opts(settings.root)).catch(() => {
      throw err;
    });
  }
  const root = store.repo.root;
  store.opts.messageTemplate = settings.message ?? (root && usesCommitlint(root) ? CONVENTIONAL_MESSAGE : undefined);
  return store;
}

/**
 * The lock context of a command. `freeEnded: false` (lock repair) skips freeing the runs of this host whose
 * process is gone: that reads the store, which repair is there to mend.
 */
export async function contextFor(io: Io, o: CommonOpts, needSession: boolean, opts: { freeEnded?: boolean } = {}): Promise<{ ctx: LifecycleContext; settings: LockSettings }> {
  const cwd = o.cwd ? resolve(io.cwd, o.cwd) : io.cwd;
  const settings = o.settings ?? loadLockSettings(cwd, io.env, o.config);
  let session = o.session ?? io.env.OFFHOST_SESSION;
  let ai = o.ai ?? io.env.OFFHOST_AI;
  if (needSession) ({ session, ai } = checkSession(session, ai));
  const clock = clockFor(o.now, io);
  const store = await storeFor(io, cwd, settings, clock, o.push, o.repo, o.staleProbe === true);
  // Runs of this host whose process is gone free their VM now (src/locks/end-runs.ts, issue 24).
  // Freeing this host's ended runs is a courtesy to the next session: when it cannot be done now (the remote
  // unreachable, the store broken) the VM simply stays held, and the command itself says what is wrong.
  if (opts.freeEnded !== false) {
    try {
      await freeEndedRuns(store, session ?? 'unknown', async () => (await import('./reap.js')).jobReaper(loadConfig(o.config === undefined ? { cwd, env: io.env } : { cwd, env: io.env, configFile: o.config }), io), (l) => io.stderr(`offhost lock: ${l}\n`));
    } catch (err) {
      if (!isOffhostError(err)) throw err;
    }
  }
  const ctx: LifecycleContext = { store, clock, session: session ?? 'unknown', ai: ai ?? 'human', log: (l) => io.stderr(`offhost lock: ${l}\n`), claims: new Map() };
  return { ctx, settings };
}

/** `<vm>` as a canonical id, or a route/pool name from the configuration (a pool: every VM, in order). */
export function resolveTargets(name: string | undefined, component: string | undefined, settings: LockSettings): LockTarget[] {
  if (component !== undefined) {
    if (name !== undefined) throw new UsageError('give either a VM or --component <slug>, not both');
    if (!/^[a-z0-9][a-z0-9._-]*$/.test(component) || component.includes('..')) throw new UsageError(`component slug '${component}' must be lowercase letters, digits, . _ - (e.g. koda-parser)`);
    return [{ kind: 'component', slug: component }];
  }
  if (name === undefined) throw new UsageError('which VM? give its id (e.g. s.khost1.dev-linux-koda), a route or pool name, or --component <slug>');
  if (isCanonicalVmId(name)) {
    const p = vmIdProblem(name);
    if (p) throw new UsageError(`'${name}' ${p}`);
    return [{ kind: 'vm', vm: name }];
  }
  const pool = settings.pools.get(name);
  if (pool && pool.length) return pool.map((vm) => ({ kind: 'vm', vm }));
  if (!name.startsWith('s.') && isCanonicalVmId(`s.khost1.${name}`)) return [{ kind: 'vm', vm: `s.khost1.${name}` }];
  if (name.startsWith('s.')) throw new UsageError(`'${name}' ${vmIdProblem(name) ?? 'is not a test VM id'}`);
  const known = [...settings.pools.keys()];
  throw new UsageError(`'${name}' is neither a canonical VM id (s.<host>.<env>-<target>[-<slug>]) nor a route or pool in the configuration${known.length ? ` (known: ${known.join(', ')})` : ''}`);
}

export const targetArg = (t: LockTarget): life.TargetArg => (t.kind === 'vm' ? { vm: t.vm } : { component: t.slug });
const nameOf = (t: LockTarget) => (t.kind === 'vm' ? t.vm : t.slug);

// ---------------------------------------------------------------------------------------------------
// Session-bound calls with a per-run claim, in the shapes `offhost run` was written against.

export type AcquireResult =
  | { status: 'acquired'; target: string; file: string; commit: string | null; archived: string | null; pushed: boolean }
  | { status: 'mine'; target: string; file: string }
  | { status: 'held'; target: string; holder: Holder; where: Holder['where'] };

/** Takes the first free VM for this run (a claim: released with the run; a busy VM counts as held). */
export async function acquireFirstFree(
  ctx: LifecycleContext,
  targets: LockTarget[],
  opts: { reason: string; ttlMinutes?: number },
  wait?: life.WaitOptions,
): Promise<AcquireResult> {
  const command = ctx.command ?? process.argv.slice(2).join(' ');
  const r = await life.acquireFirstFree(ctx.store, targets.map(targetArg), { session: ctx.session, ai: ctx.ai, reason: opts.reason, ...(opts.ttlMinutes ? { ttlMinutes: opts.ttlMinutes } : {}), claim: { command, pid: process.pid, host: hostname() } }, wait && {
    onWait: (last) => last.status === 'held' && ctx.log(`${describeHolder(last.holder, ctx.clock.now())}\nwaiting (polling every ${Math.round(wait.pollMs / 1000)} s)...`),
    ...wait,
  });
  if (r.status === 'held' || r.status === 'busy') return { status: 'held', target: r.target, holder: r.holder, where: r.holder.where };
  if (r.claim) ctx.claims.set(r.target, r.claim);
  if (r.status === 'mine') return { status: 'mine', target: r.target, file: r.file };
  return { status: 'acquired', target: r.target, file: r.file, commit: r.commit, archived: r.archived, pushed: r.pushed };
}

export async function heartbeat(ctx: LifecycleContext, t: LockTarget): Promise<{ status: 'beat'; heartbeat: Date } | { status: 'held'; holder: Holder } | { status: 'absent'; file: string }> {
  try {
    const claim = ctx.claims.get(nameOf(t));
    const r = await life.heartbeat(ctx.store, { ...targetArg(t), session: ctx.session, ...(claim ? { claim } : {}) });
    return { status: 'beat', heartbeat: r.heartbeat };
  } catch (err) {
    if (isLockLost(err) && err.holder && err.reason === 'taken') return { status: 'held', holder: err.holder };
    if (isLockLost(err)) return { status: 'absent', file: err.message };
    throw err;
  }
}

export async function release(ctx: LifecycleContext, t: LockTarget, record?: string): Promise<life.ReleaseResult> {
  const claim = ctx.claims.get(nameOf(t));
  return life.release(ctx.store, { ...targetArg(t), session: ctx.session, ai: ctx.ai, ...(claim ? { claim } : {}), ...(record ? { record } : {}) });
}

export function reportAcquire(r: AcquireResult | life.AcquireResult, ctx: { clock: Clock; session: string }, io: Io): number {
  const now = ctx.clock.now();
  if (r.status === 'acquired') {
    io.stdout(
      `acquired ${r.target} for session ${ctx.session}: ${r.file} on refs/offhost/locks${r.commit ? ` (commit ${r.commit.slice(0, 10)}${r.pushed ? ', pushed' : ''})` : ''}` +
        `${r.archived ? `; the expired lock was archived as ${r.archived}` : ''}\n`,
    );
    return EXIT.ok;
  }
  if (r.status === 'mine') {
    io.stdout(`${r.target} is already held by this session (${ctx.session}): ${r.file}; heartbeat refreshed\n`);
    return EXIT.ok;
  }
  if (r.status === 'busy') {
    io.stderr(`offhost lock: ${r.target} is held by this session, and a run holds it now: ${r.claims.map((c) => `${c.id} (pid ${c.pid} on ${c.host}: ${c.command})`).join(', ')}; wait for it (--wait) or stop it\n`);
    return EXIT.held;
  }
  io.stderr(`offhost lock: ${describeHolder(r.holder, now)}\n`);
  io.stderr(`offhost lock: wait (--wait), use another VM, or ask session ${r.holder.session} to release it.\n`);
  return EXIT.held;
}
