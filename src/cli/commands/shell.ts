// `offhost shell [bash arguments]`: a drop-in `$SHELL` (see src/adapters/shell-wrapper.ts for what each
// invocation does). Runs the real shell (`OFFHOST_REAL_SHELL`, default /bin/bash) with the original or the
// rerouted command, or refuses with exit 126 and the reason on stderr.
//
// `offhost shell --check [--cwd DIR] [--private] [--] LINE`: the shell integration's check
// (hooks/offhost.bash|zsh|fish): exit 0 allow (no output), 3 reroute (stdout: the command to run instead),
// 126 refused (stdout: the reason), 4 allowed by the built-in rules while a config file is broken (stdout:
// one line saying so, with the fix), 5 the line is not complete yet (an open quote or `do` block: the shell
// asks for more). `--private`: the shell keeps this line out of its history, so the audit log does not get
// it either. Anything else (node missing, a crash) is the snippet's "offhost is broken" case.
import { requireBuiltin } from '../../lazy-builtin.js';
import { readFileSync, realpathSync } from 'node:fs';
import { basename, isAbsolute, resolve } from 'node:path';
import type { Io } from '../../io.js';
import type { Verdict } from '../../types.js';
import { EXIT, UsageError } from '../../errors.js';
import { formatDuration } from '../../report/duration.js';
import { type AuditRecord, HOOK_RULES, errorText, refusal, safeClassify, shQuote } from '../../adapters/common.js';
import { planShell, replaceAt } from '../../adapters/shell-wrapper.js';
import { fishAsBash } from '../../adapters/fish-line.js';
import { type AuditSettings, tryAppendAudit } from '../../adapters/audit-log.js';
import { TEXT_MAX, makeClassifier } from '../../adapters/classifier.js';
import { ensureShims } from '../../shims/ensure.js';
import { pathWithShims } from '../../shims/install.js';
import type { Rule } from '../../policy/match.js';
import type { Role } from '../../types.js';
import { resolveRole } from '../../config/role.js';
import { processTreeSession } from '../../run/session.js';

/**
 * The lock session for a rerouted command when the caller set none: one per process tree, the process
 * that runs this `$SHELL` (the agent): `shell-<user>-<ppid>-<start>`. Stable across one agent's commands,
 * never shared by two agents of one user (issue 11).
 */
function defaultSession(env: NodeJS.ProcessEnv): string | null {
  if (env.OFFHOST_SESSION) return null;
  return processTreeSession('shell', env);
}

/** Nesting deeper than this is a loop (OFFHOST_REAL_SHELL pointing back at offhost-shell). */
const MAX_DEPTH = 16;

/** The project config's `audit:` section, remembered from the last classification (for the audit line). */
let auditSettings: AuditSettings = {};
/** The rules of the last classification (the shims must cover the programs they name). */
let lastRules: Rule[] | null = null;
/** The role of the last classification: the shims judge for a laptop only. */
let lastRole: string | null = null;

async function verdictFor(line: string, cwd: string, io: Io): Promise<Verdict> {
  try {
    const c = await makeClassifier({ env: io.env });
    const classify = c.classifyAt(cwd);
    try {
      const config = c.configAt(cwd);
      auditSettings = config.audit;
      lastRules = config.rules ?? null;
      lastRole = resolveRole(undefined, io.env, (config as { role?: Role }).role);
    } catch {
      /* reported by the classification */
    }
    return safeClassify(classify, line, { cwd, env: io.env });
  } catch (err) {
    return refusal(HOOK_RULES.internal, `offhost could not check this command: ${errorText(err)}`);
  }
}

function audit(io: Io, cwd: string, command: string, v: Verdict): void {
  const rec: AuditRecord = {
    agent: 'shell',
    session: io.env.OFFHOST_SESSION ?? null,
    cwd,
    command,
    decision: v.decision,
    rule: v.rule,
    ...(v.decision !== 'allow' ? { reason: v.reason } : {}),
    ...(v.rewrite ? { rewrite: v.rewrite } : {}),
  };
  tryAppendAudit(rec, io.env, io.stderr, io.clock.now(), auditSettings);
}

/** `--check` exit statuses beyond allow/reroute/refused. */
const CHECK_DEGRADED = 4;
const CHECK_INCOMPLETE = 5;

