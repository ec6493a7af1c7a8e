// `offhost lock acquire|heartbeat|release|status|gc`: the R4 protocol as a command (POLICY R3, R4, R7), on
// the lock store (refs/offhost/locks, src/locks/store.ts). Exit 0: the caller holds (or released) the lock;
// 1: another session (or a run) holds it, or R7 order refused; 2: error (nothing changed).
import { outputFormat } from '../common.js';
import { Command } from 'commander';
import { parseWith } from '../commander.js';
import { formatHelp } from '../help.js';
import { EXIT, isOffhostError, type OffhostError, UsageError } from '../../errors.js';
import type { Io } from '../../io.js';
import { formatUtc, MAX_TTL_MINUTES } from '../../locks/schema.js';
import { repair } from '../../locks/repair.js';
import { acquireFirstFree, gc, heartbeat, release, status } from '../../locks/lifecycle.js';
import { isLockLost } from '../../locks/holder.js';
import { describeHolder, holderJson, statusLines } from '../../report/locks.js';
import { contextFor, parseWait, reportAcquire, resolveTargets, targetArg, type CommonOpts, type LifecycleContext, type LockTarget } from '../../run/lock-context.js';

export { contextFor, reportAcquire, settingsFrom, loadLockSettings, type LockSettings } from '../../run/lock-context.js';

/** Every subcommand's exit statuses (its help ends with them and its examples). */
const LOCK_EXIT = '0 you hold (or released) the lock, 1 another session or a run holds it (or R7 order refused), 2 error (nothing changed), 230 the lock store is broken (`offhost lock repair`), 231 the remote refused the push (its message is printed; not retried).';

