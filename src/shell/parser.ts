// A purpose-built bash parser: on-demand tokenizer + recursive descent, linear time, every node with its
// source span. `parse(text)` accepts what `bash -n` accepts and throws ParseError for what it rejects.
//
// Tree shape notes (see ast.ts):
// - A Script is always a List. Wrappers are only made when they carry something: a Pipeline node only
//   for 2+ commands or a leading `!`/`time`; an AndOr node only when there is at least one `&&`/`||`.
//   `!`/`time` followed by a list terminator give a Pipeline with no commands.
// - Words inside a backtick body come from the un-escaped inner text: their `raw` is that inner text,
//   their spans are mapped back onto the original source.
// - Literal parts are not necessarily merged: `a=b` in a declaration argument is [`a=`, `b`].
//
// Deliberate deviations from bash -n (obscure corners), each also listed in test/shell/bash-n.test.ts
// (STRICTER / LENIENT) or covered by the differential fixture:
// - Backtick bodies are parsed (recursively, after bash's un-escaping). bash -n only matches the
//   backquotes and finds errors inside when the line runs: `echo \`fi\`` is rejected here.
// - `$((…)…)` that turns out not to be arithmetic falls back to `$( (…)…)` and that body is parsed;
//   bash -n does not parse it (`echo $((a)b)` passes bash -n, fails when run). Same for `$(( ${x))`.
// - `[[ … ]]` syntax errors ("conditional binary operator expected") are ParseErrors; bash -n prints
//   them but exits 0 (the line fails when run). An empty term (`[[ ]]`, `[[ a && ]]`, `[[ ! ]]`) is an
//   error too: bash -n exits 0 silently, but bash stops reading the input there and runs nothing more.
// - `for ((…))` whose parentheses do not close with `))` (`for ((a) b); do :; done`) is rejected; bash -n
//   lets several such forms through.
// - More lenient, the only case: bash 5.2 rejects an array assignment inside a `time` pipeline at the very
//   start of `$( )` (`x=$(time A=(1) cat)`, a bash parser quirk); accepted here. Nothing runs in bash.
// Behaviour that matches bash but may surprise:
// - Line continuations are removed wherever bash removes them (also inside operators, after `$`, inside
//   `$name`, `${name}`, assignment names and heredoc delimiters), never inside single quotes.
// - extglob patterns (`@(…)` etc.) are only words on the right of `==`/`!=`/`=` in `[[ ]]` (bash enables
//   them there itself); elsewhere `(` is a syntax error, as with bash's default `extglob` off.
// - A heredoc started inside `$( … )` whose body only begins after the `)` is read at the next newline of
//   the enclosing text (bash warns); inside `$( … )` a line starting with the delimiter and containing a
//   `)` ends the body, the rest of that line is read as commands (bash 5.2: `EOF)`, `EOF;; esac)`).
// - A heredoc body whose expansions do not parse (an unclosed `$(` in the body) is accepted, like
//   bash -n; its `word` is then a single literal part.
// - Single quotes inside `${x:-'…'}` within double quotes are treated as literal characters.

import type {
  Assignment,
  Case,
  Command,
  For,
  HereDoc,
  List,
  Pipeline,
  Redirect,
  Script,
  SimpleCommandNode,
  Span,
  Word,
  WordPart,
} from './ast.js';
import { ParseError, positionAt } from '../errors.js';
import {
  C_AMP,
  C_AT,
  C_BACKSLASH,
  C_BACKTICK,
  C_BANG,
  C_COLON,
  C_COMMA,
  C_CARET,
  C_DOLLAR,
  C_DQUOTE,
  C_EQ,
  C_GT,
  C_HASH,
  C_LBRACE,
  C_LBRACKET,
  C_LPAREN,
  C_LT,
  C_MINUS,
  C_NL,
  C_PERCENT,
  C_PIPE,
  C_PLUS,
  C_QUESTION,
  C_RBRACE,
  C_RBRACKET,
  C_RPAREN,
  C_SEMI,
  C_SLASH,
  C_SPACE,
  C_SQUOTE,
  C_STAR,
  C_TAB,
  COND_BINARY,
  COND_UNARY,
  DECLARATION_BUILTINS,
  META,
  RESERVED,
  decodeAnsiC,
  isDigit,
  isNameChar,
  isNameStart,
  isSpecialParam,
  remapSpans,
  unquoteDelimiter,
} from './lexer.js';

export interface ParseLimits {
  /** Longest accepted input, in UTF-16 code units (default 1 MiB). */
  maxLength?: number;
  /** Deepest accepted nesting of constructs (default 200). */
  maxDepth?: number;
}

export const DEFAULT_MAX_LENGTH = 1024 * 1024;
export const DEFAULT_MAX_DEPTH = 200;

/** Parse one bash command line (or script). Throws ParseError on invalid input or past the limits. */
export function parse(text: string, limits?: ParseLimits): Script {
  const maxLength = limits?.maxLength ?? DEFAULT_MAX_LENGTH;
  const maxDepth = limits?.maxDepth ?? DEFAULT_MAX_DEPTH;
  if (text.length > maxLength) {
    throw new ParseError(
      `input too long: ${text.length} characters, the limit is ${maxLength}`,
      positionAt(text, maxLength),
    );
  }
  const nul = text.indexOf('\0');
  if (nul >= 0) throw new ParseError('NUL byte in input', positionAt(text, nul));
  const parser = new Parser(text, maxDepth, 0, null, null);
  try {
    return parser.parseScript();
  } catch (e) {
    // only reachable with a huge maxDepth: report a stack overflow like the depth limit
    if (e instanceof RangeError) {
      throw new ParseError('nesting too deep: out of stack space', positionAt(text, parser.offset()));
    }
    throw e;
  }
}

// Token kinds.
const T_EOF = 0;
const T_WORD = 1;
const T_OP = 2;
const T_IONUM = 3;

// Lexing modes for words.
const M_NORMAL = 0;
/** Command prefix: `name=`, `name[…]=`, `name=(…)` are recognised. */
const M_ASSIGN = 1;
/** Inside `[[ ]]`: `<` `>` are single-character operators. */
const M_COND = 2;
/** Right of `==`/`!=`/`=` in `[[ ]]`: extglob patterns are words. */
const M_EXTPAT = 3;
/** Right of `=~` in `[[ ]]`: `(…)` and `|` belong to the word. */
const M_REGEX = 4;
/** Element of a compound array assignment: a leading `[…]` is a subscript. */
const M_ARRAY = 5;

// Stop bits for compound lists.
const S_THEN = 1;
const S_ELIF = 2;
const S_ELSE = 4;
const S_FI = 8;
const S_DO = 16;
const S_DONE = 32;
const S_ESAC = 64;
const S_RBRACE = 128;
const STOP_BITS: Record<string, number> = {
  then: S_THEN,
  elif: S_ELIF,
  else: S_ELSE,
  fi: S_FI,
  do: S_DO,
  done: S_DONE,
  esac: S_ESAC,
  '}': S_RBRACE,
};

const REDIRECT_OPS = new Set(['<', '>', '>>', '>|', '<>', '<&', '>&', '&>', '&>>', '<<', '<<-', '<<<']);

interface AssignInfo {
  name: string;
  append: boolean;
  index?: string;
  indexWord?: Word;
  value: Word | null;
  array?: Word[];
}

interface PendingHeredoc {
  doc: HereDoc;
}

interface ArithBody {
  expr: string;
  subs: WordPart[];
  /** Offsets (into expr) of `;` at paren level 0. */
  semis: number[];
}

function span(start: number, end: number): Span {
  return { start, end };
}

class Parser {
  private pos = 0;
  private len: number;
  private depth: number;
  /** Heredocs whose body starts after the next newline token. */
  private pending: PendingHeredoc[] = [];
  /** Results of substitutions parsed during a `$((`/`((` attempt, by start offset (no re-parse). */
  private memo: Map<number, { part: WordPart; end: number }> | null = null;
  private arithAttempt = 0;
  /** Paren regions matched by failed `((` attempts: open offset -> close offset and the substitutions inside. */
  private parenMemo: Map<number, { close: number; subs: WordPart[] }> | null = null;
  /** How many `$(`/`<(`/`>(` bodies are being parsed (heredoc delimiters may be followed by `)` there). */
  private comsubDepth = 0;

  // The current (peeked) token.
  private tkValid = false;
  private tkPos = -1;
  private tkMode = 0;
  private tkKind = T_EOF;
  private tkStart = 0;
  private tkEnd = 0;
  private tkOp = '';
  private tkWord: Word | null = null;
  private tkAssign: AssignInfo | null = null;
  private tkFd: number | string = 0;
  /** Cache of reserved() for the word tkResWord. */
  private tkResWord: Word | null = null;
  private tkRes: string | null = null;

  constructor(
    private readonly text: string,
    private readonly maxDepth: number,
    depth: number,
    /** For a backtick body: the parser of the enclosing text and the offset map into it. */
    private readonly parent: Parser | null,
    private readonly offMap: Int32Array | null,
  ) {
    this.len = text.length;
    this.depth = depth;
  }

  /** The current offset (for errors raised outside the parser). */
  offset(): number {
    return Math.min(this.pos, this.text.length);
  }

  // ---------------------------------------------------------------- errors, depth

  private fail(message: string, offset: number): never {
    let o = offset;
    // eslint-disable-next-line @typescript-eslint/no-this-alias
    let p: Parser = this;
    while (p.parent !== null && p.offMap !== null) {
      o = p.offMap[Math.max(0, Math.min(o, p.offMap.length - 1))]!;
      p = p.parent;
    }
    throw new ParseError(message, positionAt(p.text, o));
  }

  private enter(at: number): void {
    if (++this.depth > this.maxDepth) {
      this.fail(`nesting too deep: more than ${this.maxDepth} nested constructs`, at);
    }
  }

  private code(i: number): number {
    return i < this.len ? this.text.charCodeAt(i) : -1;
  }

