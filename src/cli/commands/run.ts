// `offhost run [options] -- COMMAND`: the options, then the pipeline in src/run/pipeline.ts (classify ->
// route -> preflight -> hold -> sync + verify -> execute -> record -> release). docs/RUN.md describes
// the outcomes and their exit statuses.
import { Command, CommanderError } from 'commander';
import { EXIT, RUN_EXIT } from '../../errors.js';
import type { Io } from '../../io.js';
import { formatHelp } from '../help.js';
import { runPipeline, type RunOptions } from '../../run/pipeline.js';
import { commandOf } from '../../run/command.js';

const USAGE = formatHelp({
  usage: ['offhost run [options] -- LINE', 'offhost run [options] -- PROGRAM [ARG...]'],
  description:
    "One word after -- is a shell line (run by bash -c); several words are an argv, passed word for word (as sudo, env or timeout do), here and on the VM. Classifies the command as `offhost check` does. allow: runs it here. deny: refuses. reroute: holds the route's VM (its lock and a claim of this run), brings the VM's copy of the source up to date and verifies it, runs the command there with signals passed on, records the run (`offhost runs`), releases the VM, and exits with the command's own status, or with one of offhost's outcomes. The last line on stderr always says which (--json: as JSON).",
  options: [
    ["--session S", "lock session (default: $OFFHOST_SESSION, else one per process tree)"],
    ["--ai A", "agent name (default: $OFFHOST_AI, else human)"],
    ["--reason R", "why, for the lock"],
    ["--cwd DIR", "run as if from DIR"],
    ["--ttl MIN", "ttl_minutes of the lock taken (default 120)"],
    ["--heartbeat SEC", "heartbeat interval (under ttl/3)"],
    ["--wait[=SEC]", "wait while the VM is held (by another session or another run of this one)"],
    ["--poll SEC", "poll interval while waiting (default 30)"],
    ["--timeout SEC", "stop the command after SEC seconds (TERM, then KILL after the grace period)"],
    ["--grace SEC", "seconds between TERM and KILL on the VM (default 10)"],
    ["--stdin", "pass this stdin to the command (default: closed)"],
    ["--commit REF", "run commit REF (sync: git or rsync), not the working tree; refuses a dirty tree"],
    ["--allow-dirty", "with --commit: run REF even though the tree has uncommitted changes"],
    ["--clean / --no-clean", "remove (or not) the VM copy's files outside the source set before the build, keeping the VM's `keep:` caches (default: the VM's `clean:`)"],
    ["--fetch PATH", "after the run, copy PATH (relative to the VM cwd) back into the run's record (repeatable)"],
    ["--fresh", "run in a new disposable sandbox of the route's VM (lifecycle verbs, docs/VMS.md)"],
    ["--fetch-to DIR", "with --fresh: where fetched results go (default ./offhost-results)"],
    ["--json", "the verdict line as one JSON object"],
    ["--debug", "a trace on stderr of what the run read and did, each step with its time since the process started"],
    ["--push / --no-push", "push the lock to the shared remote (or not)"],
    ["--role ROLE", "laptop, vm or ci"],
    ["--config FILE", "configuration file"],
  ],
  exit: "the command's own status when it ran; else one of offhost's outcomes, 240-252 (240 refused, 241 VM held, 246 sync failed, 247 config error, 250 timed out, ...: docs/RUN.md has them all).",
  examples: [
    "offhost run -- 'make build-safe'",
    "offhost run -- make build-safe 'KODA_FLAGS=-O2 -g'",
    "offhost run --reason 'e2e of the koda engine' --wait -- 'cd engines/lang/koda && make e2e'",
    "offhost run --commit HEAD --fetch build/report.xml -- 'make test'",
  ],
});

class HelpShown extends Error {}

function parse(args: string[], io: Io): RunOptions {
  const dd = args.indexOf('--');
  const optArgs = (dd === -1 ? args : args.slice(0, dd)).map((a) => (a === '--wait' ? '--wait=forever' : a));
  const fetch: string[] = [];
  const cmd = new Command('offhost run')
    .exitOverride()
    .helpOption(false)
    .configureOutput({ writeOut: (s) => io.stdout(s), writeErr: () => undefined })
    .argument('[command...]')
    .option('--session <tag>')
    .option('--ai <name>')
    .option('--reason <text>')
    .option('--cwd <dir>')
    .option('--ttl <minutes>')
    .option('--heartbeat <seconds>')
    .option('--wait [seconds]')
    .option('--poll <seconds>')
    .option('--timeout <seconds>')
    .option('--grace <seconds>')
    .option('--stdin')
    .option('--commit <ref>')
    .option('--allow-dirty')
    .option('--clean')
    .option('--no-clean')
    .option('--fetch <path>', '', (v: string) => {
      fetch.push(v);
      return fetch;
    })
    .option('--fresh')
    .option('--fetch-to <dir>')
    .option('--json')
    .option('--debug')
    .option('--push')
    .option('--no-push')
    .option('--role <role>')
    .option('--config <file>');
  try {
    cmd.parse(optArgs, { from: 'user' });
  } catch (err) {
    if (err instanceof CommanderError) throw new UsageStop(err.message.replace(/^error: /, ''));
    throw err;
  }
  const words = dd === -1 ? cmd.args : [...cmd.args, ...args.slice(dd + 1)];
  if (words.length === 0) throw new UsageStop('missing COMMAND');
  const o = cmd.opts<Omit<RunOptions, 'line' | 'fetch' | 'argv'>>();
  checkNumbers(o as Record<string, unknown>);
  // One word is a shell line; several are an argv, passed on word for word (as sudo, env, timeout do).
  return { ...o, ...commandOf(words), ...(fetch.length ? { fetch } : {}) };
}

class UsageStop extends Error {}

/** Numeric options are checked before anything runs (here or on a VM): `--wait=abc` is a usage error. */
const NUMERIC: Record<string, { min: number; above?: true; integer?: true }> = {
  wait: { min: 0 },
  poll: { min: 0, above: true },
  ttl: { min: 1, integer: true },
  heartbeat: { min: 0, above: true },
  timeout: { min: 0, above: true },
  grace: { min: 0 },
};

function checkNumbers(o: Record<string, unknown>): void {
  for (const [name, rule] of Object.entries(NUMERIC)) {
    const v = o[name];
    if (v === undefined || (name === 'wait' && (v === 'forever' || v === true))) continue;
    const text = String(v);
    const n = Number(text);
    const bad = text.trim() === '' || !Number.isFinite(n) || n < rule.min || (rule.above && n === 0) || (rule.integer && !Number.isInteger(n));
    if (bad) {
      const what = rule.integer ? 'a whole number' : 'a number';
      throw new UsageStop(`--${name} takes ${what}${rule.above ? ' above 0' : rule.min > 0 ? ` of at least ${rule.min}` : ''}, not '${text}'`);
    }
  }
}

export async function run(args: string[], io: Io): Promise<number> {
  if (args[0] === '--help' || args[0] === '-h') {
    io.stdout(USAGE);
    return EXIT.ok;
  }
  let o: RunOptions;
  try {
    o = parse(args, io);
  } catch (err) {
    if (err instanceof HelpShown) return EXIT.ok;
    if (err instanceof UsageStop) {
      io.stderr(`offhost run: ${err.message}\n${USAGE}offhost run: config-error: ${err.message} (exit ${RUN_EXIT.configError})\n`);
      return RUN_EXIT.configError;
    }
    throw err;
  }
  return runPipeline(io, o);
}
