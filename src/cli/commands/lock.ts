// `offhost lock acquire|heartbeat|release|status|gc`: the R4 protocol as a command (POLICY R3, R4, R7).
// Exit 0: the caller holds (or released) the lock; 1: another session holds it (or R7 order refused);
// 2: error (nothing changed).
import { Command, CommanderError } from 'commander';
import { EXIT, OffhostError, UsageError } from '../../errors.js';
import type { Clock } from '../../types.js';
import type { Io } from '../io.js';
import { parseNowOption } from '../commander.js';
import { openRepo, type Repo } from '../../git/repo.js';
import { loadConfig } from '../../policy/guard.js';
import type { ResolvedConfig } from '../../config/resolve.js';
import { parseUtc, formatUtc, isCanonicalVmId, vmIdProblem } from '../../locks/schema.js';
import {
  acquireFirstFree,
  checkSession,
  describeHolder,
  gc,
  heartbeat,
  humanDuration,
  release,
  status,
  type AcquireResult,
  type Holder,
  type LifecycleContext,
  type LockTarget,
  type PushConfig,
} from '../../locks/lifecycle.js';

/** What `offhost lock` takes from the configuration. */
export interface LockSettings {
  noticesDir?: string;
  /** Push lock changes by default. */
  push: boolean;
  remote?: string;
  branch?: string;
  skewSeconds?: number;
  /** The monorepo root from the configuration (where locks live when cwd is in no repository). */
  root?: string;
  /** Poll interval for --wait, in seconds (R4: 30). */
  pollSeconds?: number;
  /** Route or pool name -> VM ids, in order of preference. */
  pools: Map<string, string[]>;
}

/** Reads lock settings from the configuration (`locks:` and `routes:` of offhost.config.yaml) and the environment. */
export function loadLockSettings(cwd: string, env: NodeJS.ProcessEnv, configFile?: string): LockSettings {
  const config = loadConfig(configFile === undefined ? { cwd, env } : { cwd, env, configFile });
  return settingsFrom(config, env);
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
  if (env.OFFHOST_NOTICES_DIR) s.noticesDir = env.OFFHOST_NOTICES_DIR;
  if (env.OFFHOST_LOCK_PUSH !== undefined && env.OFFHOST_LOCK_PUSH !== '') s.push = /^(1|true|yes)$/i.test(env.OFFHOST_LOCK_PUSH);
  return s;
}

export interface CommonOpts {
  config?: string;
  /** Already loaded (offhost run passes the guard's). */
  settings?: LockSettings;
  session?: string;
  ai?: string;
  now?: string;
  push?: boolean;
  cwd?: string;
}

/** A fixed clock for `--now ISO`, else the Io's clock. */
export function clockFor(now: string | undefined, io: Io): Clock {
  if (now === undefined) return io.clock;
  const d = parseNowOption(now);
  return { now: () => new Date(d.getTime()) };
}

function seconds(v: string, name: string): number {
  const n = Number(v);
  if (!Number.isFinite(n) || n < 0) throw new UsageError(`${name} must be a number of seconds, not '${v}'`);
  return n;
}

/** Builds the lifecycle context from options, environment and configuration. */
export async function contextFor(
  io: Io,
  o: CommonOpts,
  needSession: boolean,
): Promise<{ ctx: LifecycleContext; settings: LockSettings }> {
  const cwd = o.cwd ? (await import('node:path')).resolve(io.cwd, o.cwd) : io.cwd;
  const settings = o.settings ?? loadLockSettings(cwd, io.env, o.config);
  const repo = await repoFor(cwd, settings);
  let session = o.session ?? io.env.OFFHOST_SESSION;
  let ai = o.ai ?? io.env.OFFHOST_AI;
  if (needSession) ({ session, ai } = checkSession(session, ai));
  const push: PushConfig | null = (o.push ?? settings.push) ? { remote: settings.remote, branch: settings.branch } : null;
  const ctx: LifecycleContext = {
    repo,
    clock: clockFor(o.now, io),
    session: session ?? 'unknown',
    ai: ai ?? 'human',
    noticesDir: settings.noticesDir,
    push,
    log: (line) => io.stderr(`offhost lock: ${line}\n`),
  };
  if (settings.skewSeconds !== undefined) ctx.skewSeconds = settings.skewSeconds;
  return { ctx, settings };
}

/**
 * The repository that holds the lock files: the one holding `cwd` (issue 3), else, when `cwd` is in no
 * repository (a rerouted command run from /tmp, say), the configured monorepo root (POLICY R6: ~/dev/koder).
 */
export async function repoFor(cwd: string, settings: LockSettings): Promise<Repo> {
  try {
    return await openRepo(cwd);
  } catch (err) {
    if (settings.root) {
      try {
        return await openRepo(settings.root);
      } catch {
        /* report the first error */
      }
    }
    throw err;
  }
}