  /** Skip `\<newline>` line continuations at j (bash removes them even inside operators and after `$`). */
  private skipCont(j: number): number {
    const text = this.text;
    while (j + 1 < this.len && text.charCodeAt(j) === C_BACKSLASH && text.charCodeAt(j + 1) === C_NL) j += 2;
    return j;
  }

  // ---------------------------------------------------------------- tokens

  private peek(mode: number): number {
    if (this.tkValid && this.tkPos === this.pos && (this.tkKind !== T_WORD || this.tkMode === mode)) {
      return this.tkKind;
    }
    this.lex(mode);
    return this.tkKind;
  }

  private next(): void {
    this.pos = this.tkEnd;
    this.tkValid = false;
  }

  /** The current operator token (a method, so TypeScript does not narrow it across next()/peek()). */
  private top(): string {
    return this.tkOp;
  }

  private wordRaw(): string {
    return this.tkWord === null ? '' : this.tkWord.raw;
  }

  private tokenText(): string {
    switch (this.tkKind) {
      case T_EOF:
        return 'end of file';
      case T_WORD:
        return this.tkWord!.raw;
      case T_IONUM:
        return String(this.tkFd);
      default:
        return this.top() === '\n' ? 'newline' : this.tkOp;
    }
  }

  private unexpected(): never {
    if (this.tkKind === T_EOF) this.fail('syntax error: unexpected end of file', this.tkStart);
    this.fail(`syntax error near unexpected token \`${this.tokenText()}'`, this.tkStart);
  }

  private expectOp(op: string, what: string, openAt: number): void {
    if (this.peek(M_NORMAL) === T_OP && this.top() === op) {
      this.next();
      return;
    }
    if (this.tkKind === T_EOF) {
      this.fail(`syntax error: unexpected end of file, \`${op}' expected to close ${what}`, openAt);
    }
    this.unexpected();
  }

  /** The reserved word the current token spells, if it is a plain unquoted word. */
  private reserved(): string | null {
    if (this.tkKind !== T_WORD) return null;
    const w = this.tkWord!;
    if (this.tkResWord === w) return this.tkRes;
    const parts = w.parts;
    let r: string | null = null;
    if (parts.length === 1) {
      const p = parts[0]!;
      if (p.type === 'Literal' && !p.escaped && p.value.length <= 8 && RESERVED.has(p.value)) r = p.value;
    }
    this.tkResWord = w;
    this.tkRes = r;
    return r;
  }

  private isWord(w: string): boolean {
    return this.tkKind === T_WORD && this.reserved() === w;
  }

  private expectWord(w: string, what: string, openAt: number): void {
    this.peek(M_ASSIGN);
    if (this.isWord(w)) {
      this.next();
      return;
    }
    if (this.tkKind === T_EOF) {
      this.fail(`syntax error: unexpected end of file, \`${w}' expected to close ${what}`, openAt);
    }
    this.unexpected();
  }

  private skipNewlines(mode: number): number {
    let k = this.peek(mode);
    while (k === T_OP && this.top() === '\n') {
      this.next();
      k = this.peek(mode);
    }
    return k;
  }

  private lex(mode: number): void {
    const text = this.text;
    const len = this.len;
    const p0 = this.pos;
    let i = p0;
    for (;;) {
      const c = i < len ? text.charCodeAt(i) : -1;
      if (c === C_SPACE || c === C_TAB) i++;
      else if (c === C_BACKSLASH && (i + 1 >= len || text.charCodeAt(i + 1) === C_NL)) i = Math.min(i + 2, len);
      else if (c === C_HASH) {
        const nl = text.indexOf('\n', i);
        i = nl < 0 || nl > len ? len : nl;
      } else break;
    }
    this.tkValid = true;
    this.tkPos = p0;
    this.tkMode = mode;
    this.tkStart = i;
    this.tkWord = null;
    this.tkAssign = null;
    if (i >= len) {
      this.tkKind = T_EOF;
      this.tkEnd = len;
      this.tkOp = '';
      return;
    }
    const c = text.charCodeAt(i);
    const i1 = this.skipCont(i + 1);
    const c1 = i1 < len ? text.charCodeAt(i1) : -1;
    const i2 = c1 < 0 ? i1 : this.skipCont(i1 + 1);
    const c2 = i2 < len ? text.charCodeAt(i2) : -1;
    let op = '';
    switch (c) {
      case C_NL: {
        this.tkKind = T_OP;
        this.tkOp = '\n';
        if (this.pending.length > 0) {
          this.pos = i + 1;
          this.gatherHeredocs();
          this.tkEnd = this.pos;
          this.pos = p0;
          // gathering may have parsed nested words: restore the token fields
          this.tkValid = true;
          this.tkPos = p0;
          this.tkMode = mode;
          this.tkStart = i;
          this.tkKind = T_OP;
          this.tkOp = '\n';
          this.tkWord = null;
          this.tkAssign = null;
        } else this.tkEnd = i + 1;
        return;
      }
      case C_SEMI:
        op = c1 === C_SEMI ? (c2 === C_AMP ? ';;&' : ';;') : c1 === C_AMP ? ';&' : ';';
        break;
      case C_AMP:
        op = c1 === C_AMP ? '&&' : c1 === C_GT ? (c2 === C_GT ? '&>>' : '&>') : '&';
        break;
      case C_PIPE:
        if (mode === M_REGEX) break;
        op = c1 === C_PIPE ? '||' : c1 === C_AMP ? '|&' : '|';
        break;
      case C_LPAREN:
        if (mode === M_REGEX) break;
        op = '(';
        break;
      case C_RPAREN:
        op = ')';
        break;
      case C_LT:
        if (c1 === C_LPAREN) break; // process substitution: a word
        if (mode === M_COND || mode === M_EXTPAT || mode === M_REGEX) op = '<';
        else if (c1 === C_LT) op = c2 === C_LT ? '<<<' : c2 === C_MINUS ? '<<-' : '<<';
        else op = c1 === C_AMP ? '<&' : c1 === C_GT ? '<>' : '<';
        break;
      case C_GT:
        if (c1 === C_LPAREN) break;
        if (mode === M_COND || mode === M_EXTPAT || mode === M_REGEX) op = '>';
        else op = c1 === C_GT ? '>>' : c1 === C_AMP ? '>&' : c1 === C_PIPE ? '>|' : '>';
        break;
    }
    if (op !== '') {
      this.tkKind = T_OP;
      this.tkOp = op;
      this.tkEnd = op.length === 1 ? i + 1 : op.length === 2 ? i1 + 1 : i2 + 1;
      return;
    }
    // A word.
    this.pos = i;
    const w = this.scanWord(mode);
    const assign = this.wAssign;
    const end = this.pos;
    this.pos = p0;
    this.tkValid = true;
    this.tkPos = p0;
    this.tkMode = mode;
    this.tkStart = i;
    this.tkEnd = end;
    this.tkWord = w;
    this.tkAssign = assign;
    this.tkKind = T_WORD;
    this.tkOp = '';
    const n = end < len ? text.charCodeAt(end) : -1;
    if ((n === C_LT || n === C_GT) && mode !== M_COND && mode !== M_EXTPAT && mode !== M_REGEX && w.parts.length === 1) {
      const p = w.parts[0]!;
      const raw = p.type === 'Literal' && !p.escaped ? p.value : '';
      let digits = raw.length > 0;
      for (let k = 0; k < raw.length && digits; k++) digits = isDigit(raw.charCodeAt(k));
      if (digits) {
        this.tkKind = T_IONUM;
        this.tkFd = Number(raw);
      } else if (raw.length > 2 && raw.charCodeAt(0) === C_LBRACE && raw.charCodeAt(raw.length - 1) === C_RBRACE) {
        let ok = isNameStart(raw.charCodeAt(1));
        for (let k = 2; k < raw.length - 1 && ok; k++) ok = isNameChar(raw.charCodeAt(k));
        if (ok) {
          this.tkKind = T_IONUM;
          this.tkFd = raw.slice(1, -1);
        }
      }
    }
  }

  // ---------------------------------------------------------------- words

  /** Assignment info of the last word scanned (set at the very end of scanWord). */
  private wAssign: AssignInfo | null = null;

  private literal(parts: WordPart[], value: string, escaped: boolean, start: number, end: number): void {
    parts.push({ type: 'Literal', value, escaped, span: span(start, end) });
  }

