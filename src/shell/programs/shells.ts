// Shells: `bash -c STRING`, `bash FILE`, `bash < FILE`, `bash -s`, and the start-up file a non-interactive
// shell sources first (`BASH_ENV`, `ENV` for sh). The one list of shell names offhost knows; multi-call
// binaries (busybox, toybox) run their applet.
import type { Field } from '../expand.js';
import { emit, envField, withVia, type Call, type Walker } from '../walk-state.js';
import type { ProgramModule, Unwrapped } from './types.js';
import { STDIN_FILES } from './builtins.js';

/** Shells that take `-c STRING`, read a script file, or read stdin. */
export const SHELLS = ['bash', 'sh', 'zsh', 'dash', 'ksh', 'mksh', 'ash', 'yash', 'posh', 'fish', 'rbash', 'oksh', 'loksh', 'pdksh', 'ksh93', 'lksh'] as const;
/**
 * Whether a program (a name or a path) is a shell: what `sudo -s`, script(1) and a tmux session start from
 * $SHELL anyway. The other interactive shells (csh, nu, pwsh...) count too: they are no hidden program.
 */
export function isShellProgram(program: string): boolean {
  const name = program.slice(program.lastIndexOf('/') + 1);
  return (SHELLS as readonly string[]).includes(name) || /^(csh|tcsh|nu|elvish|xonsh|pwsh|busybox)$/.test(name);
}
/** Shells that read bash syntax (a script file of theirs is walked; fish's is not). */
export const POSIX_SHELLS = new Set<string>(SHELLS.filter((s) => s !== 'fish'));

/** Shell options that take a value (`-o pipefail`, `+O extglob`, `--rcfile f`). */
const SHELL_VALUE_OPTS = new Set(['-o', '+o', '-O', '+O', '--rcfile', '--init-file']);

export function shellCall(name: string, argv: Field[]): Unwrapped {
  let i = 1;
  let wantsCommand = false;
  let readsStdin = false;
  let noexec = false;
  let interactive = false;
  while (i < argv.length) {
    const f = argv[i]!;
    if (!f.known) break;
    const v = f.value;
    if (v === '--' || v === '-') {
      i++;
      break;
    }
    if (SHELL_VALUE_OPTS.has(v)) {
      if (v === '-o' || v === '+o') noexec = argv[i + 1]?.known && argv[i + 1]!.value === 'noexec' ? v === '-o' : noexec;
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
      if (v.includes('n')) noexec = v.startsWith('-');
      if (v.startsWith('-') && v.includes('i')) interactive = true;
      // `-o` inside a cluster (`-euo pipefail`) takes the next word.
      if (/^[-+][a-zA-Z]*o$/.test(v)) i++;
      i++;
      continue;
    }
    break;
  }
  // `bash -n script.sh`, `sh -n`, `-o noexec`: the script is parsed, not run (not BASH_ENV either); an
  // interactive shell ignores -n.
  if (noexec && !interactive && name !== 'fish') return { kind: 'none' };
  if (wantsCommand) {
    const command = argv[i] ?? null;
    if (!command) return { kind: 'none' }; // `bash -c` with no string: bash errors, nothing runs
    return { kind: 'script', via: `${name} -c`, text: command };
  }
  if (i >= argv.length || readsStdin) return { kind: 'stdin-script', via: name };
  if (argv[i]!.known && STDIN_FILES.has(argv[i]!.value)) return { kind: 'stdin-script', via: `${name} ${argv[i]!.value}` };
  // `bash script.sh args`: a script file, read by the walker when it has file access.
  return { kind: 'file-script', via: name, file: argv[i]!, args: argv.slice(i + 1), sourced: false, ...(POSIX_SHELLS.has(name) ? {} : { foreign: true }) };
}

/** The start-up file a non-interactive shell sources before its script: BASH_ENV (bash), ENV (sh, dash). */
function startupFile(call: Call): Field | null {
  const key = call.name === 'bash' || call.name === 'rbash' ? 'BASH_ENV' : call.name === 'zsh' || call.name === 'fish' ? null : 'ENV';
  if (key === null) return null;
  return envField(call, key) ?? null;
}

