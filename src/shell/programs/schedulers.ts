// Programs that run a command later, repeatedly, elsewhere in a terminal, or for each input: terminal
// multiplexers (tmux, screen), queues and schedulers (at, batch, pueue, sem, parallel, xargs), watchers
// (watch, watchexec, nodemon, watchman-make), runners of several commands (concurrently,
// start-server-and-test, hyperfine), find -exec and fd -x, and debuggers/profilers that start their argument
// (perf stat, gdb --args). All of them run on this machine.
import type { Field } from '../expand.js';
import { scan, parseOptions, type Spec } from './grammar.js';
import { quote } from '../../routes/quote.js';
import { envField, joinFields, type Call } from '../walk-state.js';
import type { ProgramModule, Unwrapped } from './types.js';
import { isShellProgram } from './shells.js';
import { configRuns, tmuxCommandRuns } from './tmux-config.js';

const UNKNOWN_DIR: Field = { value: '', known: false };

/** tmux subcommands that start a shell command, and the options of each that take a value. */
const TMUX_START = new Map<string, string[]>([
  ['new-session', ['-c', '-e', '-F', '-n', '-s', '-t', '-x', '-y', '-f']],
  ['new', ['-c', '-e', '-F', '-n', '-s', '-t', '-x', '-y', '-f']],
  ['new-window', ['-c', '-e', '-F', '-n', '-t']],
  ['neww', ['-c', '-e', '-F', '-n', '-t']],
  ['split-window', ['-c', '-e', '-F', '-l', '-t', '-p']],
  ['splitw', ['-c', '-e', '-F', '-l', '-t', '-p']],
  ['respawn-pane', ['-c', '-e', '-t']],
  ['respawnp', ['-c', '-e', '-t']],
  ['respawn-window', ['-c', '-e', '-t']],
  ['respawnw', ['-c', '-e', '-t']],
  ['run-shell', ['-c', '-d', '-t']],
  ['run', ['-c', '-d', '-t']],
  ['display-popup', ['-b', '-c', '-d', '-e', '-h', '-s', '-S', '-t', '-T', '-w', '-x', '-y']],
  ['popup', ['-b', '-c', '-d', '-e', '-h', '-s', '-S', '-t', '-T', '-w', '-x', '-y']],
]);

/**
 * `tmux new -d 'make build'`: tmux runs the command string with the default shell, on this machine, in
 * `-c DIR` (new-session: the client's directory; other windows: the session's, unknown here).
 * `send-keys` types text into a pane whose directory is unknown.
 */
function tmux(argv: Field[]): Unwrapped {
  let i = 1;
  while (i < argv.length && argv[i]!.known && argv[i]!.value.startsWith('-')) i += /^-[LSfT]$/.test(argv[i]!.value) ? 2 : 1;
  const sub = argv[i];
  if (!sub?.known) return { kind: 'none' };
  if (sub.value === 'send-keys' || sub.value === 'send') {
    const keys = argv.slice(i + 1).filter((a) => !(a.known && (/^-[lRMHKX]+$/.test(a.value) || /^(Enter|C-m|KPEnter)$/.test(a.value))));
    const text = keys.filter((a, k) => !(k > 0 && keys[k - 1]!.known && /^-[tN]$/.test(keys[k - 1]!.value)) && !(a.known && /^-[tN]$/.test(a.value)));
    if (text.length === 0) return { kind: 'none' };
    return { kind: 'script', via: 'tmux send-keys', text: joinFields(text), cwd: UNKNOWN_DIR };
  }
  const opts = TMUX_START.get(sub.value);
  if (!opts) return { kind: 'none' };
  let j = i + 1;
  let dir: Field | undefined;
  while (j < argv.length && argv[j]!.known && argv[j]!.value.startsWith('-') && argv[j]!.value !== '--') {
    const v = argv[j]!.value;
    const flag = v.slice(0, 2);
    if (opts.includes(flag)) {
      const val = v.length > 2 ? { value: v.slice(2), known: true } : argv[j + 1];
      if (flag === '-c' && sub.value !== 'run-shell' && sub.value !== 'run') dir = val;
      j += v.length > 2 ? 1 : 2;
    } else j++;
  }
  if (argv[j]?.known && argv[j]!.value === '--') j++;
  const rest = argv.slice(j);
  if (rest.length === 0) return { kind: 'none' };
  const startsHere = sub.value === 'new-session' || sub.value === 'new' || sub.value === 'run-shell' || sub.value === 'run';
  const cwd = dir ?? (startsHere ? undefined : UNKNOWN_DIR);
  return { kind: 'script', via: `tmux ${sub.value}`, text: joinFields(rest), ...(cwd ? { cwd } : {}) };
}

/**
 * Everything a tmux line runs here: each of its commands (split at `;` words: `tmux set -g default-command
 * X \; new -d`), and, when it may start the server, the configuration that server reads (`-f FILE`, else
 * /etc/tmux.conf and the user's first of ~/.tmux.conf, $XDG_CONFIG_HOME/tmux/tmux.conf,
 * ~/.config/tmux/tmux.conf): ./tmux-config.ts.
 */