  /**
   * Scan one word at this.pos (which is not at a metacharacter). Leaves this.pos after it and sets
   * this.wAssign.
   */
  private scanWord(mode: number): Word {
    const text = this.text;
    const len = this.len;
    const start = this.pos;
    const parts: WordPart[] = [];
    let assign: AssignInfo | null = null;
    let valueStart = -1;
    let valuePartIdx = 0;
    let i = start;

    // Fast path: plain characters only.
    for (;;) {
      const c = i < len ? text.charCodeAt(i) : -1;
      if (
        c < 0 ||
        (c < 128 && META[c] === 1) ||
        c === C_BACKSLASH ||
        c === C_SQUOTE ||
        c === C_DQUOTE ||
        c === C_DOLLAR ||
        c === C_BACKTICK ||
        c === C_EQ ||
        c === C_LBRACKET ||
        c === C_LPAREN
      ) {
        break;
      }
      i++;
    }
    {
      const c = i < len ? text.charCodeAt(i) : -1;
      if (
        i > start &&
        (c < 0 || (c < 128 && META[c] === 1)) &&
        !(c === C_LPAREN && (mode === M_EXTPAT || mode === M_REGEX)) &&
        !(c === C_PIPE && mode === M_REGEX) &&
        !((c === C_LT || c === C_GT) && this.code(this.skipCont(i + 1)) === C_LPAREN)
      ) {
        const raw = text.slice(start, i);
        this.pos = i;
        this.wAssign = null;
        return { type: 'Word', parts: [{ type: 'Literal', value: raw, escaped: false, span: span(start, i) }], raw, span: span(start, i) };
      }
    }
    i = start;

    // Assignment prefix: name=, name+=, name[…]=, name[…]+=
    if (mode === M_ASSIGN && isNameStart(this.code(i))) {
      let j = i + 1;
      let cont = false; // line continuations inside the name (`a\<newline>b=1` is `ab=1`)
      for (;;) {
        if (isNameChar(this.code(j))) j++;
        else {
          const j2 = this.skipCont(j);
          if (j2 === j) break;
          cont = true;
          j = j2;
        }
      }
      const noCont = (x: string): string => (cont ? x.replace(/\\\n/g, '') : x);
      let indexWord: Word | undefined;
      let k = j;
      if (this.code(k) === C_LBRACKET) {
        this.pos = k + 1;
        indexWord = this.scanUntilBracket(k);
        k = this.pos + 1; // after ]
      }
      const ck = this.code(k);
      let eq = -1;
      let append = false;
      if (ck === C_EQ) eq = k;
      else if (ck === C_PLUS && this.code(k + 1) === C_EQ) {
        eq = k + 1;
        append = true;
      }
      if (eq >= 0) {
        assign = { name: noCont(text.slice(start, j)), append, value: null };
        if (indexWord !== undefined) {
          assign.index = text.slice(j + 1, k - 1);
          assign.indexWord = indexWord;
        }
        this.literal(parts, noCont(text.slice(start, eq + 1)), false, start, eq + 1);
        i = eq + 1;
        valueStart = i;
        valuePartIdx = parts.length;
        if (this.code(i) === C_LPAREN) {
          // compound array assignment
          this.pos = i;
          const elems = this.scanArray(parts);
          i = this.pos;
          const n = this.code(i);
          if (n < 0 || (n < 128 && META[n] === 1)) {
            assign.array = elems;
            const raw = text.slice(start, i);
            this.wAssign = assign;
            return { type: 'Word', parts, raw, span: span(start, i) };
          }
          // `a=(1)x`: bash keeps reading the word; it is then a plain assignment of the text `(1)x`
        }
      } else if (indexWord !== undefined) {
        // `a[1 2]` in assignment position stays one word even without `=` (bash parse_matched_pair)
        this.literal(parts, noCont(text.slice(start, j + 1)), false, start, j + 1);
        for (const p of indexWord.parts) parts.push(p);
        this.literal(parts, ']', false, k - 1, k);
        i = k;
      }
    } else if (mode === M_ARRAY && this.code(i) === C_LBRACKET) {
      this.pos = i + 1;
      const idx = this.scanUntilBracket(i);
      this.literal(parts, '[', false, i, i + 1);
      for (const p of idx.parts) parts.push(p);
      i = this.pos + 1;
      this.literal(parts, ']', false, i - 1, i);
    }

    // Process substitution at the start of a word.
    if (i === start) {
      const c = this.code(i);
      if ((c === C_LT || c === C_GT) && this.code(this.skipCont(i + 1)) === C_LPAREN) {
        this.pos = i;
        parts.push(this.parseProcSub());
        i = this.pos;
      }
    }

    let lit = '';
    let litStart = -1;
    let runStart = i;
    let escaped = false;
    for (;;) {
      const c = i < len ? text.charCodeAt(i) : -1;
      if (c < 0) break;
      if (c < 128 && META[c] === 1) {
        if (c === C_LPAREN && mode === M_REGEX) {
          // (…) inside a regex: part of the word, blanks included
          if (i > runStart) {
            if (litStart < 0) litStart = runStart;
            lit += text.slice(runStart, i);
          }
          if (litStart >= 0) this.literal(parts, lit, escaped, litStart, i);
          lit = '';
          litStart = -1;
          escaped = false;
          this.pos = i;
          this.scanParenGroup(parts);
          i = this.pos;
          runStart = i;
          continue;
        }
        if (c === C_PIPE && mode === M_REGEX) {
          i++;
          continue;
        }
        if ((c === C_LT || c === C_GT) && this.code(this.skipCont(i + 1)) === C_LPAREN) {
          // `a<(x)`: a process substitution continues the word (bash read_token_word)
          if (i > runStart) {
            if (litStart < 0) litStart = runStart;
            lit += text.slice(runStart, i);
          }
          if (litStart >= 0) this.literal(parts, lit, escaped, litStart, i);
          lit = '';
          litStart = -1;
          escaped = false;
          this.pos = i;
          parts.push(this.parseProcSub());
          i = this.pos;
          runStart = i;
          continue;
        }
        if (c === C_LPAREN && mode === M_EXTPAT && i > start) {
          const pc = text.charCodeAt(i - 1);
          if ((pc === C_AT || pc === C_BANG || pc === C_STAR || pc === C_PLUS || pc === C_QUESTION) && i - 1 >= runStart) {
            if (i > runStart) {
              if (litStart < 0) litStart = runStart;
              lit += text.slice(runStart, i);
            }
            if (litStart >= 0) this.literal(parts, lit, escaped, litStart, i);
            lit = '';
            litStart = -1;
            escaped = false;
            this.pos = i;
            this.scanParenGroup(parts);
            i = this.pos;
            runStart = i;
            continue;
          }
        }
        break;
      }
      if (c === C_BACKSLASH) {
        if (i > runStart) {
          if (litStart < 0) litStart = runStart;
          lit += text.slice(runStart, i);
        }
        if (i + 1 >= len) {
          // a backslash at the very end of the input is dropped (bash reads it as a line continuation)
          i++;
          runStart = i;
          continue;
        }
        const n = text.charCodeAt(i + 1);
        if (n !== C_NL) {
          if (litStart < 0) litStart = i;
          lit += text[i + 1];
          escaped = true;
        }
        i += 2;
        runStart = i;
        continue;
      }
      if (c === C_SQUOTE || c === C_DQUOTE || c === C_DOLLAR || c === C_BACKTICK) {
        let part: WordPart | null;
        this.pos = i;
        if (c === C_SQUOTE) part = this.scanSingle();
        else if (c === C_DQUOTE) part = this.scanDouble();
        else if (c === C_DOLLAR) part = this.parseDollar(false);
        else part = this.parseBacktick(false);
        if (part === null) {
          i++; // a lone `$`
          continue;
        }
        if (i > runStart) {
          if (litStart < 0) litStart = runStart;
          lit += text.slice(runStart, i);
        }
        if (litStart >= 0) this.literal(parts, lit, escaped, litStart, i);
        lit = '';
        litStart = -1;
        escaped = false;
        parts.push(part);
        i = this.pos;
        runStart = i;
        continue;
      }
      i++;
    }
    if (i > runStart) {
      if (litStart < 0) litStart = runStart;
      lit += text.slice(runStart, i);
    }
    if (litStart >= 0 && lit.length > 0) this.literal(parts, lit, escaped, litStart, i);
    if (assign !== null) {
      const vparts = valuePartIdx === 0 ? parts : parts.slice(valuePartIdx);
      assign.value = { type: 'Word', parts: vparts, raw: text.slice(valueStart, i), span: span(valueStart, i) };
    }
    this.pos = i;
    this.wAssign = assign;
    return { type: 'Word', parts, raw: text.slice(start, i), span: span(start, i) };
  }

  /** `(…)` inside a regex or an extglob pattern: balanced, blanks allowed; parts appended. */
  private scanParenGroup(parts: WordPart[]): void {
    const start = this.pos;
    this.enter(start);
    let level = 0;
    let runStart = start;
    const flush = (end: number): void => {
      if (end > runStart) this.literal(parts, this.text.slice(runStart, end), false, runStart, end);
    };
    for (;;) {
      const c = this.code(this.pos);
      if (c < 0) this.fail("syntax error: unexpected end of file while looking for matching `)'", start);
      if (c === C_LPAREN) {
        level++;
        this.pos++;
      } else if (c === C_RPAREN) {
        this.pos++;
        if (--level === 0) break;
      } else if (c === C_BACKSLASH) {
        this.pos += 2;
      } else if (c === C_SQUOTE || c === C_DQUOTE || c === C_DOLLAR || c === C_BACKTICK) {
        const at = this.pos;
        const part =
          c === C_SQUOTE ? this.scanSingle() : c === C_DQUOTE ? this.scanDouble() : c === C_DOLLAR ? this.parseDollar(false) : this.parseBacktick(false);
        if (part === null) {
          this.pos++;
          continue;
        }
        flush(at);
        parts.push(part);
        runStart = this.pos;
      } else this.pos++;
    }
    if (this.pos > this.len) this.pos = this.len;
    flush(this.pos);
    this.depth--;
  }

  /** `'…'` at this.pos. */
  private scanSingle(): WordPart {
    const start = this.pos;
    const e = this.text.indexOf("'", start + 1);
    if (e < 0 || e >= this.len) this.fail("syntax error: unterminated single quote (`'')", start);
    this.pos = e + 1;
    return { type: 'SingleQuoted', value: this.text.slice(start + 1, e), span: span(start, e + 1) };
  }

  /** `"…"` at this.pos. */
  private scanDouble(): WordPart {
    const start = this.pos;
    this.enter(start);
    this.pos++;
    const parts: WordPart[] = [];
    if (!this.scanDQContent(parts, false)) this.fail('syntax error: unterminated double quote (`"\')', start);
    this.pos++; // closing "
    this.depth--;
    return { type: 'DoubleQuoted', parts, span: span(start, this.pos) };
  }

