// Character-level helpers for the bash parser (src/shell/parser.ts): character classes, reserved words,
// ANSI-C ($'…') decoding, heredoc delimiter quote removal and span re-mapping for backtick bodies.
// The tokenizer itself lives in the parser (tokens are produced on demand, in the lexing mode the grammar
// position asks for), because words and command lists nest into each other ($( ), `…`, ${…}).

export const C_TAB = 9;
export const C_NL = 10;
export const C_SPACE = 32;
export const C_BANG = 33;
export const C_DQUOTE = 34;
export const C_HASH = 35;
export const C_DOLLAR = 36;
export const C_PERCENT = 37;
export const C_AMP = 38;
export const C_SQUOTE = 39;
export const C_LPAREN = 40;
export const C_RPAREN = 41;
export const C_STAR = 42;
export const C_PLUS = 43;
export const C_COMMA = 44;
export const C_MINUS = 45;
export const C_SLASH = 47;
export const C_0 = 48;
export const C_9 = 57;
export const C_COLON = 58;
export const C_SEMI = 59;
export const C_LT = 60;
export const C_EQ = 61;
export const C_GT = 62;
export const C_QUESTION = 63;
export const C_AT = 64;
export const C_LBRACKET = 91;
export const C_BACKSLASH = 92;
export const C_RBRACKET = 93;
export const C_CARET = 94;
export const C_UNDERSCORE = 95;
export const C_BACKTICK = 96;
export const C_LBRACE = 123;
export const C_PIPE = 124;
export const C_RBRACE = 125;

/** Unquoted characters that end a word: blank, newline, `;` `&` `|` `<` `>` `(` `)`. */
export const META = new Uint8Array(128);
for (const c of ' \t\n;&|<>()') META[c.charCodeAt(0)] = 1;

