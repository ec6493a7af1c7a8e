// What the inline-code readers share: the token shape, string-literal decoding, and the reading of a call's
// arguments (literals, lists, keyword options) from tokens. Each language's lexer (python.ts, node.ts,
// perl.ts, ruby.ts) produces these tokens; nothing here knows a language's spawn functions.
import { posix } from 'node:path';
import type { Piece, Spawned } from './types.js';

export type Tok =
  | { t: 'id'; v: string }
  /** A string literal's value; `known` false when it interpolates (`f"{x}"`, `"$x"`, `` `${x}` ``). */
  | { t: 'str'; v: string; known: boolean }
  /** A command literal: backticks, `qx{}`, `%x()`. */
  | { t: 'cmd'; v: string; known: boolean }
  /** A word list: `qw(a b)`, `%w[a b]`. */
  | { t: 'words'; v: string[] }
  /** A regular expression literal (its text is never a command). */
  | { t: 're' }
  /** Punctuation and operators (`(`, `)`, `,`, `.`, `=`, `=>`, `::`, `;` for a statement end). */
  | { t: 'p'; v: string };

// Character classes the lexers test at every character, read from char codes (a regular expression per
// character cost more than the rest of a lexer's work). Each is exactly the class named beside it.

/** `code[i]` matches /\s/ (ASCII without a regular expression; other characters through it). */
export function isSpaceAt(code: string, i: number): boolean {
  const c = code.charCodeAt(i);
  if (c < 128) return c === 32 || (c >= 9 && c <= 13);
  return /\s/.test(code[i]!);
}

