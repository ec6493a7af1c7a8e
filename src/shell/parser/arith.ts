// Arithmetic text: $((…)), $[…], ((…)) and for ((…)), matched with the substitutions inside; a `((` that is not arithmetic falls back to a subshell without re-scanning (memo).
// Part of the parser (src/shell/parser.ts); the layers, lowest first: tokens, words, expansions, arith,
// heredocs, conditionals, grammar. A layer calls up into a later one through an abstract method.
import type { WordPart } from '../ast.js';
import { C_BACKSLASH, C_BACKTICK, C_DOLLAR, C_DQUOTE, C_LBRACKET, C_LPAREN, C_RBRACKET, C_RPAREN, C_SEMI, C_SQUOTE } from '../lexer.js';
import { ExpansionScanner } from './expansions.js';
import type { ArithBody } from './tokens.js';

export abstract class ArithScanner extends ExpansionScanner {
  /**
   * Arithmetic text from this.pos. `dparen`: ends at `))` (returns null when the first unbalanced `)` is
   * not followed by another `)`: then it is not arithmetic); otherwise ends at the matching `]`.
   * `openAt` is the offset of the construct for error messages.
   */
  protected scanArith(openAt: number, dparen: boolean): ArithBody | null {
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
}
