// quote(): unit cases plus a round trip through real bash and dash (one process per batch).
import { spawnSync } from 'node:child_process';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { quote, quoteArgv } from '../../src/routes/quote.js';
import { hostileString } from './harness.js';

/** Each string quoted as its own word, printed NUL-terminated by the given shell. */
function roundTrip(shell: string, strings: string[]): string[] {
  const script = `printf '%s\\0' ${strings.map(quote).join(' ')}`;
  const r = spawnSync(shell, ['-c', script], { encoding: 'utf8' });
  expect(r.stderr).toBe('');
  return r.stdout.split('\0').slice(0, -1);
}

describe('quote', () => {
  it.each([
    ['', "''"],
    ['make', 'make'],
    ['build-safe', 'build-safe'],
    ['/home/koder/dev/koder', '/home/koder/dev/koder'],
    ['-n', '-n'],
    ['a b', "'a b'"],
    ['a=b', "'a=b'"],
    ['~root', "'~root'"],
    ['$HOME', "'$HOME'"],
    ['!', "'!'"],
    ['é', "'é'"],
    ['{a,b}', "'{a,b}'"],
    ['a\nb', "'a\nb'"],
    ["it's", `"it's"`],
    ["'make build-safe'", `"'make build-safe'"`],
    ["it's $HOME", `'it'\\''s $HOME'`],
    ["'", `"'"`],
    ["'$", `\\''$'`],
    ["$'", `'$'\\'`],
    ["a'!'b", `'a'\\''!'\\''b'`],
  ])('quote(%j) = %s', (input, expected) => {
    expect(quote(input)).toBe(expected);
  });

  it('refuses NUL (no argv can carry it)', () => {
    expect(() => quote('a\0b')).toThrow(TypeError);
  });

  it('quoteArgv joins quoted words with spaces', () => {
    expect(quoteArgv(['bash', '-c', 'make build-safe'])).toBe("bash -c 'make build-safe'");
  });

  it('the first word can never turn into an assignment, a keyword or an expansion', () => {
    for (const w of ['a=b', 'if', 'time', 'in', 'coproc', '!', '{', '~', '#x', '*']) {
      const r = spawnSync('bash', ['-c', `${quote(w)} 2>/dev/null; echo $?`], { encoding: 'utf8' });
      // looked up as a command (not found: 127; /usr/bin/time without arguments: 125), never run as syntax (0 or 2)
      expect(['127', '126', '125'], w).toContain(r.stdout.trim());
    }
  });

  for (const shell of ['bash', 'dash']) {
    it(`round-trips hostile strings through ${shell} (seeded, 40 batches of 25)`, () => {
      fc.assert(
        fc.property(fc.array(hostileString, { minLength: 1, maxLength: 25 }), (strings) => {
          expect(roundTrip(shell, strings)).toEqual(strings);
        }),
        { numRuns: 40, seed: 424242 },
      );
    });
  }

  it('round-trips a second layer (quote of a quoted line, as for ssh)', () => {
    fc.assert(
      fc.property(fc.array(hostileString, { minLength: 1, maxLength: 8 }), (words) => {
        const inner = `printf '%s\\0' ${quoteArgv(words)}`;
        const r = spawnSync('bash', ['-c', `sh -c ${quote(inner)}`], { encoding: 'utf8' });
        expect(r.stdout.split('\0').slice(0, -1)).toEqual(words);
      }),
      { numRuns: 40, seed: 777 },
    );
  });
});