function tmuxLine(call: Call): Unwrapped {
  const argv = call.fields;
  let i = 1;
  let conf: Field | null = null;
  while (i < argv.length && argv[i]!.known && argv[i]!.value.startsWith('-')) {
    if (argv[i]!.value === '-f') conf = argv[i + 1] ?? UNKNOWN_DIR;
    i += /^-[LSfT]$/.test(argv[i]!.value) ? 2 : 1;
  }
  const plain = (words: Field[]) => tmux([argv[0]!, ...words]);
  const cmds: Field[][] = [[]];
  for (const f of argv.slice(i)) {
    // tmux ends a command at a `;` word, and at a word ending in `;` (not `\;`), which keeps what precedes it.
    if (f.known && f.value.endsWith(';') && !f.value.endsWith('\\;')) {
      if (f.value !== ';') cmds.at(-1)!.push({ value: f.value.slice(0, -1), known: true });
      cmds.push([]);
    } else cmds.at(-1)!.push(f);
  }
  const items = cmds.filter((c) => c.length > 0).flatMap((c) => tmuxCommandRuns(c, call, 0, plain));
  const sub = argv[i];
  const starts = sub === undefined || (sub.known && (TMUX_START.has(sub.value) || sub.value === 'start-server' || sub.value === 'start'));
  if (starts) {
    if (conf) items.push(...configRuns(conf, call, 0, plain));
    else {
      items.push(...configRuns({ value: '/etc/tmux.conf', known: true }, call, 0, plain));
      const home = call.ctx.home;
      const xdg = envField(call, 'XDG_CONFIG_HOME');
      const user = [home ? `${home}/.tmux.conf` : null, xdg?.known && xdg.value ? `${xdg.value}/tmux/tmux.conf` : null, home ? `${home}/.config/tmux/tmux.conf` : null].filter((p): p is string => p !== null);
      const first = user.find((p) => call.ctx.written?.has(p) || (call.ctx.files != null && call.ctx.files.read(p).kind !== 'missing'));
      if (first) items.push(...configRuns({ value: first, known: true }, call, 0, plain));
    }
  }
  return items.length === 0 ? { kind: 'none' } : items.length === 1 ? items[0]! : { kind: 'many', items };
}

function findExec(argv: Field[]): Unwrapped {
  const items: Unwrapped[] = [];
  for (let i = 1; i < argv.length; i++) {
    const f = argv[i]!;
    if (!f.known) continue;
    if (f.value === '-exec' || f.value === '-execdir' || f.value === '-ok' || f.value === '-okdir') {
      const start = i + 1;
      let end = start;
      while (end < argv.length && !(argv[end]!.known && (argv[end]!.value === ';' || argv[end]!.value === '+'))) end++;
      const inner = argv.slice(start, end).map((a) => (a.known && a.value.includes('{}') ? { value: a.value, known: false } : a));
      if (inner.length > 0) items.push({ kind: 'run', via: `find ${f.value}`, argv: inner, cwdUnknown: f.value.endsWith('dir') });
      i = end;
    }
  }
  return items.length ? { kind: 'many', items } : { kind: 'none' };
}

/**
 * `fd PATTERN -x make build {}` / `fd -X cmd`: every word after -x/--exec/-X/--exec-batch is the command,
 * to the end or to a `;` (fd's own options are taken before it). `{}` and its kin are file names.
 */
function fdExec(argv: Field[]): Unwrapped {
  const items: Unwrapped[] = [];
  for (let i = 1; i < argv.length; i++) {
    const f = argv[i]!;
    if (!f.known) continue;
    const eq = /^(--exec|--exec-batch)=(.*)$/s.exec(f.value);
    if (eq || f.value === '-x' || f.value === '--exec' || f.value === '-X' || f.value === '--exec-batch') {
      const start = eq ? i : i + 1;
      let end = start + 1;
      while (end < argv.length && !(argv[end]!.known && argv[end]!.value === ';')) end++;
      const words = eq ? [{ value: eq[2]!, known: true }, ...argv.slice(i + 1, end)] : argv.slice(start, end);
      const inner = words.map((a) => (a.known && /\{[/.]*\}/.test(a.value) ? { value: a.value, known: false } : a));
      if (inner.length > 0) items.push({ kind: 'run', via: `fd ${eq ? eq[1] : f.value}`, argv: inner });
      i = end;
    }
  }
  return items.length ? { kind: 'many', items } : { kind: 'none' };
}

const XARGS: Spec = { value: ['-a', '--arg-file', '-d', '--delimiter', '-E', '-e', '--eof', '-I', '-i', '--replace', '-L', '-l', '--max-lines', '-n', '--max-args', '-P', '--max-procs', '-s', '--max-chars', '--process-slot-var'], flags: ['--null', '--interactive', '--no-run-if-empty', '--exit', '--verbose', '--open-tty', '--show-limits'], noCommand: ['--help', '--version'] };

function xargs(argv: Field[]): Unwrapped {
  const s = scan(argv, XARGS);
  if (!s) return { kind: 'none' };
  const inner = argv.slice(s.index);
  const replace = s.opts.find(([n]) => n === '-I' || n === '-i' || n === '--replace');
  if (inner.length === 0) return { kind: 'run', via: 'xargs', argv: [{ value: 'echo', known: true }], extraUnknownArg: true };
  if (replace) {
    const token = replace[1]?.value ?? '{}';
    return { kind: 'run', via: 'xargs', argv: inner.map((a) => (a.value.includes(token) ? { value: a.value, known: false } : a)) };
  }
  return { kind: 'run', via: 'xargs', argv: inner, extraUnknownArg: true };
}

const PARALLEL: Spec = { value: ['-j', '--jobs', '-S', '--sshlogin', '--joblog', '--results', '-a', '--arg-file', '--delay', '--timeout', '--retries', '--colsep', '-d', '--delimiter', '-I', '--tmpdir', '--workdir', '--wd', '--id', '--semaphorename', '--halt', '--memfree', '--load'], flags: ['--semaphore', '--fg', '--bg', '--keep-order', '-k', '--verbose', '--dry-run', '--will-cite', '--citation', '--line-buffer', '--ungroup', '--pipe', '--progress', '--eta', '--bar'], noCommand: ['--dry-run', '--version', '--help', '--citation'] };