/** `<vm>` as a canonical id, or a route/pool name from the configuration (a pool: every VM, in order). */
export function resolveTargets(name: string | undefined, component: string | undefined, settings: LockSettings): LockTarget[] {
  if (component !== undefined) {
    if (name !== undefined) throw new UsageError('give either a VM or --component <slug>, not both');
    return [{ kind: 'component', slug: component }];
  }
  if (name === undefined) throw new UsageError('which VM? give its id (e.g. s.khost1.dev-linux-koda), a route or pool name, or --component <slug>');
  if (isCanonicalVmId(name)) return [{ kind: 'vm', vm: name }];
  const pool = settings.pools.get(name);
  if (pool && pool.length) return pool.map((vm) => ({ kind: 'vm', vm }));
  if (!name.startsWith('s.') && isCanonicalVmId(`s.khost1.${name}`)) return [{ kind: 'vm', vm: `s.khost1.${name}` }];
  if (name.startsWith('s.')) throw new UsageError(`'${name}' ${vmIdProblem(name) ?? 'is not a test VM id'}`);
  const known = [...settings.pools.keys()];
  throw new UsageError(
    `'${name}' is neither a canonical VM id (s.<host>.<env>-<target>[-<slug>]) nor a route or pool in the configuration` +
      (known.length ? ` (known: ${known.join(', ')})` : ''),
  );
}

function holderJson(h: Holder, now: Date, session: string | undefined) {
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
  };
}

export function reportAcquire(r: AcquireResult, ctx: LifecycleContext, io: Io): number {
  const now = ctx.clock.now();
  if (r.status === 'acquired') {
    io.stdout(
      `acquired ${r.target} for session ${ctx.session}: ${r.file} (commit ${r.commit.slice(0, 10)}${r.pushed ? ', pushed' : ''})` +
        `${r.archived ? `; the expired lock was archived as ${r.archived}` : ''}\n`,
    );
    return EXIT.ok;
  }
  if (r.status === 'mine') {
    io.stdout(`${r.target} is already held by this session (${ctx.session}): ${r.file}\n`);
    return EXIT.ok;
  }
  io.stderr(`offhost lock: ${describeHolder(r.holder, now)}${r.where === 'remote' ? ' (on the shared remote)' : ''}\n`);
  io.stderr(`offhost lock: wait (--wait), use another VM, or ask session ${r.holder.session} to release it.\n`);
  return EXIT.held;
}

function parseArgs(cmd: Command, args: string[], io: Io): void {
  cmd
    .exitOverride()
    .configureOutput({ writeOut: (s) => io.stdout(s), writeErr: () => undefined /* rethrown as UsageError */ })
    .helpOption('-h, --help');
  try {
    cmd.parse(args, { from: 'user' });
  } catch (err) {
    if (err instanceof CommanderError) {
      if (err.code === 'commander.helpDisplayed' || err.code === 'commander.help' || err.code === 'commander.version') throw new HelpShown();
      throw new UsageError(err.message.replace(/^error: /, ''));
    }
    throw err;
  }
}

class HelpShown extends Error {}

function common(c: Command): Command {
  return c
    .option('--session <tag>', 'session tag (default: $OFFHOST_SESSION)')
    .option('--ai <name>', 'agent: claude, codex, gemini, human, ... (default: $OFFHOST_AI, else human)')
    .option('--now <iso>', 'judge expiry at this instant instead of the clock (ISO-8601 UTC)')
    .option('--cwd <dir>', 'work in the repository holding this directory')
    .option('--config <file>', 'configuration file (default: offhost.config.yaml found upward, plus the user config)');
}

const USAGE = `Usage: offhost lock <subcommand> [options]

  acquire <vm>|--component <slug> --reason TEXT [--ttl MIN] [--wait[=SECONDS]] [--poll SECONDS] [--push]
  heartbeat <vm>|--component <slug> [--push]
  release <vm>|--component <slug> [--push]
  status [--json]
  gc [--push]

Common options: --session S, --ai A (or OFFHOST_SESSION / OFFHOST_AI), --now ISO, --cwd DIR.
<vm> is a canonical id (s.khost1.dev-linux-koda), or a route or pool name from the configuration
(a pool: acquire takes the first free VM).
Exit: 0 you hold (or released) the lock, 1 another session holds it, 2 error.
`;

export async function run(args: string[], io: Io): Promise<number> {
  try {
    return await runInner(args, io);
  } catch (err) {
    // Reported here rather than by main: a lazily loaded command bundle may carry its own copy of the
    // error classes, so main's instanceof check would not recognise them (and would print a stack).
    if (err instanceof OffhostError) {
      io.stderr(`offhost lock: ${err.message}\n`);
      return err.exitCode;
    }
    throw err;
  }
}

