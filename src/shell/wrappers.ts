// Programs that run another program: `sudo make`, `env -C dir make`, `timeout 60 make`, `bash -c '…'`,
// `xargs make`, `find -exec make {} \;`, `npx playwright` ... Each entry says how to find the inner
// command in the argv, so that the guard judges what actually runs and not the wrapper's name.
import type { Field } from './expand.js';
import { CONTAINER_CLIS, containerRun } from './containers.js';
import { isOpt, scan, type Spec } from './argv-scan.js';
import { quote } from '../routes/quote.js';
import { MONOREPO_RUNNERS, monorepoRun, PACKAGE_RUNNERS, packageCommand, type WorkspaceSelection } from './package-runners.js';

export type Unwrapped =
  /** Run `argv` (the wrapper stripped), with extra env / cwd; `extraUnknownArg`: args come from stdin. */
  | {
      kind: 'run';
      via: string;
      argv: Field[];
      env?: [string, Field][];
      cwd?: Field;
      extraUnknownArg?: boolean;
      cwdUnknown?: boolean;
    }
  /** A string that a shell parses and runs (`bash -c`, `eval`, `env -S`, `watch`, `su -c`, `npx -c`...). */
  | { kind: 'script'; via: string; text: Field; cwd?: Field; extraUnknownArg?: boolean }
  /** A shell that reads its script from standard input. */
  | { kind: 'stdin-script'; via: string }
  /**
   * A script file run by a shell (`bash run.sh a b`) or sourced into this one (`. ./env.sh`): the walker
   * reads it when it has file access (the guard gives it the disk), judged as the shell itself otherwise.
   */
  | { kind: 'file-script'; via: string; file: Field; args: Field[]; sourced: boolean }
  /**
   * `npm run e2e`, `npm test`, `pnpm build`, `yarn e2e`, `bun run e2e`: a package.json script. `fallback`
   * is what runs when the package has no such script (yarn, pnpm and bun then run the binary).
   */
  | { kind: 'package-script'; via: string; script: Field; args: Field[]; dir?: Field; workspaces?: WorkspaceSelection; fallback: Unwrapped }
  /** Several commands (find with several -exec). */
  | { kind: 'many'; items: Unwrapped[] }
  /** Not a wrapper, or a wrapper that runs nothing here (`command -v make`, `sudo -l`). */
  | { kind: 'none' };