/** GNU parallel (and `sem`, its `--semaphore` mode): the command runs through a shell, per input. */
function parallel(argv: Field[], via: string): Unwrapped {
  const s = scan(argv, PARALLEL);
  if (!s) return { kind: 'none' };
  let end = s.index;
  while (end < argv.length && !(argv[end]!.known && /^:::+\+?$|^::::$/.test(argv[end]!.value))) end++;
  const inner = argv.slice(s.index, end);
  if (inner.length === 0) return { kind: 'stdin-script', via };
  const text = inner.map((a) => a.value).join(' ');
  const known = inner.every((a) => a.known);
  const inputs = argv.slice(end + 1);
  const sep = argv[end]?.value;
  const placeholder = /\{[^{}\s]*\}/g;
  const hasPlaceholder = /\{[^{}\s]*\}/.test(text);
  const withInput = (input: string) => (hasPlaceholder ? text.replace(placeholder, () => input) : `${text} ${input}`);
  if (via === 'sem') return { kind: 'script', via, text: { value: text, known } };
  if (sep === ':::' && inputs.length > 0 && inputs.length <= 32 && inputs.every((a) => a.known && !a.value.startsWith(':::'))) {
    return { kind: 'many', items: inputs.map((a) => ({ kind: 'script' as const, via, text: { value: withInput(quote(a.value)), known } })) };
  }
  // Inputs from stdin or files: an unknown variable stands in for each one.
  return { kind: 'script', via, text: { value: withInput('"$__OFFHOST_UNKNOWN_INPUT"'), known } };
}

const HYPERFINE: Spec = { value: ['-w', '--warmup', '-m', '--min-runs', '-M', '--max-runs', '-r', '--runs', '-s', '--setup', '-p', '--prepare', '-c', '--cleanup', '-P', '--parameter-scan', '-D', '--parameter-step-size', '-L', '--parameter-list', '-S', '--shell', '--style', '--sort', '-u', '--time-unit', '--export-asciidoc', '--export-csv', '--export-json', '--export-markdown', '--export-orgmode', '--output', '--input', '-n', '--command-name', '--reference'], noCommand: ['--help', '-h', '--version', '-V'] };
const WATCHEXEC: Spec = { value: ['-w', '--watch', '-e', '--exts', '-f', '--filter', '-i', '--ignore', '-d', '--debounce', '-s', '--signal', '--shell', '--on-busy-update', '-E', '--env', '--workdir', '--project-origin', '--delay-run', '--poll'], flags: ['-r', '--restart', '-c', '--clear', '-n', '-N', '--notify', '-o', '-p', '--postpone', '-1'], chdir: ['--workdir'], noCommand: ['--help', '-h', '--version', '-V'] };
const WATCH: Spec = { value: ['-n', '--interval', '-q', '--equexit', '--differences'], flags: ['-x', '--exec', '-t', '--no-title', '-b', '--beep', '-e', '--errexit', '-g', '--chgexit', '-c', '--color', '-p', '--precise', '-d'], noCommand: ['--help', '-h', '--version', '-v'] };
const PUEUE_ADD: Spec = { value: ['-w', '--working-directory', '-d', '--delay', '-g', '--group', '-a', '--after', '-o', '--priority', '-l', '--label'], flags: ['-e', '--escape', '-i', '--immediate', '-s', '--stashed', '-p', '--print-task-id', '--follow'], chdir: ['-w', '--working-directory'] };
// nodemon's -C (--on-change-only) and -I (--no-stdin) are flags: as values they hid `-x CMD` after them.
const NODEMON: Spec = { value: ['-x', '--exec', '-w', '--watch', '-e', '--ext', '-i', '--ignore', '-d', '--delay', '--signal', '--cwd', '--config'], flags: ['--legacy-watch', '-L', '--verbose', '-V', '--quiet', '-q', '--no-stdin', '-I', '--spawn', '--dump', '-C', '--on-change-only', '--no-colors', '--exitcrash', '--no-update-notifier'], chdir: ['--cwd'], scriptOption: ['-x', '--exec'], noCommand: ['--help', '-h', '--version', '-v', '--dump'] };
const AT: Spec = { value: ['-q', '-f', '-t'], flags: ['-m', '-M', '-v', '-b'], noCommand: ['-l', '-d', '-r', '-c', '-V', '-h'] };
const CONCURRENTLY: Spec = { value: ['-n', '--names', '--name-separator', '-c', '--prefix-colors', '-p', '--prefix', '-l', '--prefix-length', '-t', '--timestamp-format', '-s', '--success', '-m', '--max-processes', '--restart-tries', '--restart-after', '--default-input-target', '--hide', '--cwd', '--teardown'], flags: ['-k', '--kill-others', '--kill-others-on-fail', '-r', '--raw', '-g', '--group', '-i', '--handle-input', '--no-color', '-P', '--passthrough-arguments', '--timings'], chdir: ['--cwd'], noCommand: ['-h', '--help', '-v', '-V', '--version'] };
const PERF: Spec = { value: ['-e', '--event', '-o', '--output', '-C', '--cpu', '-r', '--repeat', '-x', '--field-separator', '-G', '--cgroup', '-I', '--interval-print', '-D', '--delay', '-F', '--freq', '-c', '--count', '-m', '--mmap-pages', '-u', '--uid', '--call-graph', '-j', '--branch-filter', '--control', '-M', '--metrics', '--post', '--pre', '-t', '--tid'], flags: ['-a', '--all-cpus', '-g', '-q', '--quiet', '-v', '--verbose', '-d', '--detailed', '-A', '--no-aggr'], noCommand: ['-p', '--pid', '-t', '--tid', '-a', '--all-cpus', '-h', '--help'] };
const GDB: Spec = { value: ['-ex', '--ex', '-iex', '-x', '--command', '-ix', '-cd', '--cd', '-d', '--directory', '-p', '--pid', '-s', '--symbols', '-e', '--exec', '-c', '--core', '-b', '-tty', '--tty', '-D', '--data-directory'], flags: ['-q', '-quiet', '--quiet', '-batch', '--batch', '-nx', '--nx', '-n', '-tui', '--tui', '-silent'], singleDash: true };

