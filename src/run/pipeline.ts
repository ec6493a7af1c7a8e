// `offhost run` as a pipeline (issue 11):
//
//   classify -> resolve route -> preflight -> hold -> sync + verify -> execute -> record -> release
//
// Each step either hands the next one what it needs or stops the run with one of offhost's own outcomes
// (./outcome.ts); nothing after a stop runs, and a stop after the hold still releases it (after the
// remote work has stopped) and still leaves a record.
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { fstatSync, mkdirSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { OutputLog } from './output-log.js';
import { stopNetworkReads } from '../git/run.js';
import { hostname, tmpdir, userInfo } from 'node:os';
import { join, relative, resolve, sep } from 'node:path';
import { StringDecoder } from 'node:string_decoder';
import { isOffhostError } from '../errors.js';
import { type Trace, timedTrace, traceDecision, traceGuard, traceLine } from '../report/debug-trace.js';
import type { Io } from '../io.js';
import { loadGuard } from '../config/load-guard.js';
import { mapPath, renderJob, type VmSpec } from '../routes/index.js';
import { HOST_KEY_FAILURE, HostKeyError } from '../routes/hostkey.js';
import { multiplexProblem, vmSshOptions } from '../routes/multiplex.js';
import { commitSourceState, DEFAULT_SYNC_EXCLUDE, diffManifests, diffText, dirtyText, findRepo, readSourceState, type SourceState } from '../routes/source.js';
import {
  DEFAULT_GUEST_DIR,
  forgetVerified,
  forgetVerifiedCommit,
  gitPush,
  rememberVerifiedCommit,
  verifiedCommit,
  guestBareRepo,
  guestTreeDir,
  rememberVerified,
  resolveCommit,
  rsyncTree,
  changedSince,
  packSince,
  runRef,
  snapshotCommit,
  forgetSnapshot,
  SyncError,
  syncMode,
  type SyncMode,
} from '../routes/sync.js';
import type { ResolvedConfig } from '../config/resolve.js';
import { heartbeatIntervalMs } from '../locks/schedule.js';
import { DEFAULT_TTL_MINUTES } from '../locks/schema.js';
import { openRepoAt } from '../git/ref-tree.js';
import { contextFor, settingsFrom } from './lock-context.js';
import { runSession, startSession, type SessionResult, type StartedSession } from './execute.js';
import { acquireHold, type Hold, type HoldResult } from './hold.js';
import type { LockStore } from '../locks/store.js';
import { OUTCOME_EXIT, RunStop, verdictLine, type Outcome, type Verdict } from './outcome.js';
import { toolPreflight, vmPreflight } from './preflight.js';
import { DEFAULT_DISK_FLOOR_MB, freeKb } from '../vms/preflight.js';
import { aboveFloor, probeReuse } from '../vms/probe-reuse.js';
import { tarOf } from '../routes/tar.js';
import { newRunId, parseOsRelease, recordText, runDir, stateDir, writeRecord, type RunRecord } from './record.js';
import { bootstrapScript, framedScript, jobOf, newNonce, pgidFile, supervisorScript } from './remote.js';
import { confirmStopped, remoteOnce } from './reap.js';
import { processTreeSession } from './session.js';
import { commandArgv } from './command.js';
import { ownExecutable } from '../own-executable.js';
import { backendEnv, localEnv } from '../shims/env.js';
import { SIGNAL_STATUS, SignalHub } from './signals.js';
import { unseenCheckout } from './checkout.js';
import { DEFAULT_KEEP, ignoredRecord, ignoredText, sharedIgnored } from './ignored.js';

export interface RunOptions {
  /** The shell line the guard judges (the typed line, or the typed argv quoted: ./command.ts). */
  line: string;
  /** Several words were typed: this argv runs as it is, without a shell. */
  argv?: string[];
  session?: string;
  ai?: string;
  reason?: string;
  cwd?: string;
  ttl?: string;
  heartbeat?: string;
  wait?: string;
  poll?: string;
  push?: boolean;
  role?: string;
  config?: string;
  stdin?: boolean;
  timeout?: string;
  json?: boolean;
  commit?: string;
  allowDirty?: boolean;
  fetch?: string[];
  grace?: string;
  fresh?: boolean;
  fetchTo?: string;
  /** --clean / --no-clean: remove the VM copy's files outside the source set before the build (default: the VM's `clean`). */
  clean?: boolean;
  /** --debug: a trace on stderr of what the run read and did, each line with its time since the process started. */
  debug?: boolean;
}

const say = (io: Io, line: string) => io.stderr(`offhost run: ${line}\n`);

function finish(io: Io, o: RunOptions, v: Verdict): number {
  // A detail of several lines (a preflight report, setup guidance) is shown whole; the verdict line,
  // always the last, carries its first line.
  if (v.detail.includes('\n')) io.stderr(`offhost run: ${v.detail.trimEnd()}\n`);
  io.stderr(verdictLine(v, o.json === true));
  return v.exit;
}

function num(name: string, v: string | undefined, ok: (n: number) => boolean): number | undefined {
  if (v === undefined) return undefined;
  const n = Number(v);
  if (!Number.isFinite(n) || !ok(n)) throw new RunStop('config-error', `--${name} must be a positive number, not '${v}'`);
  return n;
}

/** The work a run starts beside its preflight, and how much of it has not ended yet. */
interface EarlyWork {
  unsettled: number;
}

/** `p`, counted in `beside` until it settles (a rejection is kept for whoever awaits `p`). */
function counted<T>(beside: EarlyWork, p: Promise<T>): Promise<T> {
  beside.unsettled++;
  p.then(
    () => beside.unsettled--,
    () => beside.unsettled--,
  );
  return p;
}

/** How long a command runs before the remote is asked again in the background (see where it is used). */
const ASK_AFTER_MS = 500;

export async function runPipeline(io: Io, o: RunOptions): Promise<number> {
  const signals = new SignalHub((l) => say(io, l));
  // A step that waits for something that can no longer happen would let Node exit with 0: never that.
  const drained = () => {
    io.stderr(verdictLine({ outcome: 'internal-error', exit: OUTCOME_EXIT['internal-error'], status: null, detail: 'offhost run stopped waiting for a step that could not finish (a bug): the outcome is unknown; check the VM and `offhost lock status`' }, o.json === true));
    process.exitCode = OUTCOME_EXIT['internal-error'];
  };
  process.once('beforeExit', drained);
  // A bug that escapes every step (an error event nobody listened to): the verdict says so, and the process
  // ends at once. Its claim's process is then gone, so the next offhost command on this host frees the VM
  // (src/locks/holder-process.ts), and the VM's job stops at the end of its input.
  const crashed = (err: Error) => {
    io.stderr(verdictLine({ outcome: 'internal-error', exit: OUTCOME_EXIT['internal-error'], status: null, detail: `offhost run failed unexpectedly (${err.stack ?? String(err)}); it exits now: the job on the VM stops when its connection ends, and the next offhost command on this host frees the VM` }, o.json === true));
    process.exit(OUTCOME_EXIT['internal-error']);
  };
  // Only as the offhost executable: a test calling run() in its own process keeps its own handler.
  if (ownExecutable() !== null) process.once('uncaughtException', crashed);
  const cleanups: (() => void)[] = [];
  const beside: EarlyWork = { unsettled: 0 };
  // A run that stops while the work it started beside the preflight is still going (the lock store's open,
  // which may be asking a remote; the source read) does not wait for it: as the offhost executable, it
  // exits once its verdict is said (all output is written synchronously). That work only reads, and the
  // sweep it may be making is one any later command redoes.
  const ended = (code: number): number => {
    if (beside.unsettled > 0 && ownExecutable() !== null) {
      for (const c of cleanups.splice(0)) c();
      stopNetworkReads();
      process.exit(code);
    }
    return code;
  };
  try {
    return ended(await steps(io, o, signals, cleanups, beside));
  } catch (err) {
    if (err instanceof RunStop) return ended(finish(io, o, { outcome: err.outcome, exit: err.exit, status: null, detail: err.message }));
    if (isOffhostError(err)) return ended(finish(io, o, { outcome: 'config-error', exit: OUTCOME_EXIT['config-error'], status: null, detail: (err as Error).message }));
    return finish(io, o, { outcome: 'internal-error', exit: OUTCOME_EXIT['internal-error'], status: null, detail: (err as Error).stack ?? String(err) });
  } finally {
    for (const c of cleanups) c();
    process.off('beforeExit', drained);
    process.off('uncaughtException', crashed);
    signals.dispose();
  }
}

/**
 * Test hook (test/run/faults.test.ts): OFFHOST_TEST_FAULT=STEP makes that step fail as a bug would, so a
 * test can check the status and the lock after a failure at each step.
 */
export const FAULT_STEPS = ['classify', 'preflight', 'source', 'hold', 'sync', 'execute', 'async', 'record', 'release'] as const;
function fault(io: Io, step: (typeof FAULT_STEPS)[number]): void {
  if (io.env.OFFHOST_TEST_FAULT !== step) return;
  if (step === 'async') {
    setImmediate(() => {
      throw new Error('injected fault: an error event nobody listens to (OFFHOST_TEST_FAULT=async)');
    });
    return;
  }
  throw new Error(`injected fault at step ${step} (OFFHOST_TEST_FAULT)`);
}

async function steps(io: Io, o: RunOptions, signals: SignalHub, cleanups: (() => void)[], beside: EarlyWork): Promise<number> {
  const mark: Trace = o.debug ? timedTrace(io) : () => undefined;
  mark('started');
  fault(io, 'classify');
  const cwd = o.cwd ? resolve(io.cwd, o.cwd) : io.cwd;
  // 1. classify
  const guard = loadGuard({
    cwd,
    env: io.env,
    ...(o.role !== undefined ? { role: o.role as never } : {}),
    ...(o.config !== undefined ? { configFile: o.config } : {}),
  });
  // --debug: classified by explain, which gives the same verdict and says which rule decided each command.
  const explained = o.debug ? guard.explain(o.line, { cwd, env: io.env }) : null;
  const v = explained?.verdict ?? guard.classify(o.line, { cwd, env: io.env });
  if (explained) {
    traceLine(mark, o.line, o.argv ? 'the words after --, quoted' : 'the line after --');
    traceGuard(mark, guard, { cwd, env: io.env, ...(o.role !== undefined ? { role: o.role } : {}) });
    traceDecision(mark, explained.decision, v);
  }
  if (v.decision === 'allow') {
    const code = await runHere(io, commandArgv(o), cwd, localEnv(io, guard.config.rules, guard.role), signals);
    return signals.first ? SIGNAL_STATUS[signals.first] : code;
  }
  if (v.decision === 'deny') {
    say(io, `refused${v.rule ? ` (${v.rule})` : ''}: ${v.reason}`);
    return finish(io, o, { outcome: 'denied', exit: OUTCOME_EXIT.denied, status: null, detail: v.reason });
  }

  // 2. resolve the route
  const route = v.route;
  if (!route) throw new RunStop('config-error', 'the guard rerouted the command without a route');
  const config = guard.config;
  const routeCfg = config.routes.get(route.name);
  const candidates = routeCfg?.vms.length ? routeCfg.vms : [route.vm];
  const specs = new Map<string, VmSpec>();
  for (const id of candidates) {
    const spec = config.vms.get(id);
    if (!spec) throw new RunStop('config-error', `route ${route.name}: VM ${id} has no entry in the configuration's vms`);
    specs.set(id, { ...spec });
  }
  const ttl = num('ttl', o.ttl, (n) => Number.isInteger(n) && n > 0) ?? DEFAULT_TTL_MINUTES;
  const timeoutS = num('timeout', o.timeout, (n) => n > 0);
  const graceS = num('grace', o.grace, (n) => n > 0) ?? 10;
  let heartbeatMs: number;
  try {
    heartbeatMs = heartbeatIntervalMs(ttl, o.heartbeat === undefined ? undefined : Number(o.heartbeat) * 1000);
  } catch (err) {
    throw new RunStop('config-error', (err as Error).message);
  }

  // 3. preflight: tools here, then the VMs (src/vms/gate.ts: isolation as required, the cheap VM checks),
  // before anything is locked
  fault(io, 'preflight');
  for (const spec of specs.values()) {
    const stop = toolPreflight(spec, io.env);
    if (stop) {
      say(io, v.reason);
      throw new RunStop(stop.outcome, stop.message);
    }
  }
  // The repository is opened while the VMs are checked: a read, nothing is taken (used below, where cwd is
  // its own real path; a cwd that cannot be resolved is said there, at its place).
  let realEarly: string | null = null;
  try {
    realEarly = realpathSync(cwd);
  } catch {
    realEarly = null;
  }
  const openedEarly = realEarly === cwd ? openRepoAt(cwd, io.env).catch(() => null) : Promise.resolve(null);
  const settings = settingsFrom(config, io.env);
  const session = o.session ?? io.env.OFFHOST_SESSION ?? processTreeSession('run', io.env);
  const ai = o.ai ?? io.env.OFFHOST_AI ?? 'human';
  // The lock store is opened while the VMs are checked too: reads, and the sweep of this host's ended runs
  // that every lock command makes; nothing is taken before the preflight passed (takeHold, below). On the
  // bench's 10,000-file tree the lock's path was the run's longest (docs/RUN.md, "Figures"). Its failure is
  // said where the lock is taken, as before (a run that stops earlier never looks at it).
  const contextEarly = o.fresh
    ? null
    : counted(beside, openedEarly.then((opened) => contextFor(io, { settings, session, ai, cwd, staleProbe: true, ...(opened ? { repo: opened } : {}), ...(o.push !== undefined ? { push: o.push } : {}), ...(o.config !== undefined ? { config: o.config } : {}) }, true)));
  contextEarly?.catch(() => undefined);
  // Lock files live in the tree under the notices directory and change under other sessions' feet
  // (their heartbeats): they are the lock store's, not the source.
  const nd = (settings.noticesDir ?? 'meta/context/notices').replace(/\/+$/, '');
  const lockDirs = [`${nd}/vm-active/`, `${nd}/vm-active-archive/`, `${nd}/active/`, `${nd}/archive/`];
  // With one VM and no --wait, the source is read while the VM is checked as well (git's stat of every
  // file is the other long path of a run); used below when the run goes on with that repository.
  const sourceEarly =
    specs.size === 1 && o.wait === undefined && !o.fresh
      ? openedEarly.then((opened) => (opened?.root ? { root: opened.root, state: counted(beside, readSourceState({ root: opened.root, gitDir: opened.gitDir }, [...specs.values()][0]!.sync_exclude ?? DEFAULT_SYNC_EXCLUDE, lockDirs)) } : null))
      : null;
  void sourceEarly?.then((e) => e?.state.catch(() => undefined));
  // The ssh options of every connection of the run, the preflight's included (one shared master:
  // src/routes/multiplex.ts; the pinned host key checked from the first connection on).
  for (const spec of specs.values()) {
    try {
      spec.sshOptions = await vmSshOptions(spec, io.env, stateDir(io.env));
    } catch (err) {
      if (err instanceof HostKeyError) {
        await interruptedBefore(signals, 'during the VM preflight');
        say(io, v.reason);
        throw new RunStop(err.kind === 'mismatch' ? 'host-key-mismatch' : 'preflight-failed', `${err.message}${err.kind === 'mismatch' ? '' : ' Nothing was run; no lock was taken.'}`);
      }
      throw err;
    }
    config.vms.set(spec.id, { ...config.vms.get(spec.id)!, sshOptions: spec.sshOptions });
  }
  // A control folder that cannot be used costs every connection its handshake: said, never silent.
  const unshared = [...specs.values()].some((s) => s.backend === 'ssh' || s.host !== undefined) ? multiplexProblem(io.env) : null;
  if (unshared) say(io, unshared);
  const reuse = probeReuse(stateDir(io.env), io.env);
  // A signal during the preflight ends its probes at once and is an interruption, whatever they then said
  // (a Ctrl-C kills the probe's ssh too, which then "fails").
  const abort = new AbortController();
  signals.listen((sig) => {
    say(io, `${sig} received: stopping before the command starts`);
    abort.abort();
  });
  mark(`ssh options ready; preflight of ${[...specs.keys()].join(', ')}`);
  const stop = await vmPreflight(config, { route: route.name, rule: v.rule, candidates: [...specs.keys()], env: io.env, fresh: o.fresh === true, reuse, abort: abort.signal });
  signals.listen(null);
  await interruptedBefore(signals, 'during the VM preflight');
  if (!stop.ok) {
    // A Ctrl-C to the process group kills the probe's ssh too, and under load the probe's end can be read
    // before offhost's own SIGINT is: a failed preflight (the run stops anyway) waits a moment more for it,
    // so that it is said as interrupted, not as a VM that failed (once seen in a loaded full test run).
    await new Promise((r) => setTimeout(r, 50));
    await interruptedBefore(signals, 'during the VM preflight');
    say(io, v.reason);
    // The preflight's report (each check, and the fix under each failure) before the one-line verdict.
    const [first = '', ...rest] = stop.message.split('\n');
    if (rest.length) io.stderr(`${rest.join('\n')}\n`);
    throw new RunStop(stop.outcome, first, stop.exit);
  }
  for (const n of stop.notes) say(io, n);
  mark(`preflight done: usable ${stop.usable.join(', ') || '(none)'}`);
  for (const id of [...specs.keys()]) if (!stop.usable.includes(id)) specs.delete(id);
  const candidates2 = [...specs.keys()];
  if (o.fresh) {
    // A disposable sandbox (src/vms/sandbox.ts): uniquely named, no VM lock (nobody else can hold it).
    const spec = specs.get(candidates2[0]!)!;
    const env: Record<string, string> = config.home ? { HOME: mapPath(config.home, [...(routeCfg?.pathMap ?? []), ...config.pathMap]) } : {};
    say(io, v.reason);
    const { runFresh } = await import('../vms/sandbox.js');
    return runFresh(spec, { argv: commandArgv(o), cwd: route.cwd, env }, { env: io.env, stdout: io.stdout, stderr: io.stderr, fetch: o.fetch ?? [], fetchTo: resolve(cwd, o.fetchTo ?? 'offhost-results'), now: io.clock.now() });
  }

  // The source: the repository holding cwd (else the configured monorepo root).
  const realCwd = realpathSync(cwd);
  // One rev-parse for the source and the lock store, when cwd is its own real path (the lock store opens the
  // repository of cwd as given: src/run/lock-context.ts storeFor).
  const opened = realCwd === cwd ? await openedEarly : null;
  const repo = (opened?.root ? { root: opened.root, gitDir: opened.gitDir } : null) ?? (await findRepo(realCwd)) ?? (config.root ? await findRepo(config.root) : null);
  if (!repo) throw new RunStop('config-error', `${cwd} is in no git repository (and no configured root is one): offhost run syncs and verifies a repository's tree`);
  // A shared-mount VM that cannot see this checkout (a worktree or clone elsewhere) is no candidate (src/run/checkout.ts).
  let unseen: string | null = null;
  for (const [id, s] of [...specs]) {
    const why = syncMode(s) === 'shared' ? unseenCheckout(s, repo.root, [...(routeCfg?.pathMap ?? []), ...config.pathMap]) : null;
    if (why !== null) (unseen ??= why), specs.delete(id);
  }
  if (specs.size === 0) throw new RunStop('source-mismatch', unseen!);
  candidates2.splice(0, candidates2.length, ...candidates2.filter((id) => specs.has(id)));
  // The run's job on the VM is named before the hold, so that its claim can say which job to stop if
  // this process dies (src/locks/holder-process.ts).
  const nonce = newNonce();
  // With one VM to go to and no --wait, the run's session is opened now: the VM's login shell starts up
  // (its rc files) while the source is read and the lock taken here. Until the supervisor script is sent,
  // once the lock is held, the session only waits for it (./remote.ts bootstrapScript); a run that stops
  // before that ends it unused, and the VM side exits at the end of its input having run nothing.
  let early: StartedSession | null = null;
  if (specs.size === 1 && o.wait === undefined) {
    let line: string | null = null;
    try {
      line = sessionLine([...specs.values()][0]!, nonce);
    } catch {
      // Rendering refuses this VM: the run's own session says so at its place, after the hold, as before.
    }
    if (line !== null) {
      const started = (early = startSession(line, io.cwd, backendEnv(io.env)));
      cleanups.push(() => started.dispose());
      mark(`session to ${[...specs.keys()][0]} opened (it waits for its script until the lock is held)`);
    }
  }
  const modes = new Set([...specs.values()].map(syncMode));
  const exclude = [...specs.values()][0]!.sync_exclude ?? DEFAULT_SYNC_EXCLUDE;
  let commitDir: string | null = null;
  const readSource = async (): Promise<SourceState> => {
    fault(io, 'source');
    const early = await sourceEarly;
    const working = early && early.root === repo.root && specs.size === 1 ? await early.state : await readSourceState(repo, exclude, lockDirs);
    if (o.commit === undefined) return working;
    if (modes.has('shared')) throw new RunStop('config-error', `--commit needs a VM with sync: git or rsync; ${[...specs.keys()].join(', ')} share the laptop's working tree`);
    if (!working.clean && !o.allowDirty) {
      throw new RunStop('dirty-tree', `--commit ${o.commit}: the working tree has uncommitted changes (${dirtyText(working.dirty)}: ${working.dirty.paths.slice(0, 5).join(', ')}); commit them, or pass --allow-dirty to run ${o.commit} without them`);
    }
    const sha = await resolveCommit(repo.root, o.commit);
    commitDir = mkdtempSync(join(tmpdir(), 'offhost-commit-'));
    return commitSourceState(repo, sha, commitDir, exclude, lockDirs);
  };
  const runId = newRunId(new Date());
  const wait = o.wait === undefined ? undefined : { pollMs: Number(o.poll ?? settings.pollSeconds ?? 30) * 1000, ...(o.wait === 'forever' ? {} : { limitMs: Number(o.wait) * 1000 }) };
  let lockStore: LockStore | null = null;
  let askLater: ReturnType<typeof setTimeout> | null = null;
  const takeHold = async (): Promise<HoldResult> => {
    const { ctx } = await contextEarly!;
    lockStore = ctx.store;
    // The lock's ref moves start their git now, while the source is read, not when the lock is written.
    ctx.store.prepareMoves(['lock']);
    mark('lock store opened');
    fault(io, 'hold');
    return acquireHold(ctx, {
      candidates: candidates2,
      runId,
      job: jobOf(nonce),
      reason: o.reason ?? `offhost run ${runId} (${v.rule ?? 'reroute'}): ${o.line.length > 200 ? `${o.line.slice(0, 197)}...` : o.line}`,
      command: o.line,
      ttlMinutes: ttl,
      heartbeatMs,
      ...(wait ? { wait } : {}),
      cancelled: () => signals.interrupted,
      progress: (l) => say(io, l),
    });
  };
  let state: SourceState;
  let got: HoldResult;
  if (wait) {
    // Waiting for a VM can take minutes: the source is read first, and a run that cannot start (a dirty
    // tree for --commit) says so before it waits.
    state = await readSource();
    await interruptedBefore(signals, 'while reading the source state');
    mark(`source read: ${state.files.length} files in ${repo.root}, ${dirtyText(state.dirty)}, fingerprint ${state.fingerprint.slice(0, 12)}`);
    say(io, v.reason);
    got = await takeHold();
  } else {
    // No wait: the lock is taken while the source is read (its git processes run beside the reading; on
    // a 10,000-file tree that saves most of the lock's time: docs/PERFORMANCE.md). A source that cannot
    // be read gives the lock back at once, before the run stops.
    const [h, s] = await Promise.allSettled([takeHold(), readSource()]);
    if (s.status === 'rejected' || signals.interrupted) {
      if (h.status === 'fulfilled' && h.value.kind === 'held') {
        const why = s.status === 'rejected' ? `the source could not be read (${(s.reason as Error)?.message ?? String(s.reason)})` : 'interrupted while reading the source state';
        try {
          say(io, await h.value.hold.release(`Run ${runId}: stopped before anything ran on the VM: ${why}`));
        } catch (err) {
          say(io, `could not release ${h.value.hold.vm} (${(err as Error).message}); once this process has ended, the next offhost command on this host frees it`);
        }
      }
      if (s.status === 'rejected') throw s.reason;
      await interruptedBefore(signals, 'while reading the source state');
    }
    if (h.status === 'rejected') throw h.reason;
    state = (s as PromiseFulfilledResult<SourceState>).value;
    got = h.value;
    mark(`source read: ${state.files.length} files in ${repo.root}, ${dirtyText(state.dirty)}, fingerprint ${state.fingerprint.slice(0, 12)}`);
    say(io, v.reason);
  }
  stdinNote(io, o);
  const dir = runDir(io.env, runId);
  mkdirSync(dir, { recursive: true });
  const logFile = join(dir, 'output.log');
  const log = new OutputLog(logFile);
  const started = new Date();
  const rec: RunRecord = {
    version: 1,
    id: runId,
    started: started.toISOString(),
    ended: null,
    outcome: 'running',
    status: null,
    exit: null,
    session,
    ai,
    laptop: { hostname: hostname(), user: safeUser(), cwd },
    source: {
      repo: repo.root,
      commit: state.head,
      branch: state.branch,
      dirty: dirtyText(state.dirty),
      dirtyPaths: state.dirty.paths,
      fingerprint: state.fingerprint,
      files: state.files.length,
      mode: 'shared',
      ...(o.commit !== undefined ? { requestedCommit: o.commit } : {}),
    },
    vm: null,
    command: { line: o.line, argv: commandArgv(o), cwd: route.cwd, env: {} },
    log: logFile,
  };
  writeRecord(io.env, rec);
  mark(got.kind === 'held' ? `lock ${got.hold.took ? 'taken' : 'already held by this session'}: ${got.hold.vm}` : `lock: ${got.kind}`);
  // The release's ref moves, ready while the command runs.
  if (got.kind === 'held') (lockStore as LockStore | null)?.prepareMoves(['release']);
  let ending: Verdict | null = null;
  const end = async (verdict0: Verdict, hold: Hold | null, remoteStopped = true): Promise<number> => {
    // Called once; a failure while ending (the record, the release) is reported, and never skips the release.
    if (ending) return finish(io, o, { ...ending, run: runId });
    let verdict: Verdict = (ending = verdict0);
    // However the run ends (an interruption included), a question to the remote still under way is kept, not said.
    if (askLater) clearTimeout(askLater);
    lockStore?.quietBackground();
    rec.ended = new Date().toISOString();
    rec.outcome = verdict.outcome;
    rec.status = verdict.status;
    rec.exit = verdict.exit;
    rec.detail = verdict.detail;
    try {
      fault(io, 'record');
      writeRecord(io.env, rec);
    } catch (err) {
      verdict = { outcome: 'internal-error', exit: OUTCOME_EXIT['internal-error'], status: verdict.status, detail: `the run's record could not be written (${(err as Error).message}); the run itself: ${verdict.outcome}, ${verdict.detail}` };
    }
    await new Promise<void>((r) => log.end(r));
    if (log.failure !== null) say(io, `the output log ${logFile} stops short: ${log.failure} (the run itself is not affected)`);
    if (commitDir) rmSync(commitDir, { recursive: true, force: true });
    if (hold) {
      if (!remoteStopped) say(io, `NOT releasing ${hold.vm}: the remote work could not be confirmed stopped; the lock stays until its ttl (check the VM, then \`offhost lock release ${hold.vm}\`)`);
      else {
        try {
          fault(io, 'release');
          mark('record written; releasing');
          say(io, await hold.release(recordText(rec)));
          mark('released');
        } catch (err) {
          say(io, `could not release ${hold.vm} (${(err as Error).message}); once this process has ended, the next offhost command on this host frees it (this run's claim names a process that is gone)`);
          verdict = { outcome: 'internal-error', exit: OUTCOME_EXIT['internal-error'], status: verdict.status, detail: `the lock could not be released: ${(err as Error).message}; the run itself: ${verdict.outcome}, ${verdict.detail}` };
        }
      }
    }
    return finish(io, o, { ...verdict, run: runId, ...(rec.vm ? { vm: rec.vm.id } : {}) });
  };
  if (got.kind === 'interrupted') return end({ outcome: 'interrupted', exit: SIGNAL_STATUS[signals.first ?? 'SIGINT'], status: null, detail: 'interrupted while waiting for the VM; nothing was run' }, null);
  if (got.kind === 'busy') {
    const { offerNewVm } = await import('../vms/gate.js');
    const offer = offerNewVm(config, route.name, routeCfg?.vms ?? candidates2);
    if (offer) io.stderr(offer);
    return end({ outcome: 'held', exit: OUTCOME_EXIT.held, status: null, detail: `${got.who}. Nothing was run (--wait to wait for it)` }, null);
  }
  const hold = got.hold;
  rec.lock = { file: hold.file, took: hold.took };
  const spec = specs.get(hold.vm)!;
  const mode = syncMode(spec);
  rec.source!.mode = mode;
  rec.vm = { id: spec.id, backend: spec.backend, ...(spec.host ? { host: spec.host } : {}), ...(spec.instance ? { instance: spec.instance } : {}) };
  say(io, hold.took ? `holding ${hold.vm} (lock ${hold.file}); run ${runId}` : `this session already holds ${hold.vm}; run ${runId}`);

  try {
    if (signals.interrupted) throw new RunStop('interrupted', 'interrupted before the command started; nothing was run', SIGNAL_STATUS[signals.first!]);
    fault(io, 'sync');
    // 5. sync + verify (the verification happens in the execute session itself)
    const sd = stateDir(io.env);
    const placed = place(spec, mode, config, route, repo.root, realCwd, state, cwd);
    // The session the command runs under (docs/VMS.md): the guard on the VM knows whose lock it is.
    placed.env = { ...placed.env, OFFHOST_SESSION: session, OFFHOST_RUN: runId };
    rec.vm.dir = placed.dir;
    rec.command.cwd = placed.cwd;
    rec.command.env = placed.env;
    let gitCommit: string | undefined;
    // A few files changed since the copy the VM last verified: they go in the run's own session (a tar).
    let inline: Buffer | null = null;
    try {
      if (mode === 'rsync') {
        const changed = changedSince(spec, state, placed.dir, sd);
        inline = changed && changed.length ? tarOf(state.root, changed) : null;
        if (inline) rec.source!.sent = changed!.length;
        if (inline) rec.source!.sentInSession = true;
        // Nothing changed since the copy the VM last verified: no rsync (the VM's script verifies it again).
        else if (changed?.length === 0) rec.source!.sent = 0;
        else rec.source!.sent = (await rsyncTree(spec, state, placed.dir, io.env, sd)).sent;
      }
      if (mode === 'git') {
        gitCommit = await snapshotCommit(state, lockDirs);
        rec.source!.ranCommit = gitCommit;
        // The VM verified this very commit last time: nothing to push (the checkout is verified again).
        // Else, on top of the commit it verified, the few new objects go in the run's own session.
        const was = verifiedCommit(sd, spec, placed.dir);
        if (was !== gitCommit) {
          inline = was ? await packSince(repo.root, gitCommit, was) : null;
          if (inline) rec.source!.sentInSession = true;
          else await gitPush(spec, state, gitCommit, guestBareRepo(spec, { root: repo.root }), io.env, repo.root);
        }
      }
    } catch (err) {
      if (err instanceof SyncError) {
        if (HOST_KEY_FAILURE.test(err.message)) throw new RunStop('host-key-mismatch', await hostKeyText(spec, err.message, io.env));
        throw new RunStop('sync-failed', `${err.message}\nNothing was run.`);
      }
      throw err;
    }
    writeRecord(io.env, rec);
    mark(`source placed (${mode}${inline ? `: ${inline.length} bytes go in the session` : rec.source!.sent !== undefined ? `: ${rec.source!.sent} sent` : ''}); sending the script`);

    // 6. execute (verify, then run, in one session)
    const tree = { clean: o.clean ?? spec.clean === true, keep: spec.keep ?? [...DEFAULT_KEEP] };
    // The first attempt runs in the session opened early, if there is one; a second one in a new session.
    const attempt = (tar: Buffer | null = null) => {
      const pre = early;
      early = null;
      return execute(io, o, nonce, spec, mode, placed, state, signals, hold, log, timeoutS, graceS, gitCommit ? { bare: guestBareRepo(spec, { root: repo.root }), commit: gitCommit, ...(tar ? { ref: runRef(state) } : {}), ...(verifiedCommit(sd, spec, placed.dir) === gitCommit ? { verified: true } : {}) } : undefined, tree, tar, pre, (what) => {
        mark(what === 'go' ? 'the VM verified the copy: the command starts' : 'the command ended on the VM');
        // The lock store used a kept answer about the remote past its minute: it is asked again while the
        // command runs, for the next command. Only once the command has run for ASK_AFTER_MS: a command that
        // ends sooner would end the question before its answer (a round trip of 0.2-1 s), and asking would
        // only take CPU from the run's own end.
        if (what === 'go' && lockStore?.staleRefresh) {
          const store = lockStore;
          askLater = setTimeout(() => void store.refreshRemoteProbe().catch(() => undefined), ASK_AFTER_MS);
          askLater.unref();
        } else if (what !== 'go') {
          // The command has ended: a question not asked yet is not; one under way is kept, not said.
          if (askLater) clearTimeout(askLater);
          lockStore?.quietBackground();
        }
      });
    };
    fault(io, 'execute');
    fault(io, 'async');
    let r = await attempt(inline);
    const gitRetry = mode === 'git' && (r.preamble.end === 'fail' || r.preamble.end === 'mismatch') && gitCommit !== undefined && (verifiedCommit(sd, spec, placed.dir) === gitCommit || inline !== null);
    if (!signals.interrupted && ((mode === 'rsync' && r.preamble.end === 'nodir') || gitRetry)) {
      // The cache said the VM had the copy, the VM says otherwise: send it in full, once.
      say(io, `the VM's copy at ${placed.dir} is not what was verified there last time; sending it again`);
      forgetVerified(sd, spec, placed.dir);
      forgetVerifiedCommit(sd, spec, placed.dir);
      try {
        if (mode === 'rsync') {
          delete rec.source!.sentInSession;
          rec.source!.sent = (await rsyncTree(spec, state, placed.dir, io.env, sd)).sent;
        } else {
          delete rec.source!.sentInSession;
          await gitPush(spec, state, gitCommit!, guestBareRepo(spec, { root: repo.root }), io.env, repo.root);
        }
      } catch (err) {
        if (err instanceof SyncError) throw new RunStop('sync-failed', `${err.message}\nNothing was run.`);
        throw err;
      }
      r = await attempt();
    }
    // A snapshot commit the last run kept, which the VM found not to be this tree: made again next time.
    if (mode === 'git' && r.preamble.end === 'mismatch') forgetSnapshot(state.gitDir);
    if (r.preamble.end === 'mismatch' && mode === 'rsync' && !signals.interrupted) {
      // The copy is ours to keep right: send what differs (by content, whatever the times say), once.
      const d = diffManifests(state.manifest, r.manifest);
      say(io, `the VM's copy differs (${diffText(d, 5)}); sending those files again`);
      forgetVerified(sd, spec, placed.dir);
      try {
        delete rec.source!.sentInSession;
        rec.source!.sent = (await rsyncTree(spec, state, placed.dir, io.env, sd, [...d.missing, ...d.differ])).sent;
      } catch (err) {
        if (err instanceof SyncError) throw new RunStop('sync-failed', `${err.message}\nNothing was run.`);
        throw err;
      }
      r = await attempt();
    }
    const pre = r.preamble;
    const kb = pre.df !== undefined ? freeKb(`df ${pre.df}`) : null;
    if (kb !== null && aboveFloor(spec, kb)) reuse.remember(spec, kb);
    if (pre.uname !== undefined) rec.vm.uname = pre.uname;
    if (pre.osRelease.length) rec.vm.osRelease = parseOsRelease(pre.osRelease);
    const verdict = await judge(io, r, { mode, placed, state, spec, signals, sd, hold });
    if (r.strays.found.length) {
      // What the command left outside its group (found by its marker) was stopped at its end, or it was
      // not and the VM stays held (docs/RUN.md).
      rec.leftBehind = { processes: r.strays.found, unstopped: r.strays.unstopped, action: r.strays.unstopped.length ? 'kept-held' : 'stopped' };
      say(io, r.strays.unstopped.length
        ? `the command left processes on the VM that could not be stopped (${r.strays.unstopped.join(', ')} of ${r.strays.found.join(', ')}); the VM stays held`
        : `the command left processes on the VM outside its process group; stopped at its end: ${r.strays.found.join(', ')}`);
      if (r.strays.unstopped.length) verdict.remoteStopped = false;
    }
    if (pre.end === 'go') {
      // The copy's files outside the source set: the run's truth as much as its source (./ignored.ts).
      rec.ignored = mode === 'shared' ? sharedIgnored(tree.clean) : ignoredRecord(repo.root, mode, tree, pre.tree);
      const said = ignoredText(rec.ignored);
      if (said) say(io, said);
    }
    if (pre.end === 'go' && mode === 'rsync') rememberVerified(sd, spec, placed.dir, state.manifest);
    if (pre.end === 'go' && mode === 'git' && gitCommit) rememberVerifiedCommit(sd, spec, placed.dir, gitCommit);
    if (pre.end === 'go' && o.fetch?.length) {
      rec.fetched = await fetchBack(io, spec, placed.cwd, o.fetch, join(dir, 'fetched'));
    }
    return await end(verdict, hold, verdict.remoteStopped);
  } catch (err) {
    if (err instanceof RunStop) return end({ outcome: err.outcome, exit: err.exit, status: null, detail: err.message }, hold);
    const detail = isOffhostError(err) ? (err as Error).message : ((err as Error).stack ?? String(err));
    return end({ outcome: isOffhostError(err) ? 'config-error' : 'internal-error', exit: OUTCOME_EXIT[isOffhostError(err) ? 'config-error' : 'internal-error'], status: null, detail }, hold);
  }
}

function safeUser(): string {
  try {
    return userInfo().username;
  } catch {
    return String(process.getuid?.() ?? '?');
  }
}

interface Placed {
  /** VM-side root of the tree. */
  dir: string;
  cwd: string;
  env: Record<string, string>;
}

/** Where the tree and the working directory are on the VM. */
function place(spec: VmSpec, mode: SyncMode, config: ResolvedConfig, route: { cwd: string; name: string }, root: string, realCwd: string, state: SourceState, cwd0: string): Placed {
  const inside = realCwd === root || realCwd.startsWith(root.endsWith(sep) ? root : root + sep);
  const rel = inside ? relative(root, realCwd) : '';
  if (mode === 'shared') {
    const mappings = [...(config.routes.get(route.name)?.pathMap ?? []), ...config.pathMap];
    // Inside the repository: the same place in the VM's view of it; elsewhere: where the guard put it.
    const cwd = inside ? mapPath(cwd0, mappings) : route.cwd;
    let dir = mapPath(root, mappings);
    if (rel && cwd.endsWith(`/${rel}`)) dir = cwd.slice(0, cwd.length - rel.length - 1);
    else if (!rel && inside) dir = cwd;
    const env: Record<string, string> = config.home ? { HOME: mapPath(config.home, mappings) } : {};
    return { dir, cwd, env };
  }
  const dir = guestTreeDir(spec, { root, branch: state.branch });
  return { dir, cwd: rel ? `${dir}/${rel}` : dir, env: {} };
}

/** Where a shared VM keeps the hashes of the laptop's tree it sees at `dir`: its guest_dir, one file a mount. */
function sharedHashCache(spec: VmSpec, dir: string): string {
  const base = (spec.guest_dir ?? DEFAULT_GUEST_DIR).replace(/\/+$/, '') || '';
  return `${base}/shared-${createHash('sha256').update(dir).digest('hex').slice(0, 16)}.offhost-hashes`;
}

async function execute(
  io: Io,
  o: RunOptions,
  nonce: string,
  spec: VmSpec,
  mode: SyncMode,
  placed: Placed,
  state: SourceState,
  signals: SignalHub,
  hold: Hold,
  log: OutputLog,
  timeoutS: number | undefined,
  graceS: number,
  git: { bare: string; commit: string } | undefined,
  tree: { clean: boolean; keep: readonly string[] },
  inline: Buffer | null,
  early: StartedSession | null,
  progress: (what: 'go' | 'exit') => void,
): Promise<SessionResult & { nonce: string }> {
  const script = supervisorScript({
    nonce,
    mode,
    dir: placed.dir,
    cwd: placed.cwd,
    listBytes: state.list.length,
    fingerprint: state.fingerprint,
    ...(git ? { git } : {}),
    ...(mode === 'rsync' ? { rsyncState: `${placed.dir}.offhost-files` } : {}),
    // The copy is the VM's own (on its disk, beside the cache): its hashes are kept between runs. A shared
    // tree is the laptop's files through a mount, with the laptop's times: its cache is on the VM's disk
    // (in guest_dir) and measures the racy margin against the laptop's own stamp of this read.
    ...(mode !== 'shared'
      ? { hashCache: `${placed.dir}.offhost-hashes` }
      : state.stamp !== null
        ? { hashCache: sharedHashCache(spec, placed.dir), hashStamp: state.stamp }
        : {}),
    ...(inline ? { inlineBytes: inline.length } : {}),
    argv: commandArgv(o),
    env: placed.env,
    stdin: o.stdin === true,
    graceSeconds: graceS,
    ...(mode === 'shared' ? {} : { tree }),
    diskFloorKb: (spec.disk_floor_mb ?? DEFAULT_DISK_FLOOR_MB) * 1024,
  });
  const outText = new StringDecoder('utf8');
  const errText = new StringDecoder('utf8');
  return runSession({
    line: sessionLine(spec, nonce),
    cwd: io.cwd,
    env: backendEnv(io.env),
    nonce,
    preface: framedScript(script, nonce),
    list: inline ? Buffer.concat([state.list, inline]) : state.list,
    forwardStdin: o.stdin === true,
    graceMs: graceS * 1000,
    ...(timeoutS !== undefined ? { timeoutMs: timeoutS * 1000 } : {}),
    stdout: (b) => {
      if (io.stdoutBytes) io.stdoutBytes(b);
      else io.stdout(outText.write(b));
      log.write(b);
    },
    stderr: (b) => {
      if (io.stderrBytes) io.stderrBytes(b);
      else io.stderr(errText.write(b));
      log.write(b);
    },
    signals,
    onLockLost: (fn) => hold.onLost(fn),
    progress,
    remoteSignal: async (sig) => {
      await remoteOnce(spec, io, `p=$(cat ${pgidFile(nonce)} 2>/dev/null) && kill -s ${sig} -- "-$p"`);
    },
  }, early ?? undefined).then((r) => Object.assign(r, { nonce }));
}

/** The run's session: the bootstrap, which runs the supervisor script it is then sent (./remote.ts). */
function sessionLine(spec: VmSpec, nonce: string): string {
  return renderJob(spec, { argv: ['sh', '-c', bootstrapScript(nonce)], cwd: '/', env: {}, stdin: true });
}

async function judge(
  io: Io,
  r: SessionResult & { nonce?: string },
  c: { mode: SyncMode; placed: Placed; state: SourceState; spec: VmSpec; signals: SignalHub; sd: string; hold: Hold },
): Promise<Verdict & { remoteStopped: boolean }> {
  const pre = r.preamble;
  const stopped = (outcome: Outcome, detail: string, exit?: number) => ({
    outcome,
    exit: exit ?? (outcome === 'interrupted' ? SIGNAL_STATUS[c.signals.first ?? 'SIGINT'] : OUTCOME_EXIT[outcome as keyof typeof OUTCOME_EXIT]),
    status: null,
    detail,
    remoteStopped: true,
  });
  if (!pre.hello) {
    if (r.stop?.kind === 'signal') return stopped('interrupted', 'interrupted before the VM was reached; nothing was run');
    const err = r.stderrHead.trim();
    if (HOST_KEY_FAILURE.test(err)) return stopped('host-key-mismatch', await hostKeyText(c.spec, err, io.env));
    return stopped('vm-not-found', `could not reach ${c.spec.id} (${c.spec.backend}${c.spec.host ? ` via ${c.spec.host}` : ''}${c.spec.instance ? `, ${c.spec.instance}` : ''}): ${lastLines(err) || `exit ${r.local.code ?? r.local.signal}`}. Nothing was run.`);
  }
  switch (pre.end) {
    case 'go':
      break;
    case 'mismatch': {
      const d = diffManifests(c.state.manifest, r.manifest);
      return stopped('source-mismatch', `the VM's tree at ${c.placed.dir} is not the laptop's (fingerprint ${pre.fingerprint?.slice(0, 12)} there, ${c.state.fingerprint.slice(0, 12)} here): ${diffText(d)}. Nothing was run.`);
    }
    case 'nodir':
      return c.mode === 'shared'
        ? stopped('source-mismatch', `the VM has no directory ${c.placed.dir}: it does not see the laptop's tree (sync: shared needs a bind mount or NFS export there). Nothing was run.`)
        : stopped('sync-failed', `the copy at ${c.placed.dir} is missing on the VM after the sync. Nothing was run.`);
    case 'nocwd':
      return stopped('source-mismatch', `the VM has no directory ${c.placed.cwd}. Nothing was run.`);
    case 'nostdin':
      return stopped('config-error', `backend ${c.spec.backend} did not pass offhost's input on to the VM (it must forward stdin); nothing was run`);
    case 'missing':
      return stopped('tool-missing', `on ${c.spec.id}: ${pre.failure}. Nothing was run.`);
    case 'fail':
      return stopped('sync-failed', `on ${c.spec.id}: ${pre.failure}. Nothing was run.`);
    case 'diskfull': {
      const mb = Number.isFinite(Number(pre.failure)) ? `${Math.floor(Number(pre.failure) / 1024)} MB free` : `the free space could not be read (df printed ${JSON.stringify(pre.df ?? '')})`;
      return stopped('disk-full', `the guest disk of ${c.spec.id} is full: ${mb} on /tmp, under the floor of ${c.spec.disk_floor_mb ?? DEFAULT_DISK_FLOOR_MB} MB (checked by the run's session before it touched anything). Nothing was run. Report it and ask before reclaiming space; offhost never cleans a VM to make room (seed 001)`);
    }
    default:
      if (r.stop?.kind === 'signal') return stopped('interrupted', 'interrupted before the command started; nothing was run');
      return stopped('connection-lost', `the session with ${c.spec.id} ended before the command started: ${lastLines(r.stderrHead) || `exit ${r.local.code ?? r.local.signal}`}. Nothing was run.`);
  }
  // The command ran.
  if (r.status !== null) {
    if (r.stop?.kind === 'timeout') return { outcome: 'timeout', exit: OUTCOME_EXIT.timeout, status: r.status, detail: `stopped after --timeout ${r.stop.seconds} s (the command's status: ${r.status})`, remoteStopped: true };
    if (r.stop?.kind === 'lock-lost') return { outcome: 'lock-lost', exit: OUTCOME_EXIT['lock-lost'], status: r.status, detail: `${r.stop.why}; the command was stopped (its status: ${r.status})`, remoteStopped: true };
    if (r.stop?.kind === 'signal') return { outcome: 'interrupted', exit: r.status, status: r.status, detail: `${r.stop.sig} passed to the command on the VM; it stopped with status ${r.status}`, remoteStopped: true };
    return { outcome: 'exit', exit: r.status, status: r.status, detail: `the command exited with ${r.status} on ${c.spec.id}`, remoteStopped: true };
  }
  // Its status never arrived: the connection went, or was ended here after the VM did not answer.
  const confirmed = await confirmStopped(c.spec, io, r.nonce!);
  const where = confirmed ? 'the command is not running on the VM (checked from a new session)' : 'could not confirm from a new session that the command stopped on the VM';
  if (r.stop?.kind === 'signal') return { outcome: 'interrupted', exit: SIGNAL_STATUS[r.stop.sig], status: null, detail: `${r.stop.sig}: the session ended before the command's status arrived; ${where}`, remoteStopped: confirmed };
  if (r.stop?.kind === 'timeout') return { outcome: 'timeout', exit: OUTCOME_EXIT.timeout, status: null, detail: `--timeout ${r.stop.seconds} s; ${where}`, remoteStopped: confirmed };
  if (r.stop?.kind === 'lock-lost') return { outcome: 'lock-lost', exit: OUTCOME_EXIT['lock-lost'], status: null, detail: `${r.stop.why}; ${where}`, remoteStopped: confirmed };
  return { outcome: 'connection-lost', exit: OUTCOME_EXIT['connection-lost'], status: null, detail: `the connection to ${c.spec.id} was lost while the command ran (${lastLines(r.stderrHead) || `exit ${r.local.code ?? r.local.signal}`}); ${where}`, remoteStopped: confirmed };
}

function lastLines(s: string, n = 2): string {
  return s.trim().split('\n').filter(Boolean).slice(-n).join(' / ');
}

/** --fetch: copies VM paths (relative to the VM cwd) back into `into`, through the backend, with tar. */
async function fetchBack(io: Io, spec: VmSpec, vmCwd: string, paths: string[], into: string): Promise<string[]> {
  mkdirSync(into, { recursive: true });
  const out: string[] = [];
  for (const p of paths) {
    if (p.includes('\0') || p.split('/').includes('..')) {
      say(io, `--fetch ${p}: not fetched (a path inside the working directory, without ..)`);
      continue;
    }
    const { quote } = await import('../routes/quote.js');
    const script = `cd -- ${quote(vmCwd)} && exec tar -cf - -- ${quote(p.replace(/^\/+/, ''))}`;
    const tar = spawn('tar', ['-xf', '-', '-C', into], { stdio: ['pipe', 'ignore', 'pipe'] });
    // Listened to from the start: tar may end as soon as it has read the end of the archive.
    const tarDone = new Promise<number | null>((res) => tar.on('close', res));
    tar.stdin.on('error', () => undefined);
    let terr = '';
    tar.stderr.on('data', (d) => (terr += d));
    const r = await remoteOnce(spec, io, script, (b) => tar.stdin.write(b));
    tar.stdin.end();
    const tcode = await tarDone;
    if (r.code === 0 && tcode === 0) {
      out.push(join(into, p));
      say(io, `fetched ${p} into ${into}`);
    } else say(io, `--fetch ${p}: not fetched: ${(r.err || terr).trim().split('\n').slice(-1)[0] ?? `exit ${r.code}`}`);
  }
  return out;
}

/** A stop with `interrupted` (130/143/129) when a signal came before this point. */
async function interruptedBefore(signals: SignalHub, when: string): Promise<void> {
  // Signal handlers run from the event loop's poll phase: let a pending one run first. Two turns, since
  // this may be reached from a poll-phase callback, whose first setImmediate runs before the next poll.
  await new Promise<void>((r) => setImmediate(() => setImmediate(r)));
  if (signals.first) throw new RunStop('interrupted', `${signals.first} ${when}; nothing was run, no lock was taken`, SIGNAL_STATUS[signals.first]);
}

/** Said once: the command's stdin is /dev/null unless --stdin, so input piped to offhost goes nowhere. */
function stdinNote(io: Io, o: RunOptions): void {
  if (o.stdin) return;
  let piped = false;
  try {
    const st = fstatSync(0);
    piped = st.isFIFO() || st.isFile() || st.isSocket();
  } catch {
    return;
  }
  if (piped) say(io, 'note: standard input is a pipe or a file, and it is not sent to the command (it reads /dev/null); pass --stdin to send it');
}

/** The host-key refusal in the words `vm status` uses (src/vms/preflight.ts). */
async function hostKeyText(spec: VmSpec, sshStderr: string, env: NodeJS.ProcessEnv): Promise<string> {
  const { hostKeyRefused } = await import('../vms/preflight.js');
  const c = hostKeyRefused(spec, sshStderr, env);
  return `${c.detail}. Nothing was run.${c.fix ? `\nfix: ${c.fix}` : ''}`;
}

/** allow: runs here (bash -c LINE, or the typed argv without a shell), signals passed on; the status is the command's. */
function runHere(io: Io, argv: string[], cwd: string, env: NodeJS.ProcessEnv, signals: SignalHub): Promise<number> {
  return new Promise((res) => {
    const child = spawn(argv[0]!, argv.slice(1), { cwd, env, stdio: 'inherit' });
    signals.listen((sig) => {
      try {
        child.kill(sig);
      } catch {
        /* gone */
      }
    });
    child.on('error', (err) => {
      // As a shell (and env, sudo) says it: not found 127, found but not runnable 126.
      const code = (err as NodeJS.ErrnoException).code;
      say(io, `${argv[0]}: ${code === 'ENOENT' ? 'command not found' : err.message}`);
      signals.listen(null);
      res(code === 'ENOENT' ? 127 : 126);
    });
    child.on('close', (code, signal) => {
      signals.listen(null);
      const SIGNO: Record<string, number> = { SIGHUP: 1, SIGINT: 2, SIGQUIT: 3, SIGKILL: 9, SIGTERM: 15, SIGPIPE: 13 };
      res(code ?? (signal ? 128 + (SIGNO[signal] ?? 1) : 1));
    });
  });
}

