// `[[ … ]]`: terms, unary and binary operators, `!`, `&&`, `||` and parentheses, with the extglob and regex word modes on the right of ==/!=/=~.
// Part of the parser (src/shell/parser.ts); the layers, lowest first: tokens, words, expansions, arith,
// heredocs, conditionals, grammar. A layer calls up into a later one through an abstract method.
import type { Command, Redirect, Word } from '../ast.js';
import { COND_BINARY, COND_UNARY } from '../lexer.js';
import { HeredocReader } from './heredocs.js';
import { T_EOF, T_WORD, T_OP, M_COND, M_EXTPAT, M_REGEX, span } from './tokens.js';

export abstract class ConditionalParser extends HeredocReader {
  // Up-calls into later layers.
  protected abstract withRedirects(node: Command & { redirects: Redirect[] }): Command;

  protected opWord(op: string, start: number): Word {
    return {
      type: 'Word',
      parts: [{ type: 'Literal', value: op, escaped: false, span: span(start, start + op.length) }],
      raw: op,
      span: span(start, start + op.length),
    };
  }

  protected parseCond(): Command {
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

  protected condOr(openAt: number): void {
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

  protected condAnd(openAt: number): void {
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

  protected condError(openAt: number): never {
    if (this.tkKind === T_EOF) this.fail("syntax error: unexpected end of file, `]]' expected to close `[['", openAt);
    this.fail(`syntax error in conditional expression: unexpected token \`${this.tokenText()}'`, this.tkStart);
  }

  protected condTerm(openAt: number): void {
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