/** pueue add [options] [--] COMMAND...: joined, run by a shell (pueue's daemon, on this machine). */
function pueue(argv: Field[]): Unwrapped {
  let i = 1;
  while (argv[i]?.known && argv[i]!.value.startsWith('-')) i += /^(-c|--config|-p|--profile)$/.test(argv[i]!.value) ? 2 : 1;
  if (!argv[i]?.known || argv[i]!.value !== 'add') return { kind: 'none' };
  const rest = [argv[0]!, ...argv.slice(i + 1)];
  const s = scan(rest, PUEUE_ADD);
  if (!s) return { kind: 'none' };
  const inner = rest.slice(s.index);
  if (inner.length === 0) return { kind: 'none' };
  const dir = s.opts.find(([n]) => n === '-w' || n === '--working-directory');
  return { kind: 'script', via: 'pueue add', text: joinFields(inner), ...(dir ? { cwd: dir[1] ?? UNKNOWN_DIR } : {}) };
}

/** `watchman-make -p '**\/*.c' -t build`: runs `make build` (or `--make CMD`) on change; `-r CMD` a shell string. */
function watchmanMake(argv: Field[]): Unwrapped {
  const items: Unwrapped[] = [];
  let makeCmd: Field = { value: 'make', known: true };
  let targets: Field[] = [];
  for (let i = 1; i < argv.length; i++) {
    const v = argv[i]!.value;
    if (/^(-t|--targets)$/.test(v)) {
      while (argv[i + 1] && !(argv[i + 1]!.known && argv[i + 1]!.value.startsWith('-'))) targets.push(argv[++i]!);
      items.push({ kind: 'script', via: 'watchman-make', text: joinFields([makeCmd, ...targets]) });
      targets = [];
    } else if (/^(--make)$/.test(v)) makeCmd = argv[++i] ?? UNKNOWN_DIR;
    else if (/^(-r|--run)$/.test(v)) items.push({ kind: 'script', via: 'watchman-make -r', text: argv[++i] ?? UNKNOWN_DIR });
    else if (/^--(make|run)=/.test(v)) {
      const val = { value: v.slice(v.indexOf('=') + 1), known: argv[i]!.known };
      if (v.startsWith('--make')) makeCmd = val;
      else items.push({ kind: 'script', via: 'watchman-make -r', text: val });
    }
  }
  // `--make` after `-t` still applies (argparse reads all options first).
  for (const it of items) if (it.kind === 'script' && it.via === 'watchman-make') it.text = { value: it.text.value.replace(/^make\b/, makeCmd.value), known: it.text.known && makeCmd.known };
  return items.length ? { kind: 'many', items } : { kind: 'none' };
}

/** A command or a package.json script name (`npm:lint`, `start`): how concurrently and start-server-and-test read one. */
function commandOrScript(f: Field, via: string, bareIsScript: boolean): Unwrapped {
  const m = f.known ? /^(npm|pnpm|yarn|bun):(.+)$/.exec(f.value) : null;
  if (m) return { kind: 'script', via, text: { value: `${m[1]} run ${quote(m[2]!)}`, known: true } };
  if (bareIsScript && f.known && !/\s/.test(f.value)) return { kind: 'script', via, text: { value: `npm run ${quote(f.value)}`, known: true } };
  return { kind: 'script', via, text: f };
}

function concurrently(argv: Field[]): Unwrapped {
  const p = parseOptions(CONCURRENTLY, argv);
  if (p.opts.some(([n]) => CONCURRENTLY.noCommand!.includes(n))) return { kind: 'none' };
  const dir = p.opts.find(([n]) => n === '--cwd');
  const cmds = [...p.positionals, ...p.afterDashDash];
  const items = cmds.map((c) => commandOrScript(c, 'concurrently', false));
  if (dir) for (const it of items) if (it.kind === 'script') it.cwd = dir[1] ?? UNKNOWN_DIR;
  return items.length ? { kind: 'many', items } : { kind: 'none' };
}

/** start-server-and-test START URL [START2 URL2] TEST: each a command, or a script name (`npm run NAME`). */
function startServerAndTest(argv: Field[]): Unwrapped {
  const pos = argv.slice(1).filter((a) => !(a.known && a.value.startsWith('--')));
  if (pos.length === 0) return { kind: 'none' };
  const isUrl = (f: Field) => f.known && /^(https?|tcp|http-get|https-get|socket):|^:?\d+$|^localhost:/.test(f.value);
  const cmds = pos.filter((f) => !isUrl(f));
  // One argument: `start-test test` runs `npm run start`, then the test script.
  if (cmds.length === 1 && pos.length <= 2) cmds.unshift({ value: 'start', known: true });
  return { kind: 'many', items: cmds.map((c) => commandOrScript(c, 'start-server-and-test', true)) };
}

/** perf stat/record/trace [options] COMMAND: profiles the command, which runs here. */
function perf(argv: Field[]): Unwrapped {
  let i = 1;
  while (argv[i]?.known && argv[i]!.value.startsWith('-')) i++;
  let sub = argv[i];
  if (sub?.known && /^(kvm|c2c|mem|sched|lock|kmem|timechart)$/.test(sub.value)) sub = argv[++i];
  if (!sub?.known || !/^(stat|record|trace|top)$/.test(sub.value)) return { kind: 'none' };
  const rest = [argv[0]!, ...argv.slice(i + 1)];
  const s = scan(rest, PERF);
  if (!s) return { kind: 'none' };
  const inner = rest.slice(s.index);
  return inner.length ? { kind: 'run', via: `perf ${sub.value}`, argv: inner } : { kind: 'none' };
}

