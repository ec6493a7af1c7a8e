// POSIX shell quoting, the one home of it: one string -> one shell word that every POSIX shell (bash,
// dash, zsh in sh mode, busybox sh) turns back into exactly that string, whatever it contains (NUL aside,
// which no argv can hold). Three forms, each for what it is used for (docs/CONTRACTS.md):
//  - quote(): the command lines offhost builds for a VM (readable, minimal quoting; the algorithm below);
//  - singleQuote(): always '…' (each ' as '\''), the documented form of a rewrite's arguments
//    (`offhost run --session 'S' -- 'LINE'`), predictable for a human and for scan's `portable()`;
//  - bareOrSingleQuote(): a word as it is when made of [A-Za-z0-9_@%+=:,./-] only, else singleQuote():
//    paths and values in agent settings, shell snippets and `VAR=value` prefixes.
//
// Why not shell-quote's `quote` (a dependency)? Version 1.12.0 as installed does round-trip our
// hostile inputs through bash (checked with a 3000-string fuzz: '', newlines, leading '-', '!', '~',
// UTF-8, '{}', '=' ...), but:
//  - its correctness has moved between versions (CVE-2021-42740: quote() before 1.7.3 let `C:`-style
//    words break out; `^1.12` in package.json may resolve to another minor), and it is four quoting
//    strategies (single, double, backslash-per-char, "op"/"glob"/"comment" objects) to audit;
//  - its backslash style (`a\=b`, `\{a\,b\}`, `\~root`) is hard to read in a reroute a human reviews,
//    and a command line that is quoted for a second shell layer gets hard to check by eye.
// This is the whole algorithm, small enough to verify by reading:
//  1. the empty string -> '';
//  2. only [A-Za-z0-9_@%+:,./-] -> as is (none of these is special to any POSIX shell in any position;
//     '=' is left out so that a first word can never become an assignment, '~' for tilde expansion),
//     except the reserved words (if, then, for, time, …), which are keywords as a first word;
//  3. no single quote inside -> '…' (inside single quotes nothing at all is special, newlines included);
//  4. single quotes but none of $ ` " \ ! -> "…" (inside double quotes only $ ` " \ are special, and
//     ! for bash history in interactive shells); this keeps a second layer readable:
//     quote("'make build-safe'") = "\"'make build-safe'\"";
//  5. otherwise -> runs of non-quote characters in '…', each ' as \' between them.

const SAFE = /^[A-Za-z0-9_@%+:,./-]+$/;
const DOUBLE_QUOTE_SPECIAL = /[$`"\\!]/;
// bash's reserved words (a superset of POSIX's) made of SAFE characters.
const RESERVED = new Set(['if', 'then', 'else', 'elif', 'fi', 'case', 'esac', 'for', 'select', 'while', 'until', 'do', 'done', 'in', 'function', 'time', 'coproc']);

// The words around a rerouted line (ssh, host, incus exec, --cwd DIR, --env K=V, bash -c) repeat on every
// call of a hot process: remember the quoting of short strings (bounded, so a flood of distinct words
// cannot grow it without limit).
const memo = new Map<string, string>();
const MEMO_MAX_LEN = 256;
const MEMO_MAX_ENTRIES = 2048;

export function quote(s: string): string {
  if (s.length <= MEMO_MAX_LEN) {
    const hit = memo.get(s);
    if (hit !== undefined) return hit;
    const q = quoteUncached(s);
    if (memo.size >= MEMO_MAX_ENTRIES) memo.clear();
    memo.set(s, q);
    return q;
  }
  return quoteUncached(s);
}

function quoteUncached(s: string): string {
  if (s.includes('\0')) throw new TypeError('cannot quote a string containing NUL');
  if (s === '') return "''";
  if (SAFE.test(s) && !RESERVED.has(s)) return s;
  if (!s.includes("'")) return `'${s}'`;
  if (!DOUBLE_QUOTE_SPECIAL.test(s)) return `"${s}"`;
  return s
    .split("'")
    .map((chunk) => (chunk === '' ? '' : `'${chunk}'`))
    .join("\\'");
}

/** argv -> one command line: each element quoted, joined with spaces. */
export function quoteArgv(argv: readonly string[]): string {
  return argv.map(quote).join(' ');
}

/** Escape for the inside of "…" (template placeholders in a double-quoted context). */
export function escapeDoubleQuoted(s: string): string {
  if (s.includes('\0')) throw new TypeError('cannot quote a string containing NUL');
  return s.replace(/[$`"\\]/g, '\\$&');
}

/** Made of [A-Za-z0-9_@%+:,./-] only: no shell reads anything special in it, in any position. */
export function isPlainWord(s: string): boolean {
  return SAFE.test(s);
}

/** '…', each ' written as '\''. Every shell reads it back as exactly `s`. */
export function singleQuote(s: string): string {
  return `'${s.replace(/'/g, "'\\''")}'`;
}

const BARE_WORD = /^[A-Za-z0-9_@%+=:,./-]+$/;

/** A word as it is when plainly safe (`=` included: never a first word here), else singleQuote(). */
export function bareOrSingleQuote(word: string): string {
  return word !== '' && BARE_WORD.test(word) ? word : singleQuote(word);
}

/** Escape for the inside of '…' (template placeholders in a single-quoted context). */
export function escapeSingleQuoted(s: string): string {
  if (s.includes('\0')) throw new TypeError('cannot quote a string containing NUL');
  return s.replace(/'/g, "'\\''");
}