async function runInner(args: string[], io: Io): Promise<number> {
  const [sub, ...rest] = args;
  if (sub === undefined || sub === '--help' || sub === '-h' || sub === 'help') {
    (sub === undefined ? io.stderr : io.stdout)(USAGE);
    return sub === undefined ? EXIT.error : EXIT.ok;
  }
  // `--wait` with no value means: wait until free (R4); keep it from swallowing the VM argument.
  const argv = rest.map((a) => (a === '--wait' ? '--wait=forever' : a));
  try {
    switch (sub) {
      case 'acquire':
        return await acquireCmd(argv, io);
      case 'heartbeat':
        return await heartbeatCmd(argv, io);
      case 'release':
        return await releaseCmd(argv, io);
      case 'status':
        return await statusCmd(argv, io);
      case 'gc':
        return await gcCmd(argv, io);
      default:
        throw new UsageError(`unknown subcommand '${sub}'\n\n${USAGE}`);
    }
  } catch (err) {
    if (err instanceof HelpShown) return EXIT.ok;
    throw err;
  }
}

async function acquireCmd(args: string[], io: Io): Promise<number> {
  const cmd = common(new Command('offhost lock acquire'))
    .argument('[vm]')
    .option('--component <slug>', 'a component lock (meta/context/notices/active/lock-<slug>.md)')
    .option('--reason <text>', 'which test or operation, and the ticket (required)')
    .option('--ttl <minutes>', 'ttl_minutes (default 120)')
    .option('--wait [seconds]', 'poll while another session holds it (no value: until free)')
    .option('--poll <seconds>', 'poll interval while waiting (default 30, per R4)')
    .option('--push', 'push the lock to the shared remote (compare-and-swap)')
    .option('--no-push', 'do not push even if the configuration says so');
  parseArgs(cmd, args, io);
  const o = cmd.opts<CommonOpts & { component?: string; reason?: string; ttl?: string; wait?: string; poll?: string }>();
  if (!o.reason || !o.reason.trim()) throw new UsageError('--reason is required: say in one sentence which test or operation, and the ticket');
  let ttl: number | undefined;
  if (o.ttl !== undefined) {
    ttl = Number(o.ttl);
    if (!Number.isInteger(ttl) || ttl <= 0) throw new UsageError(`--ttl must be a positive whole number of minutes, not '${o.ttl}'`);
  }
  const { ctx, settings } = await contextFor(io, o, true);
  const targets = resolveTargets(cmd.args[0], o.component, settings);
  const wait =
    o.wait === undefined
      ? undefined
      : {
          pollMs: seconds(o.poll ?? String(settings.pollSeconds ?? 30), '--poll') * 1000,
          ...(o.wait === 'forever' ? {} : { limitMs: seconds(o.wait, '--wait') * 1000 }),
        };
  const r = await acquireFirstFree(ctx, targets, ttl === undefined ? { reason: o.reason } : { reason: o.reason, ttlMinutes: ttl }, wait);
  return reportAcquire(r, ctx, io);
}

async function heartbeatCmd(args: string[], io: Io): Promise<number> {
  const cmd = common(new Command('offhost lock heartbeat'))
    .argument('[vm]')
    .option('--component <slug>', 'a component lock')
    .option('--push', 'push the heartbeat to the shared remote')
    .option('--no-push', 'do not push even if the configuration says so');
  parseArgs(cmd, args, io);
  const o = cmd.opts<CommonOpts & { component?: string }>();
  const { ctx, settings } = await contextFor(io, o, true);
  const targets = await mineAmong(ctx, resolveTargets(cmd.args[0], o.component, settings));
  const r = await heartbeat(ctx, targets);
  if (r.status === 'beat') {
    io.stdout(`heartbeat ${formatUtc(r.heartbeat)} on ${r.target}${r.commit ? ` (commit ${r.commit.slice(0, 10)}${r.pushed ? ', pushed' : ''})` : ' (unchanged)'}\n`);
    return EXIT.ok;
  }
  if (r.status === 'absent') {
    io.stderr(`offhost lock: no lock on ${r.target} (${r.file}): acquire it first with \`offhost lock acquire ${r.target} --reason ...\`\n`);
    return EXIT.error;
  }
  io.stderr(`offhost lock: only the holder refreshes a lock. ${describeHolder(r.holder, ctx.clock.now())}\n`);
  return EXIT.held;
}

