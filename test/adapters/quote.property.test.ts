// shQuote / joinArgv / withSession against real bash: whatever the words (quotes, $, backticks, newlines,
// UTF-8), bash reads back exactly the argv and the session we wrote.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { spawnSync } from 'node:child_process';
import { joinArgv, sessionTag, shQuote, withSession } from '../../src/adapters/common.js';

const word = fc.string({ unit: fc.constantFrom('a', 'Z', '0', ' ', "'", '"', '\\', '$', '`', '!', '*', '?', '~', '#', ';', '&', '|', '(', ')', '{', '}', '<', '>', '\n', '\t', '=', '-', 'é', '☃'), maxLength: 12 });

function bashArgv(line: string): string[] {
  const r = spawnSync('bash', ['-c', `set -- ${line}; printf '%s\\0' "$@"`], { encoding: 'utf8' });
  expect(r.status, r.stderr).toBe(0);
  return r.stdout.split('\0').slice(0, -1);
}

describe('quoting for bash', () => {
  it('joinArgv round-trips through bash', () => {
    fc.assert(
      fc.property(fc.array(word, { minLength: 1, maxLength: 5 }), (argv) => {
        expect(bashArgv(joinArgv(argv))).toEqual(argv);
      }),
      { numRuns: 60 },
    );
  });

  it('shQuote leaves plain words bare', () => {
    expect(shQuote('build-safe')).toBe('build-safe');
    expect(shQuote('')).toBe("''");
    expect(shQuote("it's")).toBe(`'it'\\''s'`);
  });

  it('withSession exports exactly the session, whatever the user put in OFFHOST_SESSION', () => {
    fc.assert(
      fc.property(word.filter((w) => w.trim() !== ''), (session) => {
        const line = withSession(`bash -c 'printf "%s\\0" "$OFFHOST_SESSION" "$OFFHOST_AI"'`, sessionTag('claude-code', 'x', { OFFHOST_SESSION: session }), 'claude-code');
        const r = spawnSync('bash', ['-c', line], { encoding: 'utf8' });
        expect(r.stdout.split('\0').slice(0, -1)).toEqual([session, 'claude']);
      }),
      { numRuns: 40 },
    );
  });
});
