// `offhost run [options] -- COMMAND`: classify COMMAND as `offhost check` does, then
//   allow   -> run it here (bash -c), exit with its status;
//   deny    -> print the reason, exit 1;
//   reroute -> probe the backend (missing tool: setup hint, exit 69, never run locally), take the route VM's
//              lock (a pool: the first free VM) unless this session holds it already, run the route's
//              command, refresh the heartbeat while it runs (intervals under ttl/3), archive the lock when
//              it ends (success, failure, SIGINT/SIGTERM), exit with the command's status (130/143 when
//              interrupted).
import { spawn, type ChildProcess } from 'node:child_process';
import { resolve } from 'node:path';
import { Command, CommanderError } from 'commander';
import { EXIT, isOffhostError, UsageError } from '../../errors.js';
import type { Io } from '../io.js';
import { loadGuard } from '../../config/load-guard.js';
import { lineOnVm, type GuardVerdict } from '../../policy/guard.js';
import { mapPath, probeBackend } from '../../routes/index.js';
import type { ResolvedConfig, RouteConfig } from '../../config/resolve.js';
import {
  acquireFirstFree,
  describeHolder,
  heartbeat,
  heartbeatIntervalMs,
  release,
  startHeartbeats,
  type LifecycleContext,
  type LockTarget,
} from '../lock-context.js';
import { DEFAULT_TTL_MINUTES } from '../../locks/schema.js';
import { contextFor, reportAcquire, settingsFrom, type LockSettings } from './lock.js';
import { gateCandidates, offerNewVm } from '../../vms/gate.js';
import { runFresh } from '../../vms/sandbox.js';

const USAGE = `Usage: offhost run [--session S] [--ai A] [--reason R] [--cwd DIR] [--ttl MIN] [--wait[=SECONDS]] [--push] -- COMMAND

Classifies COMMAND as \`offhost check\` does. allow: runs it here. deny: refuses (exit 1). reroute: takes the
route VM's lock, runs the command on the VM, keeps the lock's heartbeat fresh, archives the lock at the end,
and exits with the command's status (130/143 when interrupted; 69 when the VM's tool is missing).
`;

interface RunOpts {
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
  fresh?: boolean;
  fetch?: string[];
  fetchTo?: string;
}

const SIGNAL_EXIT: Record<string, number> = { SIGINT: EXIT.interrupted, SIGTERM: 143, SIGHUP: 129 };
const SIGNO: Record<string, number> = { SIGHUP: 1, SIGINT: 2, SIGQUIT: 3, SIGKILL: 9, SIGTERM: 15, SIGPIPE: 13 };

/**
 * SIGINT/SIGTERM/SIGHUP for the whole of `offhost run`: remembered while the lock is being taken (the
 * command is then not started), forwarded to the command while it runs, and held off while the lock is
 * archived (so an impatient second Ctrl-C cannot leave the lock behind).
 */
class Signals {
  interrupted: NodeJS.Signals | null = null;
  private child: ChildProcess | null = null;
  private releasing = false;
  private readonly handlers: [NodeJS.Signals, () => void][];
  constructor(private readonly io: Io) {
    this.handlers = (['SIGINT', 'SIGTERM', 'SIGHUP'] as NodeJS.Signals[]).map((sig) => {
      const h = () => this.on(sig);
      process.on(sig, h);
      return [sig, h];
    });
  }
  private on(sig: NodeJS.Signals): void {
    this.interrupted ??= sig;
    if (this.child && this.child.exitCode === null && this.child.signalCode === null) {
      try {
        this.child.kill(sig);
      } catch {
        /* already gone */
      }
    } else if (this.releasing) this.io.stderr('offhost run: archiving the VM lock, one moment...\n');
  }
  setChild(c: ChildProcess | null): void {
    this.child = c;
  }
  setReleasing(): void {
    this.releasing = true;
  }
  dispose(): void {
    for (const [sig, h] of this.handlers) process.off(sig, h);
  }
}

