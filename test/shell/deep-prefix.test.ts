// parse()'s refusal of lines that only open constructs past the nesting limit (src/shell/parser/deep-prefix.ts)
// must be the parser's own answer: the same error at the same offset, and no answer at all (the parser
// decides) for any line the scan is not sure of. Ground truth is the recursive parser itself, run without
// the check (new Parser(...).parseScript()).
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { parse } from '../../src/shell/parser.js';
import { Parser } from '../../src/shell/parser/grammar.js';
import { deepPrefixOffset } from '../../src/shell/parser/deep-prefix.js';
import { ParseError } from '../../src/errors.js';

function outcome(run: () => unknown): string {
  try {
    run();
    return 'parses';
  } catch (e) {
    if (!(e instanceof ParseError)) throw e;
    return `${e.message} @${e.position.offset}`;
  }
}
const full = (text: string, maxDepth: number) => outcome(() => new Parser(text, maxDepth, 0, null, null).parseScript());
const checked = (text: string, maxDepth: number) => outcome(() => parse(text, { maxDepth }));

// Openers, words and blanks (what the scan reads), mixed with what must stop it.
const PIECES = ['$(', '$( ', '( ', '(', '{ ', '{', 'echo ', 'x', 'make$(', 'if ', 'time ', ' ', '\t', ')', ' )', '}', '; ', "'", '"', '\\', '\n', '#', '$((', '((', '`', '$x', 'a=', '~', '|', '&& ', '<(', '2>', '*'];
const OPENERS = ['$(', '$( ', '( ', '{ ', 'echo $(', 'x$(', ' '];

describe('deep-prefix check', () => {
  it('gives the parser’s answer on generated lines (any mix of openers, words and other syntax)', () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...PIECES), { maxLength: 60 }), fc.integer({ min: 1, max: 12 }), (pieces, maxDepth) => {
        const text = pieces.join('');
        expect(checked(text, maxDepth)).toBe(full(text, maxDepth));
      }),
      { numRuns: 4000 },
    );
  });

  it('gives the parser’s answer on generated deep lines, and answers them itself', () => {
    let answered = 0;
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom(...OPENERS), { minLength: 10, maxLength: 60 }),
        fc.array(fc.constantFrom(...PIECES), { maxLength: 10 }),
        fc.integer({ min: 1, max: 8 }),
        (openers, tail, maxDepth) => {
          const text = openers.join('') + tail.join('');
          const off = deepPrefixOffset(text, maxDepth);
          if (off >= 0) {
            answered++;
            expect(full(text, maxDepth)).toBe(`nesting too deep: more than ${maxDepth} nested constructs at line 1, column ${off + 1} @${off}`);
          }
          expect(checked(text, maxDepth)).toBe(full(text, maxDepth));
        },
      ),
      { numRuns: 3000 },
    );
    // The check is not vacuous: most of these lines pass the limit inside their openers.
    expect(answered).toBeGreaterThan(1000);
  });

  // Lines built to fool the scan: their start looks like nothing but openers, but the parser reads them
  // otherwise (quoted, escaped, arithmetic, a comment, an opener where a command cannot start, a reserved
  // word, constructs that close). The scan must leave each to the parser.
  const fooling: [string, string][] = [
    ['single-quoted', "echo '" + '$('.repeat(250) + "'"],
    ['double-quoted (nests, but through the parser)', 'echo "' + '$('.repeat(250)],
    ['escaped $', 'echo \\' + '$('.repeat(250)],
    ['arithmetic $((', 'echo ' + '$(('.repeat(250)],
    ['arithmetic command ((', '('.repeat(250) + 'x)' + ' )'.repeat(249)],
    ['( as an argument', 'echo ' + '( '.repeat(250)],
    ['{ as an argument is a word', 'echo ' + '{ '.repeat(250)],
    ['{x is a word, not a group', '{x ' + '$('.repeat(250)],
    ['reserved word', 'if ' + '$('.repeat(250)],
    ['comment', '# ' + '$('.repeat(250)],
    ['closes before the limit', 'echo ' + '$('.repeat(150) + ')'.repeat(150) + '; echo ' + '$('.repeat(150)],
    ['line continuation', 'echo $\\\n(' + '$('.repeat(250)],
    ['a newline', 'echo\n' + '$('.repeat(250)],
  ];
  for (const [name, text] of fooling) {
    it(`leaves to the parser: ${name}`, () => {
      expect(deepPrefixOffset(text, 200)).toBe(-1);
      expect(checked(text, 200)).toBe(full(text, 200));
    });
  }

  it('answers the corpus lines built to pass the limit, as the parser does', () => {
    const lines: string[] = parseYaml(readFileSync(new URL('../../fixtures/corpus/bypasses.yaml', import.meta.url), 'utf8')).map((e: { line: string }) => e.line);
    const deep = lines.filter((l) => deepPrefixOffset(l, 200) >= 0);
    expect(deep.length).toBeGreaterThanOrEqual(3);
    for (const l of deep) {
      expect(full(l, 200)).toMatch(/^nesting too deep: more than 200 nested constructs/);
      expect(checked(l, 200)).toBe(full(l, 200));
    }
  });
});
