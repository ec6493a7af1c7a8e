// Expansions inside words: $name, ${…} with its operators and operands, $(…), <(…)/>(…), `…`, $'…' and $"…".
// Part of the parser (src/shell/parser.ts); the layers, lowest first: tokens, words, expansions, arith,
// heredocs, conditionals, grammar. A layer calls up into a later one through an abstract method.
import type { List, Script, Span, Word, WordPart } from '../ast.js';
import { C_AT, C_BACKSLASH, C_BACKTICK, C_BANG, C_COLON, C_COMMA, C_CARET, C_DOLLAR, C_DQUOTE, C_EQ, C_HASH, C_LBRACE, C_LBRACKET, C_LPAREN, C_LT, C_MINUS, C_NL, C_PERCENT, C_PLUS, C_QUESTION, C_RBRACE, C_SLASH, C_SQUOTE, C_STAR, decodeAnsiC, isDigit, isNameChar, isNameStart, isSpecialParam, remapSpans } from '../lexer.js';
import { WordScanner } from './words.js';
import { LiteralRun } from './literal-run.js';
import type { ArithBody } from './tokens.js';
import { T_EOF, T_OP, M_ASSIGN, span } from './tokens.js';

export abstract class ExpansionScanner extends WordScanner {
  // Up-calls into later layers.
  protected abstract scanArith(openAt: number, dparen: boolean): ArithBody | null;
  protected abstract parseList(stop: number): List;
  protected abstract parseNested(inner: string, map: Int32Array): Script;

  /** At `$`: an expansion part, or null when the `$` is literal (this.pos unchanged then). */
  protected parseDollar(inDouble: boolean): WordPart | null {
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
  protected parseComSub(bodyStart: number): WordPart {
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
  protected parseProcSub(): WordPart {
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
  protected parseBacktick(inDouble: boolean): WordPart {
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
    const script = this.parseNested(inner, map);
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

  /** A `$` at i that starts a nested substitution (`${`, `$(`, `$[`) rather than naming `$$`. */
  protected dollarSub(i: number): boolean {
    if (this.code(i) !== C_DOLLAR) return false;
    const n = this.code(i + 1);
    return n === C_LBRACE || n === C_LPAREN || n === C_LBRACKET;
  }

  /** `${…}` at this.pos. */
  protected parseBraced(inDouble: boolean, bodyStart: number): WordPart {
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
  protected scanOperand(stop: number, inDouble: boolean, openAt: number): Word {
    const text = this.text;
    const start = this.pos;
    const parts: WordPart[] = [];
    let i = start;
    const run = new LiteralRun(text, parts, i);
    for (;;) {
      if (i >= this.len) this.fail("syntax error: unexpected end of file, `}' expected to close `${'", openAt);
      const c = text.charCodeAt(i);
      // bash does not count nested braces here: `${x:-{a}b}` is `{a` followed by `b}`
      if (c === C_RBRACE) break;
      if (c === stop) break;
      if (c === C_BACKSLASH && i + 1 < this.len) {
        run.escape(i);
        i += 2;
        continue;
      }
      if ((c === C_SQUOTE && !inDouble) || c === C_DQUOTE || c === C_DOLLAR || c === C_BACKTICK) {
        i = this.scanPart(run, i, c, inDouble);
        continue;
      }
      i++;
    }
    run.flush(i);
    this.pos = i;
    return { type: 'Word', parts, raw: text.slice(start, i), span: span(start, i) };
  }
}
