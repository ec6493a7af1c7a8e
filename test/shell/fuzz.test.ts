// Fuzz: random bash-ish strings and mutations of valid lines never crash with anything but ParseError,
// always finish, and every span of an accepted line lies inside the text.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parse } from '../../src/shell/parser.js';
import { ParseError } from '../../src/errors.js';

function checkSpans(len: number, node: unknown): void {
  if (Array.isArray(node)) {
    for (const n of node) checkSpans(len, n);
    return;
  }
  if (node === null || typeof node !== 'object') return;
  const o = node as Record<string, unknown>;
  const sp = o.span as { start: number; end: number } | undefined;
  if (sp !== undefined) {
    if (!(sp.start >= 0 && sp.start <= sp.end && sp.end <= len)) {
      throw new Error(`span out of bounds: ${JSON.stringify(sp)} (length ${len}) in ${String(o.type)}`);
    }
  }
  for (const k in o) if (k !== 'span') checkSpans(len, o[k]);
}

/** parse() either returns a tree with valid spans or throws ParseError with a position in range. */
function robust(src: string): void {
  let tree;
  try {
    tree = parse(src, { maxDepth: 60 });
  } catch (e) {
    if (!(e instanceof ParseError)) throw e;
    expect(e.position.offset).toBeGreaterThanOrEqual(0);
    expect(e.position.offset).toBeLessThanOrEqual(src.length);
    return;
  }
  checkSpans(src.length, tree);
}

const CHARS = [
  ' ', ' ', '\t', '\n', 'a', 'b', 'x', '1', '2', '=', '+', '-', '*', '?', '@', '#', '!', '%', '^', ',', ':', '/', '.', '~',
  '$', '$', '(', ')', '{', '}', '[', ']', '<', '>', '&', '|', ';', "'", '"', '`', '\\', '\0',
];
const FRAGMENTS = [
  'if ', 'then ', 'fi', 'do ', 'done', 'case ', ' in ', 'esac', 'for ', 'while ', '$(', '$((', '${', '<<', '<<-', 'EOF\n',
  '[[ ', ' ]]', '((', '))', 'function ', 'coproc ', 'time ', '! ', '<(', '>(', "$'", '$"', '\\\n', ';;', ';&', '|&', '&>',
];

const VALID = [
  'echo hello world',
  'a=1 b=(x y) cmd "$x" >out 2>&1',
  'echo $(echo `echo hi`) | cat && true || false; x &',
  'if true; then echo; elif a; then b; else c; fi',
  'cat <<EOF\nhi $x $(id)\nEOF\necho after',
  'for i in 1 2; do :; done',
  'for ((i=0;i<3;i++)); do echo $i; done',
  'case x in a|b) echo;; (c) ;& *) ;;& esac',
  'f() { local x=${1:-$(pwd)}; echo "${x##*/}"; }',
  '[[ $x == *")"* && -f y || $z =~ ^(a|b)$ ]]',
  'echo $(( (1+2) * $[3] )) ${a[@]:1:2} ${#x} ${!y}',
  "echo $'a\\tb' $\"c\" 'd' \"e \\\"f\\\"\"",
  'diff <(sort a) <(sort b) |& tee >(cat) <<<"$x"',
  'coproc NAME { cat; }; time -p ! true',
  'x=`echo \\`echo hi\\``; echo "$(case y in a) echo ")";; esac)"',
];

describe('fuzz: parse never crashes', () => {
  it('random bash-ish character strings', () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...CHARS), { maxLength: 60 }).map((a) => a.join('')), (s) => robust(s)),
      { seed: 1, numRuns: 3000 },
    );
  });

  it('random mixes of keywords, operators and characters', () => {
    fc.assert(
      fc.property(
        fc.array(fc.oneof(fc.constantFrom(...CHARS), fc.constantFrom(...FRAGMENTS)), { maxLength: 40 }).map((a) => a.join('')),
        (s) => robust(s),
      ),
      { seed: 2, numRuns: 3000 },
    );
  });

  it('mutations of valid lines: insert, delete, duplicate characters', () => {
    const mutation = fc.record({
      base: fc.constantFrom(...VALID),
      ops: fc.array(
        fc.record({
          kind: fc.constantFrom('insert', 'delete', 'duplicate'),
          at: fc.nat(),
          len: fc.integer({ min: 1, max: 6 }),
          ch: fc.oneof(fc.constantFrom(...CHARS), fc.constantFrom(...FRAGMENTS)),
        }),
        { minLength: 1, maxLength: 4 },
      ),
    });
    fc.assert(
      fc.property(mutation, ({ base, ops }) => {
        let s = base;
        for (const op of ops) {
          const at = s.length === 0 ? 0 : op.at % (s.length + 1);
          if (op.kind === 'insert') s = s.slice(0, at) + op.ch + s.slice(at);
          else if (op.kind === 'delete') s = s.slice(0, at) + s.slice(at + op.len);
          else s = s.slice(0, at) + s.slice(at, at + op.len) + s.slice(at);
        }
        robust(s);
      }),
      { seed: 3, numRuns: 4000 },
    );
  });

  it('the valid seed lines themselves parse', () => {
    for (const v of VALID) expect(() => parse(v)).not.toThrow();
  });

  it('any unicode string', () => {
    fc.assert(fc.property(fc.string({ unit: 'binary', maxLength: 40 }), (s) => robust(s)), { seed: 4, numRuns: 2000 });
  });
});