function parseArgs(cmd: Command, args: string[], io: Io, examples: string[]): void {
  if (parseWith(cmd, args, io, { exit: LOCK_EXIT, examples }) !== null) throw new HelpShown();
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

const USAGE = formatHelp({
  usage: [
    'lock acquire <vm>|--component <slug> --reason TEXT [--ttl MIN] [--wait[=SECONDS]] [--push]',
    'lock heartbeat|release <vm>|--component <slug> [--push]',
    'lock status [--format json]',
    'lock gc [--push]',
    'lock repair',
  ].map((u) => `offhost ${u}`),
  description:
    'Takes, refreshes and gives back VM locks (POLICY R3/R4/R7): one session per VM, with a TTL kept alive by heartbeats, archived when released or expired, never deleted. Locks live on refs/offhost/locks (docs/LOCKS.md); the files under meta/context/notices/vm-active/ are a read-only view of it. <vm> is a canonical id (s.khost1.dev-linux-koda), or a route or pool name from the configuration (a pool: acquire takes the first free VM). `offhost lock SUBCOMMAND --help` shows that subcommand\'s options.',
  subcommands: [
    ['acquire', 'take the lock (or wait for it with --wait)'],
    ['heartbeat', 'refresh the lock you hold before its TTL runs out'],
    ['release', 'give the lock back: archived as released'],
    ['status', 'what the lock ref holds, branch locks, and what was recovered after a crash'],
    ['gc', "archive expired locks, drop dead runs' claims, migrate locks committed to the branch"],
    ['repair', 'give a broken lock store a new tip: archive what can be read (exit 230 names what is broken)'],
  ],
  options: [
    ['--session <tag>', 'session tag (default: $OFFHOST_SESSION)'],
    ['--ai <name>', 'agent: claude, codex, gemini, human, ... (default: $OFFHOST_AI, else human)'],
    ['--now <iso>', 'judge expiry at this instant instead of the clock (ISO-8601 UTC)'],
    ['--cwd <dir>', 'work in the repository holding this directory'],
    ['--config <file>', 'configuration file (default: offhost.config.yaml found upward, plus the user config)'],
    ['--push, --no-push', 'coordinate through the shared remote (push refs/offhost/locks with a lease), or not'],
  ],
  exit: LOCK_EXIT,
  examples: [
    "offhost lock acquire s.khost1.dev-linux-koda --reason 'e2e of the koda engine, KODA-123'",
    'offhost lock heartbeat s.khost1.dev-linux-koda',
    'offhost lock release s.khost1.dev-linux-koda',
    'offhost lock status --json',
  ],
});

export async function run(args: string[], io: Io): Promise<number> {
  try {
    return await runInner(args, io);
  } catch (err) {
    // Reported here rather than by main: a lazily loaded command bundle may carry its own copy of the
    // error classes, so main's instanceof check would not recognise them (and would print a stack).
    if (isOffhostError(err) || isLockLost(err)) {
      io.stderr(`offhost lock: ${(err as OffhostError).message}\n`);
      return (err as OffhostError).exitCode;
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
      case 'repair':
        return await repairCmd(argv, io);
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
    .description('Takes the lock of a VM (or of a component) for this session: refused while another session or a run holds it, unless --wait waits for it. A pool name takes the first free VM of the pool.')
    .argument('[vm]')
    .option('--component <slug>', 'a component lock (meta/context/notices/active/lock-<slug>.md)')
    .option('--reason <text>', 'which test or operation, and the ticket (required)')
    .option('--ttl <minutes>', 'ttl_minutes (default 120)')
    .option('--wait [seconds]', 'poll while another session holds it (no value: until free)')
    .option('--poll <seconds>', 'poll interval while waiting (default 30, per R4)')
    .option('--push', 'coordinate through the shared remote (push refs/offhost/locks with a lease)')
    .option('--no-push', 'do not push even if the configuration says so');
  parseArgs(cmd, args, io, ["offhost lock acquire s.khost1.dev-linux-koda --reason 'e2e of the koda engine, KODA-123'", "offhost lock acquire koda --reason 'flaky test hunt' --wait=600 --push"]);
  const o = cmd.opts<CommonOpts & { component?: string; reason?: string; ttl?: string; wait?: string; poll?: string }>();
  if (!o.reason || !o.reason.trim()) throw new UsageError('--reason is required: say in one sentence which test or operation, and the ticket');
  let ttl: number | undefined;
  if (o.ttl !== undefined) {
    ttl = Number(o.ttl);
    if (!/^\d+$/.test(o.ttl.trim()) || ttl <= 0 || ttl > MAX_TTL_MINUTES) throw new UsageError(`--ttl must be a whole number of minutes from 1 to ${MAX_TTL_MINUTES} (24 h; a longer hold is kept alive by heartbeats), not '${o.ttl}'`);
  }
  const { ctx, settings } = await contextFor(io, o, true);
  const wait = parseWait(o.wait, o.poll, settings.pollSeconds);
  const targets = resolveTargets(cmd.args[0], o.component, settings);
  const r = await acquireFirstFree(
    ctx.store,
    targets.map(targetArg),
    { session: ctx.session, ai: ctx.ai, reason: o.reason, ...(ttl ? { ttlMinutes: ttl } : {}) },
    wait && { ...wait, onWait: (last) => last.status === 'held' && ctx.log(`${describeHolder(last.holder, ctx.clock.now())}\nwaiting (polling every ${Math.round(wait.pollMs / 1000)} s)...`) },
  );
  return reportAcquire(r, ctx, io);
}

/** For a pool name, the one VM of the pool this session holds (heartbeat/release act on it). */
async function mineAmong(ctx: LifecycleContext, targets: LockTarget[]): Promise<LockTarget> {
  if (targets.length === 1) return targets[0]!;
  const st = await status(ctx.store);
  for (const t of targets) {
    if (t.kind === 'vm' && st.locks.some((e) => e.holder?.target === t.vm && e.holder.session === ctx.session)) return t;
  }
  return targets[0]!;
}

async function heartbeatCmd(args: string[], io: Io): Promise<number> {
  const cmd = common(new Command('offhost lock heartbeat'))
    .description('Refreshes the lock this session holds (its heartbeat), so that it does not expire while the work goes on.')
    .argument('[vm]')
    .option('--component <slug>', 'a component lock')
    .option('--push', 'coordinate through the shared remote')
    .option('--no-push', 'do not push even if the configuration says so');
  parseArgs(cmd, args, io, ['offhost lock heartbeat s.khost1.dev-linux-koda']);
  const o = cmd.opts<CommonOpts & { component?: string }>();
  const { ctx, settings } = await contextFor(io, o, true);
  const t = await mineAmong(ctx, resolveTargets(cmd.args[0], o.component, settings));
  try {
    const r = await heartbeat(ctx.store, { ...targetArg(t), session: ctx.session });
    io.stdout(`heartbeat ${formatUtc(r.heartbeat)} on ${r.target} (commit ${r.commit?.slice(0, 10)}${r.pushed ? ', pushed' : ''}); expires at ${formatUtc(r.expiresAt)} unless refreshed\n`);
    return EXIT.ok;
  } catch (err) {
    if (!isLockLost(err)) throw err;
    if (err.reason === 'absent') {
      io.stderr(`offhost lock: no lock on ${err.target}: acquire it first with \`offhost lock acquire ${err.target} --reason ...\`\n`);
      return EXIT.error;
    }
    io.stderr(`offhost lock: ${err.message}${err.holder && err.reason === 'taken' ? `. ${describeHolder(err.holder, ctx.clock.now())}` : ''}\n`);
    return EXIT.held;
  }
}

async function releaseCmd(args: string[], io: Io): Promise<number> {
  const cmd = common(new Command('offhost lock release'))
    .description('Gives back the lock this session holds: archived as released on refs/offhost/locks. Refused while a run still holds the VM, and for a component lock while this session holds VM locks (R7).')
    .argument('[vm]')
    .option('--component <slug>', 'a component lock (R7: release VM locks first)')
    .option('--push', 'coordinate through the shared remote')
    .option('--no-push', 'do not push even if the configuration says so');
  parseArgs(cmd, args, io, ['offhost lock release s.khost1.dev-linux-koda', 'offhost lock release --component koda-engine']);
  const o = cmd.opts<CommonOpts & { component?: string }>();
  const { ctx, settings } = await contextFor(io, o, true);
  const t = await mineAmong(ctx, resolveTargets(cmd.args[0], o.component, settings));
  const r = await release(ctx.store, { ...targetArg(t), session: ctx.session, ai: ctx.ai });
  const now = ctx.clock.now();
  switch (r.status) {
    case 'released':
      io.stdout(`released ${r.target}: archived as ${r.archive} on refs/offhost/locks (commit ${r.commit?.slice(0, 10)}${r.pushed ? ', pushed' : ''})\n`);
      return EXIT.ok;
    case 'kept':
      io.stdout(`${r.target}: kept (${r.why})\n`);
      return EXIT.ok;
    case 'absent':
      io.stderr(`offhost lock: no lock on ${r.target} (${r.file}): nothing to release\n`);
      return EXIT.ok;
    case 'held':
      io.stderr(`offhost lock: refusing to release another session's live lock. ${describeHolder(r.holder, now)}\n`);
      return EXIT.held;
    case 'busy':
      io.stderr(`offhost lock: refusing to release ${r.target} while a run holds it: ${r.claims.map((c) => `${c.id} (pid ${c.pid} on ${c.host}: ${c.command})`).join(', ')}; it is released when the run ends\n`);
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
  const cmd = common(new Command('offhost lock status'))
    .description('Shows what the lock ref holds (who, since when, until when), the locks committed to the branch, and what was recovered after a crash. Changes nothing.')
    .option('-f, --format <kind>', 'stylish (the default) or json').option('--json', 'print JSON (the same as --format json)').option('--push', 'read the shared remote').option('--no-push', 'this clone only');
  parseArgs(cmd, args, io, ['offhost lock status', 'offhost lock status --format json --push']);
  const o = cmd.opts<CommonOpts & { json?: boolean; format?: string }>();
  o.json = outputFormat(o) === 'json';
  const { ctx } = await contextFor(io, o, false);
  const now = ctx.clock.now();
  const me = o.session ?? io.env.OFFHOST_SESSION;
  const st = await status(ctx.store);
  const entries = [...st.locks, ...st.branch];
  if (o.json) {
    const lock = (e: (typeof entries)[number]) =>
      e.holder ? { ...holderJson(e.holder, now, me), ...(e.deadClaims ? { dead_claims: e.deadClaims } : {}), ...('takeover' in e && e.takeover ? { takeover: e.takeover } : {}) } : { file: e.file, error: e.error ?? 'unreadable' };
    const sharing = { mode: st.sharing.mode, location: st.sharing.location, shared: st.sharing.shared, covers: st.sharing.covers, notes: st.sharing.notes };
    io.stdout(`${JSON.stringify({ now: formatUtc(now), ref: st.tip, locks: entries.map(lock), recovered: st.recovered, view: st.view, sharing }, null, 2)}\n`);
    return EXIT.ok;
  }
  io.stdout(`locks: ${st.sharing.covers}\n`);
  for (const n of st.sharing.notes) io.stdout(`sharing: ${n}\n`);
  for (const r of st.recovered) io.stdout(`recovered: ${r}\n`);
  for (const v of st.view) io.stdout(`view: ${v.path} ${v.why}\n`);
  if (entries.length === 0) io.stdout('no active locks\n');
  for (const e of entries) {
    if (!e.holder) io.stdout(`!  ${e.file}: ${e.error}\n`);
    else {
      const takeover = 'takeover' in e && e.takeover ? `          ${e.holder.state === 'future' ? 'FUTURE: ' : ''}${e.holder.why}\n          takeover: ${e.takeover}\n` : '';
      io.stdout(statusLines(e.holder, now, me) + (e.deadClaims ? e.deadClaims.map((d) => `          dead: ${d}\n`).join('') : '') + takeover);
    }
  }
  return EXIT.ok;
}

async function gcCmd(args: string[], io: Io): Promise<number> {
  const cmd = common(new Command('offhost lock gc'))
    .description("Archives expired locks (as expired), drops the claims of runs that are gone, and moves locks committed to the branch into refs/offhost/locks.")
    .option('--push', 'coordinate through the shared remote')
    .option('--no-push', 'do not push even if the configuration says so');
  parseArgs(cmd, args, io, ['offhost lock gc', 'offhost lock gc --push']);
  const o = cmd.opts<CommonOpts>();
  const { ctx } = await contextFor(io, o, false);
  const session = o.session ?? io.env.OFFHOST_SESSION ?? 'offhost-gc';
  const r = await gc(ctx.store, { session });
  for (const a of r.archived) io.stdout(`archived ${a.file} (session ${a.session}) as ${a.archive}: ${a.why}\n`);
  for (const m of r.migrated) io.stdout(`migrated ${m} into refs/offhost/locks (the branch still carries the file: remove it in your next commit with \`git rm ${m.replace(/^HEAD:/, '')}\` (offhost then shows it as a read-only view))\n`);
  for (const w of r.waiting) io.stdout(`not yet: ${w.file} (session ${w.session}): ${w.why}\n`);
  for (const x of ctx.store.recovered) io.stdout(`recovered: ${x}\n`);
  if (r.archived.length === 0 && r.migrated.length === 0) io.stdout(r.waiting.length ? 'nothing archived yet\n' : 'no expired locks\n');
  else io.stdout(`commit ${r.commit?.slice(0, 10)}${r.pushed ? ', pushed' : ''}\n`);
  return EXIT.ok;
}

async function repairCmd(args: string[], io: Io): Promise<number> {
  const cmd = common(new Command('offhost lock repair'))
    .description(
      'Gives a broken lock store (a garbage ref, a missing object, a blob or a gitlink where locks live) a new tip: the archives that can be read are kept, the active locks that can be read are archived with a note (no one holds them after the repair), what cannot be read is named in the commit message, and the old value stays in the reflog (and at refs/offhost/broken/<time> when it was a commit). Does nothing to a healthy store.',
    )
    .option('--push', 'the store shared through the remote')
    .option('--no-push', 'the user store or this clone only');
  parseArgs(cmd, args, io, ['offhost lock repair']);
  const o = cmd.opts<CommonOpts>();
  const { ctx } = await contextFor(io, o, false, { freeEnded: false });
  const session = o.session ?? io.env.OFFHOST_SESSION ?? 'offhost-repair';
  const r = await repair(ctx.store, { session });
  if (r.status === 'healthy') {
    io.stdout(`the lock store is healthy (${ctx.store.where}): nothing to repair\n`);
    return EXIT.ok;
  }
  for (let i = 0; i < r.where.length; i++) io.stdout(`repaired ${r.where[i]}: ${r.why[i]}\n`);
  for (const a of r.archived) io.stdout(`archived ${a}\n`);
  if (r.kept) io.stdout(`kept ${r.kept} archive file(s)\n`);
  for (const l of r.lost) io.stdout(`could not be read: ${l}\n`);
  if (r.commit) io.stdout(`new tip ${r.commit.slice(0, 10)} on refs/offhost/locks\n`);
  return EXIT.ok;
}