const SPECS: Record<string, Spec> = {
  sudo: {
    value: ['-u', '--user', '-g', '--group', '-h', '--host', '-C', '--close-from', '-D', '--chdir', '-p', '--prompt', '-r', '--role', '-t', '--type', '-T', '--command-timeout', '-U', '--other-user', '-R', '--chroot'],
    chdir: ['-D', '--chdir'],
    noCommand: ['-l', '--list', '-v', '--validate', '-k', '--reset-timestamp', '-K', '--remove-timestamp', '-V', '--version', '-h', '--help', '-e', '--edit'],
    assignments: true,
  },
  doas: { value: ['-u', '-C'], noCommand: ['-C', '-L'] },
  env: {
    value: ['-u', '--unset', '-C', '--chdir', '-S', '--split-string', '--default-signal', '--ignore-signal', '--block-signal', '-a', '--argv0'],
    chdir: ['-C', '--chdir'],
    scriptOption: ['-S', '--split-string'],
    assignments: true,
  },
  nice: { value: ['-n', '--adjustment'] },
  ionice: { value: ['-c', '--class', '-n', '--classdata'], noCommand: ['-p', '--pid', '-P', '--pgid', '-u', '--uid'] },
  nohup: { value: [] },
  // `corepack pnpm e2e`: the package manager it pins runs (its own commands, `corepack enable`, run nothing heavy).
  corepack: { value: [] },
  setsid: { value: [] },
  timeout: { value: ['-s', '--signal', '-k', '--kill-after'], skip: 1 },
  time: { value: ['-f', '--format', '-o', '--output'] },
  command: { value: [], noCommand: ['-v', '-V'] },
  exec: { value: ['-a'] },
  stdbuf: { value: ['-i', '--input', '-o', '--output', '-e', '--error'] },
  taskset: { value: ['-c', '--cpu-list'], noCommand: ['-p', '--pid'], skip: 1 },
  chrt: { value: ['-T', '--sched-runtime', '-P', '--sched-period', '-D', '--sched-deadline'], noCommand: ['-p', '--pid', '-m', '--max'], skip: 1 },
  watch: { value: ['-n', '--interval', '-q', '--equexit', '--differences'], joinAsScript: true },
  flock: { value: ['-w', '--timeout', '-E', '--conflict-exit-code', '-c', '--command'], scriptOption: ['-c', '--command'], skip: 1 },
  unbuffer: { value: [] },
  caffeinate: { value: ['-t', '-w'] },
  catchsegv: { value: [] },
  strace: { value: ['-o', '-e', '-p', '-s', '-u', '-E', '-I', '-a', '-b', '-O', '-S', '-P', '-X'] },
  ltrace: { value: ['-o', '-e', '-p', '-s', '-u', '-a', '-n', '-l', '-L'] },
  valgrind: { value: [] },
  runuser: { value: ['-u', '--user', '-g', '--group', '-G', '--supp-group', '-s', '--shell', '-w', '--whitelist-environment'], scriptOption: ['-c', '--command'] },
  su: { value: ['-g', '--group', '-G', '--supp-group', '-s', '--shell', '-w', '--whitelist-environment', '-c', '--command', '--session-command'], scriptOption: ['-c', '--command', '--session-command'] },
  'systemd-run': { value: ['-u', '--unit', '-p', '--property', '-E', '--setenv', '-M', '--machine', '--description', '--slice', '-H', '--host', '--working-directory', '--uid', '--gid', '--nice'], chdir: ['--working-directory'] },
  'systemd-inhibit': { value: ['--what', '--who', '--why', '--mode'] },
  'sg': { value: [], skip: 1 },
  'nix-shell': { value: ['-p', '--packages', '-A', '--attr', '-I', '--arg', '--argstr'], scriptOption: ['--run', '--command'] },
  'dbus-run-session': { value: ['--config-file', '--dbus-daemon'] },
  unshare: { value: ['-S', '--setuid', '-G', '--setgid', '-R', '--root', '-w', '--wd', '--propagation', '--map-user', '--map-group', '--map-users', '--map-groups'], chdir: ['-w', '--wd'] },
  nsenter: { value: ['-t', '--target', '-S', '--setuid', '-G', '--setgid', '-w', '--wd', '-r', '--root', '-m', '-u', '-i', '-n', '-p', '-C', '-U', '-T'], chdir: ['-w', '--wd'] },
  pkexec: { value: ['--user', '-u'] },
  cpulimit: { value: ['-l', '--limit', '-p', '--pid', '-e', '--exe', '-c', '--cpu'], noCommand: ['-p', '--pid', '-e', '--exe'] },
  gtimeout: { value: ['-s', '--signal', '-k', '--kill-after'], skip: 1 },
  entr: { value: [] },
  firejail: { value: [] },
  // chroot NEWROOT cmd: the command runs in another root, in a directory offhost cannot know.
  chroot: { value: ['--userspec', '--groups'], skip: 1 },
  // util-linux script(1): `script -qc 'make build' /dev/null` runs the string through a shell.
  script: { value: ['-c', '--command', '-E', '--echo', '-I', '--log-in', '-O', '--log-out', '-B', '--log-io', '-T', '--log-timing', '-m', '--logging-format'], scriptOption: ['-c', '--command'], noCommand: ['-V', '--version', '-h', '--help'] },
};

/** Shell builtins `builtin X` can run (anything else is an error: nothing runs). */
const BUILTINS = new Set(['cd', 'pushd', 'popd', 'echo', 'printf', 'eval', 'exec', 'source', '.', 'command', 'builtin', 'export', 'declare', 'typeset', 'local', 'readonly', 'read', 'test', '[', 'true', 'false', ':', 'type', 'hash', 'set', 'shopt', 'unset', 'alias', 'unalias', 'trap', 'wait', 'kill', 'let', 'mapfile', 'readarray', 'pwd', 'times', 'ulimit', 'umask', 'jobs', 'fg', 'bg', 'disown', 'suspend', 'enable', 'help', 'history', 'fc', 'dirs', 'getopts', 'shift', 'return', 'exit', 'break', 'continue', 'caller', 'complete', 'compgen', 'compopt', 'bind', 'logout']);

