// The literal text of a word as it is scanned: runs of plain characters and escaped characters, gathered
// into ONE Literal part that is pushed whenever something else (a quote, an expansion) comes, and at the
// end. The one copy of this bookkeeping for every scanner (words, double quotes, heredoc bodies, ${…}
// operands). Spans: the literal spans from its first character to where it was flushed.
import type { WordPart } from '../ast.js';
import { C_NL } from '../lexer.js';

export class LiteralRun {
  private lit = '';
  /** Offset of the first character of `lit`, or -1 when nothing is gathered. */
  private litStart = -1;
  private escaped = false;
  /** Where the current run of plain characters starts. */
  runStart: number;

  constructor(
    private readonly text: string,
    private readonly parts: WordPart[],
    at: number,
  ) {
    this.runStart = at;
  }

  /** Takes the plain characters from runStart up to `i` (exclusive). */
  take(i: number): void {
    if (i > this.runStart) {
      if (this.litStart < 0) this.litStart = this.runStart;
      this.lit += this.text.slice(this.runStart, i);
    }
  }

  /** `\c` at i: the run before it, then c itself (nothing for `\<newline>`); the next run starts after c. */
  escape(i: number): void {
    this.take(i);
    if (this.text.charCodeAt(i + 1) !== C_NL) {
      if (this.litStart < 0) this.litStart = i;
      this.lit += this.text[i + 1];
      this.escaped = true;
    }
    this.runStart = i + 2;
  }

  /** Takes the run up to `i` and pushes the literal gathered so far (if any). */
  flush(i: number): void {
    this.take(i);
    if (this.litStart >= 0) {
      this.parts.push({ type: 'Literal', value: this.lit, escaped: this.escaped, span: { start: this.litStart, end: i } });
      this.lit = '';
      this.litStart = -1;
      this.escaped = false;
    }
  }

  /** The literal before `i`, then `part`; the next run starts at `next`. */
  push(i: number, part: WordPart, next: number): void {
    this.flush(i);
    this.parts.push(part);
    this.runStart = next;
  }
}