/** [A-Za-z_], and `$` when `dollar`. */
export function isIdentStartCode(c: number, dollar = false): boolean {
  return (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || c === 95 || (dollar && c === 36);
}

/** [0-9] */
export function isDigitCode(c: number): boolean {
  return c >= 48 && c <= 57;
}

/** The end of the identifier at `i` ([A-Za-z_] then [A-Za-z0-9_]; `$` in both when `dollar`), read to at most `max` characters. */
export function identEnd(code: string, i: number, max: number, dollar = false): number {
  const lim = Math.min(code.length, i + max);
  let j = i + 1;
  while (j < lim) {
    const c = code.charCodeAt(j);
    if (!(isIdentStartCode(c, dollar) || isDigitCode(c))) break;
    j++;
  }
  return j;
}

/** Decodes the backslash escapes of a double-quoted literal; `keepUnknown`: Python keeps `\q` as it is. */
export function unescape(s: string, keepUnknown: boolean): string {
  if (!s.includes('\\')) return s;
  return s.replace(/\\(x[0-9a-fA-F]{2}|u\{[0-9a-fA-F]+\}|u[0-9a-fA-F]{4}|[0-7]{1,3}|[\s\S])/g, (all, e: string) => {
    switch (e[0]) {
      case 'n':
        return '\n';
      case 't':
        return '\t';
      case 'r':
        return '\r';
      case 'a':
        return '\x07';
      case 'e':
        return '\x1b';
      case '0': case '1': case '2': case '3': case '4': case '5': case '6': case '7':
        return String.fromCharCode(parseInt(e, 8));
      case 'x':
        return e.length === 3 ? String.fromCharCode(parseInt(e.slice(1), 16)) : keepUnknown ? all : e;
      case 'u':
        if (e.length > 1) return String.fromCodePoint(parseInt(e.replace(/[u{}]/g, ''), 16));
        return keepUnknown ? all : e;
      case '\n':
        return '';
      case '\\': case '"': case "'": case '`': case '$': case '@': case '#': case '/':
        return e;
      default:
        return keepUnknown ? all : e;
    }
  });
}

/**
 * Reads a quoted literal starting at `i` (the opening delimiter), up to the closing one (`close`, which
 * nests with `open` for bracket pairs). Returns the raw text between them and the index after the end;
 * null when it does not end (the code does not lex: the caller reports what it has as unknown).
 */
export function quoted(code: string, i: number, open: string, close: string): { raw: string; end: number } | null {
  let depth = 1;
  for (let j = i + 1; j < code.length; j++) {
    const c = code[j]!;
    if (c === '\\') {
      j++;
      continue;
    }
    if (c === close && open !== close) {
      if (--depth === 0) return { raw: code.slice(i + 1, j), end: j + 1 };
    } else if (c === close) return { raw: code.slice(i + 1, j), end: j + 1 };
    else if (c === open) depth++;
  }
  return null;
}

const PAIRS: Record<string, string> = { '(': ')', '[': ']', '{': '}', '<': '>' };
/** A number at `i` (`12`, `0x1f`, `1.5e3`): an identifier-like token, for the languages that read it so. */
export function numberTok(code: string, i: number): { tok: Tok; end: number } {
  const m = /^[0-9][0-9A-Za-z_.]*/.exec(code.slice(i, i + 64))![0];
  return { tok: { t: 'id', v: m }, end: i + m.length };
}

/**
 * A `'…'`, `"…"` or `` `…` `` literal at `i`, as Perl and Ruby read them: single quotes unescape only `\\`
 * and `\'`; the others are known unless `interpolates` says they hold an interpolation; backticks run a
 * command. Null when it is not closed.
 */
export function quotedTok(code: string, i: number, interpolates: (raw: string) => boolean): { tok: Tok; end: number } | null {
  const c = code[i]!;
  const r = quoted(code, i, c, c);
  if (!r) return null;
  const tok: Tok = c === "'" ? { t: 'str', v: r.raw.replace(/\\([\\'])/g, '$1'), known: true } : { t: c === '`' ? 'cmd' : 'str', v: unescape(r.raw, false), known: !interpolates(r.raw) };
  return { tok, end: r.end };
}

export function closerOf(open: string): string {
  return PAIRS[open] ?? open;
}

/** A regular expression literal `/…/flags` starting at `i`: the index after it (a class `[/]` does not end it). */
export function regexEnd(code: string, i: number): number | null {
  let inClass = false;
  for (let j = i + 1; j < code.length; j++) {
    const c = code[j]!;
    if (c === '\\') j++;
    else if (c === '\n') return null;
    else if (c === '[') inClass = true;
    else if (c === ']') inClass = false;
    else if (c === '/' && !inClass) {
      let k = j + 1;
      while (k < code.length && /[a-z]/.test(code[k]!)) k++;
      return k;
    }
  }
  return null;
}

/** Whether a `/` after this token starts a regular expression (not a division). */
export function regexMayStart(prev: Tok | undefined, keywords: ReadonlySet<string>): boolean {
  if (!prev) return true;
  if (prev.t === 'id') return keywords.has(prev.v);
  if (prev.t === 'p') return !/^[)\]}]$/.test(prev.v);
  return false;
}

/** Operators read as one token. */
const MULTI = ['=>', '::', '==', '!=', '<=', '>=', '&&', '||', '**', '=~', '!~', '->', '+=', '...', '..'];
export function punct(code: string, i: number): string {
  for (const m of MULTI) if (code.startsWith(m, i)) return m;
  return code[i]!;
}

// ----------------------------------------------------------------------------------- call arguments

/** One argument of a call, as far as the tokens tell. */
export type Arg =
  | { k: 'str'; piece: Piece }
  | { k: 'list'; items: Piece[] }
  | { k: 'obj'; entries: Map<string, Arg> }
  | { k: 'kw'; key: string; value: Arg }
  | { k: 'other'; text: string };

/** The index of the token closing the bracket at `open` (or the end of the tokens). */
export function matching(toks: Tok[], open: number): number {
  let depth = 0;
  for (let j = open; j < toks.length; j++) {
    const t = toks[j]!;
    if (t.t !== 'p') continue;
    if (t.v === '(' || t.v === '[' || t.v === '{') depth++;
    else if (t.v === ')' || t.v === ']' || t.v === '}') if (--depth === 0) return j;
  }
  return toks.length;
}

/** Splits tokens [from, to) at the commas of depth 0. */
export function splitCommas(toks: Tok[], from: number, to: number): [number, number][] {
  const out: [number, number][] = [];
  let start = from;
  let depth = 0;
  for (let j = from; j < to; j++) {
    const t = toks[j]!;
    if (t.t !== 'p') continue;
    if (t.v === '(' || t.v === '[' || t.v === '{') depth++;
    else if (t.v === ')' || t.v === ']' || t.v === '}') depth--;
    else if (t.v === ',' && depth === 0) {
      out.push([start, j]);
      start = j + 1;
    }
  }
  if (start < to) out.push([start, to]);
  return out;
}

function text(toks: Tok[], from: number, to: number): string {
  return toks.slice(from, to).map((t) => (t.t === 'id' || t.t === 'p' ? t.v : t.t === 'str' ? JSON.stringify(t.v) : t.t === 'words' ? `[${t.v.join(' ')}]` : t.t === 'cmd' ? '`…`' : '/…/')).join(' ');
}

/** The value of tokens [from, to): literals joined by `+`, `.` (perl) or juxtaposition, a list, an object, `key=value`. */
export function argOf(toks: Tok[], from: number, to: number, concat: ReadonlySet<string>): Arg {
  const first = toks[from];
  if (!first) return { k: 'other', text: '' };
  // `key=value` (python), `key: value` (ruby), `:key => value` (ruby)
  if (to - from >= 3 && first.t === 'id' && toks[from + 1]?.t === 'p' && ((toks[from + 1] as { v: string }).v === '=' || (toks[from + 1] as { v: string }).v === ':' || (toks[from + 1] as { v: string }).v === '=>')) {
    return { k: 'kw', key: first.v.replace(/^:/, ''), value: argOf(toks, from + 2, to, concat) };
  }
  if (first.t === 'p' && (first.v === '[' || first.v === '(') && matching(toks, from) === to - 1) {
    const items: Piece[] = [];
    for (const [a, b] of splitCommas(toks, from + 1, to - 1)) {
      const v = argOf(toks, a, b, concat);
      if (v.k === 'str') items.push(v.piece);
      else if (v.k === 'list') items.push(...v.items);
      else items.push({ value: v.k === 'other' ? v.text : '…', known: false });
    }
    return { k: 'list', items };
  }
  if (first.t === 'words' && to - from === 1) return { k: 'list', items: first.v.map((w) => ({ value: w, known: true })) };
  if (first.t === 'p' && first.v === '{' && matching(toks, from) === to - 1) {
    const entries = new Map<string, Arg>();
    for (const [a, b] of splitCommas(toks, from + 1, to - 1)) {
      const key = toks[a];
      const sep = toks[a + 1];
      if (!key || !sep || sep.t !== 'p' || (sep.v !== ':' && sep.v !== '=>')) continue;
      const name = key.t === 'id' ? key.v.replace(/^:/, '') : key.t === 'str' ? key.v : null;
      if (name !== null) entries.set(name, argOf(toks, a + 2, b, concat));
    }
    return { k: 'obj', entries };
  }
  // Literals, joined.
  let value = '';
  let known = true;
  let expectLiteral = true;
  for (let j = from; j < to; j++) {
    const t = toks[j]!;
    if (t.t === 'str') {
      value += t.v;
      known &&= t.known;
      expectLiteral = false;
    } else if (t.t === 'p' && concat.has(t.v) && !expectLiteral) expectLiteral = true;
    else return { k: 'other', text: text(toks, from, to) };
  }
  if (expectLiteral) return { k: 'other', text: text(toks, from, to) };
  return { k: 'str', piece: { value, known } };
}

/** The arguments of a call whose `(` is at `open`; `end`: the index after the `)`. */
export function callArgs(toks: Tok[], open: number, concat: ReadonlySet<string>): { args: Arg[]; end: number } {
  const close = matching(toks, open);
  return { args: splitCommas(toks, open + 1, close).map(([a, b]) => argOf(toks, a, b, concat)), end: close + 1 };
}

export function positional(args: Arg[]): Arg[] {
  return args.filter((a) => a.k !== 'kw');
}

/** A keyword option, from `key=value` or an options object (`{cwd: "x", shell: true}`). */
export function option(args: Arg[], key: string): Arg | undefined {
  for (const a of args) {
    if (a.k === 'kw' && a.key === key) return a.value;
    if (a.k === 'obj' && a.entries.has(key)) return a.entries.get(key);
  }
  return undefined;
}

export function isTrue(a: Arg | undefined): boolean {
  return a !== undefined && a.k === 'other' && /^(True|true|1)$/.test(a.text.trim());
}

export function pieceOf(a: Arg | undefined): Piece {
  if (!a) return { value: '', known: false };
  if (a.k === 'str') return a.piece;
  return { value: a.k === 'other' ? a.text : a.k === 'list' ? a.items.map((i) => i.value).join(' ') : '…', known: false };
}

/** Whether an argument's text reads the code's own command-line arguments. */
export function mentions(a: Arg | undefined, argvName: RegExp): boolean {
  if (!a) return false;
  if (a.k === 'other') return argvName.test(a.text);
  if (a.k === 'list') return a.items.some((i) => !i.known && argvName.test(i.value));
  if (a.k === 'kw') return mentions(a.value, argvName);
  return false;
}

// ----------------------------------------------------------------------------------- what the calls start

/** Tracks `os.chdir("x")` and friends: the directory later spawns start in, relative to the code's own. */
export class Cwd {
  private dir: Piece | undefined;
  chdir(to: Arg | undefined): void {
    const p = pieceOf(to);
    if (!p.known) this.dir = { value: '', known: false };
    else if (this.dir === undefined || p.value.startsWith('/')) this.dir = p;
    else if (this.dir.known) this.dir = { value: posix.join(this.dir.value, p.value), known: true };
  }
  /** The directory for a spawn, with its own `cwd=` option applied. */
  at(own?: Arg): Piece | undefined {
    if (own === undefined) return this.dir;
    const p = pieceOf(own);
    if (!p.known || p.value.startsWith('/') || this.dir === undefined) return p;
    return this.dir.known ? { value: posix.join(this.dir.value, p.value), known: true } : this.dir;
  }
}

/** A command that is a shell line when it is one string, an argv when it is several (perl's, ruby's system). */
export function listSpawn(call: string, items: Arg[], cwd: Piece | undefined, argvName: RegExp): Spawned {
  const pieces: Piece[] = [];
  for (const a of items) {
    if (a.k === 'list') pieces.push(...a.items);
    else pieces.push(pieceOf(a));
  }
  if (pieces.length === 0) return { kind: 'unknown', call, argvDerived: false, cwd };
  if (items.some((a) => mentions(a, argvName)) && !pieces[0]!.known) return { kind: 'unknown', call, argvDerived: true, cwd };
  if (pieces.length === 1 && items[0]!.k !== 'list') return pieces[0]!.known ? { kind: 'shell', call, text: pieces[0]!, cwd } : { kind: 'unknown', call, argvDerived: false, cwd };
  return { kind: 'argv', call, argv: pieces, cwd };
}

/**
 * A list operator's arguments (Perl's `system LIST`, Ruby's `system(...)`): in parentheses right after the
 * name, or up to the end of the statement (`;`, `||`, `&&`, a closing bracket, or one of `ends`: `or`, `if`...).
 */
export function listArgs(toks: Tok[], concat: ReadonlySet<string>, ends: ReadonlySet<string>, from: number): { args: Arg[]; end: number } {
  const t = toks[from];
  if (t?.t === 'p' && t.v === '(') {
    const close = matching(toks, from);
    // `system("make") . "x"` is rare; `(…)` right after the name is the whole list.
    return { args: splitCommas(toks, from + 1, close).map(([a, b]) => argOf(toks, a, b, concat)), end: close + 1 };
  }
  let j = from;
  let depth = 0;
  for (; j < toks.length; j++) {
    const x = toks[j]!;
    if (x.t === 'p') {
      if (x.v === '(' || x.v === '[' || x.v === '{') depth++;
      else if (x.v === ')' || x.v === ']' || x.v === '}') {
        if (depth === 0) break;
        depth--;
      } else if (depth === 0 && (x.v === ';' || x.v === '||' || x.v === '&&')) break;
    } else if (x.t === 'id' && depth === 0 && ends.has(x.v)) break;
  }
  return { args: splitCommas(toks, from, j).map(([a, b]) => argOf(toks, a, b, concat)), end: j };
}
