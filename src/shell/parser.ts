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

import type { Script } from './ast.js';
import { ParseError, positionAt } from '../errors.js';
import { Parser } from './parser/grammar.js';
import { deepPrefixOffset } from './parser/deep-prefix.js';
import { nestingTooDeep } from './parser/tokens.js';

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
  // A line whose start only opens constructs past the limit (src/shell/parser/deep-prefix.ts): the parser's
  // own error, without recursing to the limit and unwinding from there. Only where the parser surely gets
  // that deep without running out of stack (the default limit).
  if (maxDepth <= DEFAULT_MAX_DEPTH) {
    const deep = deepPrefixOffset(text, maxDepth);
    if (deep >= 0) throw new ParseError(nestingTooDeep(maxDepth), positionAt(text, deep));
  }
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
