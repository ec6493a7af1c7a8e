// Lines built to pass the nesting limit (`echo $($($(…`, `( ( ( …`, `{ { { …`): the parser would recurse
// to the limit and its error would then unwind thousands of stack frames (0.3-0.8 ms a line, the cost of a
// hundred ordinary lines). A line whose start is made only of the openers below, plain words and blanks
// reaches the limit for certain, at an offset known without parsing: parse() refuses it there with the
// parser's own error. Any other character ends the scan and the parser decides, as for every other line.
//
// What the scan accepts, and why the parser must agree on it:
//   - blanks (space, tab);
//   - `$(` not followed by `(` (a command substitution, not `$((`): one nested construct, at its `$`;
//     its body starts a command;
//   - at the start of a command, `(` not followed by `(` (a subshell, not `((`): one construct, at `(`;
//   - at the start of a command, `{` followed by a blank (a group): one construct, at `{`;
//   - a word of [A-Za-z0-9_./-] (no quote, expansion, glob, `=`, `~`, `#`, operator or backslash), not a
//     reserved word where a command starts; after it the command's arguments follow (where `(` and `{`
//     are not openers: the scan stops there).
// Nothing in such a prefix can be a syntax error before the limit, and no construct in it closes, so the
// (maxDepth+1)-th opener is where the parser's enter() fails (test/shell/deep-prefix.test.ts compares the
// two on generated lines).
import { RESERVED } from '../lexer.js';

const isWordCode = (c: number): boolean =>
  (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || (c >= 48 && c <= 57) || c === 95 || c === 46 || c === 47 || c === 45;

/**
 * The offset of the opener that takes `text` past `maxDepth` nested constructs, when the line's start is
 * of the kind above; -1 when it is not (or the limit is not passed there): the parser decides.
 */
export function deepPrefixOffset(text: string, maxDepth: number): number {
  const len = text.length;
  // More than maxDepth openers need more than maxDepth characters.
  if (len <= maxDepth) return -1;
  let depth = 0;
  let commandStart = true;
  let i = 0;
  while (i < len) {
    const c = text.charCodeAt(i);
    if (c === 32 || c === 9) {
      i++;
      continue;
    }
    if (c === 36) {
      // `$(`, not `$((`
      if (text.charCodeAt(i + 1) !== 40 || text.charCodeAt(i + 2) === 40) return -1;
      if (++depth > maxDepth) return i;
      i += 2;
      commandStart = true;
      continue;
    }
    if (commandStart && c === 40) {
      if (text.charCodeAt(i + 1) === 40) return -1;
      if (++depth > maxDepth) return i;
      i++;
      continue;
    }
    if (commandStart && c === 123) {
      const n = text.charCodeAt(i + 1);
      if (n !== 32 && n !== 9) return -1;
      if (++depth > maxDepth) return i;
      i++;
      continue;
    }
    if (!isWordCode(c)) return -1;
    const start = i;
    while (i < len && isWordCode(text.charCodeAt(i))) i++;
    // A word glued to `$(` (`x$(…`) is one word: the substitution is read next, inside it.
    // (The reserved words spelled with these characters are at most 8 long: `function`.)
    if (commandStart && i - start <= 8 && RESERVED.has(text.slice(start, i))) return -1;
    commandStart = false;
  }
  return -1;
}