/** `bash --rcfile f` / `--init-file f`: the start-up file an interactive bash reads (read whenever given: fail closed). */
function rcFile(call: Call): Field | null {
  const f = call.fields;
  for (let i = 1; i < f.length; i++) {
    const a = f[i]!;
    if (!a.known || !a.value.startsWith('-') || a.value === '--' || a.value === '-') return null;
    if (a.value === '--rcfile' || a.value === '--init-file') return f[i + 1] ?? null;
    if (a.value.startsWith('--rcfile=') || a.value.startsWith('--init-file=')) return { value: a.value.slice(a.value.indexOf('=') + 1), known: true };
    if (SHELL_VALUE_OPTS.has(a.value) || /^[-+][a-zA-Z]*o$/.test(a.value)) i++;
  }
  return null;
}

function walk(call: Call, w: Walker): void {
  const u = shellCall(call.name, call.fields);
  const rc = u.kind === 'none' || call.name === 'fish' ? null : rcFile(call);
  if (rc) {
    w.emitSelf(call);
    if (!call.ctx.files) withVia(call.ctx, `${call.name} --rcfile`, () => emit(call.ctx, [{ value: rc.value, known: false }], call.env, call.cwd, call.span, call.st));
    else w.apply({ kind: 'file-script', via: `${call.name} --rcfile`, file: rc, args: [], sourced: false }, call, false);
    w.apply(u, call, false);
    return;
  }
  const startup = u.kind === 'none' ? null : startupFile(call);
  if (startup && startup.value !== '') {
    w.emitSelf(call);
    const via = `${call.name} (${call.name === 'bash' || call.name === 'rbash' ? 'BASH_ENV' : 'ENV'})`;
    // `BASH_ENV=./x.sh bash -c true`: x.sh runs first, in the new shell; unread, it is unknown.
    if (!call.ctx.files) withVia(call.ctx, via, () => emit(call.ctx, [{ value: startup.value, known: false }], call.env, call.cwd, call.span, call.st));
    else w.apply({ kind: 'file-script', via: `${call.name} (${call.name === 'bash' ? 'BASH_ENV' : 'ENV'})`, file: startup, args: [], sourced: false }, call, false);
    w.apply(u, call, false);
    return;
  }
  w.apply(u, call);
}

export const shells: ProgramModule = {
  family: 'shells',
  names: SHELLS,
  readsScript: true,
  walk,
  examples: {
    match: [
      { line: "bash -c 'make build-safe'", runs: 'make build-safe' },
      { line: "sh -euc 'make build'", runs: 'make build' },
      { line: "bash <<< 'make build'", runs: 'make build' },
      { line: "echo 'make build' | bash", runs: 'make build' },
      { line: "printf 'make build-saf\\x65\\n' | bash", runs: 'make build-safe' },
      { line: "echo -e 'make\\x20build' | sh", runs: 'make build' },
      { line: "BASH_ENV=./env.sh bash -c true", runs: './env.sh' },
      { line: "bash -n +n -c 'make build'", runs: 'make build' },
    ],
    not_match: [
      { line: "echo 'make build' > notes.txt", runs: 'make build' },
      { line: 'bash -n -c true', runs: 'make build' },
      { line: "bash -n -c 'make build'", runs: 'make build' },
      { line: "sh -o noexec -c 'make build'", runs: 'make build' },
    ],
  },
};

/** `busybox sh -c …`, `toybox env make`: the applet is the next word. */
export const multicall: ProgramModule = {
  family: 'multi-call binaries',
  names: ['busybox', 'toybox'],
  unwrap(call) {
    const applet = call.fields[1];
    if (!applet || (applet.known && applet.value.startsWith('-'))) return { kind: 'none' };
    return { kind: 'run', via: call.name, argv: call.fields.slice(1) };
  },
  examples: {
    match: [
      { line: "busybox sh -c 'make build'", runs: 'make build' },
      { line: 'toybox env make build-safe', runs: 'make build-safe' },
    ],
    not_match: [{ line: 'busybox --list', runs: 'make' }],
  },
};