  /**
   * Double-quote-like content from this.pos: up to the closing `"` (left at this.pos; returns true) or,
   * for a heredoc body, to this.len (returns false at end of input).
   */
  private scanDQContent(parts: WordPart[], heredoc: boolean): boolean {
    const text = this.text;
    const len = this.len;
    let i = this.pos;
    let lit = '';
    let litStart = -1;
    let runStart = i;
    let escaped = false;
    let closed = false;
    for (;;) {
      if (i >= len) break;
      const c = text.charCodeAt(i);
      if (c === C_DQUOTE && !heredoc) {
        closed = true;
        break;
      }
      if (c === C_BACKSLASH && i + 1 < len) {
        const n = text.charCodeAt(i + 1);
        if (n === C_DOLLAR || n === C_BACKTICK || n === C_BACKSLASH || n === C_NL || (n === C_DQUOTE && !heredoc)) {
          if (i > runStart) {
            if (litStart < 0) litStart = runStart;
            lit += text.slice(runStart, i);
          }
          if (n !== C_NL) {
            if (litStart < 0) litStart = i;
            lit += text[i + 1];
            escaped = true;
          }
          i += 2;
          runStart = i;
          continue;
        }
        i += 2;
        continue;
      }
      if (c === C_DOLLAR || c === C_BACKTICK) {
        this.pos = i;
        const part = c === C_DOLLAR ? this.parseDollar(true) : this.parseBacktick(true);
        if (part === null) {
          i++;
          continue;
        }
        if (i > runStart) {
          if (litStart < 0) litStart = runStart;
          lit += text.slice(runStart, i);
        }
        if (litStart >= 0 && lit.length > 0) this.literal(parts, lit, escaped, litStart, i);
        lit = '';
        litStart = -1;
        escaped = false;
        parts.push(part);
        i = this.pos;
        runStart = i;
        continue;
      }
      i++;
    }
    if (i > runStart) {
      if (litStart < 0) litStart = runStart;
      lit += text.slice(runStart, i);
    }
    if (litStart >= 0 && lit.length > 0) this.literal(parts, lit, escaped, litStart, i);
    this.pos = i;
    return closed;
  }

  /** At `$`: an expansion part, or null when the `$` is literal (this.pos unchanged then). */
  private parseDollar(inDouble: boolean): WordPart | null {
    const text = this.text;
    const start = this.pos;
    const k = this.skipCont(start + 1);
    const c = this.code(k);
    if (this.memo !== null && (c === C_LPAREN || c === C_LBRACE || c === C_LBRACKET)) {
      const m = this.memo.get(start);
      if (m !== undefined) {
        this.pos = m.end;
        return m.part;
      }
    }
    let part: WordPart;
    if (c === C_LPAREN) {
      const k2 = this.skipCont(k + 1);
      if (this.code(k2) === C_LPAREN) {
        this.pos = k2 + 1;
        this.enter(start);
        const body = this.scanArith(start, true);
        this.depth--;
        if (body !== null) {
          part = { type: 'Arith', expr: body.expr, subs: body.subs, span: span(start, this.pos) };
        } else {
          this.pos = start;
          part = this.parseComSub(k + 1);
        }
      } else {
        part = this.parseComSub(k + 1);
      }
    } else if (c === C_LBRACE) {
      part = this.parseBraced(inDouble, k + 1);
    } else if (c === C_LBRACKET) {
      this.pos = k + 1;
      this.enter(start);
      const body = this.scanArith(start, false)!;
      this.depth--;
      part = { type: 'Arith', expr: body.expr, subs: body.subs, span: span(start, this.pos) };
    } else if (isNameStart(c)) {
      let j = k + 1;
      let cont = false;
      for (;;) {
        if (isNameChar(this.code(j))) j++;
        else {
          const j2 = this.skipCont(j);
          if (j2 === j || !isNameChar(this.code(j2))) break;
          cont = true; // `$HO\<newline>ME` is `$HOME`
          j = j2;
        }
      }
      this.pos = j;
      const name = cont ? text.slice(k, j).replace(/\\\n/g, '') : text.slice(k, j);
      return { type: 'Param', name, braced: false, op: '', operands: [], span: span(start, j) };
    } else if (isDigit(c) || isSpecialParam(c)) {
      this.pos = k + 1;
      return { type: 'Param', name: text[k]!, braced: false, op: '', operands: [], span: span(start, k + 1) };
    } else if (c === C_SQUOTE && !inDouble) {
      // $'…'
      let j = k + 1;
      for (;;) {
        const d = this.code(j);
        if (d < 0) this.fail("syntax error: unterminated $'…' quote", start);
        if (d === C_BACKSLASH) j += 2;
        else if (d === C_SQUOTE) break;
        else j++;
      }
      this.pos = j + 1;
      return { type: 'AnsiC', value: decodeAnsiC(text, k + 1, j), span: span(start, j + 1) };
    } else if (c === C_DQUOTE && !inDouble) {
      this.pos = k;
      const dq = this.scanDouble() as { type: 'DoubleQuoted'; parts: WordPart[]; span: Span };
      dq.span.start = start;
      return dq;
    } else {
      return null;
    }
    if (this.arithAttempt > 0) {
      if (this.memo === null) this.memo = new Map();
      this.memo.set(start, { part, end: this.pos });
    }
    return part;
  }

  /** `$(` at this.pos; the body starts at bodyStart. */
  private parseComSub(bodyStart: number): WordPart {
    const start = this.pos;
    this.enter(start);
    this.pos = bodyStart;
    this.tkValid = false;
    const saved = this.pending;
    this.pending = [];
    this.comsubDepth++;
    const script = this.parseList(0);
    this.comsubDepth--;
    if (this.peek(M_ASSIGN) !== T_OP || this.top() !== ')') {
      if (this.tkKind === T_EOF) this.fail("syntax error: unexpected end of file, `)' expected to close `$('", start);
      this.unexpected();
    }
    this.next();
    this.pending = this.pending.length > 0 ? saved.concat(this.pending) : saved;
    this.depth--;
    return { type: 'CommandSub', script, backtick: false, span: span(start, this.pos) };
  }

  /** `<(` or `>(` at this.pos. */
  private parseProcSub(): WordPart {
    const start = this.pos;
    const op = this.code(start) === C_LT ? '<(' : '>(';
    this.enter(start);
    this.pos = this.skipCont(start + 1) + 1;
    this.tkValid = false;
    const saved = this.pending;
    this.pending = [];
    this.comsubDepth++;
    const script = this.parseList(0);
    this.comsubDepth--;
    if (this.peek(M_ASSIGN) !== T_OP || this.top() !== ')') {
      if (this.tkKind === T_EOF) this.fail(`syntax error: unexpected end of file, \`)' expected to close \`${op}'`, start);
      this.unexpected();
    }
    this.next();
    this.pending = this.pending.length > 0 ? saved.concat(this.pending) : saved;
    this.depth--;
    return { type: 'ProcessSub', op, script, span: span(start, this.pos) };
  }

  /** `` `…` `` at this.pos: un-escape the body, parse it recursively, map spans back. */
  private parseBacktick(inDouble: boolean): WordPart {
    const text = this.text;
    const start = this.pos;
    if (this.memo !== null) {
      const m = this.memo.get(start);
      if (m !== undefined) {
        this.pos = m.end;
        return m.part;
      }
    }
    this.enter(start);
    let i = start + 1;
    let inner = '';
    const offs: number[] = [];
    let runStart = i;
    for (;;) {
      if (i >= this.len) this.fail('syntax error: unterminated backquote (`)', start);
      const c = text.charCodeAt(i);
      if (c === C_BACKTICK) break;
      if (c === C_BACKSLASH && i + 1 < this.len) {
        const n = text.charCodeAt(i + 1);
        if (n === C_DOLLAR || n === C_BACKTICK || n === C_BACKSLASH || n === C_NL || (inDouble && n === C_DQUOTE)) {
          inner += text.slice(runStart, i);
          for (let k = runStart; k < i; k++) offs.push(k);
          if (n !== C_NL) {
            inner += text[i + 1];
            offs.push(i + 1);
          }
          i += 2;
          runStart = i;
          continue;
        }
        i += 2;
        continue;
      }
      i++;
    }
    inner += text.slice(runStart, i);
    for (let k = runStart; k < i; k++) offs.push(k);
    offs.push(i);
    const end = i + 1;
    const map = Int32Array.from(offs);
    const sub = new Parser(inner, this.maxDepth, this.depth, this, map);
    const script = sub.parseScript();
    remapSpans(script, map, inner.length);
    this.depth--;
    this.pos = end;
    const part: WordPart = { type: 'CommandSub', script, backtick: true, span: span(start, end) };
    if (this.arithAttempt > 0) {
      if (this.memo === null) this.memo = new Map();
      this.memo.set(start, { part, end });
    }
    return part;
  }

  /**
   * Arithmetic text from this.pos. `dparen`: ends at `))` (returns null when the first unbalanced `)` is
   * not followed by another `)`: then it is not arithmetic); otherwise ends at the matching `]`.
   * `openAt` is the offset of the construct for error messages.
   */
  private scanArith(openAt: number, dparen: boolean): ArithBody | null {
    const text = this.text;
    const exprStart = this.pos;
    const subs: WordPart[] = [];
    const semis: number[] = [];
    let level = 0;
    /** Open parens of this scan: (offset, subs.length) pairs; closed regions: (open, close, from, to). */
    let stack: number[] | null = null;
    let regions: number[] | null = null;
    this.arithAttempt++;
    for (;;) {
      const i = this.pos;
      if (i >= this.len) {
        this.arithAttempt--;
        this.fail(
          dparen
            ? "syntax error: unexpected end of file while looking for matching `))'"
            : "syntax error: unexpected end of file while looking for matching `]'",
          openAt,
        );
      }
      const c = text.charCodeAt(i);
      if (dparen ? c === C_LPAREN : c === C_LBRACKET) {
        if (dparen && this.parenMemo !== null) {
          // a region a failed `((` attempt already matched: skip it (keeps nested `((((…` linear)
          const m = this.parenMemo.get(i);
          if (m !== undefined) {
            for (const p of m.subs) subs.push(p);
            this.pos = m.close + 1;
            continue;
          }
        }
        level++;
        if (dparen) (stack ??= []).push(i, subs.length);
        this.pos++;
      } else if (dparen ? c === C_RPAREN : c === C_RBRACKET) {
        if (level === 0) {
          if (!dparen) {
            this.pos = i + 1;
            break;
          }
          if (this.code(i + 1) === C_RPAREN) {
            this.pos = i + 2;
            break;
          }
          this.arithAttempt--;
          if (regions !== null) {
            const memo = (this.parenMemo ??= new Map());
            for (let r = 0; r < regions.length; r += 4) {
              memo.set(regions[r]!, { close: regions[r + 1]!, subs: subs.slice(regions[r + 2]!, regions[r + 3]!) });
            }
          }
          return null;
        }
        level--;
        if (dparen && stack !== null) {
          const from = stack.pop()!;
          const open = stack.pop()!;
          (regions ??= []).push(open, i, from, subs.length);
        }
        this.pos++;
      } else if (c === C_SEMI && level === 0) {
        semis.push(i - exprStart);
        this.pos++;
      } else if (c === C_BACKSLASH) {
        this.pos += 2;
      } else if (c === C_SQUOTE) {
        this.scanSingle();
      } else if (c === C_DQUOTE) {
        const dq = this.scanDouble() as { parts: WordPart[] };
        for (const p of dq.parts) if (p.type !== 'Literal') subs.push(p);
      } else if (c === C_DOLLAR) {
        const p = this.parseDollar(false);
        if (p === null) this.pos++;
        else subs.push(p);
      } else if (c === C_BACKTICK) {
        subs.push(this.parseBacktick(false));
      } else this.pos++;
    }
    this.arithAttempt--;
    const exprEnd = this.pos - (dparen ? 2 : 1);
    return { expr: text.slice(exprStart, exprEnd), subs, semis };
  }

