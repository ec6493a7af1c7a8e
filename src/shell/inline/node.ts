// Node's process spawns, read from its tokens: child_process's exec/execSync (a shell line), spawn,
// spawnSync, execFile, execFileSync (an argv; a shell line with `{shell: true}`), fork (a node script),
// execa's execa/execaCommand, `process.chdir` before them, and eval/`new Function` of a literal (read again
// as JavaScript). `node -e` has the built-in modules as globals, so `child_process.execSync(…)` needs no
// require. A child_process function used but not called directly (`const run = cp.execSync`,
// `cp[name](…)`) is unknown, and so is the module object bound to a name and then indexed or handed to
// other code (`Reflect.get(cp, n)`, `Object.values(cp)`; bound by `require`, `import(…)` or an ES
// `import cp from` / `import * as cp from`), a module required or imported by a computed
// name, and Node's own process bindings and native addons (`process.binding`, `process.dlopen`). Limits: no evaluation (a variable holding a
// command is unknown); a regular expression is told from a division by the token before it, as editors do.
import { callArgs, closerOf, Cwd, identEnd, isDigitCode, isIdentStartCode, isSpaceAt, isTrue, mentions, option, pieceOf, positional, punct, regexEnd, regexMayStart, unescape, type Arg, type Tok } from './tokens.js';
import type { InlineLanguage, Piece, Spawned } from './types.js';

type Kind = 'shell' | 'file' | 'fork' | 'chdir' | 'code';
const CHILD_PROCESS: Record<string, Kind> = { exec: 'shell', execSync: 'shell', execFile: 'file', execFileSync: 'file', spawn: 'file', spawnSync: 'file', fork: 'fork' };
const EXECA: Record<string, Kind> = { execa: 'file', execaSync: 'file', execaCommand: 'shell', execaCommandSync: 'shell' };
const ARGV = /\bargv\b/;
const CONCAT = new Set(['+']);
const KEYWORDS = new Set(['return', 'typeof', 'instanceof', 'in', 'of', 'new', 'delete', 'void', 'throw', 'case', 'do', 'else', 'yield', 'await']);
const SPAWNY = /child_process|execa|\b(exec|execSync|spawn|spawnSync|execFile|execFileSync|fork|eval|Function)\b/;

function lex(code: string): Tok[] | null {
  const toks: Tok[] = [];
  let i = 0;
  while (i < code.length) {
    const c = code[i]!;
    const cc = code.charCodeAt(i);
    if (isSpaceAt(code, i)) i++;
    else if (code.startsWith('//', i)) {
      while (i < code.length && code[i] !== '\n') i++;
    } else if (code.startsWith('/*', i)) {
      const end = code.indexOf('*/', i + 2);
      if (end < 0) return null;
      i = end + 2;
    } else if (isIdentStartCode(cc, true)) {
      const m = code.slice(i, identEnd(code, i, 256, true));
      toks.push({ t: 'id', v: m });
      i += m.length;
    } else if (isDigitCode(cc)) {
      const m = /^[0-9][0-9A-Za-z_.]*/.exec(code.slice(i, i + 64))![0];
      toks.push({ t: 'id', v: m });
      i += m.length;
    } else if (c === '"' || c === "'") {
      let j = i + 1;
      while (j < code.length && code[j] !== c && code[j] !== '\n') j += code[j] === '\\' ? 2 : 1;
      if (j >= code.length || code[j] !== c) return null;
      toks.push({ t: 'str', v: unescape(code.slice(i + 1, j), false), known: true });
      i = j + 1;
    } else if (c === '`') {
      const end = templateEnd(code, i);
      if (end === null) return null;
      const raw = code.slice(i + 1, end - 1);
      toks.push({ t: 'str', v: unescape(raw, false), known: !raw.includes('${') });
      i = end;
    } else if (c === '/' && regexMayStart(toks[toks.length - 1], KEYWORDS)) {
      const end = regexEnd(code, i);
      if (end === null) return null;
      toks.push({ t: 're' });
      i = end;
    } else {
      const p = punct(code, i);
      toks.push({ t: 'p', v: p });
      i += p.length;
    }
  }
  return toks;
}

