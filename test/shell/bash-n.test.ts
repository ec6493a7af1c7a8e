// Differential tests: the parser must accept exactly what `bash -n` accepts.
//
// The oracle runs all cases in ONE bash process (one file per case in a temp dir, `bash -n` on each).
// A case counts as rejected by bash when `bash -n` exits non-zero OR prints anything but a warning:
// bash -n reports `[[ … ]]` errors ("conditional binary operator expected") on stderr yet exits 0,
// and running such a line fails, so the parser rejects them. Warnings (heredoc delimited by end of file,
// unterminated heredoc in a command substitution) are not errors; only lines starting with the file
// name count (a warning may quote a multi-line delimiter).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parse } from '../../src/shell/parser.js';
import { ParseError } from '../../src/errors.js';
import { sampling } from '../helpers/sample.js';

/** One bash per line: 600 in `npm run test:full`, the first 200 of the same seeded sequence by default. */
const RANDOM_LINES = sampling('full').full ? 600 : 200;

const LOOP = `for f in "$1"/c*.sh; do
  e=$(bash -n "$f" 2>&1); rc=$?; ok=1; [ "$rc" = 0 ] || ok=0
  while IFS= read -r l; do case $l in "$f: line "*) case $l in *": warning: "*) ;; *) ok=0;; esac;; esac; done <<< "$e"
  echo "$ok"
done`;