  /** A `$` at i that starts a nested substitution (`${`, `$(`, `$[`) rather than naming `$$`. */
  private dollarSub(i: number): boolean {
    if (this.code(i) !== C_DOLLAR) return false;
    const n = this.code(i + 1);
    return n === C_LBRACE || n === C_LPAREN || n === C_LBRACKET;
  }

  /** `${…}` at this.pos. */
  private parseBraced(inDouble: boolean, bodyStart: number): WordPart {
    const text = this.text;
    const start = this.pos;
    this.enter(start);
    // line continuations are skipped in the prefix and the name (`${HO\<newline>ME}` is `${HOME}`)
    let i = this.skipCont(bodyStart);
    let prefix: '#' | '!' | undefined;
    let c = this.code(i);
    if (c === C_HASH || c === C_BANG) {
      const i1 = this.skipCont(i + 1);
      const n = this.code(i1);
      if (n !== C_RBRACE && (isNameChar(n) || (isSpecialParam(n) && !this.dollarSub(i1))) && !(c === C_HASH && n === C_COLON)) {
        prefix = c === C_HASH ? '#' : '!';
        i = i1;
        c = n;
      }
    }
    let name = '';
    if (isNameStart(c) || isDigit(c)) {
      const digits = isDigit(c);
      let j = i + 1;
      let cont = false;
      for (;;) {
        const d = this.code(j);
        if (digits ? isDigit(d) : isNameChar(d)) j++;
        else {
          const j2 = this.skipCont(j);
          if (j2 === j || !(digits ? isDigit(this.code(j2)) : isNameChar(this.code(j2)))) break;
          cont = true;
          j = j2;
        }
      }
      name = cont ? text.slice(i, j).replace(/\\\n/g, '') : text.slice(i, j);
      i = j;
    } else if (isSpecialParam(c) && !this.dollarSub(i)) {
      name = text[i]!;
      i++;
    }
    let index: Word | undefined;
    let bad = false;
    if (name !== '' && this.code(i) === C_LBRACKET) {
      this.pos = i + 1;
      const w = this.scanUntilBracket(i, true);
      if (w !== null) {
        index = w;
        i = this.pos + 1;
      } else bad = true; // `${x[}`: no `]` before `}` — bash -n accepts, expansion fails at run time
    }
    let op = '';
    const operands: Word[] = [];
    c = this.code(i);
    if (c !== C_RBRACE) {
      const c1 = this.code(i + 1);
      let stop = -1;
      let second = false;
      if (name === '' || bad) {
        op = ''; // not a valid parameter: bash -n accepts, expansion fails at run time
      } else if (c === C_COLON) {
        if (c1 === C_MINUS || c1 === C_EQ || c1 === C_PLUS || c1 === C_QUESTION) op = text.slice(i, i + 2);
        else {
          op = ':';
          stop = C_COLON;
          second = true;
        }
      } else if (c === C_MINUS || c === C_EQ || c === C_PLUS || c === C_QUESTION) op = text[i]!;
      else if (c === C_HASH || c === C_PERCENT || c === C_CARET || c === C_COMMA) op = c1 === c ? text.slice(i, i + 2) : text[i]!;
      else if (c === C_SLASH) {
        op = c1 === C_SLASH || c1 === C_HASH || c1 === C_PERCENT ? text.slice(i, i + 2) : '/';
        stop = C_SLASH;
        second = true;
      } else if (c === C_AT) op = '@';
      else if ((c === C_STAR || c === C_AT) && prefix === '!') op = text[i]!;
      else op = '';
      i += op.length;
      this.pos = i;
      operands.push(this.scanOperand(stop, inDouble, start));
      if (second && this.code(this.pos) === stop) {
        this.pos++;
        operands.push(this.scanOperand(-1, inDouble, start));
      }
      if (op === '' && (name !== '' || bad)) op = '?'; // unknown operator: operand holds the rest
      i = this.pos;
    }
    if (this.code(i) !== C_RBRACE) this.fail("syntax error: unexpected end of file, `}' expected to close `${'", start);
    this.pos = i + 1;
    this.depth--;
    // `${#x}` / `${!x}` / `${!x[@]}`: op is the prefix (no operands), so `op === ''` keeps meaning "plain value"
    if (op === '' && prefix !== undefined) op = prefix;
    const part: WordPart = { type: 'Param', name, braced: true, op, operands, span: span(start, this.pos) };
    if (prefix !== undefined) part.prefix = prefix;
    if (index !== undefined) part.index = index;
    if (this.arithAttempt > 0) {
      if (this.memo === null) this.memo = new Map();
      this.memo.set(start, { part, end: this.pos });
    }
    return part;
  }

  /** An operand inside `${…}` from this.pos up to the closing `}` (or `stop`). */
  private scanOperand(stop: number, inDouble: boolean, openAt: number): Word {
    const text = this.text;
    const start = this.pos;
    const parts: WordPart[] = [];
    let i = start;
    let lit = '';
    let litStart = -1;
    let runStart = i;
    let escaped = false;
    for (;;) {
      if (i >= this.len) this.fail("syntax error: unexpected end of file, `}' expected to close `${'", openAt);
      const c = text.charCodeAt(i);
      // bash does not count nested braces here: `${x:-{a}b}` is `{a` followed by `b}`
      if (c === C_RBRACE) break;
      if (c === stop) break;
      if (c === C_BACKSLASH && i + 1 < this.len) {
        if (i > runStart) {
          if (litStart < 0) litStart = runStart;
          lit += text.slice(runStart, i);
        }
        if (text.charCodeAt(i + 1) !== C_NL) {
          if (litStart < 0) litStart = i;
          lit += text[i + 1];
          escaped = true;
        }
        i += 2;
        runStart = i;
        continue;
      }
      if ((c === C_SQUOTE && !inDouble) || c === C_DQUOTE || c === C_DOLLAR || c === C_BACKTICK) {
        this.pos = i;
        const part =
          c === C_SQUOTE ? this.scanSingle() : c === C_DQUOTE ? this.scanDouble() : c === C_DOLLAR ? this.parseDollar(inDouble) : this.parseBacktick(inDouble);
        if (part === null) {
          i++;
          continue;
        }
        if (i > runStart) {
          if (litStart < 0) litStart = runStart;
          lit += text.slice(runStart, i);
        }
        if (litStart >= 0 && lit.length > 0) this.literal(parts, lit, escaped, litStart, i);
        lit = '';
        litStart = -1;
        escaped = false;
        parts.push(part);
        i = this.pos;
        runStart = i;
        continue;
      }
      i++;
    }
    if (i > runStart) {
      if (litStart < 0) litStart = runStart;
      lit += text.slice(runStart, i);
    }
    if (litStart >= 0 && lit.length > 0) this.literal(parts, lit, escaped, litStart, i);
    this.pos = i;
    return { type: 'Word', parts, raw: text.slice(start, i), span: span(start, i) };
  }

  /** Subscript text from this.pos (after `[`) to the matching `]` (left at this.pos). */
  private scanUntilBracket(openAt: number): Word;
  private scanUntilBracket(openAt: number, stopAtBrace: true): Word | null;
  private scanUntilBracket(openAt: number, stopAtBrace = false): Word | null {
    const text = this.text;
    const start = this.pos;
    this.enter(openAt);
    const parts: WordPart[] = [];
    let level = 0;
    let i = start;
    let runStart = i;
    for (;;) {
      if (i >= this.len) this.fail("syntax error: unexpected end of file while looking for matching `]'", openAt);
      const c = text.charCodeAt(i);
      if (c === C_RBRACKET) {
        if (level === 0) break;
        level--;
        i++;
      } else if (c === C_RBRACE && stopAtBrace) {
        this.depth--;
        return null;
      } else if (c === C_LBRACKET) {
        level++;
        i++;
      } else if (c === C_BACKSLASH) {
        i += 2;
      } else if (c === C_SQUOTE || c === C_DQUOTE || c === C_DOLLAR || c === C_BACKTICK) {
        this.pos = i;
        const part =
          c === C_SQUOTE ? this.scanSingle() : c === C_DQUOTE ? this.scanDouble() : c === C_DOLLAR ? this.parseDollar(false) : this.parseBacktick(false);
        if (part === null) {
          i++;
          continue;
        }
        if (i > runStart) this.literal(parts, text.slice(runStart, i), false, runStart, i);
        parts.push(part);
        i = this.pos;
        runStart = i;
      } else i++;
    }
    if (i > runStart) this.literal(parts, text.slice(runStart, i), false, runStart, i);
    this.pos = i;
    this.depth--;
    return { type: 'Word', parts, raw: text.slice(start, i), span: span(start, i) };
  }

