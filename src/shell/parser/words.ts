// Scanning words: plain runs, escapes, quotes, assignment prefixes, subscripts and array assignments (the
// literal text of a word is gathered by LiteralRun; every scanner steps over a quote or expansion with scanPart).
// Part of the parser (src/shell/parser.ts); the layers, lowest first: tokens, words, expansions, arith,
// heredocs, conditionals, grammar. A layer calls up into a later one through an abstract method.
import type { Assignment, Word, WordPart } from '../ast.js';
import { C_AT, C_BACKSLASH, C_BACKTICK, C_BANG, C_DOLLAR, C_DQUOTE, C_EQ, C_GT, C_LBRACKET, C_LPAREN, C_LT, C_NL, C_PIPE, C_PLUS, C_QUESTION, C_RBRACE, C_RBRACKET, C_RPAREN, C_SQUOTE, C_STAR, META, isNameChar, isNameStart } from '../lexer.js';
import { TokenReader } from './tokens.js';
import type { AssignInfo } from './tokens.js';
import { LiteralRun } from './literal-run.js';
import { T_EOF, T_WORD, T_OP, M_ASSIGN, M_EXTPAT, M_REGEX, M_ARRAY, span } from './tokens.js';

export abstract class WordScanner extends TokenReader {
  // Up-calls into later layers.
  protected abstract parseDollar(inDouble: boolean): WordPart | null;
  protected abstract parseBacktick(inDouble: boolean): WordPart;
  protected abstract parseProcSub(): WordPart;

  protected literal(parts: WordPart[], value: string, escaped: boolean, start: number, end: number): void {
    parts.push({ type: 'Literal', value, escaped, span: span(start, end) });
  }

  /**
   * The one step every word scanner takes at a quote or an expansion: `c` (a `'`, `"`, `$` or backquote)
   * at `i` starts a part; it is scanned and pushed after the literal gathered before it. Returns where the
   * scan goes on: after the part, or i + 1 for a `$` that is literal (it stays in the literal run).
   * `inDouble`: inside double quotes (how `$'`, `$"` and backquoted `\"` read there).
   */
  protected scanPart(run: LiteralRun, i: number, c: number, inDouble: boolean): number {
    this.pos = i;
    const part = c === C_SQUOTE ? this.scanSingle() : c === C_DQUOTE ? this.scanDouble() : c === C_DOLLAR ? this.parseDollar(inDouble) : this.parseBacktick(inDouble);
    if (part === null) return i + 1;
    run.push(i, part, this.pos);
    return this.pos;
  }

  /**
   * Scan one word at this.pos (which is not at a metacharacter). Leaves this.pos after it and sets
   * this.wAssign.
   */
  protected scanWord(mode: number): Word {
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

    const run = new LiteralRun(text, parts, i);
    for (;;) {
      const c = i < len ? text.charCodeAt(i) : -1;
      if (c < 0) break;
      if (c < 128 && META[c] === 1) {
        if (c === C_LPAREN && mode === M_REGEX) {
          // (…) inside a regex: part of the word, blanks included
          run.flush(i);
          this.pos = i;
          this.scanParenGroup(parts);
          i = this.pos;
          run.runStart = i;
          continue;
        }
        if (c === C_PIPE && mode === M_REGEX) {
          i++;
          continue;
        }
        if ((c === C_LT || c === C_GT) && this.code(this.skipCont(i + 1)) === C_LPAREN) {
          // `a<(x)`: a process substitution continues the word (bash read_token_word)
          this.pos = i;
          const part = this.parseProcSub();
          run.push(i, part, this.pos);
          i = this.pos;
          continue;
        }
        if (c === C_LPAREN && mode === M_EXTPAT && i > start) {
          const pc = text.charCodeAt(i - 1);
          if ((pc === C_AT || pc === C_BANG || pc === C_STAR || pc === C_PLUS || pc === C_QUESTION) && i - 1 >= run.runStart) {
            run.flush(i);
            this.pos = i;
            this.scanParenGroup(parts);
            i = this.pos;
            run.runStart = i;
            continue;
          }
        }
        break;
      }
      if (c === C_BACKSLASH) {
        if (i + 1 >= len) {
          // a backslash at the very end of the input is dropped (bash reads it as a line continuation)
          run.take(i);
          i++;
          run.runStart = i;
          continue;
        }
        run.escape(i);
        i += 2;
        continue;
      }
      if (c === C_SQUOTE || c === C_DQUOTE || c === C_DOLLAR || c === C_BACKTICK) {
        i = this.scanPart(run, i, c, false);
        continue;
      }
      i++;
    }
    run.flush(i);
    if (assign !== null) {
      const vparts = valuePartIdx === 0 ? parts : parts.slice(valuePartIdx);
      assign.value = { type: 'Word', parts: vparts, raw: text.slice(valueStart, i), span: span(valueStart, i) };
    }
    this.pos = i;
    this.wAssign = assign;
    return { type: 'Word', parts, raw: text.slice(start, i), span: span(start, i) };
  }

  /** `(…)` inside a regex or an extglob pattern: balanced, blanks allowed; parts appended. */
  protected scanParenGroup(parts: WordPart[]): void {
    const start = this.pos;
    this.enter(start);
    let level = 0;
    const run = new LiteralRun(this.text, parts, start);
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
        this.pos = this.scanPart(run, this.pos, c, false);
      } else this.pos++;
    }
    if (this.pos > this.len) this.pos = this.len;
    run.flush(this.pos);
    this.depth--;
  }

  /** `'…'` at this.pos. */
  protected scanSingle(): WordPart {
    const start = this.pos;
    const e = this.text.indexOf("'", start + 1);
    if (e < 0 || e >= this.len) this.fail("syntax error: unterminated single quote (`'')", start);
    this.pos = e + 1;
    return { type: 'SingleQuoted', value: this.text.slice(start + 1, e), span: span(start, e + 1) };
  }

  /** `"…"` at this.pos. */
  protected scanDouble(): WordPart {
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
  protected scanDQContent(parts: WordPart[], heredoc: boolean): boolean {
    const text = this.text;
    const len = this.len;
    let i = this.pos;
    const run = new LiteralRun(text, parts, i);
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
        if (n === C_DOLLAR || n === C_BACKTICK || n === C_BACKSLASH || n === C_NL || (n === C_DQUOTE && !heredoc)) run.escape(i);
        i += 2;
        continue;
      }
      if (c === C_DOLLAR || c === C_BACKTICK) {
        i = this.scanPart(run, i, c, true);
        continue;
      }
      i++;
    }
    run.flush(i);
    this.pos = i;
    return closed;
  }

  /** Subscript text from this.pos (after `[`) to the matching `]` (left at this.pos). */
  protected scanUntilBracket(openAt: number): Word;

  protected scanUntilBracket(openAt: number, stopAtBrace: true): Word | null;

  protected scanUntilBracket(openAt: number, stopAtBrace = false): Word | null {
    const text = this.text;
    const start = this.pos;
    this.enter(openAt);
    const parts: WordPart[] = [];
    let level = 0;
    let i = start;
    const run = new LiteralRun(text, parts, i);
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
        i = this.scanPart(run, i, c, false);
      } else i++;
    }
    run.flush(i);
    this.pos = i;
    this.depth--;
    return { type: 'Word', parts, raw: text.slice(start, i), span: span(start, i) };
  }

  /** `(…)` of `name=(…)` at this.pos; element parts are appended to `parts` too. */
  protected scanArray(parts: WordPart[]): Word[] {
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
}