/** For a pool name, the one VM of the pool this session holds (heartbeat/release act on it). */
async function mineAmong(ctx: LifecycleContext, targets: LockTarget[]): Promise<LockTarget> {
  if (targets.length === 1) return targets[0]!;
  const entries = status(ctx);
  for (const t of targets) {
    if (t.kind !== 'vm') continue;
    if (entries.some((e) => e.holder && e.holder.kind === 'vm' && e.holder.target === t.vm && e.holder.session === ctx.session)) return t;
  }
  return targets[0]!;
}

async function releaseCmd(args: string[], io: Io): Promise<number> {
  const cmd = common(new Command('offhost lock release'))
    .argument('[vm]')
    .option('--component <slug>', 'a component lock (R7: release VM locks first)')
    .option('--push', 'push the release to the shared remote')
    .option('--no-push', 'do not push even if the configuration says so');
  parseArgs(cmd, args, io);
  const o = cmd.opts<CommonOpts & { component?: string }>();
  const { ctx, settings } = await contextFor(io, o, true);
  const target = await mineAmong(ctx, resolveTargets(cmd.args[0], o.component, settings));
  const r = await release(ctx, target);
  const now = ctx.clock.now();
  switch (r.status) {
    case 'released':
      io.stdout(`released ${r.target}: archived as ${r.archive} (commit ${r.commit.slice(0, 10)}${r.pushed ? ', pushed' : ''})\n`);
      return EXIT.ok;
    case 'absent':
      io.stderr(`offhost lock: no lock on ${r.target} (${r.file}): nothing to release\n`);
      return EXIT.ok;
    case 'held':
      io.stderr(`offhost lock: refusing to release another session's live lock. ${describeHolder(r.holder, now)}\n`);
      return EXIT.held;
    case 'order': {
      const vms = r.vmLocks.map((h) => h.target);
      io.stderr(
        `offhost lock: refusing to release component lock ${r.target} while session ${ctx.session} still holds VM lock${vms.length > 1 ? 's' : ''} ${vms.join(', ')} (POLICY R7: release in reverse order, VM lock first). Run:\n` +
          vms.map((v) => `  offhost lock release ${v}\n`).join('') +
          `  offhost lock release --component ${r.target}\n`,
      );
      return EXIT.held;
    }
  }
}

async function statusCmd(args: string[], io: Io): Promise<number> {
  const cmd = common(new Command('offhost lock status')).option('--json', 'print JSON');
  parseArgs(cmd, args, io);
  const o = cmd.opts<CommonOpts & { json?: boolean }>();
  const { ctx } = await contextFor(io, o, false);
  const now = ctx.clock.now();
  const me = o.session ?? io.env.OFFHOST_SESSION;
  const entries = status(ctx);
  if (o.json) {
    io.stdout(
      `${JSON.stringify(
        {
          now: formatUtc(now),
          locks: entries.map((e) => (e.holder ? holderJson(e.holder, now, me) : { file: e.file, error: e.error ?? 'unreadable' })),
        },
        null,
        2,
      )}\n`,
    );
    return EXIT.ok;
  }
  if (entries.length === 0) {
    io.stdout('no active locks\n');
    return EXIT.ok;
  }
  for (const e of entries) {
    if (!e.holder) {
      io.stdout(`!  ${e.file}: ${e.error}\n`);
      continue;
    }
    const h = e.holder;
    const left = h.expiresAt.getTime() - now.getTime();
    const when = h.state === 'expired' ? `EXPIRED ${humanDuration(-left)} ago` : h.state === 'future' ? 'timestamps in the future' : `expires in ${humanDuration(left)}`;
    const mine = me !== undefined && h.session === me ? ' (you)' : '';
    io.stdout(
      `${h.kind === 'vm' ? 'vm       ' : 'component'} ${h.target}  ${h.session}${mine} (${h.ai}) since ${formatUtc(h.started)}  ${when}\n` +
        `          ${h.reason.trim().replace(/\s+/g, ' ')}\n`,
    );
  }
  return EXIT.ok;
}

async function gcCmd(args: string[], io: Io): Promise<number> {
  const cmd = common(new Command('offhost lock gc'))
    .option('--push', 'push the archive moves to the shared remote')
    .option('--no-push', 'do not push even if the configuration says so');
  parseArgs(cmd, args, io);
  const o = cmd.opts<CommonOpts>();
  const { ctx } = await contextFor(io, o, false);
  if (!o.session && !io.env.OFFHOST_SESSION) ctx.session = 'offhost-gc';
  const r = await gc(ctx);
  if (r.archived.length === 0) {
    io.stdout('no expired locks\n');
    return EXIT.ok;
  }
  for (const a of r.archived) io.stdout(`archived ${a.file} (session ${a.session}) as ${a.archive}: ${a.why}\n`);
  io.stdout(`commit ${r.commit?.slice(0, 10)}${r.pushed ? ', pushed' : ''}\n`);
  return EXIT.ok;
}
