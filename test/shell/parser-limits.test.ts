// Hard limits: NUL bytes, over-long input, nesting past maxDepth — all ParseError with a position.
// Pathological inputs must finish quickly (no timing assertions here; figures are in the bench).
import { describe, expect, it } from 'vitest';
import { parse } from '../../src/shell/parser.js';
import { ParseError } from '../../src/errors.js';

function error(src: string, limits?: { maxLength?: number; maxDepth?: number }): ParseError {
  try {
    parse(src, limits);
  } catch (e) {
    expect(e).toBeInstanceOf(ParseError);
    return e as ParseError;
  }
  throw new Error(`expected a ParseError for ${JSON.stringify(src.slice(0, 80))}`);
}

describe('parse limits', () => {
  it('rejects NUL bytes at their position', () => {
    const e = error('echo a\nb\0c');
    expect(e.reason).toMatch(/NUL/);
    expect(e.position).toEqual({ offset: 8, line: 2, column: 2 });
  });

  it('rejects input longer than maxLength (default 1 MiB)', () => {
    const e = error('echo ' + 'a'.repeat(1024 * 1024));
    expect(e.reason).toMatch(/too long/);
    expect(e.position.offset).toBe(1024 * 1024);
    expect(error('echo abc', { maxLength: 4 }).reason).toMatch(/too long.*limit is 4/);
    expect(() => parse('echo abc', { maxLength: 8 })).not.toThrow();
  });

  const nests: [string, (n: number) => string][] = [
    ['$(', (n) => 'echo ' + '$('.repeat(n) + 'x' + ')'.repeat(n)],
    ['subshell', (n) => '( '.repeat(n) + 'x' + ' )'.repeat(n)],
    ['arithmetic command fallback', (n) => '('.repeat(n) + 'x)' + ' )'.repeat(n - 1)],
    ['group', (n) => '{ '.repeat(n) + 'x; ' + '}; '.repeat(n)],
    ['${', (n) => 'echo ' + '${x:-'.repeat(n) + 'y' + '}'.repeat(n)],
    ['quotes in $(', (n) => 'echo ' + '"$('.repeat(n) + 'x' + ')"'.repeat(n)],
    ['if', (n) => 'if true; then '.repeat(n) + ':; ' + 'fi; '.repeat(n)],
    ['[[ (', (n) => '[[ ' + '( '.repeat(n) + 'a' + ' )'.repeat(n) + ' ]]'],
    ['<(', (n) => 'cat ' + '<('.repeat(n) + 'x' + ')'.repeat(n)],
    ['$((', (n) => 'echo ' + '$(('.repeat(n) + '1' + '))'.repeat(n)],
  ];

  for (const [name, make] of nests) {
    it(`nesting of ${name}: accepted within maxDepth, ParseError past it`, () => {
      expect(() => parse(make(10), { maxDepth: 40 })).not.toThrow();
      const e = error(make(60), { maxDepth: 40 });
      expect(e.reason).toMatch(/nesting too deep: more than 40/);
      expect(e.position.offset).toBeGreaterThan(0);
      // default limit 200
      expect(error(make(250)).reason).toMatch(/more than 200/);
    });
  }

  it('nesting of backticks (escapes double per level, so only a few levels)', () => {
    const make = (n: number): string => {
      let s = 'x';
      for (let i = 0; i < n; i++) s = '`echo ' + s.replace(/[\\`]/g, (c) => '\\' + c) + '`';
      return 'echo ' + s;
    };
    expect(() => parse(make(3), { maxDepth: 10 })).not.toThrow();
    expect(error(make(12), { maxDepth: 8 }).reason).toMatch(/nesting too deep: more than 8/);
  });

  it('40 nested unclosed $( fails (and fast: no re-scans)', () => {
    const e = error('echo ' + '$('.repeat(40));
    expect(e.reason).toMatch(/expected to close/);
    const e2 = error('echo ' + '$(('.repeat(40));
    expect(e2).toBeInstanceOf(ParseError);
    const e3 = error('echo ' + '$( ('.repeat(40));
    expect(e3).toBeInstanceOf(ParseError);
  });

  it('a 100 KB line parses', () => {
    const line = Array.from({ length: 5000 }, (_, i) => `echo "a${i}" $x$(b)|c`).join(';');
    expect(line.length).toBeGreaterThan(100_000);
    expect(parse(line).items.length).toBe(5000);
    const word = 'echo ' + 'ab\\ c'.repeat(25_000);
    expect(parse(word).items.length).toBe(1);
  });

  it('pathological inputs near the length limit finish (linear: no re-scans)', () => {
    const pad = ' '.repeat(900_000);
    // every `((` attempt fails and falls back to a subshell: matched regions are remembered
    expect(parse('('.repeat(150) + 'x' + pad + ' )'.repeat(150)).items.length).toBe(1);
    expect(parse('echo ' + '$(('.repeat(60) + 'x' + pad + ' )'.repeat(120)).items.length).toBe(1);
    expect(() => parse('echo "' + 'a'.repeat(900_000))).toThrow(ParseError);
    expect(parse('cat <<E\n' + 'x\n'.repeat(300_000)).items.length).toBe(1);
  });

  it('large maxDepth cannot overflow the stack with anything but ParseError', () => {
    const e = error('echo ' + '$('.repeat(100_000) + ')'.repeat(100_000), { maxDepth: 1_000_000 });
    expect(e.reason).toMatch(/nesting too deep/);
    expect(e.reason).toMatch(/nesting too deep|stack/);
  });
});