/** gdb --args PROG ARGS (and `gdb -ex run PROG`): the program runs under the debugger; `-ex 'shell CMD'` (or `!CMD`) runs CMD here. */
function gdb(argv: Field[]): Unwrapped {
  const shells: Unwrapped[] = [];
  for (let k = 1; k < argv.length - 1; k++) {
    if (!argv[k]!.known || !/^--?i?ex$|^--?eval-command$/.test(argv[k]!.value)) continue;
    const v = argv[k + 1]!;
    const m = /^\s*(?:shell\b|!)(.*)$/s.exec(v.value);
    if (m) shells.push({ kind: 'script', via: 'gdb shell', text: { value: m[1]!, known: v.known } });
  }
  const target = gdbTarget(argv);
  if (!shells.length) return target;
  return { kind: 'many', items: target.kind === 'none' ? shells : [...shells, target] };
}

function gdbTarget(argv: Field[]): Unwrapped {
  const at = argv.findIndex((a, k) => k > 0 && a.known && (a.value === '--args' || a.value === '-args'));
  if (at > 0) return argv.length > at + 1 ? { kind: 'run', via: 'gdb --args', argv: argv.slice(at + 1) } : { kind: 'none' };
  const s = scan(argv, GDB);
  if (!s || !argv[s.index]) return { kind: 'none' };
  const runs = s.opts.some(([n, v]) => /^-?-?i?ex$/.test(n) && v !== null && (!v.known || /^(r|run|start|starti)\b/.test(v.value)));
  return runs ? { kind: 'run', via: 'gdb', argv: [argv[s.index]!] } : { kind: 'none' };
}

/** lldb's options that take a value (LLVM 12-19 `lldb --help`); the commands among them are read, the rest skipped. */
const LLDB_COMMAND = /^(-o|--one-line|-O|--one-line-before-file|-k|--one-line-on-crash)$/;
const LLDB_VALUE = /^(-a|--arch|-f|--file|-c|--core|-p|--attach-pid|-n|--attach-name|-l|--script-language|-s|--source|-S|--source-before-file|-K|--source-on-crash|-r|--repl-language|-R|--repl|--debug-file|--capture-path|-L|--log-channel)$/;

/**
 * lldb: `-o 'platform shell CMD'` (or the `shell` alias; `-O`, `-k`, `--one-line`) runs CMD here through
 * the host's shell; `-o run` (`r`, `process launch`) runs the target (`lldb -- PROG ARGS`, `lldb PROG`,
 * `-f PROG`) here under the debugger. A command lldb would read from a file (`-s FILE`) is not judged.
 */
function lldb(argv: Field[]): Unwrapped {
  const items: Unwrapped[] = [];
  let runs = false;
  let target: Field[] | null = null;
  const command = (v: Field) => {
    if (!v.known) {
      runs = true;
      items.push({ kind: 'script', via: 'lldb platform shell', text: { value: '', known: false } });
      return;
    }
    // `platform shell [-h|--host] [-s SHELL] [-t SECONDS] [--] CMD`, and the `shell` alias of `platform shell --host`.
    const m = /^\s*(?:platform\s+shell|shell)\s+((?:(?:-h|--host|-s\s+\S+|--shell(?:=|\s+)\S+|-t\s+\S+|--timeout(?:=|\s+)\S+)\s+)*)(?:--\s+)?([\s\S]*)$/.exec(v.value);
    if (m) items.push({ kind: 'script', via: 'lldb platform shell', text: { value: m[2]!, known: true } });
    else if (/^\s*(r|run|process\s+launch)(\s|$)/.test(v.value)) runs = true;
  };
  for (let k = 1; k < argv.length; k++) {
    const a = argv[k]!;
    if (!a.known) continue;
    if (a.value === '--') {
      if (argv.length > k + 1) target = argv.slice(k + 1);
      break;
    }
    const eq = /^(--[a-z-]+)=([\s\S]*)$/.exec(a.value);
    const name = eq ? eq[1]! : a.value;
    const value = eq ? { value: eq[2]!, known: true } : argv[k + 1];
    if (LLDB_COMMAND.test(name)) {
      if (value) command(value);
      if (!eq) k++;
    } else if (LLDB_VALUE.test(name)) {
      if ((name === '-f' || name === '--file') && value && target === null) target = [value];
      if (!eq) k++;
    } else if (!a.value.startsWith('-') && target === null) target = [a];
  }
  if (runs && target) items.push({ kind: 'run', via: 'lldb', argv: target });
  return items.length === 0 ? { kind: 'none' } : items.length === 1 ? items[0]! : { kind: 'many', items };
}

/** exec-maven-plugin's `exec` goal, short or in full (`org.codehaus.mojo:exec-maven-plugin:3.1.0:exec`). */
const MAVEN_EXEC_GOAL = /^(?:(?:org\.codehaus\.mojo:)?exec(?:-maven-plugin)?(?::[^:\s]+)?:)exec(?:@\S+)?$/;

/** exec.args as the plugin splits it (whitespace, with "…" and '…' kept whole; no escapes). */
function mavenArgs(text: string): string[] {
  const out: string[] = [];
  const re = /"([^"]*)"|'([^']*)'|(\S+)/g;
  let cur: string | null = null;
  let last = -1;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    const piece = m[1] ?? m[2] ?? m[3] ?? '';
    // Adjacent pieces (a"b c") make one word.
    if (cur !== null && m.index === last) cur += piece;
    else {
      if (cur !== null) out.push(cur);
      cur = piece;
    }
    last = m.index + m[0].length;
  }
  if (cur !== null) out.push(cur);
  return out;
}

