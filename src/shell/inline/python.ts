// Python's process spawns, read from its tokens: os.system/popen, the os.exec*/spawn*/posix_spawn* family,
// subprocess.run/call/check_*/Popen/getoutput, pty.spawn, asyncio.create_subprocess_*, os.chdir before
// them, and exec/eval of a literal (read again as Python). Imports are followed (`import subprocess as
// sp`, `from os import system`, `__import__("os").system`, `importlib.import_module("os")`,
// `sys.modules["os"]`). A spawn function named but not called directly (`f = os.system`, `map(os.system,
// …)`, `getattr(os, "system")`) is unknown, and so is one reached by a name the code computes: a module
// imported by a computed name, getattr on a module that spawns or runs code (os, subprocess, pty,
// builtins…) with a computed name, its table (`vars(os)`, `os.__dict__`); exec/eval of code that is not
// a literal (`exec(open("x.py").read())`), runpy, native calls through ctypes or cffi. Limits: no
// evaluation (a variable holding a command is unknown), no class or function scopes.
import { callArgs, Cwd, identEnd, matching, isDigitCode, isIdentStartCode, isSpaceAt, isTrue, listSpawn, mentions, option, pieceOf, positional, punct, unescape, type Arg, type Tok } from './tokens.js';
import type { InlineLanguage, Piece, Spawned } from './types.js';

type Kind = 'shell' | 'popen' | 'execv' | 'execl' | 'execle' | 'spawnv' | 'spawnl' | 'spawnle' | 'posix' | 'pty' | 'asyncexec' | 'chdir' | 'code' | 'load';

const OS: Record<string, Kind> = {
  system: 'shell', popen: 'shell', chdir: 'chdir', posix_spawn: 'posix', posix_spawnp: 'posix',
  execv: 'execv', execve: 'execv', execvp: 'execv', execvpe: 'execv', execl: 'execl', execlp: 'execl', execle: 'execle', execlpe: 'execle',
  spawnv: 'spawnv', spawnve: 'spawnv', spawnvp: 'spawnv', spawnvpe: 'spawnv', spawnl: 'spawnl', spawnlp: 'spawnl', spawnle: 'spawnle', spawnlpe: 'spawnle',
};
const SUBPROCESS: Record<string, Kind> = { run: 'popen', call: 'popen', check_call: 'popen', check_output: 'popen', Popen: 'popen', getoutput: 'shell', getstatusoutput: 'shell' };
const MODULES: Record<string, Record<string, Kind>> = {
  os: OS, posix: OS, subprocess: SUBPROCESS, commands: { getoutput: 'shell', getstatusoutput: 'shell' }, pty: { spawn: 'pty' },
  asyncio: { create_subprocess_shell: 'shell', create_subprocess_exec: 'asyncexec' }, builtins: { exec: 'code', eval: 'code' },
  runpy: { run_path: 'load', run_module: 'load' },
};
MODULES.__builtins__ = MODULES.builtins!;
/** Names distinctive enough to be a spawn whatever they are called on (`s = subprocess; s.Popen(…)`). */
const DISTINCTIVE: Record<string, Kind> = { ...OS, Popen: 'popen', check_call: 'popen', check_output: 'popen', getoutput: 'shell', getstatusoutput: 'shell', create_subprocess_shell: 'shell', create_subprocess_exec: 'asyncexec' };
delete DISTINCTIVE.chdir;
const ARGV = /\bargv\b/;
const CONCAT = new Set(['+']);
const SPAWNY = /\b(system|popen|Popen|subprocess|exec[lv]p?e?|spawn[lv]p?e?|posix_spawnp?|check_call|check_output|getoutput|pty|create_subprocess|exec|eval)\b/;