/** Shells that take `-c STRING`, read a script file, or read stdin. */
const SHELLS = new Set(['bash', 'sh', 'zsh', 'dash', 'ksh', 'mksh', 'ash', 'yash', 'posh', 'fish', 'busybox', 'rbash', 'oksh', 'loksh', 'pdksh']);
/** Script files that are really standard input. */
const STDIN_FILES = new Set(['/dev/stdin', '/dev/fd/0', '/proc/self/fd/0']);

/** Shell options that take a value (`-o pipefail`, `+O extglob`, `--rcfile f`). */
const SHELL_VALUE_OPTS = new Set(['-o', '+o', '-O', '+O', '--rcfile', '--init-file']);


function shell(name: string, argv: Field[]): Unwrapped {
  let i = 1;
  let command: Field | null = null;
  let wantsCommand = false;
  let readsStdin = false;
  while (i < argv.length) {
    const f = argv[i]!;
    if (!f.known) break;
    const v = f.value;
    if (v === '--' || v === '-') {
      i++;
      break;
    }
    if (SHELL_VALUE_OPTS.has(v)) {
      i += 2;
      continue;
    }
    if (v.startsWith('--')) {
      i++;
      continue;
    }
    if ((v.startsWith('-') || v.startsWith('+')) && v.length > 1) {
      if (v.includes('c')) wantsCommand = true;
      if (v.includes('s')) readsStdin = true;
      // `-o` inside a cluster (`-euo pipefail`) takes the next word.
      if (/^[-+][a-zA-Z]*o$/.test(v)) i++;
      i++;
      continue;
    }
    break;
  }
  if (name === 'busybox') {
    // busybox sh -c ...: the applet name is the next word.
    const applet = argv[1];
    if (applet?.known && SHELLS.has(applet.value)) return shell(applet.value, argv.slice(1));
    if (applet) return { kind: 'run', via: 'busybox', argv: argv.slice(1) };
    return { kind: 'none' };
  }
  if (wantsCommand) {
    command = argv[i] ?? null;
    if (!command) return { kind: 'none' }; // `bash -c` with no string: bash errors, nothing runs
    return { kind: 'script', via: `${name} -c`, text: command };
  }
  if (i >= argv.length || readsStdin) return { kind: 'stdin-script', via: name };
  if (argv[i]!.known && STDIN_FILES.has(argv[i]!.value)) return { kind: 'stdin-script', via: `${name} ${argv[i]!.value}` };
  // `bash script.sh args`: a script file, read by the walker when it has file access.
  return { kind: 'file-script', via: name, file: argv[i]!, args: argv.slice(i + 1), sourced: false };
}

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
    return { kind: 'script', via: 'tmux send-keys', text: { value: text.map((a) => a.value).join(' '), known: text.every((a) => a.known) }, cwd: { value: '', known: false } };
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
  const cwd = dir ?? (startsHere ? undefined : { value: '', known: false });
  return { kind: 'script', via: `tmux ${sub.value}`, text: { value: rest.map((a) => a.value).join(' '), known: rest.every((a) => a.known) }, ...(cwd ? { cwd } : {}) };
}