/**
 * Maven's `exec:exec` (`mvn`, `./mvnw`, `mvnd`) runs `-Dexec.executable` here with `-Dexec.args` split into
 * words. An executable set only in the pom is not read (a limit, docs/GUARD.md).
 */
function maven(argv: Field[]): Unwrapped {
  let goal = false;
  let exe: Field | null = null;
  let args: Field | null = null;
  for (let k = 1; k < argv.length; k++) {
    const a = argv[k]!;
    let prop: Field | null = null;
    if (a.known && (a.value === '-D' || a.value === '--define')) prop = argv[++k] ?? null;
    else if (a.known && a.value.startsWith('-D')) prop = { value: a.value.slice(2), known: true };
    else if (a.known && a.value.startsWith('--define=')) prop = { value: a.value.slice(9), known: true };
    else if (!a.known && /^-D/.test(a.value)) prop = { value: a.value.slice(2), known: false };
    else if (a.known && MAVEN_EXEC_GOAL.test(a.value)) goal = true;
    if (!prop) continue;
    const m = /^exec\.(executable|args)=([\s\S]*)$/.exec(prop.value);
    if (!m) continue;
    if (m[1] === 'executable') exe = { value: m[2]!, known: prop.known };
    else args = { value: m[2]!, known: prop.known };
  }
  if (!goal || !exe) return { kind: 'none' };
  const words: Field[] = args === null ? [] : args.known ? mavenArgs(args.value).map((value) => ({ value, known: true })) : [{ value: args.value, known: false }];
  return { kind: 'run', via: 'mvn exec:exec', argv: [exe, ...words] };
}

/** `at now <<< 'make build'`, `echo make build | batch`, `at -f job.sh now`: the job runs later, here, in this directory. */
function at(call: Call): Unwrapped {
  const s = scan(call.fields, AT);
  if (!s) return { kind: 'none' };
  const file = s.opts.find(([n]) => n === '-f');
  if (file) return { kind: 'file-script', via: `${call.name} -f`, file: file[1] ?? UNKNOWN_DIR, args: [], sourced: false };
  return { kind: 'stdin-script', via: call.name };
}

function scriptFrom(spec: Spec, via: string, argv: Field[]): Unwrapped {
  const s = scan(argv, spec);
  if (!s) return { kind: 'none' };
  const dir = s.opts.filter(([n]) => spec.chdir?.includes(n)).pop();
  const cwd = dir ? { cwd: dir[1] ?? UNKNOWN_DIR } : {};
  const opt = s.opts.find(([n]) => spec.scriptOption?.includes(n));
  const inner = argv.slice(s.index);
  // `nodemon --exec python app.py`: the value, then the words after it.
  if (opt) return { kind: 'script', via: `${via} ${opt[0]}`, text: joinFields([opt[1] ?? UNKNOWN_DIR, ...inner]), ...cwd };
  if (inner.length === 0) return { kind: 'none' };
  return { kind: 'script', via, text: joinFields(inner), ...cwd };
}

function hyperfine(argv: Field[]): Unwrapped {
  const s = scan(argv, HYPERFINE);
  if (!s) return { kind: 'none' };
  // Every positional is a command line hyperfine runs through a shell (several times).
  const scripts = argv.slice(s.index).concat(s.opts.filter(([n]) => ['-s', '--setup', '-p', '--prepare', '-c', '--cleanup', '--reference'].includes(n)).map(([, v]) => v ?? UNKNOWN_DIR));
  return scripts.length ? { kind: 'many', items: scripts.map((t) => ({ kind: 'script' as const, via: 'hyperfine', text: t })) } : { kind: 'none' };
}

function screen(argv: Field[]): Unwrapped {
  const s = scan(argv, { value: ['-S', '-c', '-e', '-h', '-p', '-s', '-t', '-T', '-X', '-Q'], noCommand: ['-X', '-Q', '-ls', '-list', '-wipe', '-r', '-R', '-x', '-D', '-v', '-version'] });
  if (!s) return { kind: 'none' };
  const inner = argv.slice(s.index);
  return inner.length ? { kind: 'run', via: 'screen', argv: inner } : { kind: 'none' };
}

/**
 * `crontab -` / `crontab` with the table on standard input: each job's command runs later, here, in HOME,
 * through sh (a file argument is not read: its jobs are unknown).
 */
function crontab(call: Call): Unwrapped {
  const argv = call.fields;
  if (argv.slice(1).some((a) => a.known && a.value === '-e')) {
    // `crontab -e` runs the editor the line names (sh -c "$VISUAL FILE", else $EDITOR), here.
    const editor = envField(call, 'VISUAL') ?? envField(call, 'EDITOR');
    return editor && (editor.value.trim() !== '' || !editor.known) ? { kind: 'script', via: 'crontab -e (the editor)', text: editor } : { kind: 'none' };
  }
  if (argv.slice(1).some((a) => a.known && /^-[lriT]$/.test(a.value))) return { kind: 'none' };
  const file = argv.slice(1).filter((a) => !(a.known && a.value.startsWith('-')) || (a.known && a.value === '-'));
  const fromStdin = file.length === 0 || (file[0]!.known && file[0]!.value === '-');
  if (!fromStdin) return { kind: 'script', via: 'crontab', text: UNKNOWN_DIR };
  const table = call.stdin();
  if (!table) return { kind: 'script', via: 'crontab', text: UNKNOWN_DIR };
  const home = call.st.vars.get('HOME') ?? call.ctx.home ?? null;
  const items: Unwrapped[] = [];
  for (const line of table.value.split('\n')) {
    const t = line.trim();
    if (!t || t.startsWith('#') || /^[A-Za-z_][A-Za-z0-9_]*\s*=/.test(t)) continue;
    const m = /^(?:@\w+|(?:\S+\s+){4}\S+)\s+(.*)$/s.exec(t);
    if (m) items.push({ kind: 'script', via: 'crontab', text: { value: m[1]!.replace(/(^|[^\\])%.*$/s, '$1'), known: table.known }, absoluteCwd: home });
  }
  return items.length ? { kind: 'many', items } : { kind: 'none' };
}

