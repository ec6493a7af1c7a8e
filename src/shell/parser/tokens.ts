// Reading tokens: the parser state, errors with positions in the original text, the nesting limit, and the on-demand tokenizer (operators, words, IO numbers) with its one-token cache.
// Part of the parser (src/shell/parser.ts); the layers, lowest first: tokens, words, expansions, arith,
// heredocs, conditionals, grammar. A layer calls up into a later one through an abstract method.
import type { Assignment, Command, For, HereDoc, Span, Word, WordPart } from '../ast.js';
import { ParseError, positionAt } from '../../errors.js';
import { C_AMP, C_BACKSLASH, C_GT, C_HASH, C_LBRACE, C_LPAREN, C_LT, C_MINUS, C_NL, C_PIPE, C_RBRACE, C_RPAREN, C_SEMI, C_SPACE, C_TAB, RESERVED, isDigit, isNameChar, isNameStart } from '../lexer.js';

// Token kinds.
export const T_EOF = 0;
export const T_WORD = 1;
export const T_OP = 2;
export const T_IONUM = 3;

// Lexing modes for words.
export const M_NORMAL = 0;
/** Command prefix: `name=`, `name[…]=`, `name=(…)` are recognised. */
export const M_ASSIGN = 1;
/** Inside `[[ ]]`: `<` `>` are single-character operators. */
export const M_COND = 2;
/** Right of `==`/`!=`/`=` in `[[ ]]`: extglob patterns are words. */
export const M_EXTPAT = 3;
/** Right of `=~` in `[[ ]]`: `(…)` and `|` belong to the word. */
export const M_REGEX = 4;
/** Element of a compound array assignment: a leading `[…]` is a subscript. */
export const M_ARRAY = 5;

// Stop bits for compound lists.
export const S_THEN = 1;
export const S_ELIF = 2;
export const S_ELSE = 4;
export const S_FI = 8;
export const S_DO = 16;
export const S_DONE = 32;
export const S_ESAC = 64;
export const S_RBRACE = 128;
export const STOP_BITS: Record<string, number> = {
  then: S_THEN,
  elif: S_ELIF,
  else: S_ELSE,
  fi: S_FI,
  do: S_DO,
  done: S_DONE,
  esac: S_ESAC,
  '}': S_RBRACE,
};

export const REDIRECT_OPS = new Set(['<', '>', '>>', '>|', '<>', '<&', '>&', '&>', '&>>', '<<', '<<-', '<<<']);

export interface AssignInfo {
  name: string;
  append: boolean;
  index?: string;
  indexWord?: Word;
  value: Word | null;
  array?: Word[];
}

export interface PendingHeredoc {
  doc: HereDoc;
}

export interface ArithBody {
  expr: string;
  subs: WordPart[];
  /** Offsets (into expr) of `;` at paren level 0. */
  semis: number[];
}

/** The error past the nesting limit (the parser's enter(), and parse()'s check of deep prefixes). */
export function nestingTooDeep(maxDepth: number): string {
  return `nesting too deep: more than ${maxDepth} nested constructs`;
}

export function span(start: number, end: number): Span {
  return { start, end };
}

export abstract class TokenReader {
  // Up-calls into later layers.
  protected abstract scanWord(mode: number): Word;
  protected abstract gatherHeredocs(): void;

  protected pos = 0;

  protected len: number;

  protected depth: number;

  /** Heredocs whose body starts after the next newline token. */
  protected pending: PendingHeredoc[] = [];

  /** Results of substitutions parsed during a `$((`/`((` attempt, by start offset (no re-parse). */
  protected memo: Map<number, { part: WordPart; end: number }> | null = null;

  protected arithAttempt = 0;

  /** Paren regions matched by failed `((` attempts: open offset -> close offset and the substitutions inside. */
  protected parenMemo: Map<number, { close: number; subs: WordPart[] }> | null = null;