/** The line ends inside a quote, a `$(`, a here-document or an open compound command: bash reads on. */
function incomplete(reason: string): boolean {
  return /unexpected end|unterminated|not closed|end of (the )?(input|line)|missing/i.test(reason);
}

/**
 * Walks `line` as bash quotes it (single, double and `$'…'` quotes, backslashes, `#` comments up to the
 * newline) and hands every character outside them to `unquoted(i)`, which returns the index it consumed up
 * to (or `line.length` to stop). Says whether the line ends in a backslash that escapes nothing yet.
 */
function walkUnquoted(line: string, unquoted: (i: number) => number): { trailingBackslash: boolean } {
  let q = '';
  for (let i = 0; i < line.length; i++) {
    const c = line[i] as string;
    if (q === "'") {
      if (c === "'") q = '';
      continue;
    }
    if (c === '\\') {
      if (i === line.length - 1) return { trailingBackslash: q === '' };
      i++;
      continue;
    }
    if (q !== '') {
      if (c === q[q.length - 1]) q = '';
      continue;
    }
    if (c === "'") q = line[i - 1] === '$' ? "$'" : "'";
    else if (c === '"') q = '"';
    else if (c === '#' && (i === 0 || /[\s;&|()<>]/.test(line[i - 1] as string))) {
      const e = line.indexOf('\n', i);
      if (e < 0) break;
      i = e - 1;
    } else i = unquoted(i);
  }
  return { trailingBackslash: false };
}

/**
 * Does the line end in a backslash that an interactive shell reads as "the line goes on" (unquoted, not in
 * a comment)? The parser, like `bash -c`, takes a backslash at the very end as a literal one.
 */
export function endsInContinuation(line: string): boolean {
  return walkUnquoted(line, (i) => i).trailingBackslash;
}

/**
 * Does the line open a here-document (`<<WORD`, `<<-WORD`) whose delimiter line has not come yet? An
 * interactive shell reads the body on; `bash -c` (and the parser) would end it at the end of the input.
 */
export function openHeredoc(line: string): boolean {
  const pending: { word: string; tabs: boolean }[] = [];
  walkUnquoted(line, (i) => {
    const c = line[i] as string;
    if (c === '\n' && pending.length > 0) {
      // the bodies follow, one after the other, each up to its delimiter line
      let at = i + 1;
      while (pending.length > 0) {
        const { word, tabs } = pending[0] as { word: string; tabs: boolean };
        const end = line.indexOf('\n', at);
        if (end < 0 && at >= line.length) return line.length;
        const body = line.slice(at, end < 0 ? line.length : end);
        if ((tabs ? body.replace(/^\t+/, '') : body) === word) pending.shift();
        if (end < 0) return line.length;
        at = end + 1;
      }
      return at - 1;
    }
    if (c === '(' && line[i + 1] === '(') {
      // arithmetic, \`((…))\` or \`$((…))\`: its \`<<\` is a shift, not a here-document
      let depth = 0;
      let j = i;
      for (; j < line.length; j++) {
        if (line[j] === '(') depth++;
        else if (line[j] === ')' && --depth === 0) break;
      }
      return j;
    } else if (c === '<' && line[i + 1] === '<' && line[i + 2] !== '<' && line[i - 1] !== '<') {
      let j = i + 2;
      const tabs = line[j] === '-';
      if (tabs) j++;
      while (line[j] === ' ' || line[j] === '\t') j++;
      let word = '';
      for (; j < line.length && !/[\s;&|()<>]/.test(line[j] as string); j++) {
        const d = line[j] as string;
        if (d === "'" || d === '"') {
          const close = line.indexOf(d, j + 1);
          if (close < 0) break;
          word += line.slice(j + 1, close);
          j = close;
        } else if (d === '\\' && j + 1 < line.length) word += line[++j];
        else word += d;
      }
      if (word !== '') pending.push({ word, tabs });
      return j - 1;
    }
    return i;
  });
  return pending.length > 0;
}


