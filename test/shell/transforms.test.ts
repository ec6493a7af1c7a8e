// The stdin transformers (src/shell/transforms.ts) against the real programs: for each case, the text the
// guard computes is what the program prints. What it does not follow is unknown, never a guess.
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { transformed } from '../../src/shell/transforms.js';

const f = (words: string[]) => words.map((value) => ({ value, known: true }));
const real = (argv: string[], input: string) => spawnSync(argv[0]!, argv.slice(1), { input, encoding: 'utf8' });

describe('transformed, against the real program', () => {
  const B = Buffer.from('make -C engines/lang/koda build\n').toString('base64');
  it.each([
    [['base64', '-d'], `${B}\n`],
    [['base64', '--decode'], `${B.slice(0, 10)}\n${B.slice(10)}\n`],
    [['base64'], 'make build\n'],
    [['base64'], `${'make build-safe && '.repeat(8)}true\n`],
    [['tr', 'A-Za-z', 'N-ZA-Mn-za-m'], 'znxr -P ratvarf/ynat/xbqn ohvyq\n'],
    [['tr', 'a-z', 'A-Z'], 'make build\n'],
    [['tr', 'abc', 'x'], 'aabbcc\n'],
    [['tr', '-d', 'x'], 'mxaxke build\n'],
    [['tr', '_', '\\n'], 'make_build\n'],
    [['rev'], 'dliub ekam\nenil dnoces\n'],
    [['cat'], 'make build\n'],
    [['xxd', '-r', '-p'], '6d616b65206275696c64\n'],
  ])('%j', (argv, input) => {
    const r = real(argv, input);
    expect(r.status).toBe(0);
    expect(transformed(argv[0]!, f(argv), { value: input, known: true })).toEqual({ value: r.stdout, known: true });
  });

  it('what it does not follow is unknown: a character class, an option it does not know, input that is not base64', () => {
    for (const [argv, input] of [
      [['tr', '[:lower:]', '[:upper:]'], 'make'],
      [['base64', '-w0'], 'make'],
      [['base64', '-d'], 'not base64 at all!'],
      [['tr', '-s', 'a'], 'aa'],
      [['xxd', '-r'], '00000000: 6d61'],
    ] as const) {
      expect(transformed(argv[0], f([...argv]), { value: input, known: true })).toEqual({ value: '', known: false });
    }
    // Unknown input gives unknown output.
    expect(transformed('rev', f(['rev']), { value: '', known: false })).toEqual({ value: '', known: false });
  });

  it('a call that reads a file, not standard input, is not a transformer here', () => {
    expect(transformed('cat', f(['cat', 'build.sh']), { value: 'x', known: true })).toBeNull();
    expect(transformed('base64', f(['base64', '-d', 'payload.b64']), { value: 'x', known: true })).toBeNull();
    expect(transformed('rev', f(['rev', 'notes.txt']), { value: 'x', known: true })).toBeNull();
    expect(transformed('sort', f(['sort']), { value: 'x', known: true })).toBeNull();
  });
});