/** `screen -dmS name make build`: screen runs the command (argv) in a new window, here. */
function screen(argv: Field[]): Unwrapped {
  const s = scan(argv, { value: ['-S', '-c', '-e', '-h', '-p', '-s', '-t', '-T', '-X', '-Q'], noCommand: ['-X', '-Q', '-ls', '-list', '-wipe', '-r', '-R', '-x', '-D', '-v', '-version'] });
  if (!s) return { kind: 'none' };
  const inner = argv.slice(s.index);
  if (inner.length === 0) return { kind: 'none' };
  return { kind: 'run', via: 'screen', argv: inner };
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

function xargs(argv: Field[]): Unwrapped {
  const s = scan(argv, { value: ['-a', '--arg-file', '-d', '--delimiter', '-E', '-e', '--eof', '-I', '-i', '--replace', '-L', '-l', '--max-lines', '-n', '--max-args', '-P', '--max-procs', '-s', '--max-chars', '--process-slot-var'] });
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

function parallel(argv: Field[]): Unwrapped {
  const s = scan(argv, { value: ['-j', '--jobs', '-S', '--sshlogin', '--joblog', '--results', '-a', '--arg-file', '--delay', '--timeout', '--retries', '--colsep', '-d', '--delimiter', '-I', '--tmpdir', '--workdir', '--wd'] });
  if (!s) return { kind: 'none' };
  let end = s.index;
  while (end < argv.length && !(argv[end]!.known && /^:::+\+?$|^::::$/.test(argv[end]!.value))) end++;
  const inner = argv.slice(s.index, end);
  if (inner.length === 0) return { kind: 'stdin-script', via: 'parallel' };
  // GNU parallel runs the command through a shell, with each input put in place of {} (or appended).
  const text = inner.map((a) => a.value).join(' ');
  const known = inner.every((a) => a.known);
  const inputs = argv.slice(end + 1);
  const sep = argv[end]?.value;
  const placeholder = /\{[^{}\s]*\}/g;
  const hasPlaceholder = /\{[^{}\s]*\}/.test(text);
  const withInput = (input: string) => (hasPlaceholder ? text.replace(placeholder, () => input) : `${text} ${input}`);
  if (sep === ':::' && inputs.length > 0 && inputs.length <= 32 && inputs.every((a) => a.known && !a.value.startsWith(':::'))) {
    return { kind: 'many', items: inputs.map((a) => ({ kind: 'script' as const, via: 'parallel', text: { value: withInput(quote(a.value)), known } })) };
  }
  // Inputs from stdin or files: an unknown variable stands in for each one.
  return { kind: 'script', via: 'parallel', text: { value: withInput('"$__OFFHOST_UNKNOWN_INPUT"'), known } };
}

/** Looks inside one wrapper invocation. `argv[0]` is the wrapper's own basename. */
export function unwrap(program: string, argv: Field[]): Unwrapped {
  if (SHELLS.has(program)) return shell(program, argv);
  if (program === 'eval') {
    const rest = argv[1]?.known && argv[1].value === '--' ? argv.slice(2) : argv.slice(1);
    if (rest.length === 0) return { kind: 'none' };
    return { kind: 'script', via: 'eval', text: { value: rest.map((a) => a.value).join(' '), known: rest.every((a) => a.known) } };
  }
  if (program === 'find') return findExec(argv);
  if (program === 'source' || program === '.') {
    const file = argv[1];
    if (file?.known && STDIN_FILES.has(file.value)) return { kind: 'stdin-script', via: `${program} ${file.value}` };
    if (!file) return { kind: 'none' };
    return { kind: 'file-script', via: program, file, args: argv.slice(2), sourced: true };
  }
  if (program === 'tmux') return tmux(argv);
  if (program === 'hyperfine') {
    // Every positional is a command line hyperfine runs through a shell (several times).
    const s2 = scan(argv, { value: ['-w', '--warmup', '-m', '--min-runs', '-M', '--max-runs', '-r', '--runs', '-s', '--setup', '-p', '--prepare', '-c', '--cleanup', '-P', '--parameter-scan', '-D', '--parameter-step-size', '-L', '--parameter-list', '-S', '--shell', '--style', '--sort', '-u', '--time-unit', '--export-asciidoc', '--export-csv', '--export-json', '--export-markdown', '--export-orgmode', '--output', '--input', '-n', '--command-name', '--reference'] });
    if (!s2) return { kind: 'none' };
    const scripts = argv.slice(s2.index).concat(s2.opts.filter(([n]) => ['-s', '--setup', '-p', '--prepare', '-c', '--cleanup', '--reference'].includes(n)).map(([, v]) => v ?? { value: '', known: false }));
    return scripts.length ? { kind: 'many', items: scripts.map((t) => ({ kind: 'script' as const, via: 'hyperfine', text: t })) } : { kind: 'none' };
  }
  if (program === 'watchexec') {
    // watchexec [options] [--] COMMAND...: run through a shell by default.
    const s2 = scan(argv, { value: ['-w', '--watch', '-e', '--exts', '-f', '--filter', '-i', '--ignore', '-d', '--debounce', '-s', '--signal', '--shell', '--on-busy-update', '-E', '--env', '--workdir', '--project-origin'] });
    if (!s2) return { kind: 'none' };
    const inner = argv.slice(s2.index);
    if (inner.length === 0) return { kind: 'none' };
    return { kind: 'script', via: 'watchexec', text: { value: inner.map((a) => a.value).join(' '), known: inner.every((a) => a.known) } };
  }
  if (program === 'screen') return screen(argv);
  if (program === 'xargs') return xargs(argv);
  if (program === 'parallel') return parallel(argv);
  if (PACKAGE_RUNNERS.has(program)) return packageCommand(program, argv);
  if (MONOREPO_RUNNERS.has(program)) return monorepoRun(program, argv);
  if (CONTAINER_CLIS.has(program)) return containerRun(program, argv);
  if (program === 'builtin') {
    const inner = argv[1];
    if (!inner) return { kind: 'none' };
    if (inner.known && !BUILTINS.has(inner.value)) return { kind: 'none' }; // bash: not a shell builtin
    return { kind: 'run', via: 'builtin', argv: argv.slice(1) };
  }
  if (program === 'fvm') {
    // Flutter Version Management: `fvm flutter test`, `fvm dart test`, `fvm exec flutter test`.
    const sub = argv[1];
    if (sub?.known && (sub.value === 'flutter' || sub.value === 'dart')) return { kind: 'run', via: 'fvm', argv: argv.slice(1) };
    if (sub?.known && sub.value === 'exec' && argv.length > 2) return { kind: 'run', via: 'fvm exec', argv: argv.slice(2) };
    if (sub?.known && sub.value === 'spawn' && argv.length > 3) return { kind: 'run', via: 'fvm spawn', argv: [{ value: 'flutter', known: true }, ...argv.slice(3)] };
    return { kind: 'none' };
  }
  const spec = SPECS[program];
  if (!spec) return { kind: 'none' };
  // taskset -c LIST replaces the MASK positional.
  const effective = program === 'taskset' && argv.some((a) => a.known && /^(-[a-z]*c|--cpu-list)/.test(a.value)) ? { ...spec, skip: 0 } : spec;
  const s = scan(argv, effective);
  if (!s) return { kind: 'none' };
  const via = program;
  const chdirOpt = s.opts.filter(([n]) => spec.chdir?.includes(n)).pop();
  const cwd = chdirOpt ? (chdirOpt[1] ?? { value: '', known: false }) : undefined;
  const scriptOpt = s.opts.find(([n]) => spec.scriptOption?.includes(n));
  if (scriptOpt) {
    const text = scriptOpt[1] ?? { value: '', known: false };
    if (program === 'env') {
      // env -S 'make build' args...: the string is split into words, the rest appended.
      const rest = argv.slice(s.index);
      const joined = [text, ...rest];
      return {
        kind: 'script',
        via: 'env -S',
        text: { value: joined.map((a) => a.value).join(' '), known: joined.every((a) => a.known) },
        ...(cwd ? { cwd } : {}),
      };
    }
    return { kind: 'script', via: `${program} ${scriptOpt[0]}`, text, ...(cwd ? { cwd } : {}) };
  }
  const inner = argv.slice(s.index);
  if (inner.length === 0) return { kind: 'none' };
  if (spec.joinAsScript && !s.opts.some(([n]) => n === '-x' || n === '--exec')) {
    return { kind: 'script', via, text: { value: inner.map((a) => a.value).join(' '), known: inner.every((a) => a.known) } };
  }
  if (program === 'chroot') return { kind: 'run', via, argv: inner, cwdUnknown: true };
  return { kind: 'run', via, argv: inner, env: s.env, ...(cwd ? { cwd } : {}) };
}

const WRAPPERS = new Set([...SHELLS, ...PACKAGE_RUNNERS, ...MONOREPO_RUNNERS, ...CONTAINER_CLIS, ...Object.keys(SPECS), 'eval', 'source', '.', 'tmux', 'screen', 'hyperfine', 'watchexec', 'find', 'xargs', 'parallel', 'builtin', 'fvm']);

/** Whether `program` is one the walker must look inside. */
export function isWrapper(program: string): boolean {
  return WRAPPERS.has(program);
}
