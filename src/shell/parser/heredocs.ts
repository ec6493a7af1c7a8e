// Here-documents: bodies read at the next newline token, tabs stripped for <<-, the delimiter found the way bash 5.2 finds it, the body scanned as a double-quoted word when unquoted.
// Part of the parser (src/shell/parser.ts); the layers, lowest first: tokens, words, expansions, arith,
// heredocs, conditionals, grammar. A layer calls up into a later one through an abstract method.
import type { HereDoc, Word, WordPart } from '../ast.js';
import { ParseError } from '../../errors.js';
import { C_BACKSLASH, C_TAB } from '../lexer.js';
import { ArithScanner } from './arith.js';
import { span } from './tokens.js';

export abstract class HeredocReader extends ArithScanner {
  protected gatherHeredocs(): void {
    const list = this.pending;
    this.pending = [];
    for (const h of list) this.readHeredoc(h.doc);
  }

  /** Read one heredoc body from this.pos; leaves this.pos after the delimiter line. */
  protected readHeredoc(doc: HereDoc): void {
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

  protected parseHeredocWord(start: number, end: number): Word {
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
}