/** start-stop-daemon --start --exec PROG [--chdir DIR] -- ARGS: PROG runs here, in DIR (default /). */
function startStopDaemon(argv: Field[]): Unwrapped {
  if (!argv.some((a) => a.known && (a.value === '--start' || a.value === '-S'))) return { kind: 'none' };
  let prog: Field | undefined;
  let cwd: Field | undefined;
  const dash = argv.findIndex((a) => a.known && a.value === '--');
  const head = dash < 0 ? argv : argv.slice(0, dash);
  for (let i = 1; i < head.length; i++) {
    const a = head[i]!;
    const [name, eqv] = a.known && a.value.includes('=') ? [a.value.slice(0, a.value.indexOf('=')), { value: a.value.slice(a.value.indexOf('=') + 1), known: true }] : [a.value, head[i + 1]];
    if (['--exec', '-x', '--startas', '-a'].includes(name)) prog = eqv;
    if (['--chdir', '-d'].includes(name)) cwd = eqv;
  }
  if (!prog) return { kind: 'none' };
  // Without --chdir it starts the program in / (start-stop-daemon(8)).
  return { kind: 'run', via: 'start-stop-daemon', argv: [prog, ...(dash < 0 ? [] : argv.slice(dash + 1))], cwd: cwd ?? { value: '/', known: true } };
}

/** dtach -n SOCKET [opts] CMD..., abduco -n NAME [opts] CMD..., daemonize [opts] PATH ARGS, zellij run -- CMD. */
function detachers(name: string, argv: Field[]): Unwrapped {
  if (name === 'zellij') {
    const at = argv.findIndex((a) => a.known && a.value === '--');
    const runs = argv.some((a) => a.known && (a.value === 'run' || a.value === 'r' || a.value === 'new-pane'));
    return runs && at > 0 && argv[at + 1] ? { kind: 'run', via: 'zellij run', argv: argv.slice(at + 1) } : { kind: 'none' };
  }
  if (name === 'daemonize') {
    const s = scan(argv, { value: ['-c', '-e', '-o', '-p', '-l', '-u', '-E'], flags: ['-a', '-v'], chdir: ['-c'] });
    if (!s || !argv[s.index]) return { kind: 'none' };
    const cwd = s.opts.find(([n]) => n === '-c')?.[1];
    return { kind: 'run', via: 'daemonize', argv: argv.slice(s.index), ...(cwd ? { cwd } : {}) };
  }
  // dtach/abduco: a mode and its socket or session name first (-n, -c, -A; abduco -a attaches: nothing runs).
  const mode = argv[1];
  if (!mode?.known || !/^-[ncAN]$/.test(mode.value)) return { kind: 'none' };
  const s = scan([argv[0]!, ...argv.slice(3)], { value: ['-e', '-r'], flags: ['-E', '-z', '-f', '-q', '-l', '-r'] });
  if (!s) return { kind: 'none' };
  const inner = argv.slice(3).slice(s.index - 1);
  return inner.length ? { kind: 'run', via: name, argv: inner } : { kind: 'none' };
}

/** tmux/byobu starts a session, window or pane (its shell or command runs through $SHELL, tmux's default-shell). */
function startsTmuxSession(argv: Field[]): boolean {
  let i = 1;
  while (i < argv.length && argv[i]!.known && argv[i]!.value.startsWith('-')) i += /^-[LSfT]$/.test(argv[i]!.value) ? 2 : 1;
  const sub = argv[i];
  return sub === undefined || (sub.known && TMUX_START.has(sub.value));
}

/**
 * A terminal multiplexer starting a session runs $SHELL (tmux runs even a session's command through it):
 * a program the line names there that is not a shell runs too.
 */
function withShell(call: Call, main: Unwrapped, starts: boolean): Unwrapped {
  const sh = starts ? envField(call, 'SHELL') : undefined;
  if (!sh || (sh.known && (sh.value.trim() === '' || isShellProgram(sh.value)))) return main;
  const run: Unwrapped = { kind: 'run', via: `${call.name} $SHELL`, argv: [sh] };
  return main.kind === 'none' ? run : { kind: 'many', items: [main, run] };
}