  /** How many `$(`/`<(`/`>(` bodies are being parsed (heredoc delimiters may be followed by `)` there). */
  protected comsubDepth = 0;

  // The current (peeked) token.
  protected tkValid = false;

  protected tkPos = -1;

  protected tkMode = 0;

  protected tkKind = T_EOF;

  protected tkStart = 0;

  protected tkEnd = 0;

  protected tkOp = '';

  protected tkWord: Word | null = null;

  protected tkAssign: AssignInfo | null = null;

  protected tkFd: number | string = 0;

  /** Cache of reserved() for the word tkResWord. */
  protected tkResWord: Word | null = null;

  protected tkRes: string | null = null;

  constructor(
    protected readonly text: string,
    protected readonly maxDepth: number,
    depth: number,
    /** For a backtick body: the parser of the enclosing text and the offset map into it. */
    protected readonly parent: TokenReader | null,
    protected readonly offMap: Int32Array | null,
  ) {
    this.len = text.length;
    this.depth = depth;
  }

  /** The current offset (for errors raised outside the parser). */
  offset(): number {
    return Math.min(this.pos, this.text.length);
  }

  protected fail(message: string, offset: number): never {
    let o = offset;
    // eslint-disable-next-line @typescript-eslint/no-this-alias
    let p: TokenReader = this;
    while (p.parent !== null && p.offMap !== null) {
      o = p.offMap[Math.max(0, Math.min(o, p.offMap.length - 1))]!;
      p = p.parent;
    }
    throw new ParseError(message, positionAt(p.text, o));
  }

  protected enter(at: number): void {
    if (++this.depth > this.maxDepth) {
      this.fail(nestingTooDeep(this.maxDepth), at);
    }
  }

  protected code(i: number): number {
    return i < this.len ? this.text.charCodeAt(i) : -1;
  }

  /** Skip `\<newline>` line continuations at j (bash removes them even inside operators and after `$`). */
  protected skipCont(j: number): number {
    const text = this.text;
    while (j + 1 < this.len && text.charCodeAt(j) === C_BACKSLASH && text.charCodeAt(j + 1) === C_NL) j += 2;
    return j;
  }

  protected peek(mode: number): number {
    if (this.tkValid && this.tkPos === this.pos && (this.tkKind !== T_WORD || this.tkMode === mode)) {
      return this.tkKind;
    }
    this.lex(mode);
    return this.tkKind;
  }

  protected next(): void {
    this.pos = this.tkEnd;
    this.tkValid = false;
  }

  /** The current operator token (a method, so TypeScript does not narrow it across next()/peek()). */
  protected top(): string {
    return this.tkOp;
  }

  protected wordRaw(): string {
    return this.tkWord === null ? '' : this.tkWord.raw;
  }

  protected tokenText(): string {
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

  protected unexpected(): never {
    if (this.tkKind === T_EOF) this.fail('syntax error: unexpected end of file', this.tkStart);
    this.fail(`syntax error near unexpected token \`${this.tokenText()}'`, this.tkStart);
  }

  protected expectOp(op: string, what: string, openAt: number): void {
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
  protected reserved(): string | null {
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

  protected isWord(w: string): boolean {
    return this.tkKind === T_WORD && this.reserved() === w;
  }

  protected expectWord(w: string, what: string, openAt: number): void {
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

  protected skipNewlines(mode: number): number {
    let k = this.peek(mode);
    while (k === T_OP && this.top() === '\n') {
      this.next();
      k = this.peek(mode);
    }
    return k;
  }

  protected lex(mode: number): void {
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

  /** Assignment info of the last word scanned (set at the very end of scanWord). */
  protected wAssign: AssignInfo | null = null;
  /** The words of the `[[ … ]]` being parsed (conditionals.ts). Every field of the parser is declared in
   * this class: the layers above add methods only, so their constructors stay the default ones, which
   * V8 skips (one parser is made per line and per backtick body). */
  protected condWords: Word[] = [];
}