function lex(code: string): Tok[] | null {
  const toks: Tok[] = [];
  let i = 0;
  let depth = 0; // inside brackets a newline does not end the statement
  while (i < code.length) {
    const c = code[i]!;
    const cc = code.charCodeAt(i);
    if (c === '\n') {
      if (depth === 0) toks.push({ t: 'p', v: ';' });
      i++;
    } else if (isSpaceAt(code, i)) i++;
    else if (c === '#') {
      while (i < code.length && code[i] !== '\n') i++;
    } else if (isIdentStartCode(cc)) {
      const m = code.slice(i, identEnd(code, i, 256));
      const q = code[i + m.length];
      if ((q === '"' || q === "'") && /^[rRbBuUfF]{1,2}$/.test(m)) {
        const s = str(code, i + m.length, m.toLowerCase());
        if (!s) return null;
        toks.push(s.tok);
        i = s.end;
      } else {
        toks.push({ t: 'id', v: m });
        i += m.length;
      }
    } else if (isDigitCode(cc)) {
      const m = /^[0-9][0-9A-Za-z_.]*/.exec(code.slice(i, i + 64))![0];
      toks.push({ t: 'id', v: m });
      i += m.length;
    } else if (c === '"' || c === "'") {
      const s = str(code, i, '');
      if (!s) return null;
      toks.push(s.tok);
      i = s.end;
    } else {
      const p = punct(code, i);
      if (p === '(' || p === '[' || p === '{') depth++;
      else if ((p === ')' || p === ']' || p === '}') && depth > 0) depth--;
      toks.push({ t: 'p', v: p });
      i += p.length;
    }
  }
  return toks;
}