/** The index after a template literal starting at `i`, its `${…}` skipped with the literals inside them. */
function templateEnd(code: string, i: number): number | null {
  for (let j = i + 1; j < code.length; j++) {
    const c = code[j]!;
    if (c === '\\') j++;
    else if (c === '`') return j + 1;
    else if (c === '$' && code[j + 1] === '{') {
      let depth = 1;
      j += 2;
      for (; j < code.length && depth > 0; j++) {
        const d = code[j]!;
        if (d === '{') depth++;
        else if (d === '}') depth--;
        else if (d === '`') {
          const end = templateEnd(code, j);
          if (end === null) return null;
          j = end - 1;
        } else if (d === '"' || d === "'") {
          const close = code.indexOf(closerOf(d), j + 1);
          if (close < 0) return null;
          j = close;
        }
      }
      j--;
    }
  }
  return null;
}

function spawnsOf(code: string, depth: number): Spawned[] {
  const toks = lex(code);
  if (toks === null) return SPAWNY.test(code) ? [{ kind: 'unknown', call: 'javascript offhost cannot read', argvDerived: false }] : [];
  const out: Spawned[] = [];
  const cwd = new Cwd();
  const alias = new Map<string, Kind>();
  const idAt = (k: number) => (toks[k]?.t === 'id' ? (toks[k] as { v: string }).v : null);
  const pAt = (k: number) => (toks[k]?.t === 'p' ? (toks[k] as { v: string }).v : null);
  const boundName = (start: number) => boundNameIn(toks, start);
  // Names the child_process module object itself is bound to (`const cp = require("child_process")`).
  const moduleNames = new Set<string>();
  const unknown = (call: string) => out.push({ kind: 'unknown', call, argvDerived: false, cwd: cwd.at() });
  for (let i = 0; i < toks.length; i++) {
    const t = toks[i]!;
    // require("child_process")[name](…), child_process[name]: a function chosen at run time; the module
    // object bound to a name (then followed, below) or handed to other code (`Reflect.get(cp, n)`,
    // `Object.values(cp)`): unknown.
    const isModule = (t.t === 'str' && /^(node:)?child_process$/.test(t.v) && pAt(i - 1) === '(' && pAt(i + 1) === ')') || (t.t === 'id' && t.v === 'child_process' && pAt(i - 1) !== '.');
    // `import cp from "child_process"`, `import * as cp from "node:child_process"`: the module object.
    if (t.t === 'str' && /^(node:)?child_process$/.test(t.v) && idAt(i - 1) === 'from') {
      let k = i - 2;
      if (idAt(k) && idAt(k - 1) === 'as' && pAt(k - 2) === '*') moduleNames.add(idAt(k)!);
      else if (idAt(k) && idAt(k - 1) === 'import') moduleNames.add(idAt(k)!);
      else if (pAt(k) === '}' && pAt(k - 1) !== '{') {
        // `import def, { x } from`: the default before the braces.
        while (k > 0 && pAt(k) !== '{') k--;
        if (pAt(k - 1) === ',' && idAt(k - 2) && idAt(k - 3) === 'import') moduleNames.add(idAt(k - 2)!);
      }
      continue;
    }
    if (isModule) {
      const after = t.t === 'str' ? i + 2 : i + 1;
      const start = t.t === 'str' ? i - 2 : i;
      const next = pAt(after);
      if (next === '[') unknown('child_process[…]');
      else if (next !== '.') {
        const name = boundName(start);
        if (name !== null) moduleNames.add(name);
        else if (next === ',' || next === ')') unknown('child_process (handed to other code)');
      }
      continue;
    }
    if (t.t !== 'id') continue;
    const member = pAt(i - 1) === '.';
    if (!member && moduleNames.has(t.v) && pAt(i + 1) !== '.' && pAt(i + 1) !== '=') {
      const again = boundName(i);
      if (again !== null) moduleNames.add(again);
      else if (pAt(i + 1) === '[' || pAt(i + 1) === ',' || pAt(i + 1) === ')') unknown(`${t.v}[…] (child_process)`);
      continue;
    }
    // A module named at run time (`require(m)`, `import(m)`), and Node's own process bindings: anything.
    if ((t.v === 'require' || (t.v === 'import' && !member)) && pAt(i + 1) === '(' && !(toks[i + 2]?.t === 'str' && (toks[i + 2] as { known: boolean }).known && pAt(i + 3) === ')')) {
      unknown(`${t.v}(…): a module named at run time`);
      continue;
    }
    if ((member && idAt(i - 2) === 'process' && (t.v === 'binding' || t.v === '_linkedBinding' || t.v === 'dlopen')) || (!member && t.v === 'internalBinding')) {
      unknown(`process.${t.v}: Node's own process bindings`);
      continue;
    }
    let kind: Kind | null = CHILD_PROCESS[t.v] ?? EXECA[t.v] ?? alias.get(t.v) ?? null;
    if (!Object.hasOwn(CHILD_PROCESS, t.v) && !Object.hasOwn(EXECA, t.v) && !alias.has(t.v)) kind = null;
    if (member && idAt(i - 2) === 'process' && t.v === 'chdir') kind = 'chdir';
    if (!member && (t.v === 'eval' || (t.v === 'Function' && idAt(i - 1) === 'new'))) kind = 'code';
    if (member && (t.v === 'runInThisContext' || t.v === 'runInNewContext') && idAt(i - 2) === 'vm') kind = 'code';
    if (kind === null) continue;
    // `exec` of a RegExp (`/x/.exec(s)`, `re.exec(s)`) is not a process: only child_process's, or a bare call.
    if (t.v === 'exec' && member && (toks[i - 2]?.t === 're' || !mentionsChildProcess(toks))) continue;
    if ((t.v === 'exec' || t.v === 'spawn' || t.v === 'fork') && !member && !mentionsChildProcess(toks)) continue;
    // `const { execSync, spawn: run } = require(…)`: names bound, not called.
    if (!member && (pAt(i - 1) === '{' || pAt(i - 1) === ',') && (pAt(i + 1) === ',' || pAt(i + 1) === '}' || pAt(i + 1) === ':')) {
      if (pAt(i + 1) === ':' && idAt(i + 2)) alias.set(idAt(i + 2)!, kind);
      continue;
    }
    if (pAt(i + 1) !== '(') {
      if (member && kind !== 'chdir' && kind !== 'code') out.push({ kind: 'unknown', call: `${t.v} (not called directly)`, argvDerived: false, cwd: cwd.at() });
      continue;
    }
    const { args } = callArgs(toks, i + 1, CONCAT);
    if (kind === 'chdir') cwd.chdir(positional(args)[0]);
    else if (kind === 'code') {
      const src = positional(args)[positional(args).length - 1];
      if (src?.k === 'str' && src.piece.known && depth < 4) out.push(...spawnsOf(src.piece.value, depth + 1));
      else if (src && src.k === 'other' && SPAWNY.test(src.text)) out.push({ kind: 'unknown', call: t.v, argvDerived: false, cwd: cwd.at() });
    } else out.push(spawn(kind, t.v, args, cwd));
  }
  return out;
}