async function check(args: string[], io: Io): Promise<number> {
  let cwd = io.cwd;
  let priv = false;
  let fish = false;
  const rest: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i] as string;
    if (a === '--private') priv = true;
    else if (a === '--fish') fish = true;
    else if (a === '--cwd') {
      const d = args[++i];
      if (d === undefined) throw new UsageError('--cwd needs a directory');
      cwd = resolve(io.cwd, d);
    } else if (a === '--') {
      rest.push(...args.slice(i + 1));
      break;
    } else rest.push(a);
  }
  if (rest.length !== 1) throw new UsageError('usage: offhost shell --check [--cwd DIR] [--private] [--fish] [--] LINE');
  const typed = rest[0] as string;
  // fish (which says itself when a line is complete): the line read as the bash the guard parses
  const asBash = fish ? fishAsBash(typed) : { text: typed, exact: true };
  const line = asBash.text;
  if (!fish && (endsInContinuation(line) || openHeredoc(line))) return CHECK_INCOMPLETE;
  let v = await verdictFor(line, cwd, io);
  let broken: string | null = null;
  if (v.rule === HOOK_RULES.internal && /could not check this command/.test(v.reason)) {
    // A broken config file: say so (the snippet prints it once) and keep refusing what the built-in rules
    // know, so a typo in offhost.config.yaml neither locks the terminal nor lets `make build` through.
    broken = `${v.reason.replace(/^offhost could not check this command: /, '')}; fix the file (your editor and shell builtins still work)`;
    try {
      const { loadBuiltinGuard } = await import('../../config/load-guard.js');
      const { withRunRewrite } = await import('../../adapters/run-rewrite.js');
      const g = loadBuiltinGuard({ cwd, env: io.env });
      v = safeClassify((l, at) => withRunRewrite(g.classify(l, at), l), line, { cwd, env: io.env });
    } catch (err) {
      v = refusal(HOOK_RULES.internal, `offhost could not check this command: ${errorText(err)}`);
    }
  }
  if (fish && v.rule === 'parse-error') v = refusal('parse-error', `offhost cannot read this fish line (${v.reason}); nothing of it ran`);
  if (fish && v.decision === 'reroute' && !asBash.exact) {
    // offhost run executes bash on the VM: a fish-only line cannot go there as it is
    v = refusal(v.rule ?? 'reroute', `${v.reason} This line is fish: offhost runs bash on the VM, so run its bash form there with \`offhost run -- '…'\``);
  }
  if (v.rule === 'parse-error' && incomplete(v.reason)) return CHECK_INCOMPLETE;
  if (!priv) audit(io, cwd, typed, v);
  if (broken !== null) {
    if (v.decision === 'allow') {
      io.stdout(`offhost's config is broken: ${broken}\n`);
      return CHECK_DEGRADED;
    }
    io.stdout(`refused${v.rule ? ` (rule ${v.rule})` : ''}: ${v.reason} (offhost's config is broken too: ${broken})\n`);
    return EXIT.refused;
  }
  if (v.decision === 'allow') return EXIT.ok;
  if (v.decision === 'reroute') {
    const session = defaultSession(io.env);
    io.stdout(`${session ? `OFFHOST_SESSION=${shQuote(session)} ` : ''}${v.rewrite}\n`);
    return EXIT.reroute;
  }
  io.stdout(`refused${v.rule ? ` (rule ${v.rule})` : ''}: ${v.reason}\n`);
  return EXIT.refused;
}

/**
 * `{ PATH }` with the shim directory first, installing the shims when the directory has none or lacks a
 * program the rules in force name. OFFHOST_SHIMS=off leaves PATH alone. A shim directory that cannot be
 * written is reported and the command still runs: the line itself was judged already.
 */
function shimsPath(io: Io): { PATH?: string } {
  // On a VM or in CI nothing is rerouted: shims would only cost start-up time.
  if (io.env.OFFHOST_SHIMS === 'off' || (lastRole !== null && lastRole !== 'laptop')) return {};
  try {
    return { PATH: pathWithShims(ensureShims(io, lastRules), io.env.PATH) };
  } catch (err) {
    io.stderr(`offhost shell: the exec-time shims are not in place (${errorText(err)}); running without them\n`);
    return {};
  }
}

