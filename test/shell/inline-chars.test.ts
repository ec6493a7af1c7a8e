// The inline-code lexers' character classes read from char codes (src/shell/inline/tokens.ts) must be
// exactly the regular expressions they replaced, over every UTF-16 code unit and at the length caps.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { identEnd, isDigitCode, isIdentStartCode, isSpaceAt } from '../../src/shell/inline/tokens.js';

describe('inline lexers: character classes', () => {
  it('isSpaceAt is /\\s/, isIdentStartCode is [A-Za-z_] / [A-Za-z_$], isDigitCode is [0-9], for every code unit', () => {
    for (let c = 0; c <= 0xffff; c++) {
      const ch = String.fromCharCode(c);
      if (isSpaceAt(`a${ch}`, 1) !== /\s/.test(ch)) throw new Error(`isSpaceAt U+${c.toString(16)}`);
      if (isIdentStartCode(c) !== /[A-Za-z_]/.test(ch)) throw new Error(`isIdentStartCode U+${c.toString(16)}`);
      if (isIdentStartCode(c, true) !== /[A-Za-z_$]/.test(ch)) throw new Error(`isIdentStartCode($) U+${c.toString(16)}`);
      if (isDigitCode(c) !== /[0-9]/.test(ch)) throw new Error(`isDigitCode U+${c.toString(16)}`);
    }
  });

  it('identEnd ends where the identifier expression matched on the capped slice', () => {
    const cases = ['a', 'abc def', 'a1_b2(', 'x'.repeat(300), '_$a$b', 'é', 'aé', 'a\u00a0b', 'A9z_Z-', 'sys.argv'];
    const check = (s: string, dollar: boolean) => {
      if (!isIdentStartCode(s.charCodeAt(0), dollar)) return;
      const re = dollar ? /^[A-Za-z_$][A-Za-z0-9_$]*/ : /^[A-Za-z_][A-Za-z0-9_]*/;
      expect(identEnd(s, 0, 256, dollar)).toBe(re.exec(s.slice(0, 256))![0].length);
      const at = `  ${s}`;
      expect(identEnd(at, 2, 256, dollar) - 2).toBe(re.exec(at.slice(2, 258))![0].length);
    };
    for (const s of cases) for (const d of [false, true]) check(s, d);
    fc.assert(fc.property(fc.string({ unit: fc.constantFrom('a', 'Z', '_', '$', '1', ' ', '.', 'é', '(') , maxLength: 400 }), fc.boolean(), (s, d) => check(s, d)), { numRuns: 2000 });
  });
});