/** [A-Za-z_] */
export function isNameStart(c: number): boolean {
  return (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || c === C_UNDERSCORE;
}

/** [A-Za-z0-9_] */
export function isNameChar(c: number): boolean {
  return (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || (c >= 48 && c <= 57) || c === C_UNDERSCORE;
}

export function isDigit(c: number): boolean {
  return c >= C_0 && c <= C_9;
}

/** Single-character special parameters: $@ $* $# $? $- $$ $! $0 (digits handled apart). */
export function isSpecialParam(c: number): boolean {
  return (
    c === C_AT ||
    c === C_STAR ||
    c === C_HASH ||
    c === C_QUESTION ||
    c === C_MINUS ||
    c === C_DOLLAR ||
    c === C_BANG
  );
}

/** Words that are reserved in command position. */
export const RESERVED = new Set([
  'if',
  'then',
  'elif',
  'else',
  'fi',
  'do',
  'done',
  'case',
  'esac',
  'while',
  'until',
  'for',
  'select',
  'in',
  'function',
  'time',
  'coproc',
  '{',
  '}',
  '!',
  '[[',
  ']]',
]);

/** Builtins whose `name=(…)` arguments are compound array assignments (bash's ASSIGNMENT_BUILTIN). */
export const DECLARATION_BUILTINS = new Set(['declare', 'typeset', 'local', 'export', 'readonly', 'alias', 'eval']);

/** `[[ … ]]` unary operators (bash test_unop). */
export const COND_UNARY = new Set([
  '-a', '-b', '-c', '-d', '-e', '-f', '-g', '-h', '-k', '-n', '-o', '-p', '-r', '-s', '-t', '-u', '-v',
  '-w', '-x', '-z', '-G', '-L', '-N', '-O', '-R', '-S',
]);

/** `[[ … ]]` binary operators written as words (bash test_binop); `<` `>` are operator tokens. */
export const COND_BINARY = new Set([
  '=', '==', '!=', '<', '>', '-nt', '-ot', '-ef', '-eq', '-ne', '-lt', '-le', '-gt', '-ge', '=~',
]);

function hexVal(c: number): number {
  if (c >= 48 && c <= 57) return c - 48;
  if (c >= 97 && c <= 102) return c - 87;
  if (c >= 65 && c <= 70) return c - 55;
  return -1;
}

/** Decode the body of $'…' (text between the quotes), like bash's ansicstr. */
export function decodeAnsiC(text: string, start: number, end: number): string {
  let out = '';
  let run = start;
  let i = start;
  while (i < end) {
    if (text.charCodeAt(i) !== C_BACKSLASH || i + 1 >= end) {
      i++;
      continue;
    }
    out += text.slice(run, i);
    const c = text.charCodeAt(i + 1);
    i += 2;
    switch (c) {
      case 97: out += '\x07'; break; // a
      case 98: out += '\b'; break; // b
      case 101: case 69: out += '\x1b'; break; // e E
      case 102: out += '\f'; break; // f
      case 110: out += '\n'; break; // n
      case 114: out += '\r'; break; // r
      case 116: out += '\t'; break; // t
      case 118: out += '\v'; break; // v
      case C_BACKSLASH: out += '\\'; break;
      case C_SQUOTE: out += "'"; break;
      case C_DQUOTE: out += '"'; break;
      case C_QUESTION: out += '?'; break;
      case 120: { // x: up to 2 hex digits
        let v = 0;
        let n = 0;
        while (n < 2 && i < end && hexVal(text.charCodeAt(i)) >= 0) {
          v = v * 16 + hexVal(text.charCodeAt(i));
          i++;
          n++;
        }
        out += n === 0 ? '\\x' : String.fromCharCode(v);
        break;
      }
      case 117: case 85: { // u (4) U (8)
        const max = c === 117 ? 4 : 8;
        let v = 0;
        let n = 0;
        while (n < max && i < end && hexVal(text.charCodeAt(i)) >= 0) {
          v = v * 16 + hexVal(text.charCodeAt(i));
          i++;
          n++;
        }
        if (n === 0) out += c === 117 ? '\\u' : '\\U';
        else out += v <= 0x10ffff ? String.fromCodePoint(v) : '\ufffd';
        break;
      }
      case 99: { // cX: control character
        if (i < end) {
          const x = text.charCodeAt(i);
          i++;
          out += x === C_QUESTION ? '\x7f' : String.fromCharCode(x & 0x1f);
        } else out += '\\c';
        break;
      }
      default:
        if (c >= 48 && c <= 55) { // octal, up to 3 digits
          let v = c - 48;
          let n = 1;
          while (n < 3 && i < end && text.charCodeAt(i) >= 48 && text.charCodeAt(i) <= 55) {
            v = v * 8 + (text.charCodeAt(i) - 48);
            i++;
            n++;
          }
          out += String.fromCharCode(v & 0xff);
        } else {
          out += '\\' + String.fromCharCode(c);
        }
    }
    run = i;
  }
  return out + text.slice(run, end);
}

/** Quote removal for a heredoc delimiter word as written (`'EOF'`, `"E"OF`, `E\OF` -> `EOF`). */
export function unquoteDelimiter(raw: string): string {
  let out = '';
  let i = 0;
  while (i < raw.length) {
    const c = raw.charCodeAt(i);
    if (c === C_SQUOTE) {
      const j = raw.indexOf("'", i + 1);
      const e = j < 0 ? raw.length : j;
      out += raw.slice(i + 1, e);
      i = e + 1;
    } else if (c === C_DQUOTE) {
      i++;
      while (i < raw.length && raw.charCodeAt(i) !== C_DQUOTE) {
        if (raw.charCodeAt(i) === C_BACKSLASH && i + 1 < raw.length) {
          const n = raw.charCodeAt(i + 1);
          if (n === C_DOLLAR || n === C_BACKTICK || n === C_DQUOTE || n === C_BACKSLASH) i++;
          else if (n === C_NL) {
            i += 2;
            continue;
          }
        }
        out += raw[i];
        i++;
      }
      i++;
    } else if (c === C_BACKSLASH && i + 1 < raw.length) {
      if (raw.charCodeAt(i + 1) !== C_NL) out += raw[i + 1];
      i += 2;
    } else if (c === C_DOLLAR && i + 1 < raw.length && (raw.charCodeAt(i + 1) === C_SQUOTE || raw.charCodeAt(i + 1) === C_DQUOTE)) {
      i++; // $'…' / $"…" delimiters: drop the $, the quote is handled next round
    } else {
      out += raw[i];
      i++;
    }
  }
  return out;
}

/**
 * Re-map every `span` in a subtree parsed from an un-escaped backtick body back to offsets in the
 * enclosing text. `map[k]` is the enclosing offset of inner character k; `map[inner.length]` is the
 * offset of the closing backtick.
 */
export function remapSpans(node: unknown, map: Int32Array, innerLen: number): void {
  if (Array.isArray(node)) {
    for (const n of node) remapSpans(n, map, innerLen);
    return;
  }
  if (node === null || typeof node !== 'object') return;
  const o = node as Record<string, unknown>;
  for (const k in o) {
    const v = o[k];
    if (v === null || typeof v !== 'object') continue;
    if (k === 'span') {
      const s = v as { start: number; end: number };
      const st = s.start;
      const en = s.end;
      s.start = map[Math.min(st, innerLen)]!;
      s.end = en > st ? map[Math.min(en - 1, innerLen)]! + 1 : s.start;
    } else {
      remapSpans(v, map, innerLen);
    }
  }
}