/** Runs `bash -c line` with inherited stdio; resolves with its exit status (128+n when killed by signal n). */
export function runBash(line: string, cwd: string, env: NodeJS.ProcessEnv, signals?: Signals): Promise<number> {
  return new Promise((res, rej) => {
    const child = spawn('bash', ['-c', line], { cwd, env, stdio: 'inherit' });
    signals?.setChild(child);
    child.on('error', (e) => {
      signals?.setChild(null);
      rej(e);
    });
    child.on('close', (code, signal) => {
      signals?.setChild(null);
      res(code ?? (signal ? 128 + (SIGNO[signal] ?? 1) : 1));
    });
  });
}

function parse(args: string[], io: Io): { o: RunOpts; line: string } {
  const dd = args.indexOf('--');
  const optArgs = (dd === -1 ? args : args.slice(0, dd)).map((a) => (a === '--wait' ? '--wait=forever' : a));
  const cmd = new Command('offhost run')
    .exitOverride()
    .configureOutput({ writeOut: (s) => io.stdout(s), writeErr: () => undefined /* rethrown as UsageError */ })
    .argument('[command...]')
    .option('--session <tag>', 'session tag (default: $OFFHOST_SESSION)')
    .option('--ai <name>', 'agent name (default: $OFFHOST_AI, else human)')
    .option('--reason <text>', 'why, for the lock (default: the command line)')
    .option('--cwd <dir>', 'run as if from this directory')
    .option('--ttl <minutes>', 'ttl_minutes of the lock taken (default 120)')
    .option('--heartbeat <seconds>', 'heartbeat interval (default: a quarter of the ttl; must be under ttl/3)')
    .option('--wait [seconds]', 'wait while another session holds the VM')
    .option('--poll <seconds>', 'poll interval while waiting (default 30)')
    .option('--push', 'push the lock to the shared remote')
    .option('--no-push', 'do not push even if the configuration says so')
    .option('--fresh', 'run in a new disposable sandbox of the route\'s VM (lifecycle verbs), removed after')
    .option('--fetch <path>', 'with --fresh: copy this VM-side path back (repeatable)', (v: string, acc: string[] = []) => [...acc, v])
    .option('--fetch-to <dir>', 'with --fresh: where fetched results go (default ./offhost-results)')
    .option('--role <role>', 'laptop, vm or ci')
    .option('--config <file>', 'configuration file');
  try {
    cmd.parse(optArgs, { from: 'user' });
  } catch (err) {
    if (err instanceof CommanderError) {
      if (err.code === 'commander.helpDisplayed') throw new HelpShown();
      throw new UsageError(`${err.message.replace(/^error: /, '')}\n${USAGE}`);
    }
    throw err;
  }
  const words = dd === -1 ? cmd.args : [...cmd.args, ...args.slice(dd + 1)];
  if (words.length === 0) throw new UsageError(`missing COMMAND\n${USAGE}`);
  return { o: cmd.opts<RunOpts>(), line: words.join(' ') };
}

class HelpShown extends Error {}
class Interrupted extends Error {}

export async function run(args: string[], io: Io): Promise<number> {
  try {
    return await runInner(args, io);
  } catch (err) {
    // Reported here too (not only by main's runCommand) so that in-process callers get the exit status;
    // isOffhostError, not instanceof: another bundle's copy of the error classes is recognised as well.
    if (isOffhostError(err)) {
      io.stderr(`offhost run: ${err.message}\n`);
      return err.exitCode;
    }
    throw err;
  }
}