/** A string literal at `i` (its quote), with its prefix letters (`r`, `b`, `f`...). */
function str(code: string, i: number, prefix: string): { tok: Tok; end: number } | null {
  const q = code[i]!;
  const triple = code.startsWith(q.repeat(3), i);
  const open = triple ? 3 : 1;
  let j = i + open;
  while (j < code.length) {
    if (code[j] === '\\') j += 2;
    else if (triple ? code.startsWith(q.repeat(3), j) : code[j] === q) break;
    else if (!triple && code[j] === '\n') return null;
    else j++;
  }
  if (j >= code.length) return null;
  const raw = code.slice(i + open, j);
  const raws = prefix.includes('r');
  const value = raws ? raw : unescape(raw, true);
  // An f-string's `{expr}` is computed (`{{` is a literal brace).
  const known = !prefix.includes('f') || !/\{(?!\{)/.test(raw.replace(/\{\{|\}\}/g, ''));
  return { tok: { t: 'str', v: value, known }, end: j + open };
}

/** Calls that return a module by its name. */
const IMPORTERS = new Set(['__import__', 'import_module']);
/** Modules with functions that start processes or run code; `__builtins__` is builtins. */
const SPAWNING = new Set([...Object.keys(MODULES), '__builtins__']);
/** builtins' functions that run code. */
const CODE_NAMES = new Set(['exec', 'eval', 'compile', '__import__']);

/** The module a local name stands for (an import's alias, else the name itself). */
function moduleOf(name: string, modAlias: Map<string, string>): string {
  return modAlias.get(name) ?? name;
}

/** Whether getattr's or vars's first argument is a module that starts processes, or one named at run time. */
function spawningTarget(a: Arg | undefined, modAlias: Map<string, string>): boolean {
  if (!a || a.k !== 'other') return false;
  const text = a.text.trim();
  if (/^[A-Za-z_]\w*$/.test(text)) return SPAWNING.has(moduleOf(text, modAlias));
  const m = /^(?:[\w.]*\.)?(?:__import__|import_module)\s*\(\s*(['"])(\w+)\1\s*\)$|^sys\s*\.\s*modules\s*\[\s*(['"])(\w+)\3\s*\]$/.exec(text);
  if (m) return SPAWNING.has(m[2] ?? m[4]!);
  return /\b(__import__|import_module)\s*\(|\bsys\s*\.\s*modules\b/.test(text);
}

/** Native code reached through ctypes or cffi (libc's system, exec*, posix_spawn…): what it runs is not read. */
const NATIVE = /\b(CDLL|cdll|PyDLL|pydll|LoadLibrary|FFI\s*\(|dlopen)\b/;

function spawnsOf(code: string, depth: number): Spawned[] {
  const toks = lex(code);
  if (toks === null) return SPAWNY.test(code) ? [{ kind: 'unknown', call: 'python code offhost cannot read', argvDerived: false }] : [];
  const out: Spawned[] = [];
  if (NATIVE.test(code) && /\b(ctypes|cffi)\b/.test(code)) out.push({ kind: 'unknown', call: 'native code (ctypes/cffi)', argvDerived: false });
  const modAlias = new Map<string, string>(); // local name -> module
  const fnAlias = new Map<string, [string, string]>(); // local name -> [module, function]
  const cwd = new Cwd();
  const pAt = (k: number) => (toks[k]?.t === 'p' ? (toks[k] as { v: string }).v : null);
  for (let i = 0; i < toks.length; i++) {
    const t = toks[i]!;
    if (t.t !== 'id') continue;
    const prev = toks[i - 1];
    if (prev?.t === 'p' && prev.v === '.') continue;
    if (t.v === 'import' || t.v === 'from') {
      i = imports(toks, i, modAlias, fnAlias);
      continue;
    }
    // The dotted name starting here, a module reached at run time read as that module: `__import__("os")`,
    // `importlib.import_module("os")`, `sys.modules["os"]`. One named by a computed string is unknown.
    let parts = [t.v];
    let j = i + 1;
    let computed: string | null = null;
    for (;;) {
      while (pAt(j) === '.' && toks[j + 1]?.t === 'id') {
        parts.push((toks[j + 1] as { v: string }).v);
        j += 2;
      }
      const last = parts[parts.length - 1]!;
      const opener = IMPORTERS.has(last) && pAt(j) === '(' ? ')' : parts.length === 2 && parts[0] === 'sys' && last === 'modules' && pAt(j) === '[' ? ']' : null;
      if (opener === null) break;
      const name = toks[j + 1];
      if (name?.t === 'str' && name.known && (pAt(j + 2) === opener || (opener === ')' && pAt(j + 2) === ','))) {
        const close = opener === ')' ? matching(toks, j) : j + 2;
        parts = [name.v];
        j = close + 1;
        continue;
      }
      computed = `${parts.join('.')}${opener === ')' ? '(…)' : '[…]'}`;
      break;
    }
    if (computed !== null) {
      out.push({ kind: 'unknown', call: `${computed}: a module named at run time`, argvDerived: false, cwd: cwd.at() });
      continue;
    }
    // `os.__dict__[…]`: a module's functions by name.
    if (parts.length > 1 && parts.includes('__dict__') && SPAWNING.has(moduleOf(parts[0]!, modAlias))) {
      out.push({ kind: 'unknown', call: `${parts.join('.')}[…]`, argvDerived: false, cwd: cwd.at() });
      continue;
    }
    const kind = resolve(parts, modAlias, fnAlias);
    if (kind === null) {
      // getattr(M, NAME), vars(M): a function looked up by name. Unknown when the name is a spawn's, or when
      // M starts processes or runs code (os, subprocess, pty, builtins…) and the name is computed or the
      // table itself is taken.
      if ((t.v === 'getattr' || t.v === 'vars') && pAt(i + 1) === '(') {
        const pos = positional(callArgs(toks, i + 1, CONCAT).args);
        const name = pos[1];
        const literal = name?.k === 'str' && name.piece.known ? name.piece.value : null;
        const spawning = spawningTarget(pos[0], modAlias);
        if ((literal !== null && (DISTINCTIVE[literal] || (spawning && CODE_NAMES.has(literal)))) || (spawning && (t.v === 'vars' || literal === null))) {
          out.push({ kind: 'unknown', call: t.v, argvDerived: false, cwd: cwd.at() });
        }
      }
      continue;
    }
    const name = parts.join('.');
    const open = toks[j];
    if (!open || open.t !== 'p' || open.v !== '(') {
      if (kind !== 'chdir' && kind !== 'code') out.push({ kind: 'unknown', call: `${name} (not called directly)`, argvDerived: false, cwd: cwd.at() });
      i = j - 1;
      continue;
    }
    const { args } = callArgs(toks, j, CONCAT);
    if (kind === 'chdir') cwd.chdir(positional(args)[0]);
    else if (kind === 'code') {
      const src = positional(args)[0];
      if (src?.k === 'str' && src.piece.known && depth < 4) out.push(...spawnsOf(src.piece.value, depth + 1));
      // Code the code computes or reads (`exec(open("x.py").read())`, `eval(s)`): whatever it holds.
      else if (src && !(src.k === 'str' && src.piece.known)) out.push({ kind: 'unknown', call: `${name} of code offhost cannot read`, argvDerived: mentions(src, ARGV), cwd: cwd.at() });
    } else if (kind === 'load') out.push({ kind: 'unknown', call: `${name}: runs another file's code`, argvDerived: mentions(positional(args)[0], ARGV), cwd: cwd.at() });
    else out.push(spawn(kind, name, args, cwd));
    i = j; // the arguments are scanned too (a spawn inside a spawn's arguments)
  }
  return out;
}

/** `import a as b, c` / `from m import f as g, h` from `i`; returns the last token index read. */
function imports(toks: Tok[], i: number, modAlias: Map<string, string>, fnAlias: Map<string, [string, string]>): number {
  const idAt = (k: number) => (toks[k]?.t === 'id' ? (toks[k] as { v: string }).v : null);
  const pAt = (k: number) => (toks[k]?.t === 'p' ? (toks[k] as { v: string }).v : null);
  const dotted = (k: number): [string, number] => {
    let name = idAt(k) ?? '';
    k++;
    while (pAt(k) === '.' && idAt(k + 1)) {
      name += `.${idAt(k + 1)}`;
      k += 2;
    }
    return [name, k];
  };
  let k = i + 1;
  let from: string | null = null;
  if (idAt(i) === 'from') {
    [from, k] = dotted(k);
    if (idAt(k) !== 'import') return k - 1;
    k++;
  }
  if (pAt(k) === '(') k++;
  for (;;) {
    const [name, next] = dotted(k);
    if (!name) return k - 1;
    k = next;
    // `import os.path` binds `os`; `import a.b as c` binds c to a.b.
    let local = from ? name : name.split('.')[0]!;
    let target = from ? name : local;
    if (idAt(k) === 'as' && idAt(k + 1)) {
      local = idAt(k + 1)!;
      target = name;
      k += 2;
    }
    if (from) fnAlias.set(local, [from, target]);
    else modAlias.set(local, target);
    if (pAt(k) !== ',') return k - 1;
    k++;
  }
}

function resolve(parts: string[], modAlias: Map<string, string>, fnAlias: Map<string, [string, string]>): Kind | null {
  const head = parts[0]!;
  if (parts.length === 1) {
    const f = fnAlias.get(head);
    if (f) return MODULES[f[0]]?.[f[1]] ?? (DISTINCTIVE[f[1]] ?? null);
    return head === 'exec' || head === 'eval' ? 'code' : null;
  }
  const last = parts[parts.length - 1]!;
  const mod = parts.length === 2 ? (modAlias.get(head) ?? fnAlias.get(head)?.[1] ?? head) : null;
  if (mod !== null && MODULES[mod]) return MODULES[mod]![last] ?? null;
  return Object.hasOwn(DISTINCTIVE, last) ? DISTINCTIVE[last]! : null;
}

function spawn(kind: Kind, call: string, args: Arg[], cwdT: Cwd): Spawned {
  const pos = positional(args);
  const cwd = cwdT.at(option(args, 'cwd'));
  const unknown = (a: Arg | undefined): Spawned => ({ kind: 'unknown', call, argvDerived: mentions(a, ARGV), cwd });
  switch (kind) {
    case 'shell':
      return listSpawn(call, pos.slice(0, 1), cwd, ARGV);
    case 'popen': {
      const a = pos[0] ?? option(args, 'args');
      const shell = isTrue(option(args, 'shell'));
      let argv: Piece[];
      if (a?.k === 'list') argv = a.items;
      else if (a?.k === 'str') {
        if (shell || /\s/.test(a.piece.value)) return a.piece.known ? { kind: 'shell', call, text: a.piece, cwd } : unknown(a);
        argv = [a.piece];
      } else return unknown(a);
      if (shell) return { kind: 'shell', call, text: { value: argv.map((p) => p.value).join(' '), known: argv.every((p) => p.known) }, cwd };
      const exe = option(args, 'executable');
      if (exe && argv.length) argv = [pieceOf(exe), ...argv.slice(1)];
      return argv.length ? { kind: 'argv', call, argv, cwd } : unknown(a);
    }
    case 'execv':
    case 'posix':
    case 'spawnv': {
      const [file, list] = kind === 'spawnv' ? [pos[1], pos[2]] : [pos[0], pos[1]];
      if (!file || file.k !== 'str' || !file.piece.known) return unknown(file);
      const rest = list?.k === 'list' ? list.items.slice(1) : list ? [pieceOf(list)] : [];
      return { kind: 'argv', call, argv: [file.piece, ...rest], cwd };
    }
    case 'execl':
    case 'execle':
    case 'spawnl':
    case 'spawnle': {
      let xs = kind.startsWith('spawn') ? pos.slice(1) : pos;
      if (kind.endsWith('le')) xs = xs.slice(0, -1);
      const file = xs[0];
      if (!file || file.k !== 'str' || !file.piece.known) return unknown(file);
      return { kind: 'argv', call, argv: [file.piece, ...xs.slice(2).map(pieceOf)], cwd };
    }
    case 'pty': {
      const a = pos[0];
      if (a?.k === 'list' && a.items.length) return { kind: 'argv', call, argv: a.items, cwd };
      if (a?.k === 'str' && a.piece.known) return { kind: 'argv', call, argv: [a.piece], cwd };
      return unknown(a);
    }
    case 'asyncexec': {
      const file = pos[0];
      if (!file || file.k !== 'str' || !file.piece.known) return unknown(file);
      return { kind: 'argv', call, argv: pos.map(pieceOf), cwd };
    }
    default:
      return unknown(pos[0]);
  }
}

export const python: InlineLanguage = { name: 'python', spawns: (code) => spawnsOf(code, 0) };

/**
 * IPython runs its cells' shell escapes: a line `!cmd` or `!!cmd` (also as `x = !cmd`), the magics
 * `%system`/`%sx`/`%sc`, a `%%bash`/`%%sh`/`%%script` cell, and `get_ipython().system(…)`/`getoutput(…)`.
 * Each is a shell line; the rest of the cell is Python.
 */
function ipythonSpawns(code: string): Spawned[] {
  const out: Spawned[] = [];
  const lines = code.split('\n');
  const python: string[] = [];
  for (let k = 0; k < lines.length; k++) {
    const line = lines[k]!;
    const cell = /^\s*%%(bash|sh|script|system)\b/.exec(line);
    if (cell) {
      const body = lines.slice(k + 1).join('\n');
      if (body.trim() !== '') out.push({ kind: 'shell', call: `%%${cell[1]}`, text: { value: body, known: true } });
      break;
    }
    const esc = /^\s*(?:[A-Za-z_]\w*\s*=\s*)?(?:!!?|%(?:system|sx|sc)\b(?:\s+-\w+)*)\s*(.*)$/.exec(line);
    if (esc) {
      // `$var` and `{expr}` are IPython's own expansion: computed.
      const text = esc[1]!;
      if (text.trim() !== '') out.push(/[$]\w|\{[^}]*\}/.test(text) ? { kind: 'unknown', call: 'an IPython shell escape', argvDerived: false } : { kind: 'shell', call: 'an IPython shell escape', text: { value: text, known: true } });
      python.push('');
    } else python.push(line);
  }
  const rest = python.join('\n');
  for (const m of rest.matchAll(/get_ipython\s*\(\s*\)\s*\.\s*(system|getoutput|run_line_magic|run_cell_magic|run_cell)\b/g)) {
    out.push({ kind: 'unknown', call: `get_ipython().${m[1]}`, argvDerived: false });
  }
  return [...out, ...spawnsOf(rest, 0)];
}

export const ipython: InlineLanguage = { name: 'ipython', spawns: ipythonSpawns };