  /** `(…)` of `name=(…)` at this.pos; element parts are appended to `parts` too. */
  private scanArray(parts: WordPart[]): Word[] {
    const open = this.pos;
    this.enter(open);
    this.pos = open + 1;
    this.tkValid = false;
    this.literal(parts, '(', false, open, open + 1);
    const elems: Word[] = [];
    for (;;) {
      const k = this.skipNewlines(M_ARRAY);
      if (k === T_OP && this.top() === ')') {
        this.next();
        break;
      }
      if (k === T_EOF) this.fail("syntax error: unexpected end of file, `)' expected to close `=('", open);
      if (k !== T_WORD) this.unexpected();
      const w = this.tkWord!;
      this.next();
      if (elems.length > 0) this.literal(parts, ' ', false, w.span.start, w.span.start);
      for (const p of w.parts) parts.push(p);
      elems.push(w);
    }
    this.literal(parts, ')', false, this.pos - 1, this.pos);
    this.depth--;
    return elems;
  }

  // ---------------------------------------------------------------- heredocs

  private gatherHeredocs(): void {
    const list = this.pending;
    this.pending = [];
    for (const h of list) this.readHeredoc(h.doc);
  }

  /** Read one heredoc body from this.pos; leaves this.pos after the delimiter line. */
  private readHeredoc(doc: HereDoc): void {
    const text = this.text;
    const len = this.len;
    const delim = doc.delimiter;
    const bodyStart = this.pos;
    let i = bodyStart;
    let body = '';
    /** No tab stripped and no line joined so far: the body is a plain slice of the text. */
    let plain = true;
    let bodyEnd = len;
    let end = len;
    while (i < len) {
      const lineStart = i;
      let nl = text.indexOf('\n', i);
      if (nl < 0 || nl > len) nl = len;
      let s = lineStart;
      if (doc.stripTabs) while (s < nl && text.charCodeAt(s) === C_TAB) s++;
      let lineEnd = nl;
      let joined: string | null = null;
      if (!doc.quoted) {
        // `\<newline>` joins lines in an unquoted body
        let bs = 0;
        for (let k = nl - 1; k >= s && text.charCodeAt(k) === C_BACKSLASH; k--) bs++;
        while (bs % 2 === 1 && lineEnd < len) {
          joined = (joined ?? text.slice(s, lineEnd - 1)) ;
          let nl2 = text.indexOf('\n', lineEnd + 1);
          if (nl2 < 0 || nl2 > len) nl2 = len;
          const seg = text.slice(lineEnd + 1, nl2);
          bs = 0;
          for (let k = nl2 - 1; k > lineEnd && text.charCodeAt(k) === C_BACKSLASH; k--) bs++;
          joined += bs % 2 === 1 && nl2 < len ? seg.slice(0, -1) : seg;
          lineEnd = nl2;
        }
      }
      const matches =
        joined !== null ? joined === delim : lineEnd - s === delim.length && text.startsWith(delim, s);
      if (matches) {
        bodyEnd = lineStart;
        end = lineEnd < len ? lineEnd + 1 : len;
        break;
      }
      if (this.comsubDepth > 0 && joined === null && text.startsWith(delim, s)) {
        // bash 5.2: inside `$( … )` a line that starts with the delimiter and contains a `)` anywhere
        // after it (`EOF)`, `EOF;; esac)`, `EOFx)`) ends the body; the rest of the line is read as input
        const k = text.indexOf(')', s + delim.length);
        if (k >= 0 && k < lineEnd) {
          bodyEnd = lineStart;
          end = s + delim.length;
          i = end;
          break;
        }
      }
      if (joined !== null || s > lineStart) {
        if (plain) {
          body = text.slice(bodyStart, lineStart);
          plain = false;
        }
        body += joined !== null ? joined + (lineEnd < len ? '\n' : '') : text.slice(s, lineEnd < len ? lineEnd + 1 : len);
      } else if (!plain) body += text.slice(s, lineEnd < len ? lineEnd + 1 : len);
      i = lineEnd < len ? lineEnd + 1 : len;
    }
    if (i >= len) {
      bodyEnd = len;
      end = len;
    }
    doc.body = plain ? text.slice(bodyStart, bodyEnd) : body;
    doc.span = span(bodyStart, end);
    if (!doc.quoted) doc.word = this.parseHeredocWord(bodyStart, bodyEnd);
    this.pos = end;
  }

  private parseHeredocWord(start: number, end: number): Word {
    const savedLen = this.len;
    const savedPending = this.pending;
    const savedDepth = this.depth;
    const raw = this.text.slice(start, end);
    this.len = end;
    this.pending = [];
    this.pos = start;
    this.tkValid = false;
    let parts: WordPart[] = [];
    try {
      this.scanDQContent(parts, true);
    } catch (e) {
      if (e instanceof ParseError && !e.message.startsWith('nesting too deep')) {
        parts = raw.length > 0 ? [{ type: 'Literal', value: raw, escaped: false, span: span(start, end) }] : [];
      } else throw e;
    } finally {
      this.len = savedLen;
      this.pending = savedPending;
      this.depth = savedDepth;
      this.tkValid = false;
    }
    return { type: 'Word', parts, raw, span: span(start, end) };
  }

  // ---------------------------------------------------------------- command lists

  parseScript(): Script {
    const list = this.parseList(0);
    if (this.peek(M_ASSIGN) !== T_EOF) this.unexpected();
    // heredocs never followed by a newline: delimited by end of file (a bash warning, not an error)
    for (const h of this.pending) {
      h.doc.span = span(this.len, this.len);
      if (!h.doc.quoted) h.doc.word = { type: 'Word', parts: [], raw: '', span: span(this.len, this.len) };
    }
    this.pending = [];
    return list;
  }

  /**
   * A compound list: and-or lists separated by `;`, `&`, newlines. Stops (without consuming) at end of
   * input, `)`, `;;`/`;&`/`;;&`, or a reserved word in `stop` in command position.
   */
  private parseList(stop: number): List {
    const items: List['items'] = [];
    let start = -1;
    let end = this.pos;
    for (;;) {
      const k = this.skipNewlines(M_ASSIGN);
      if (k === T_EOF) break;
      if (k === T_OP && (this.top() === ')' || this.top() === ';;' || this.top() === ';&' || this.top() === ';;&')) break;
      if (k === T_WORD && stop !== 0) {
        const r = this.reserved();
        if (r !== null && ((STOP_BITS[r] ?? 0) & stop) !== 0) break;
      }
      if (start < 0) start = this.tkStart;
      const cmd = this.parseAndOr();
      end = cmd.span.end;
      const k2 = this.peek(M_NORMAL);
      if (k2 === T_OP && (this.top() === ';' || this.top() === '&' || this.top() === '\n')) {
        const sep = this.tkOp as ';' | '&' | '\n';
        if (sep !== '\n') end = this.tkStart + 1;
        this.next();
        items.push({ command: cmd, separator: sep });
        continue;
      }
      items.push({ command: cmd, separator: null });
      break;
    }
    if (start < 0) start = end = this.tkValid ? this.tkStart : this.pos;
    return { type: 'List', items, span: span(start, end) };
  }

  private parseNonEmptyList(stop: number, close: string, what: string, openAt: number): List {
    const l = this.parseList(stop);
    if (l.items.length === 0) {
      if (this.peek(M_ASSIGN) === T_EOF) {
        this.fail(`syntax error: unexpected end of file, \`${close}' expected to close ${what}`, openAt);
      }
      this.unexpected();
    }
    return l;
  }

  private parseAndOr(): Command {
    const first = this.parsePipeline();
    let k = this.peek(M_NORMAL);
    if (k !== T_OP || (this.top() !== '&&' && this.top() !== '||')) return first;
    const rest: { op: '&&' | '||'; command: Command }[] = [];
    let end = first.span.end;
    while (k === T_OP && (this.top() === '&&' || this.top() === '||')) {
      const op = this.tkOp as '&&' | '||';
      this.next();
      this.skipNewlines(M_ASSIGN);
      const cmd = this.parsePipeline();
      rest.push({ op, command: cmd });
      end = cmd.span.end;
      k = this.peek(M_NORMAL);
    }
    return { type: 'AndOr', first, rest, span: span(first.span.start, end) };
  }

  private parsePipeline(): Command {
    this.peek(M_ASSIGN);
    const start = this.tkStart;
    let negated = false;
    let timed = false;
    let timePosix = false;
    let prefixEnd = start;
    for (;;) {
      const r = this.reserved();
      if (r === '!') {
        negated = !negated;
        prefixEnd = this.tkEnd;
        this.next();
      } else if (r === 'time') {
        timed = true;
        prefixEnd = this.tkEnd;
        this.next();
        if (this.peek(M_NORMAL) === T_WORD && this.tkWord!.raw === '-p') {
          timePosix = true;
          prefixEnd = this.tkEnd;
          this.next();
          if (this.peek(M_NORMAL) === T_WORD && this.wordRaw() === '--') {
            prefixEnd = this.tkEnd;
            this.next();
          }
        }
      } else break;
      this.peek(M_ASSIGN);
    }
    if (prefixEnd > start && (this.tkKind === T_EOF || (this.tkKind === T_OP && (this.top() === ';' || this.top() === '\n')))) {
      const p: Pipeline = { type: 'Pipeline', negated, timed, commands: [], pipeStderr: [], span: span(start, prefixEnd) };
      if (timed) p.timePosix = timePosix;
      return p;
    }
    const commands: Command[] = [this.parseCommand()];
    const pipeStderr: boolean[] = [];
    for (;;) {
      const k = this.peek(M_NORMAL);
      if (k !== T_OP || (this.top() !== '|' && this.top() !== '|&')) break;
      pipeStderr.push(this.top() === '|&');
      this.next();
      this.skipNewlines(M_ASSIGN);
      commands.push(this.parseCommand());
    }
    const last = commands[commands.length - 1]!;
    if (commands.length === 1 && prefixEnd === start) return last;
    const p: Pipeline = { type: 'Pipeline', negated, timed, commands, pipeStderr, span: span(start, last.span.end) };
    if (timed) p.timePosix = timePosix;
    return p;
  }

  // ---------------------------------------------------------------- commands