/** Runs the real shell with stdio inherited (or `input` piped in), forwarding termination signals. */
function runShell(shell: string, args: string[], io: Io, env: NodeJS.ProcessEnv, input?: Buffer): Promise<number> {
  return new Promise((res) => {
    // node:child_process and node:os are loaded only when a shell is really started (start-up cost).
    const { spawn } = requireBuiltin<typeof import('node:child_process')>('node:child_process');
    const child = spawn(shell, args, { cwd: io.cwd, env, stdio: [input ? 'pipe' : 'inherit', 'inherit', 'inherit'] });
    const forward = (sig: NodeJS.Signals) => () => child.kill(sig);
    const sigs: NodeJS.Signals[] = ['SIGTERM', 'SIGHUP', 'SIGINT', 'SIGQUIT'];
    const handlers = sigs.map((s) => [s, forward(s)] as const);
    for (const [s, h] of handlers) process.on(s, h);
    const done = (code: number) => {
      for (const [s, h] of handlers) process.off(s, h);
      res(code);
    };
    child.on('error', (err) => {
      io.stderr(`offhost shell: cannot run ${shell}: ${err.message}\n`);
      done((err as NodeJS.ErrnoException).code === 'ENOENT' ? 127 : 126);
    });
    child.on('exit', (code, signal) => done(code ?? 128 + (signal ? signalNumber(signal) : 0)));
    if (input && child.stdin) {
      child.stdin.on('error', () => {}); // the shell may exit before reading all of it
      child.stdin.end(input);
    }
  });
}

function signalNumber(sig: NodeJS.Signals): number {
  const osConstants = (requireBuiltin<typeof import('node:os')>('node:os')).constants;
  const n = osConstants.signals[sig];
  return typeof n === 'number' ? n : 1;
}

function refuse(io: Io, what: string, v: Verdict): number {
  const rule = v.rule ? ` (rule ${v.rule})` : '';
  let text = `offhost: refused${rule}: ${v.reason}\n`;
  if (v.decision === 'reroute' && v.rewrite) text = `offhost: refused${rule}: ${what} must run on a VM: ${v.reason}\nrun instead:\n  ${v.rewrite}\n`;
  io.stderr(text);
  return EXIT.refused;
}

/** All of stdin; 'too-big' past TEXT_MAX, 'no-end' when it has not ended by the deadline. */
async function readAllStdin(deadlineMs: number): Promise<Buffer | 'too-big' | 'no-end'> {
  const chunks: Buffer[] = [];
  let size = 0;
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'no-end'>((res) => {
    timer = setTimeout(() => res('no-end'), deadlineMs);
  });
  const read = (async (): Promise<Buffer | 'too-big'> => {
    for await (const c of process.stdin) {
      const b = c as Buffer;
      size += b.length;
      if (size > TEXT_MAX) return 'too-big';
      chunks.push(b);
    }
    return Buffer.concat(chunks);
  })();
  try {
    const r = await Promise.race([read, late]);
    if (r !== 'no-end' && r !== 'too-big') return r;
    process.stdin.destroy();
    return r;
  } finally {
    clearTimeout(timer);
  }
}

const HELP = `Usage: offhost shell [bash options] [-c COMMAND | SCRIPT [ARGS...]]
       offhost shell --check [--cwd DIR] [--private] [--fish] [--] LINE

A drop-in $SHELL (for agents and tools that run commands through $SHELL -c): each command is checked
first, then run by the real shell as it is, or as its reroute (offhost run -- ...), or refused with the
reason on stderr (exit 126). Every other bash option is passed to the real shell.

Options:
  --check LINE  the check the shell integration (eval "$(offhost init --shell bash)") runs before each
                line: exit 0 allow (no output), 3 reroute (stdout: the command to run instead), 126
                refused (stdout: the reason)
  --cwd DIR     --check: judge the line as run from this directory
  --help        show this help (the real shell's own help: $OFFHOST_REAL_SHELL --help; -h is bash's hashall)

Exit status: the command's own (or its reroute's); 126 refused; --check: 0 allow, 3 reroute, 126 refused.
Examples:
  offhost shell -c 'make build-safe'
  offhost shell --check --cwd engines/lang/koda 'make build-safe'
  SHELL=/path/to/offhost/hooks/offhost-shell your-agent   (the same, as one executable for $SHELL)
Environment: OFFHOST_REAL_SHELL (default /bin/bash), OFFHOST_SESSION (the lock session of rerouted runs).
`;