async function runInner(args: string[], io: Io): Promise<number> {
  if (args[0] === '--help' || args[0] === '-h') {
    io.stdout(USAGE);
    return EXIT.ok;
  }
  let parsed: { o: RunOpts; line: string };
  try {
    parsed = parse(args, io);
  } catch (err) {
    if (err instanceof HelpShown) return EXIT.ok;
    throw err;
  }
  const { o, line } = parsed;
  const cwd = o.cwd ? resolve(io.cwd, o.cwd) : io.cwd;
  const guard = loadGuard({
    cwd,
    env: io.env,
    ...(o.role !== undefined ? { role: o.role as never } : {}),
    ...(o.config !== undefined ? { configFile: o.config } : {}),
  });
  const v = guard.classify(line, { cwd, env: io.env });

  if (v.decision === 'allow') {
    const signals = new Signals(io);
    try {
      const code = await runBash(line, cwd, io.env, signals);
      return signals.interrupted ? (SIGNAL_EXIT[signals.interrupted] ?? code) : code;
    } finally {
      signals.dispose();
    }
  }
  if (v.decision === 'deny') {
    io.stderr(`offhost run: refused${v.rule ? ` (${v.rule})` : ''}: ${v.reason}\n`);
    return EXIT.deny;
  }

  // reroute
  const route = v.route;
  if (!route) throw new UsageError('the guard rerouted the command without a route');
  const config = guard.config;
  const routeCfg = config.routes.get(route.name);
  let candidates = routeCfg?.vms.length ? routeCfg.vms : [route.vm];
  for (const id of candidates) {
    const spec = config.vms.get(id);
    if (!spec) continue;
    const hint = probeBackend(spec, io.env);
    if (hint) {
      io.stderr(`offhost run: ${v.reason}\noffhost run: cannot reach ${id}: \`${hint.tool}\` is missing. Nothing was run.\n${hint.message}\n`);
      return EXIT.backendMissing;
    }
  }
  // The run's preflight step (src/vms/gate.ts): isolation as required, then the cheap VM checks.
  const gate = gateCandidates(config, { route: route.name, rule: v.rule, candidates, env: io.env, preflight: !o.fresh });
  if (!gate.ok) {
    io.stderr(`offhost run: ${v.reason}\noffhost run: ${gate.message}`);
    return gate.status;
  }
  for (const n of gate.notes) io.stderr(`offhost run: ${n}\n`);
  candidates = gate.usable;
  if (o.fresh) {
    // A disposable sandbox (src/vms/sandbox.ts): uniquely named, no VM lock (nobody else can hold it).
    const spec = config.vms.get(candidates[0]!)!;
    const env: Record<string, string> = config.home ? { HOME: mapPath(config.home, [...(routeCfg?.pathMap ?? []), ...config.pathMap]) } : {};
    io.stderr(`offhost run: ${v.reason}\n`);
    return runFresh(spec, { argv: ['bash', '-c', line], cwd: route.cwd, env }, { env: io.env, stdout: io.stdout, stderr: io.stderr, fetch: o.fetch ?? [], fetchTo: resolve(cwd, o.fetchTo ?? 'offhost-results'), now: io.clock.now() });
  }

  let ttl = DEFAULT_TTL_MINUTES;
  if (o.ttl !== undefined) {
    ttl = Number(o.ttl);
    if (!Number.isInteger(ttl) || ttl <= 0) throw new UsageError(`--ttl must be a positive whole number of minutes, not '${o.ttl}'`);
  }
  const intervalMs = heartbeatIntervalMs(ttl, o.heartbeat === undefined ? undefined : Number(o.heartbeat) * 1000);
  const settings = settingsFrom(config, io.env);
  const common = { settings, ...(o.session ? { session: o.session } : {}), ...(o.ai ? { ai: o.ai } : {}), cwd, ...(o.push !== undefined ? { push: o.push } : {}) };
  const { ctx } = await contextFor(io, common, true);
  const signals = new Signals(io);
  try {
    return await underLock(io, ctx, signals, { v, line, o, settings, candidates, routeCfg, config, ttl, intervalMs });
  } finally {
    signals.dispose();
  }
}

