// Shell builtins that change the shell the line runs in (cd/pushd/popd, declare/export, alias, shopt, set,
// hash, printf -v, read, unset), that run a string (eval, trap, source), that run their arguments
// (builtin, command, exec), and the ones that write static text a pipe can feed to a shell (echo, printf).
import type { Field } from '../expand.js';
import { addAlt, isUnknownValue, resolveDir, type Call, type State, type Walker } from '../walk-state.js';
import type { ProgramModule, Unwrapped } from './types.js';
import { formatPrintf, echoText } from './printf.js';
import { stdinFromFile } from '../script-files.js';

/** Shell builtins `builtin X` can run (anything else is an error: nothing runs). */
const BUILTINS = new Set(['cd', 'pushd', 'popd', 'echo', 'printf', 'eval', 'exec', 'source', '.', 'command', 'builtin', 'export', 'declare', 'typeset', 'local', 'readonly', 'read', 'test', '[', 'true', 'false', ':', 'type', 'hash', 'set', 'shopt', 'unset', 'alias', 'unalias', 'trap', 'wait', 'kill', 'let', 'mapfile', 'readarray', 'pwd', 'times', 'ulimit', 'umask', 'jobs', 'fg', 'bg', 'disown', 'suspend', 'enable', 'help', 'history', 'fc', 'dirs', 'getopts', 'shift', 'return', 'exit', 'break', 'continue', 'caller', 'complete', 'compgen', 'compopt', 'bind', 'logout']);