  private parseCommand(): Command {
    const k = this.peek(M_ASSIGN);
    if (k === T_OP) {
      if (this.top() === '(') {
        if (this.code(this.tkStart + 1) === C_LPAREN) return this.parseArithCommand();
        return this.parseSubshell();
      }
      if (REDIRECT_OPS.has(this.tkOp)) return this.parseSimple();
      this.unexpected();
    }
    if (k === T_IONUM) return this.parseSimple();
    if (k === T_EOF) this.unexpected();
    const r = this.reserved();
    if (r !== null) {
      switch (r) {
        case '{':
          return this.parseGroup();
        case 'if':
          return this.parseIf();
        case 'while':
        case 'until':
          return this.parseLoop(r);
        case 'for':
        case 'select':
          return this.parseFor(r);
        case 'case':
          return this.parseCase();
        case 'function':
          return this.parseFunctionKeyword();
        case '[[':
          return this.parseCond();
        case 'coproc':
          return this.parseCoproc();
        case 'time':
          break; // ordinary words here (`time` after `|` is the external command, like bash)
        default:
          this.unexpected();
      }
    }
    return this.parseSimple();
  }

  /** Trailing redirections of a compound command. */
  private parseRedirects(): Redirect[] {
    const list: Redirect[] = [];
    for (;;) {
      const k = this.peek(M_NORMAL);
      if (k === T_IONUM || (k === T_OP && REDIRECT_OPS.has(this.tkOp))) list.push(this.parseRedirect());
      else return list;
    }
  }

  private withRedirects(node: Command & { redirects: Redirect[] }): Command {
    const r = this.parseRedirects();
    if (r.length > 0) {
      node.redirects = r;
      node.span.end = r[r.length - 1]!.span.end;
    }
    return node;
  }

  private parseRedirect(): Redirect {
    const start = this.tkStart;
    let fd: number | string | undefined;
    if (this.tkKind === T_IONUM) {
      fd = this.tkFd;
      this.next();
      if (this.peek(M_NORMAL) !== T_OP || !REDIRECT_OPS.has(this.tkOp)) this.unexpected();
    }
    const op = this.tkOp;
    this.next();
    if (this.peek(M_NORMAL) !== T_WORD) this.unexpected();
    const w = this.tkWord!;
    this.next();
    const r: Redirect = { type: 'Redirect', op, target: w, span: span(start, w.span.end) };
    if (fd !== undefined) r.fd = fd;
    if (op === '<<' || op === '<<-') {
      // line continuations are not part of the delimiter (`<<E\<newline>OF` is an unquoted `EOF`)
      const raw = w.raw.includes('\\\n') ? w.raw.replace(/\\\n/g, '') : w.raw;
      const quoted = raw.includes("'") || raw.includes('"') || raw.includes('\\');
      const doc: HereDoc = {
        delimiter: quoted ? unquoteDelimiter(raw) : raw,
        quoted,
        stripTabs: op === '<<-',
        body: '',
        word: null,
        span: span(this.len, this.len),
      };
      r.target = null;
      r.heredoc = doc;
      this.pending.push({ doc });
    }
    return r;
  }

  private parseSimple(): Command {
    this.peek(M_ASSIGN);
    const start = this.tkStart;
    const assignments: Assignment[] = [];
    const words: Word[] = [];
    const redirects: Redirect[] = [];
    let end = start;
    let decl = false;
    for (;;) {
      const k = this.peek(words.length === 0 || decl ? M_ASSIGN : M_NORMAL);
      if (k === T_WORD) {
        const w = this.tkWord!;
        const a = this.tkAssign;
        this.next();
        end = w.span.end;
        if (words.length === 0 && a !== null) {
          const as: Assignment = { type: 'Assignment', name: a.name, append: a.append, value: a.array ? null : a.value, span: w.span };
          if (a.index !== undefined) {
            as.index = a.index;
            as.indexWord = a.indexWord!;
          }
          if (a.array) as.array = a.array;
          assignments.push(as);
          continue;
        }
        words.push(w);
        if (words.length === 1) {
          decl = DECLARATION_BUILTINS.has(w.raw);
          if (assignments.length === 0 && redirects.length === 0) {
            if (this.peek(M_NORMAL) === T_OP && this.top() === '(') return this.parseFunctionDef(w);
          }
        }
      } else if (k === T_IONUM || (k === T_OP && REDIRECT_OPS.has(this.tkOp))) {
        const r = this.parseRedirect();
        redirects.push(r);
        end = r.span.end;
        decl = false; // bash: after a redirection, `name=(…)` arguments are no longer recognised
      } else break;
    }
    if (assignments.length === 0 && words.length === 0 && redirects.length === 0) this.unexpected();
    const node: SimpleCommandNode = { type: 'Simple', assignments, words, redirects, span: span(start, end) };
    return node;
  }

  /** `name ( )` seen up to `(`: the rest of a function definition. */
  private parseFunctionDef(name: Word): Command {
    this.next(); // (
    this.expectOp(')', 'the function definition', name.span.start);
    return this.functionBody(name.raw, name.span.start);
  }

  private functionBody(name: string, start: number): Command {
    this.enter(start);
    this.skipNewlines(M_ASSIGN);
    const body = this.parseCompoundOnly();
    this.depth--;
    return { type: 'Function', name, body, span: span(start, body.span.end) };
  }

  /** A compound command (function body): `{`, `(`, `((`, if, while, until, for, select, case, [[. */
  private parseCompoundOnly(): Command {
    const k = this.peek(M_ASSIGN);
    if (k === T_OP && this.top() === '(') return this.parseCommand();
    const r = this.reserved();
    if (r === '{' || r === 'if' || r === 'while' || r === 'until' || r === 'for' || r === 'select' || r === 'case' || r === '[[') {
      return this.parseCommand();
    }
    this.unexpected();
  }

  private parseFunctionKeyword(): Command {
    const start = this.tkStart;
    this.next();
    if (this.peek(M_NORMAL) !== T_WORD) this.unexpected();
    const name = this.tkWord!.raw;
    this.next();
    if (this.peek(M_NORMAL) === T_OP && this.top() === '(') {
      this.next();
      this.expectOp(')', 'the function definition', start);
    }
    return this.functionBody(name, start);
  }

  private parseSubshell(): Command {
    const start = this.tkStart;
    this.enter(start);
    this.next();
    const body = this.parseNonEmptyList(0, ')', 'the subshell', start);
    this.expectOp(')', 'the subshell', start);
    this.depth--;
    return this.withRedirects({ type: 'Subshell', body, redirects: [], span: span(start, this.pos) });
  }

  private parseArithCommand(): Command {
    const start = this.tkStart;
    this.pos = start + 2;
    this.tkValid = false;
    this.enter(start);
    const body = this.scanArith(start, true);
    this.depth--;
    if (body === null) {
      // `( (…) …)`: a subshell whose first command is a subshell
      this.pos = start;
      this.tkValid = false;
      this.peek(M_ASSIGN);
      return this.parseSubshell();
    }
    return this.withRedirects({ type: 'ArithCommand', expr: body.expr, subs: body.subs, redirects: [], span: span(start, this.pos) });
  }

  private parseGroup(): Command {
    const start = this.tkStart;
    this.enter(start);
    this.next();
    const body = this.parseNonEmptyList(S_RBRACE, '}', 'the group', start);
    this.expectWord('}', 'the group', start);
    this.depth--;
    return this.withRedirects({ type: 'Group', body, redirects: [], span: span(start, this.pos) });
  }

  private parseIf(): Command {
    const start = this.tkStart;
    this.enter(start);
    this.next();
    const clauses: { condition: List; body: List }[] = [];
    let elseBody: List | null = null;
    for (;;) {
      const condition = this.parseNonEmptyList(S_THEN, 'then', '`if\'', start);
      this.expectWord('then', '`if\'', start);
      const body = this.parseNonEmptyList(S_ELIF | S_ELSE | S_FI, 'fi', '`if\'', start);
      clauses.push({ condition, body });
      this.peek(M_ASSIGN);
      const r = this.reserved();
      if (r === 'elif') {
        this.next();
        continue;
      }
      if (r === 'else') {
        this.next();
        elseBody = this.parseNonEmptyList(S_FI, 'fi', '`if\'', start);
      }
      this.expectWord('fi', '`if\'', start);
      break;
    }
    this.depth--;
    return this.withRedirects({ type: 'If', clauses, elseBody, redirects: [], span: span(start, this.pos) });
  }

  private parseLoop(kind: 'while' | 'until'): Command {
    const start = this.tkStart;
    this.enter(start);
    this.next();
    const condition = this.parseNonEmptyList(S_DO, 'do', `\`${kind}'`, start);
    this.expectWord('do', `\`${kind}'`, start);
    const body = this.parseNonEmptyList(S_DONE, 'done', `\`${kind}'`, start);
    this.expectWord('done', `\`${kind}'`, start);
    this.depth--;
    return this.withRedirects({
      type: kind === 'while' ? 'While' : 'Until',
      condition,
      body,
      redirects: [],
      span: span(start, this.pos),
    });
  }

  /** `do … done` or `{ … }` body of for/select. */
  private parseForBody(what: string, start: number): List {
    this.peek(M_ASSIGN);
    const r = this.reserved();
    if (r === 'do') {
      this.next();
      const body = this.parseNonEmptyList(S_DONE, 'done', what, start);
      this.expectWord('done', what, start);
      return body;
    }
    if (r === '{') {
      this.next();
      const body = this.parseNonEmptyList(S_RBRACE, '}', what, start);
      this.expectWord('}', what, start);
      return body;
    }
    if (this.tkKind === T_EOF) this.fail(`syntax error: unexpected end of file, \`do' expected in ${what}`, start);
    this.unexpected();
  }