/**
 * The name an expression starting at token `start` is bound to: `const|let|var NAME = [await] EXPR` or
 * `NAME = EXPR`, else null.
 */
function boundNameIn(toks: Tok[], start: number): string | null {
  let k = start - 1;
  if (toks[k]?.t === 'id' && (toks[k] as { v: string }).v === 'await') k--;
  if (!(toks[k]?.t === 'p' && (toks[k] as { v: string }).v === '=')) return null;
  const name = toks[k - 1];
  return name?.t === 'id' && /^[A-Za-z_$][\w$]*$/.test(name.v) ? name.v : null;
}

let cpMemo: { toks: Tok[]; yes: boolean } | null = null;
function mentionsChildProcess(toks: Tok[]): boolean {
  if (cpMemo?.toks !== toks) cpMemo = { toks, yes: toks.some((t) => (t.t === 'str' && /^(node:)?child_process$/.test(t.v)) || (t.t === 'id' && t.v === 'child_process')) };
  return cpMemo.yes;
}

function spawn(kind: Kind, call: string, args: Arg[], cwdT: Cwd): Spawned {
  const pos = positional(args);
  const cwd = cwdT.at(option(args, 'cwd'));
  const file = pos[0];
  if (!file || file.k !== 'str' || !file.piece.known) return { kind: 'unknown', call, argvDerived: mentions(file, ARGV), cwd };
  if (kind === 'shell') return { kind: 'shell', call, text: file.piece, cwd };
  const list = pos[1];
  let rest: Piece[] = [];
  if (list?.k === 'list') rest = list.items;
  else if (list && list.k !== 'obj') rest = [pieceOf(list)];
  if (list && list.k !== 'list' && list.k !== 'obj' && mentions(list, ARGV)) return { kind: 'unknown', call, argvDerived: true, cwd };
  if (kind === 'fork') return { kind: 'argv', call, argv: [{ value: 'node', known: true }, file.piece, ...rest], cwd };
  const argv = [file.piece, ...rest];
  if (isTrue(option(args, 'shell'))) return { kind: 'shell', call, text: { value: argv.map((p) => p.value).join(' '), known: argv.every((p) => p.known) }, cwd };
  return { kind: 'argv', call, argv, cwd };
}

export const node: InlineLanguage = { name: 'node', spawns: (code) => spawnsOf(code, 0) };