const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * Directories a `cd` surely reaches: `/`, `/tmp`, HOME, and the directories above the one the shell is in
 * (a directory's parents exist). Anything else may be missing, and then bash stays where it was.
 */
function surelyExists(dir: string | null, st: State, from: string | null, call: Call): boolean {
  if (dir === null) return true; // unknown already: nothing more to lose
  if (dir === '/' || dir === '/tmp' || dir === st.vars.get('HOME')) return true;
  if (from !== null && (from === dir || from.startsWith(dir === '/' ? '/' : `${dir}/`))) return true;
  const files = call.ctx.files;
  if (files) {
    const r = files.read(dir);
    if (r.kind === 'directory') return true;
  }
  return false;
}

function changeDir(call: Call): void {
  const { name, st } = call;
  let rest = call.fields.slice(1);
  let noChange = false; // pushd -n / popd -n: the stack changes, the directory does not
  while (rest[0]?.known && /^-[LPe@n]+$/.test(rest[0].value)) {
    if (rest[0].value.includes('n') && name !== 'cd') noChange = true;
    rest = rest.slice(1);
  }
  if (rest[0]?.known && rest[0].value === '--') rest = rest.slice(1);
  const prev = st.cwd;
  const prevAlts = st.altCwds;
  if (name === 'popd') {
    if (rest[0]?.known && /^[+-]\d+$/.test(rest[0].value)) {
      // popd +N / -N removes an entry; the directory stays unless it is entry 0.
      if (rest[0].value === '+0' || rest[0].value === '-0') st.cwd = null;
      st.dirStack = st.dirStack.map(() => null);
      return;
    }
    if (noChange) {
      st.dirStack.pop();
      return;
    }
    st.cwd = st.dirStack.length ? (st.dirStack.pop() ?? null) : st.cwd;
  } else if (name === 'pushd') {
    if (rest.length === 0) {
      const top = st.dirStack.pop();
      if (top === undefined) return;
      st.dirStack.push(st.cwd);
      st.cwd = top;
    } else if (rest[0]!.known && /^[+-]\d+$/.test(rest[0]!.value)) {
      st.cwd = null; // rotating the stack: where it lands is not tracked
    } else {
      const target = resolveDir(st.cwd, rest[0]!);
      if (noChange) {
        st.dirStack.push(target);
        return;
      }
      st.dirStack.push(st.cwd);
      st.cwd = target;
    }
  } else {
    const target = rest[0];
    // `CDPATH=engines/lang cd koda`: an assignment before cd counts as much as one made earlier.
    const own = call.env.CDPATH;
    const cdpath = own !== undefined ? (isUnknownValue(own) ? null : own) : st.vars.has('CDPATH') ? st.vars.get('CDPATH') : undefined;
    if (!target) st.cwd = st.vars.has('HOME') ? (st.vars.get('HOME') ?? null) : null;
    else if (target.known && target.value === '-') st.cwd = st.vars.has('OLDPWD') ? (st.vars.get('OLDPWD') ?? null) : st.oldpwd;
    else if (cdpath !== undefined && cdpath !== '' && target.known && !/^(\/|\.\.?(\/|$))/.test(target.value)) {
      // With CDPATH set, `cd dir` may land in any CDPATH entry that has `dir`: offhost does not look
      // at the disk, so the directory is unknown.
      st.cwd = null;
    } else st.cwd = resolveDir(st.cwd, target);
  }
  st.altCwds = [];
  if (st.cwd !== prev && !surelyExists(st.cwd, st, prev, call) && !st.errexit) {
    // The directory may not exist: then bash prints an error and stays where it was.
    for (const d of [prev, ...prevAlts]) addAlt(st, d);
  } else if (st.cwd !== prev) {
    // From another possible directory: a relative `cd` lands elsewhere; a `popd` there had no stack.
    for (const d of prevAlts) addAlt(st, name === 'popd' ? d : resolveAgain(d, call));
  }
  st.oldpwd = prev;
  st.vars.set('OLDPWD', prev);
  st.vars.set('PWD', st.cwd);
}

/** A relative `cd` taken from another possible directory. */
function resolveAgain(from: string | null, call: Call): string | null {
  const target = call.fields.slice(1).find((f) => !(f.known && f.value.startsWith('-')));
  if (!target) return null;
  return resolveDir(from, target);
}

function declare(call: Call): void {
  const { fields, st, name } = call;
  const exporting = name === 'export' || fields.some((f) => f.known && /^-[a-zA-Z]*x/.test(f.value));
  const nameref = fields.some((f) => f.known && /^-[a-zA-Z]*n/.test(f.value));
  for (const f of fields.slice(1)) {
    const m = /^([A-Za-z_][A-Za-z0-9_]*)=(.*)$/s.exec(f.value);
    if (m && nameref) {
      // `declare -n ref=make_var`: `$ref` is whatever the named variable holds when used: unknown here.
      st.vars.set(m[1]!, f.known && NAME.test(m[2]!) && st.vars.has(m[2]!) ? (st.vars.get(m[2]!) ?? null) : null);
      continue;
    }
    // `declare -a A=(…)` is an array (not modelled): unknown, never the text "(…)".
    if (m) st.vars.set(m[1]!, f.known && !m[2]!.startsWith('(') && !fields.some((x) => x.known && /^-[a-zA-Z]*[aA]/.test(x.value)) ? m[2]! : null);
    else if (NAME.test(f.value) && !exporting) st.vars.set(f.value, null);
    const n = m ? m[1]! : NAME.test(f.value) ? f.value : null;
    if (n && exporting) (st.exported ??= new Set()).add(n);
  }
}

/** `printf -v NAME FORMAT ARGS`: the variable gets the formatted text. */
function printfV(call: Call): void {
  const f = call.fields;
  let i = 1;
  let target: string | null = null;
  while (i < f.length && f[i]!.known && f[i]!.value.startsWith('-')) {
    if (f[i]!.value === '-v') {
      target = f[i + 1]?.value ?? null;
      i += 2;
    } else if (f[i]!.value.startsWith('-v')) {
      target = f[i]!.value.slice(2);
      i++;
    } else if (f[i]!.value === '--') {
      i++;
      break;
    } else break;
  }
  if (target === null) return;
  const name = target.replace(/\[.*$/, '');
  const rest = f.slice(i);
  const text = rest.length && rest.every((x) => x.known) && !target.includes('[') ? formatPrintf(rest[0]!.value, rest.slice(1).map((x) => x.value)) : null;
  call.st.vars.set(name, text);
}

function setOptions(call: Call): void {
  for (let i = 1; i < call.fields.length; i++) {
    const f = call.fields[i]!;
    if (!f.known) continue;
    if (/^-[a-zA-Z]*e/.test(f.value)) call.st.errexit = true;
    if (/^\+[a-zA-Z]*e/.test(f.value)) call.st.errexit = false;
    if ((f.value === '-o' || f.value === '+o') && call.fields[i + 1]?.value === 'errexit') call.st.errexit = f.value === '-o';
  }
}

function hash(call: Call): void {
  const f = call.fields;
  for (let i = 1; i < f.length; i++) {
    if (f[i]!.known && f[i]!.value === '-p' && f[i + 2]) {
      const path = f[i + 1]!;
      for (const n of f.slice(i + 2)) if (n.known) (call.st.hashed ??= new Map()).set(n.value, path);
      return;
    }
  }
}

function trap(call: Call, w: Walker): void {
  const { fields } = call;
  if (fields.length < 3) return;
  let i = 1;
  if (fields[i]?.known && fields[i]!.value === '--') i++;
  const action = fields[i];
  if (action && !(action.known && (action.value === '-' || action.value === '' || /^-[lp]$/.test(action.value)))) {
    // `trap 'make build' EXIT`: the action runs later in this shell.
    w.runScript(action, 'trap', call.cwd, call.env, call.st, call.ctx, call.span);
  }
}

/** `let 'x=a[$(make build)]'`, `(( x ))` with `x='a[$(…)]'`: arithmetic runs substitutions in subscripts. */
export function arithmeticVars(text: string, call: Pick<Call, 'st' | 'ctx' | 'span' | 'cwd' | 'env'>, w: Walker, seen = new Set<string>()): void {
  for (const m of text.matchAll(/[A-Za-z_][A-Za-z0-9_]*/g)) {
    const name = m[0];
    if (seen.has(name) || seen.size > 32) continue;
    seen.add(name);
    const v = call.st.vars.get(name);
    if (typeof v !== 'string') continue;
    if (/\$\(|`/.test(v)) {
      // The value is evaluated as an expression: a subscript's `$(…)` runs.
      const subs = v.match(/\$\((?:[^()]|\([^()]*\))*\)|`[^`]*`/g) ?? [];
      for (const s of subs) {
        const inner = s.startsWith('`') ? s.slice(1, -1) : s.slice(2, -1);
        w.runScript({ value: inner, known: true }, 'arithmetic', call.cwd, call.env, call.st, call.ctx, call.span, `$((${name}))`, { shared: true });
      }
    } else if (/[A-Za-z_]/.test(v)) arithmeticVars(v, call, w, seen);
  }
}

/** Substitutions in a subscript of a name a builtin takes (`declare a[$(cmd)]=1`, `unset 'a[$(cmd)]'`): bash runs them. */
function subscripts(call: Call, w: Walker): void {
  for (const f of call.fields.slice(1)) {
    const m = /^[A-Za-z_][A-Za-z0-9_]*\[(.*)\](?:[+]?=|$)/s.exec(f.value);
    if (!m) continue;
    for (const sub of m[1]!.match(/\$\((?:[^()]|\([^()]*\))*\)|`[^`]*`/g) ?? []) {
      const inner = sub.startsWith('`') ? sub.slice(1, -1) : sub.slice(2, -1);
      // The subscript is text the parser left whole (a bracket, not a glob): its substitutions parse here.
      w.runScript({ value: inner, known: true }, 'subscript', call.cwd, call.env, call.st, call.ctx, call.span, `${call.name} ${f.value.slice(0, f.value.indexOf('['))}[…]`, { shared: true });
    }
    arithmeticVars(m[1]!, call, w);
  }
}

const NAME_TAKERS = new Set(['export', 'declare', 'typeset', 'local', 'readonly', 'unset', 'read', 'printf', 'mapfile', 'readarray']);

function walk(call: Call, w: Walker): void {
  const { name, fields, st } = call;
  if (NAME_TAKERS.has(name) && fields.some((f) => f.value.includes('['))) subscripts(call, w);
  switch (name) {
    case 'cd':
    case 'pushd':
    case 'popd':
      // `cd` moves this shell only when run by it (not `sudo cd`, which fails and leaves it as it was).
      if (call.direct) changeDir(call);
      break;
    case 'export':
    case 'declare':
    case 'typeset':
    case 'local':
    case 'readonly':
      declare(call);
      break;
    case 'shopt':
      if (fields.some((f) => f.value === '-s') && fields.some((f) => f.value === 'expand_aliases' || !f.known)) st.expandAliases = true;
      break;
    case 'alias':
      for (const f of fields.slice(1)) {
        const m = /^([^=\s]+)=(.*)$/s.exec(f.value);
        if (m) (st.aliases ??= new Map()).set(m[1]!, f.known ? m[2]! : '\u0000unknown');
      }
      break;
    case 'unset':
    case 'read':
    case 'mapfile':
    case 'readarray':
      for (const f of fields.slice(1)) if (NAME.test(f.value)) st.vars.set(f.value, null);
      break;
    case 'printf':
      printfV(call);
      break;
    case 'set':
      setOptions(call);
      break;
    case 'hash':
      hash(call);
      break;
    case 'let':
      w.emitSelf(call);
      for (const f of fields.slice(1)) arithmeticVars(f.value, call, w);
      return;
    case 'trap':
      w.emitSelf(call);
      trap(call, w);
      return;
  }
  const u = unwrapBuiltin(call);
  if (u.kind === 'none') w.emitSelf(call);
  else w.apply(u, call);
}

function unwrapBuiltin(call: Call): Unwrapped {
  const { name, fields: argv } = call;
  if (name === 'eval') {
    const rest = argv[1]?.known && argv[1].value === '--' ? argv.slice(2) : argv.slice(1);
    if (rest.length === 0) return { kind: 'none' };
    return { kind: 'script', via: 'eval', text: { value: rest.map((a) => a.value).join(' '), known: rest.every((a) => a.known) } };
  }
  if (name === 'source' || name === '.') {
    const file = argv[1];
    if (file?.known && STDIN_FILES.has(file.value)) return { kind: 'stdin-script', via: `${name} ${file.value}` };
    if (!file) return { kind: 'none' };
    return { kind: 'file-script', via: name, file, args: argv.slice(2), sourced: true };
  }
  if (name === 'builtin') {
    const inner = argv[1];
    if (!inner) return { kind: 'none' };
    if (inner.known && !BUILTINS.has(inner.value)) return { kind: 'none' }; // bash: not a shell builtin
    return { kind: 'run', via: 'builtin', argv: argv.slice(1) };
  }
  if (name === 'command') {
    let i = 1;
    while (argv[i]?.known && /^-[pvV]+$/.test(argv[i]!.value)) {
      if (/[vV]/.test(argv[i]!.value)) return { kind: 'none' }; // command -v: a lookup
      i++;
    }
    if (argv[i]?.known && argv[i]!.value === '--') i++;
    return argv.length > i ? { kind: 'run', via: 'command', argv: argv.slice(i) } : { kind: 'none' };
  }
  if (name === 'exec') {
    let i = 1;
    while (argv[i]?.known && /^-[cl]+$|^-a$/.test(argv[i]!.value)) i += argv[i]!.value === '-a' ? 2 : 1;
    if (argv[i]?.known && argv[i]!.value === '--') i++;
    return argv.length > i ? { kind: 'run', via: 'exec', argv: argv.slice(i) } : { kind: 'none' };
  }
  return { kind: 'none' };
}

/** Script files that are really standard input. */
export const STDIN_FILES = new Set(['/dev/stdin', '/dev/fd/0', '/proc/self/fd/0']);

function output(call: Call): Field | null {
  const { name, fields } = call;
  let args = fields.slice(1);
  if (name === 'echo') {
    let escapes = false;
    while (args[0]?.known && /^-[neE]+$/.test(args[0].value)) {
      if (args[0].value.includes('e')) escapes = true;
      args = args.slice(1);
    }
    const text = args.map((a) => a.value).join(' ');
    return { value: (escapes ? echoText(text) : text) + '\n', known: args.every((a) => a.known) };
  }
  if (name === 'printf' && args.length >= 1) {
    if (args[0]!.known && args[0]!.value.startsWith('-v')) return { value: '', known: true };
    if (args[0]!.known && args[0]!.value === '--') args = args.slice(1);
    if (args.length === 0) return null;
    return { value: formatPrintf(args[0]!.value, args.slice(1).map((a) => a.value)), known: args.every((a) => a.known) };
  }
  return null;
}

// Programs that run none of their arguments as a command (in this file, with the builtins, so that the
// hot bundle holds the list: `grep … | head` loads no family file): they take process names (pkill qemu-system-x86_64),
// files (ldd /usr/bin/qemu-system-x86_64), units or messages (journalctl -u qemu-kvm, logger 'make
// build-safe started'). Known here so that the walker does not read their arguments as the command an
// unknown wrapper would run (src/shell/guess.ts). A program belongs here only if no option of it starts a
// program or a shell: `man -P`, `nc -e`, `sort --compress-program`, `ip netns exec`, `open -a`, `brew sh`,
// `rpm --eval '%(…)'`, `bat --pager`, `less` (LESSOPEN, `!cmd`), `gh` (aliases) do, and are left out (pagers.ts, helper-programs.ts). apt and dpkg run a command only from the hook options they name:
// installers.ts.
const INERT_NAMES = [
  // processes, by name or number
  'pkill', 'killall', 'pidof', 'kill', 'lsof', 'fuser', 'pstree', 'top', 'htop', 'btop', 'nvidia-smi', 'free', 'uptime', 'vmstat', 'iostat',
  // binaries and files, looked at
  'ldd', 'readelf', 'objdump', 'nm', 'strings', 'size', 'strip', 'md5sum', 'sha1sum', 'sha256sum', 'sha512sum', 'cksum', 'b2sum', 'base64', 'base32',
  // services and logs (a unit is started by the service manager, from its unit file; journalctl's pager: pagers.ts)
  'logger', 'dmesg',
  // messages to people
  'notify-send', 'say', 'espeak', 'wall',
  // this machine
  'id', 'groups', 'whoami', 'hostname', 'uname', 'locale', 'sleep', 'tldr', 'whatis', 'apropos',
  // files and text, looked at or moved (`ls qemu-system-x86_64`, `grep -r 'make build-safe' docs`)
  'ls', 'stat', 'file', 'du', 'df', 'wc', 'head', 'tail', 'tree', 'rm', 'rmdir', 'mkdir', 'touch', 'mv', 'chmod', 'chown', 'chgrp',
  'grep', 'egrep', 'fgrep', 'diff', 'cmp', 'uniq', 'cut', 'tr', 'basename', 'dirname', 'realpath', 'readlink', 'test', '[', 'true', 'false',
  'date', 'pwd', 'tee', 'od', 'xxd', 'hexdump', 'column', 'comm', 'join', 'paste', 'fold', 'nl', 'rev', 'tac', 'seq', 'yes', 'expr', 'which', 'whereis',
  'jq', 'yq', 'curl', 'wget', 'unzip', 'gzip', 'gunzip', 'xz', 'unxz', 'zstd', 'bzip2', 'ps',
  // offhost itself: `offhost run -- CMD` judges CMD before anything runs (a reroute's rewrite must not be
  // judged as the heavy command it carries), and its other commands run none.
  'offhost', 'offhost.cjs', 'offhost.mjs',
] as const;

export const inert: ProgramModule = {
  family: 'programs that run none of their arguments',
  names: INERT_NAMES,
  unwrap: () => ({ kind: 'none' }),
  examples: {
    match: [
      { line: 'pkill -f qemu-system-x86_64', runs: 'pkill -f qemu-system-x86_64' },
      { line: "offhost run -- 'make build-safe'", runs: 'offhost run -- make build-safe' },
    ],
    not_match: [
      { line: 'pkill -f qemu-system-x86_64', runs: 'qemu-system-x86_64' },
      { line: 'ldd /usr/bin/qemu-system-x86_64', runs: '/usr/bin/qemu-system-x86_64' },
      { line: "logger 'make build-safe started'", runs: 'make build-safe started' },
      { line: "offhost run -- 'make build-safe'", runs: 'make build-safe' },
      { line: '/opt/offhost/dist/offhost.cjs run --wait -- make build-safe', runs: 'make build-safe' },
      { line: 'ls qemu-system-x86_64 emulator', runs: 'qemu-system-x86_64 emulator' },
    ],
  },
};

export const builtins: ProgramModule = {
  family: 'shell builtins',
  names: ['cd', 'pushd', 'popd', 'export', 'declare', 'typeset', 'local', 'readonly', 'shopt', 'alias', 'unset', 'read', 'mapfile', 'readarray', 'printf', 'echo', 'set', 'hash', 'let', 'trap', 'eval', 'source', '.', 'builtin', 'command', 'exec'],
  readsScript: true,
  walk,
  output,
  examples: {
    match: [
      { line: 'cd engines/lang/koda && make build-safe', runs: 'make build-safe', in: '/home/koder/dev/koder/engines/lang/koda' },
      { line: 'pushd engines/lang/koda; popd -n; make build-safe', runs: 'make build-safe', in: '/home/koder/dev/koder/engines/lang/koda' },
      { line: 'cd /missing 2>/dev/null; make build-safe', cwd: '/home/koder/dev/koder/engines/lang/koda', runs: 'make build-safe', in: '/home/koder/dev/koder/engines/lang/koda' },
      { line: "eval 'make build'", runs: 'make build' },
      { line: "trap 'make build' EXIT", runs: 'make build' },
      { line: 'printf -v c %s make; $c build-safe', runs: 'make build-safe' },
      { line: 'hash -p /usr/bin/make b; b build-safe', runs: '/usr/bin/make build-safe' },
      { line: "x='a[$(make build-safe)]'; (( x ))", runs: 'make build-safe' },
      { line: 'declare a[$(make build-safe)]=1', runs: 'make build-safe' },
      { line: "unset 'a[$(make build-safe)]'", runs: 'make build-safe' },
      { line: 'command make build', runs: 'make build' },
      { line: 'exec make build', runs: 'make build' },
    ],
    not_match: [
      { line: 'builtin make build', runs: 'make build' },
      { line: 'command -v make build', runs: 'make build' },
      { line: 'cd engines/lang/koda && cd .. && make build-safe', runs: 'make build-safe', in: '/home/koder/dev/koder/engines/lang/koda' },
      { line: 'set -e; cd /missing; make build-safe', cwd: '/home/koder/dev/koder/engines/lang/koda', runs: 'make build-safe', in: '/home/koder/dev/koder/engines/lang/koda' },
    ],
  },
};


/**
 * `ln -s TARGET LINK` (`-sf`, `-sfn`, `--symbolic`, `-T`): later paths through LINK are TARGET's
 * (`ln -s ~/dev/koder/engines/lang/koda /tmp/k; cd /tmp/k && make build-safe` builds the engine).
 * `cp -r TREE COPY` likewise: a copy of the engine builds like the engine.
 */
function link(call: Call, w: Walker): void {
  w.emitSelf(call);
  const f = call.fields;
  // `cp -r engines/lang/koda /tmp/k`: a copy of a tree builds like the tree (judged as it).
  let symbolic = call.name === 'ln' ? false : f.some((a) => a.known && /^(-[a-zA-Z]*[rRa][a-zA-Z]*|--recursive|--archive)$/.test(a.value));
  let noTargetDir = false;
  const pos: Field[] = [];
  let targetDir: Field | null = null;
  for (let i = 1; i < f.length; i++) {
    const a = f[i]!;
    if (a.known && a.value.startsWith('--')) {
      if (a.value === '--symbolic' && call.name === 'ln') symbolic = true;
      else if (a.value === '--no-target-directory' || a.value === '--no-dereference') noTargetDir = true;
      else if (a.value.startsWith('--target-directory=')) targetDir = { value: a.value.slice(19), known: true };
      continue;
    }
    if (a.known && a.value.startsWith('-') && a.value.length > 1) {
      if (call.name === 'ln' && a.value.includes('s')) symbolic = true;
      if (/[Tn]/.test(a.value) && call.name === 'ln') noTargetDir = true;
      if (/T/.test(a.value)) noTargetDir = true;
      if (a.value.endsWith('t')) targetDir = f[++i] ?? null;
      continue;
    }
    pos.push(a);
  }
  if (pos.length < 1) return;
  if (!symbolic) {
    // `cp /usr/bin/make /tmp/b/cc`, `ln /usr/bin/make cc`: the copy runs what the file runs (a program's
    // name only, never a directory mapping: see Ctx.renamed).
    renamed(call, pos, targetDir);
    return;
  }
  renamed(call, pos, targetDir);
  const target = pos[0]!;
  const linkField = targetDir ?? pos[1] ?? { value: '.', known: true };
  let linkPath = resolveDir(call.cwd, linkField);
  if (linkPath === null || !target.known) return;
  // `ln -s T DIR/` or `-t DIR`: the link is DIR/basename(T). Otherwise the name given (an existing
  // directory there would also make it DIR/basename(T): both are recorded).
  const base = target.value.replace(/\/+$/, '').slice(target.value.replace(/\/+$/, '').lastIndexOf('/') + 1);
  const paths = targetDir || linkField.value.endsWith('/') || linkField.value === '.' ? [`${linkPath}/${base}`] : noTargetDir ? [linkPath] : [linkPath, `${linkPath}/${base}`];
  for (linkPath of paths) {
    // A relative target is relative to the link's directory.
    const dest = resolveDir(call.name === 'cp' ? call.cwd : linkPath.slice(0, linkPath.lastIndexOf('/')) || '/', target);
    if (dest !== null && dest !== linkPath) (call.ctx.links ??= new Map()).set(linkPath, dest);
  }
}

/** Records `LINK -> TARGET` for the program a name or path runs (`ln -sf /usr/bin/make /tmp/b/cc`). */
function renamed(call: Call, pos: Field[], targetDir: Field | null): void {
  const target = pos[0]!;
  const linkField = targetDir ?? pos[1];
  if (!target.known || !linkField?.known || pos.length > 2) return;
  const linkPath = resolveDir(call.cwd, linkField);
  const base = target.value.slice(target.value.lastIndexOf('/') + 1);
  if (linkPath === null || base === '') return;
  const at = targetDir || linkField.value.endsWith('/') ? `${linkPath}/${base}` : linkPath;
  const dir = at.slice(0, at.lastIndexOf('/')) || '/';
  // A symbolic link's relative target is relative to the link's directory; a copy's to the caller's.
  const dest = target.value.includes('/') ? resolveDir(call.name === 'ln' && call.fields.some((a) => a.known && /^-[a-zA-Z]*s|^--symbolic$/.test(a.value)) ? dir : call.cwd, target) : target.value;
  if (dest !== null && dest !== at) (call.ctx.renamed ??= new Map()).set(at, dest);
}

export const filesystem: ProgramModule = {
  family: 'filesystem',
  names: ['ln', 'cp'],
  walk: link,
  examples: {
    match: [
      { line: 'ln -s ~/dev/koder/engines/lang/koda /tmp/k; cd /tmp/k && make build-safe', runs: 'make build-safe', in: '/home/koder/dev/koder/engines/lang/koda' },
      { line: 'ln -sfn /home/koder/dev/koder/engines /tmp/e && make -C /tmp/e/lang/koda build', runs: 'make -C /tmp/e/lang/koda build', in: '/home/koder/dev/koder/engines/lang/koda' },
      { line: 'cp -r engines/lang/koda /tmp/kcopy && make -C /tmp/kcopy build', runs: 'make -C /tmp/kcopy build', in: '/home/koder/dev/koder/engines/lang/koda' },
    ],
    not_match: [
      { line: 'ln ~/dev/koder/engines/lang/koda/Makefile /tmp/k; cd /tmp && make build-safe', runs: 'make build-safe', in: '/home/koder/dev/koder/engines/lang/koda' },
      { line: 'cp engines/lang/koda/Makefile /tmp/k && make -C /tmp/k build', runs: 'make -C /tmp/k build', in: '/home/koder/dev/koder/engines/lang/koda' },
    ],
  },
};

/** `cat run.sh | bash`: the files' text, when the guard reads files. */
export const fileReaders: ProgramModule = {
  family: 'file readers',
  names: ['cat'],
  output(call) {
    const args = call.fields.slice(1);
    if (args.length === 0 || args.some((a) => a.known && a.value.startsWith('-'))) return { value: '', known: false };
    const parts = args.map((a) => stdinFromFile(a, 'cat', call.st.cwd, call.ctx, call.span));
    return { value: parts.map((p) => p.value).join(''), known: parts.every((p) => p.known) };
  },
  examples: { match: [], not_match: [{ line: 'cat notes.txt', runs: 'make' }] },
};