async function underLock(
  io: Io,
  ctx: LifecycleContext,
  signals: Signals,
  a: {
    v: GuardVerdict;
    line: string;
    o: RunOpts;
    settings: LockSettings;
    candidates: string[];
    routeCfg: RouteConfig | undefined;
    config: ResolvedConfig;
    ttl: number;
    intervalMs: number;
  },
): Promise<number> {
  const { v, line, o, settings, candidates, routeCfg, config, ttl, intervalMs } = a;
  const route = v.route!;
  const cwd = o.cwd ? resolve(io.cwd, o.cwd) : io.cwd;
  const targets: LockTarget[] = candidates.map((vm) => ({ kind: 'vm', vm }));
  const wait =
    o.wait === undefined
      ? undefined
      : {
          pollMs: Number(o.poll ?? settings.pollSeconds ?? 30) * 1000,
          ...(o.wait === 'forever' ? {} : { limitMs: Number(o.wait) * 1000 }),
          // A signal while waiting for the VM ends the wait.
          sleep: async (ms: number) => {
            const end = Date.now() + ms;
            while (Date.now() < end) {
              if (signals.interrupted) throw new Interrupted();
              await new Promise((r) => setTimeout(r, Math.min(100, end - Date.now())));
            }
          },
        };
  const reason = o.reason ?? `offhost run (${v.rule ?? 'reroute'}): ${line.length > 200 ? `${line.slice(0, 197)}...` : line}`;
  let got: Awaited<ReturnType<typeof acquireFirstFree>>;
  try {
    got = await acquireFirstFree(ctx, targets, { reason, ttlMinutes: ttl }, wait);
  } catch (err) {
    if (err instanceof Interrupted) return SIGNAL_EXIT[signals.interrupted!] ?? EXIT.interrupted;
    throw err;
  }
  if (got.status === 'held') {
    const code = reportAcquire(got, ctx, io);
    io.stderr(offerNewVm(config, route.name, routeCfg?.vms ?? candidates));
    return code;
  }
  const vmId = got.target;
  const took = got.status === 'acquired';
  const target: LockTarget = { kind: 'vm', vm: vmId };
  const archive = async (): Promise<void> => {
    if (!took) return;
    signals.setReleasing();
    try {
      const r = await release(ctx, target);
      if (r.status === 'released') io.stderr(`offhost run: released ${vmId} (archived as ${r.archive})\n`);
      else if (r.status === 'held') io.stderr(`offhost run: WARNING: not released, the lock is another session's now: ${describeHolder(r.holder, ctx.clock.now())}\n`);
    } catch (err) {
      io.stderr(`offhost run: WARNING: could not release ${vmId}: ${(err as Error).message}\nRun \`offhost lock release ${vmId}\`.\n`);
    }
  };
  if (signals.interrupted) {
    // Interrupted while the lock was being taken: do not start the command.
    await archive();
    return SIGNAL_EXIT[signals.interrupted] ?? EXIT.interrupted;
  }
  io.stderr(
    took
      ? `offhost run: ${v.reason}\noffhost run: holding ${vmId} (lock ${got.file}); running on the VM\n`
      : `offhost run: ${v.reason}\noffhost run: this session already holds ${vmId}; running on the VM\n`,
  );

  // The command for the VM actually taken (a pool may give another VM than the route's first).
  let command = route.command;
  if (vmId !== route.vm) {
    try {
      command = lineOnVm(config, routeCfg ?? { name: route.name, vms: [route.vm], pathMap: [] }, vmId, line, route.cwd);
    } catch (err) {
      await archive();
      throw err;
    }
  }

  const beats = startHeartbeats({
    clock: ctx.clock,
    intervalMs,
    beat: async () => {
      try {
        const r = await heartbeat(ctx, target);
        if (r.status === 'held') io.stderr(`offhost run: WARNING: the lock was taken over: ${describeHolder(r.holder, ctx.clock.now())}\n`);
        else if (r.status === 'absent') io.stderr(`offhost run: WARNING: the lock file ${r.file} is gone\n`);
      } catch (err) {
        io.stderr(`offhost run: heartbeat failed (will retry): ${(err as Error).message}\n`);
      }
    },
  });
  let code: number;
  try {
    // The VM side runs as this session: a guard or shim judging the route's own ssh/incus line sees the lock as ours.
    code = await runBash(command, cwd, { ...io.env, OFFHOST_SESSION: ctx.session }, signals);
  } finally {
    await beats.stop();
    await archive();
  }
  return signals.interrupted ? (SIGNAL_EXIT[signals.interrupted] ?? code) : code;
}