function unwrap(call: Call): Unwrapped {
  const argv = call.fields;
  switch (call.name) {
    case 'crontab':
      return crontab(call);
    case 'start-stop-daemon':
      return startStopDaemon(argv);
    case 'dtach':
    case 'abduco':
    case 'daemonize':
    case 'zellij':
      return detachers(call.name, argv);
    case 'byobu':
    case 'tmux':
      return withShell(call, call.name === 'tmux' ? tmuxLine(call) : tmux(argv), startsTmuxSession(argv));
    case 'screen':
      return withShell(call, screen(argv), !argv.some((a) => a.known && /^-(r|R|x|X|ls|list|wipe|Q|v|version|-help|h)$/.test(a.value)));
    case 'find':
      return findExec(argv);
    case 'fd':
    case 'fdfind':
      return fdExec(argv);
    case 'xargs':
      return xargs(argv);
    case 'parallel':
      return parallel(argv, argv.some((a) => a.known && a.value === '--semaphore') ? 'sem' : 'parallel');
    case 'sem':
      return parallel(argv, 'sem');
    case 'hyperfine':
      return hyperfine(argv);
    case 'watchexec':
      return scriptFrom(WATCHEXEC, 'watchexec', argv);
    case 'watch': {
      if (argv.some((a) => a.known && (a.value === '-x' || a.value === '--exec'))) {
        const s = scan(argv, WATCH);
        return s && argv[s.index] ? { kind: 'run', via: 'watch -x', argv: argv.slice(s.index) } : { kind: 'none' };
      }
      return scriptFrom(WATCH, 'watch', argv);
    }
    case 'nodemon': {
      const u = scriptFrom(NODEMON, 'nodemon', argv);
      // Without --exec nodemon runs `node SCRIPT`: the script file, judged like node's.
      return u.kind === 'script' && u.via === 'nodemon' ? { kind: 'run', via: 'nodemon', argv: [{ value: 'node', known: true }, ...argv.slice(1).filter((a) => !(a.known && a.value.startsWith('-')))] } : u;
    }
    case 'pueue':
      return pueue(argv);
    case 'at':
    case 'batch':
      return at(call);
    case 'watchman-make':
      return watchmanMake(argv);
    case 'concurrently':
      return concurrently(argv);
    case 'start-server-and-test':
    case 'server-test':
    case 'start-test':
      return startServerAndTest(argv);
    case 'perf':
      return perf(argv);
    case 'gdb':
      return gdb(argv);
    case 'lldb':
      return lldb(argv);
    case 'mvn':
    case 'mvnw':
    case 'mvnd':
      return maven(argv);
  }
  return { kind: 'none' };
}

export const schedulers: ProgramModule = {
  family: 'schedulers, queues, watchers, multiplexers',
  names: ['crontab', 'start-stop-daemon', 'dtach', 'abduco', 'daemonize', 'zellij', 'byobu', 'tmux', 'screen', 'find', 'fd', 'fdfind', 'xargs', 'parallel', 'sem', 'hyperfine', 'watchexec', 'watch', 'nodemon', 'pueue', 'at', 'batch', 'watchman-make', 'concurrently', 'start-server-and-test', 'server-test', 'start-test', 'perf', 'gdb', 'lldb', 'mvn', 'mvnw', 'mvnd'],
  unwrap,
  examples: {
    match: [
      { line: "echo '* * * * * make build' | crontab -", runs: 'make build', in: '/home/koder' },
      { line: "EDITOR='make build-safe' crontab -e", runs: 'make build-safe' },
      { line: 'SHELL=./build.sh tmux new -d', runs: './build.sh' },
      { line: 'SHELL=./build.sh screen -dmS x', runs: './build.sh' },
      { line: 'start-stop-daemon --start --exec /usr/bin/make -- build', runs: '/usr/bin/make build' },
      { line: 'dtach -n /tmp/s make build', runs: 'make build' },
      { line: 'abduco -n s make build', runs: 'make build' },
      { line: 'daemonize /usr/bin/make build', runs: '/usr/bin/make build' },
      { line: 'zellij run -- make build', runs: 'make build' },

      { line: "tmux new -d 'make build'", runs: 'make build' },
      { line: 'screen -dmS b make build', runs: 'make build' },
      { line: 'find . -name Makefile -exec make build \\;', runs: 'make build' },
      { line: "nodemon -C -x 'make build' -w src", runs: 'make build' },
      { line: 'fd -t f Makefile -x make build', runs: 'make build' },
      { line: "fd -e ts --exec-batch make build ';' -H", runs: 'make build' },
      { line: 'xargs make build-safe < /dev/null', runs: 'make build-safe <stdin>' },
      { line: 'parallel make ::: build kasm', runs: 'make build' },
      { line: "sem -j2 'make build'", runs: 'make build' },
      { line: "watch -n 5 'make build'", runs: 'make build' },
      { line: "nodemon --exec 'make build-safe'", runs: 'make build-safe' },
      { line: 'nodemon -x make build-safe', runs: 'make build-safe' },
      { line: 'pueue add -- make build-safe', runs: 'make build-safe' },
      { line: "at now <<< 'make build-safe'", runs: 'make build-safe' },
      { line: "echo 'make build' | batch", runs: 'make build' },
      { line: "watchman-make -p '**/*.c' -t build-safe", runs: 'make build-safe' },
      { line: "concurrently 'make build' 'npm start'", runs: 'make build' },
      { line: "start-server-and-test 'npm start' http://localhost:3000 'npx playwright test'", runs: 'npx playwright test' },
      { line: 'perf stat -e cycles make build', runs: 'make build' },
      { line: 'gdb -batch -ex run --args make build', runs: 'make build' },
      { line: "lldb -b -o 'platform shell make build'", runs: 'make build' },
      { line: "lldb -o 'shell make build-safe'", runs: 'make build-safe' },
      { line: "lldb --one-line='platform shell -h -- make build'", runs: 'make build' },
      { line: 'lldb -b -o run -- make build', runs: 'make build' },
      { line: 'mvn exec:exec -Dexec.executable=make -Dexec.args=build-safe', runs: 'make build-safe' },
      { line: `./mvnw -q org.codehaus.mojo:exec-maven-plugin:3.1.0:exec -D exec.executable=make '-Dexec.args=-C "sub dir" build'`, runs: 'make -C sub dir build' },
      { line: "lldb -O 'process launch' -f make", runs: 'make' },
      { line: 'hyperfine "make build"', runs: 'make build' },
    ],
    not_match: [
      { line: 'tmux ls', runs: 'make build' },
      { line: 'at -l', runs: 'make build' },
      { line: 'perf stat -p 42', runs: 'make build' },
      { line: 'gdb make', runs: 'make' },
      { line: 'lldb -- make build', runs: 'make build' },
      { line: 'mvn -Dexec.executable=make -Dexec.args=build package', runs: 'make build' },
      { line: "lldb -o 'breakpoint set -n main' make", runs: 'make' },
      { line: 'pueue status', runs: 'make build' },
    ],
  },
};