  private parseFor(kind: 'for' | 'select'): Command {
    const start = this.tkStart;
    this.enter(start);
    this.next();
    const what = `\`${kind}'`;
    let k = this.peek(M_NORMAL);
    if (kind === 'for' && k === T_OP && this.top() === '(' && this.code(this.tkStart + 1) === C_LPAREN) {
      const at = this.tkStart;
      this.pos = at + 2;
      this.tkValid = false;
      this.enter(at);
      const b = this.scanArith(at, true);
      this.depth--;
      if (b === null || b.semis.length !== 2) this.fail('syntax error: `for ((init; condition; step))\' expected', at);
      const expr = b.expr;
      const s0 = b.semis[0]!;
      const s1 = b.semis[1]!;
      k = this.peek(M_ASSIGN);
      if (k === T_OP && (this.top() === ';' || this.top() === '\n')) {
        this.next();
        this.skipNewlines(M_ASSIGN);
      }
      const body = this.parseForBody(what, start);
      this.depth--;
      return this.withRedirects({
        type: 'ArithFor',
        init: expr.slice(0, s0).trim(),
        condition: expr.slice(s0 + 1, s1).trim(),
        step: expr.slice(s1 + 1).trim(),
        subs: b.subs,
        body,
        redirects: [],
        span: span(start, this.pos),
      });
    }
    if (k !== T_WORD) this.unexpected();
    const variable = this.tkWord!.raw;
    this.next();
    let items: Word[] | null = null;
    k = this.peek(M_ASSIGN);
    if (k === T_OP && this.top() === ';') {
      this.next();
      this.skipNewlines(M_ASSIGN);
    } else {
      this.skipNewlines(M_ASSIGN);
      if (this.isWord('in')) {
        this.next();
        items = [];
        for (;;) {
          k = this.peek(M_NORMAL);
          if (k !== T_WORD) break;
          items.push(this.tkWord!);
          this.next();
        }
        if (k === T_OP && (this.top() === ';' || this.top() === '\n')) this.next();
        else if (k !== T_EOF) this.unexpected();
        this.skipNewlines(M_ASSIGN);
      }
    }
    const body = this.parseForBody(what, start);
    this.depth--;
    const node: For = { type: kind === 'for' ? 'For' : 'Select', variable, items, body, redirects: [], span: span(start, this.pos) };
    return this.withRedirects(node);
  }

  private parseCase(): Command {
    const start = this.tkStart;
    this.enter(start);
    this.next();
    if (this.peek(M_NORMAL) !== T_WORD) this.unexpected();
    const word = this.tkWord!;
    this.next();
    this.skipNewlines(M_ASSIGN);
    if (!this.isWord('in')) {
      if (this.tkKind === T_EOF) this.fail("syntax error: unexpected end of file, `in' expected in `case'", start);
      this.unexpected();
    }
    this.next();
    const items: Case['items'] = [];
    for (;;) {
      let k = this.skipNewlines(M_NORMAL);
      if (this.isWord('esac')) {
        this.next();
        break;
      }
      if (k === T_EOF) this.fail("syntax error: unexpected end of file, `esac' expected to close `case'", start);
      if (k === T_OP && this.top() === '(') {
        this.next();
        k = this.peek(M_NORMAL);
      }
      const patterns: Word[] = [];
      for (;;) {
        if (k !== T_WORD) this.unexpected();
        patterns.push(this.tkWord!);
        this.next();
        k = this.peek(M_NORMAL);
        if (k === T_OP && this.top() === '|') {
          this.next();
          k = this.peek(M_NORMAL);
          continue;
        }
        if (k === T_OP && this.top() === ')') {
          this.next();
          break;
        }
        this.unexpected();
      }
      const body = this.parseList(S_ESAC);
      k = this.peek(M_ASSIGN);
      if (k === T_OP && (this.top() === ';;' || this.top() === ';&' || this.top() === ';;&')) {
        items.push({ patterns, body, terminator: this.tkOp as ';;' | ';&' | ';;&' });
        this.next();
        continue;
      }
      items.push({ patterns, body, terminator: null });
      if (this.isWord('esac')) {
        this.next();
        break;
      }
      if (k === T_EOF) this.fail("syntax error: unexpected end of file, `esac' expected to close `case'", start);
      this.unexpected();
    }
    this.depth--;
    return this.withRedirects({ type: 'Case', word, items, redirects: [], span: span(start, this.pos) });
  }

  private parseCoproc(): Command {
    const start = this.tkStart;
    this.enter(start);
    this.next();
    let k = this.peek(M_ASSIGN);
    let body: Command;
    let name: string | null = null;
    const compoundStart = (): boolean => {
      if (this.tkKind === T_OP) return this.top() === '(';
      const r = this.reserved();
      return r === '{' || r === 'if' || r === 'while' || r === 'until' || r === 'for' || r === 'select' || r === 'case' || r === '[[';
    };
    if (compoundStart()) {
      body = this.parseCommand();
    } else if (k === T_WORD && (this.reserved() === null || this.reserved() === 'time') && this.tkAssign === null) {
      // `coproc NAME compound` or `coproc simple command` (`time` is an ordinary word here)
      const w = this.tkWord!;
      const save = this.pos;
      this.next();
      k = this.peek(M_ASSIGN);
      if (compoundStart()) {
        name = w.raw;
        body = this.parseCommand();
      } else if (this.reserved() !== null) {
        this.unexpected(); // bash recognises reserved words after `coproc WORD`
      } else {
        this.pos = save;
        this.tkValid = false;
        body = this.parseSimple();
      }
    } else {
      // a simple command (`time` is an ordinary word here); other reserved words are errors
      const r = this.reserved();
      if (r !== null && r !== 'time') this.unexpected();
      body = this.parseSimple();
    }
    this.depth--;
    return { type: 'Coproc', name, body, span: span(start, body.span.end) };
  }

  // ---------------------------------------------------------------- [[ … ]]

  private condWords: Word[] = [];

  private opWord(op: string, start: number): Word {
    return {
      type: 'Word',
      parts: [{ type: 'Literal', value: op, escaped: false, span: span(start, start + op.length) }],
      raw: op,
      span: span(start, start + op.length),
    };
  }

  private parseCond(): Command {
    const start = this.tkStart;
    this.enter(start);
    this.next();
    const saved = this.condWords;
    this.condWords = [];
    this.condOr(start);
    const k = this.peek(M_COND);
    if (!(k === T_WORD && this.tkWord!.raw === ']]')) {
      if (k === T_EOF) this.fail("syntax error: unexpected end of file, `]]' expected to close `[['", start);
      this.fail(`syntax error in conditional expression: unexpected token \`${this.tokenText()}'`, this.tkStart);
    }
    this.next();
    const words = this.condWords;
    this.condWords = saved;
    this.depth--;
    return this.withRedirects({ type: 'Test', words, redirects: [], span: span(start, this.pos) });
  }

  private condOr(openAt: number): void {
    this.condAnd(openAt);
    for (;;) {
      const k = this.peek(M_COND);
      if (k === T_OP && this.top() === '||') {
        this.condWords.push(this.opWord('||', this.tkStart));
        this.next();
        this.condAnd(openAt);
      } else return;
    }
  }

  private condAnd(openAt: number): void {
    this.condTerm(openAt);
    for (;;) {
      const k = this.peek(M_COND);
      if (k === T_OP && this.top() === '&&') {
        this.condWords.push(this.opWord('&&', this.tkStart));
        this.next();
        this.condTerm(openAt);
      } else return;
    }
  }

  private condError(openAt: number): never {
    if (this.tkKind === T_EOF) this.fail("syntax error: unexpected end of file, `]]' expected to close `[['", openAt);
    this.fail(`syntax error in conditional expression: unexpected token \`${this.tokenText()}'`, this.tkStart);
  }

  private condTerm(openAt: number): void {
    const k = this.skipNewlines(M_COND);
    if (k === T_OP && this.top() === '(') {
      const at = this.tkStart;
      this.enter(at);
      this.condWords.push(this.opWord('(', at));
      this.next();
      this.condOr(openAt);
      if (this.peek(M_COND) !== T_OP || this.top() !== ')') this.condError(openAt);
      this.condWords.push(this.opWord(')', this.tkStart));
      this.next();
      this.depth--;
      this.skipNewlines(M_COND);
      return;
    }
    if (k !== T_WORD) this.condError(openAt);
    const w = this.tkWord!;
    const raw = w.raw;
    // `[[ ]]`, `[[ a && ]]`, `[[ ! ]]`: bash -n exits 0 without a message, but bash silently stops
    // reading the input there (nothing from that line on runs): a syntax error
    if (raw === ']]') this.fail('syntax error in conditional expression: empty expression', w.span.start);
    if (raw === '!') {
      this.enter(w.span.start);
      this.condWords.push(w);
      this.next();
      this.condTerm(openAt);
      this.depth--;
      return;
    }
    this.next();
    this.condWords.push(w);
    if (COND_UNARY.has(raw)) {
      if (this.peek(M_COND) !== T_WORD || this.tkWord!.raw === ']]') {
        if (this.tkKind === T_EOF) this.condError(openAt);
        this.fail(`syntax error: unexpected argument \`${this.tokenText()}' to conditional unary operator`, this.tkStart);
      }
      this.condWords.push(this.tkWord!);
      this.next();
      this.skipNewlines(M_COND);
      return;
    }
    // binary operator?
    const k2 = this.peek(M_COND);
    let mode = M_COND;
    if (k2 === T_WORD && COND_BINARY.has(this.tkWord!.raw)) {
      const op = this.tkWord!.raw;
      if (op === '=~') mode = M_REGEX;
      else if (op === '=' || op === '==' || op === '!=') mode = M_EXTPAT;
      this.condWords.push(this.tkWord!);
      this.next();
    } else if (k2 === T_OP && (this.top() === '<' || this.top() === '>')) {
      this.condWords.push(this.opWord(this.tkOp, this.tkStart));
      this.next();
    } else if (
      (k2 === T_WORD && this.tkWord!.raw === ']]') ||
      (k2 === T_OP && (this.top() === '&&' || this.top() === '||' || this.top() === ')'))
    ) {
      return;
    } else {
      if (k2 === T_EOF) this.condError(openAt);
      this.fail(`syntax error: conditional binary operator expected, found \`${this.tokenText()}'`, this.tkStart);
    }
    if (this.peek(mode) !== T_WORD || this.tkWord!.raw === ']]') {
      if (this.tkKind === T_EOF) this.condError(openAt);
      this.fail(`syntax error: unexpected argument \`${this.tokenText()}' to conditional binary operator`, this.tkStart);
    }
    this.condWords.push(this.tkWord!);
    this.next();
    this.skipNewlines(M_COND);
  }
}