/** For each case: does bash -n accept it? */
function bashAccepts(cases: string[]): boolean[] {
  const dir = mkdtempSync(join(tmpdir(), 'offhost-bash-n-'));
  try {
    cases.forEach((c, i) => writeFileSync(join(dir, `c${String(i).padStart(6, '0')}.sh`), c));
    const r = spawnSync('bash', ['-c', LOOP, '_', dir], { encoding: 'utf8', maxBuffer: 1 << 26, env: { PATH: process.env.PATH ?? '/usr/bin:/bin', LC_ALL: 'C' } });
    expect(r.status).toBe(0);
    const out = r.stdout.trim().split('\n');
    expect(out.length).toBe(cases.length);
    return out.map((s) => s === '1');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function parserAccepts(src: string): { ok: boolean; error?: string } {
  try {
    parse(src);
    return { ok: true };
  } catch (e) {
    if (!(e instanceof ParseError)) throw e;
    return { ok: false, error: e.message };
  }
}

/** fixtures/parser/differential.txt: one case a line, `>>>` … `<<<` blocks for multi-line cases. */
function loadCases(): string[] {
  const lines = readFileSync(new URL('../../fixtures/parser/differential.txt', import.meta.url), 'utf8').split('\n');
  const cases: string[] = [];
  let block: string[] | null = null;
  for (const l of lines) {
    if (block !== null) {
      if (l === '<<<') {
        cases.push(block.join('\n'));
        block = null;
      } else block.push(l);
      continue;
    }
    if (l === '>>>') block = [];
    else if (l !== '' && !l.startsWith('##')) cases.push(l);
  }
  return cases;
}

/**
 * Deliberately stricter than bash -n: bash accepts these (it only parses them when they run, and then
 * fails), the parser rejects them. Listed in src/shell/parser.ts too.
 */
const STRICTER = [
  // `$((` that is not arithmetic falls back to `$( (` — bash -n does not parse that fallback body
  'echo $((a)b)',
  'echo $((1)+1)',
  // backtick bodies are parsed; bash -n only matches the backquotes
  'echo `fi`',
  'echo `(`',
  'x=`if`',
  // an empty `[[ ]]` term: bash -n exits 0 silently, but bash stops reading the input there
  '[[ ]]',
  '[[ a || ]]',
  '[[ a && ]]',
  '[[ ! ]]',
  // `for ((` whose parentheses do not close with `))` (bash -n lets these through, they do not run)
  'for ((a) b); do :; done',
  'for ((i=0; i<3; i(++)); do :; done',
];

/**
 * Deliberately more lenient: bash rejects these because of a parser quirk (an array assignment in a
 * `time` pipeline at the very start of `$( )`), the parser accepts them. Nothing runs in bash, so the
 * guard's verdict cannot let anything through.
 */
const LENIENT = ['x=$(time A=(1 2) cat)', 'x=$(time { A=(1) y; })'];

describe('bash -n differential (fixtures/parser/differential.txt)', () => {
  const cases = loadCases();
  const all = [...cases, ...STRICTER, ...LENIENT];
  const bash = bashAccepts(all);

  it('has enough cases, valid and invalid', () => {
    expect(cases.length).toBeGreaterThanOrEqual(150);
    const valid = bash.slice(0, cases.length).filter(Boolean).length;
    expect(valid).toBeGreaterThan(50);
    expect(cases.length - valid).toBeGreaterThan(50);
  });

  it('agrees with bash -n on every case', () => {
    const mismatches: string[] = [];
    cases.forEach((c, i) => {
      if (STRICTER.includes(c)) return;
      const mine = parserAccepts(c);
      if (mine.ok !== bash[i]) {
        mismatches.push(`${JSON.stringify(c)}: bash ${bash[i] ? 'accepts' : 'rejects'}, parser ${mine.ok ? 'accepts' : `rejects (${mine.error})`}`);
      }
    });
    expect(mismatches).toEqual([]);
  });

  it('documented stricter corners: bash -n accepts, the parser rejects', () => {
    STRICTER.forEach((c, k) => {
      expect(bash[cases.length + k], c).toBe(true);
      expect(parserAccepts(c).ok, c).toBe(false);
    });
  });

  it('documented lenient corners: bash rejects (parser quirk), the parser accepts', () => {
    LENIENT.forEach((c, k) => {
      expect(bash[cases.length + STRICTER.length + k], c).toBe(false);
      expect(parserAccepts(c).ok, c).toBe(true);
    });
  });
});

describe('bash -n differential: random token sequences (fast-check, seeded)', () => {
  const TOKENS = [
    'echo', 'a', '"x"', "'y'", '$x', '${x}', '$(', ')', '(', ';', ';;', '&', '&&', '||', '|', '|&', '!', '{', '}',
    'if', 'then', 'else', 'elif', 'fi', 'for', 'in', 'do', 'done', 'while', 'until', 'case', 'esac', 'select',
    'function', 'coproc', 'time', '>', '<', '2>', '>&', '<<<', '<(', '\n', '[[', ']]', '((', '))', '$((', '#c',
    '=', 'x=1', 'a=(', 'f()', '<<E', 'E', '-f', '==', '"', "'", '\\', ';&', "$'", '{x}>', '${', '}',
  ];
  const arb = fc
    .tuple(
      fc.array(fc.constantFrom(...TOKENS), { minLength: 1, maxLength: 9 }),
      fc.array(fc.boolean(), { minLength: 9, maxLength: 9 }),
    )
    .map(([ts, glue]) => ts.map((t, i) => (i === 0 ? t : (glue[i] ? '' : ' ') + t)).join(''));

  it(`agrees with bash -n on ${RANDOM_LINES} random lines`, () => {
    const cases = fc.sample(arb, { seed: 20261129, numRuns: RANDOM_LINES });
    const bash = bashAccepts(cases);
    const mismatches: string[] = [];
    cases.forEach((c, i) => {
      const mine = parserAccepts(c);
      if (mine.ok === bash[i]) return;
      // the documented stricter corners: errors inside a backtick body or a `$((` fallback body, empty `[[ ]]` terms
      if (bash[i] && !mine.ok && (c.includes('`') || c.includes('$((') || mine.error!.includes('empty expression'))) return;
      mismatches.push(`${JSON.stringify(c)}: bash ${bash[i] ? 'accepts' : 'rejects'}, parser ${mine.ok ? 'accepts' : `rejects (${mine.error})`}`);
    });
    expect(mismatches).toEqual([]);
    expect(bash.filter(Boolean).length).toBeGreaterThan(30);
  });
});