export async function run(args: string[], io: Io): Promise<number> {
  // Only the long --help: bash's -h is an option of its own (hashall).
  if (args.length === 1 && args[0] === '--help') {
    io.stdout(HELP);
    return EXIT.ok;
  }
  if (args[0] === '--check') return check(args.slice(1), io);

  const real = io.env.OFFHOST_REAL_SHELL || '/bin/bash';
  if (!isAbsolute(real)) throw new UsageError(`OFFHOST_REAL_SHELL must be an absolute path, not ${JSON.stringify(real)}`);
  const depth = Number(io.env.OFFHOST_SHELL_DEPTH ?? '0') || 0;
  if (depth >= MAX_DEPTH) {
    io.stderr(`offhost shell: nested ${depth} deep; OFFHOST_REAL_SHELL (${real}) probably points back at offhost-shell\n`);
    return EXIT.refused;
  }
  try {
    if (/^offhost(-shell|\.[cm]js)?$/.test(basename(realpathSync(real)))) {
      io.stderr(`offhost shell: OFFHOST_REAL_SHELL (${real}) is offhost itself; set it to the real shell, e.g. /bin/bash\n`);
      return EXIT.refused;
    }
  } catch {
    /* missing: runShell reports it */
  }
  // Everything this shell runs finds the exec-time shims first on PATH (docs/SHIMS.md): a program the
  // text of the line hid (a name built at run time, eval, a script, a subprocess) is judged when it starts.
  const base = { ...io.env, OFFHOST_SHELL_DEPTH: String(depth + 1) };
  // Made when a shell is about to start (after the line was judged: the shims must cover its rules).
  let envMemo: NodeJS.ProcessEnv | null = null;
  const shellEnv = (): NodeJS.ProcessEnv => (envMemo ??= { ...base, ...shimsPath(io) });
  // isatty(0) without creating process.stdin (which loads the stream machinery: ~3 ms per command).
  const { isatty } = requireBuiltin<typeof import('node:tty')>('node:tty');
  const plan = planShell(args, isatty(0));

  switch (plan.kind) {
    case 'interactive':
    case 'passthrough':
      return runShell(real, args, io, shellEnv());
    case 'command': {
      const v = await verdictFor(plan.command, io.cwd, io);
      audit(io, io.cwd, plan.command, v);
      if (v.decision === 'allow') return runShell(real, args, io, shellEnv());
      if (v.decision === 'reroute') {
        const session = defaultSession(base);
        return runShell(real, replaceAt(args, plan.commandIndex, v.rewrite as string), io, session ? { ...shellEnv(), OFFHOST_SESSION: session } : shellEnv());
      }
      return refuse(io, 'this command', v);
    }
    case 'script': {
      let text: string;
      try {
        text = readFileSync(resolve(io.cwd, plan.file), 'utf8');
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') return runShell(real, args, io, shellEnv());
        return refuse(io, 'this script', refusal(HOOK_RULES.internal, `cannot read script ${plan.file} to check it: ${errorText(err)}`));
      }
      const v = await verdictFor(text, io.cwd, io);
      audit(io, io.cwd, `# script ${plan.file}\n${text}`, v);
      if (v.decision === 'allow') return runShell(real, args, io, shellEnv());
      return refuse(io, `script ${plan.file}`, v);
    }
    case 'stdin': {
      const ms = Number(io.env.OFFHOST_SHELL_STDIN_MS) > 0 ? Number(io.env.OFFHOST_SHELL_STDIN_MS) : 30_000;
      const input = await readAllStdin(ms);
      if (input === 'too-big') return refuse(io, 'standard input', refusal(HOOK_RULES.budget, `the commands on standard input are longer than ${TEXT_MAX} bytes, more than offhost checks`));
      if (input === 'no-end') {
        return refuse(
          io,
          'standard input',
          refusal(HOOK_RULES.budget, `the commands on standard input did not end within ${formatDuration(ms)}; offhost checks a script on stdin as a whole, so a long-lived shell fed over a pipe is not supported (run each command with -c)`),
        );
      }
      const text = input.toString('utf8');
      const v = await verdictFor(text, io.cwd, io);
      audit(io, io.cwd, text, v);
      if (v.decision === 'allow') return runShell(real, args, io, shellEnv(), input);
      return refuse(io, 'the commands on standard input', v);
    }
  }
}
