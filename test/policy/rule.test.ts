// Compiled-rule helpers that run at every start.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { varNamesIn, varToken } from '../../src/policy/rule.js';

const byRegex = (s: string) => [...s.matchAll(/__OFFHOST_VAR_([a-z][a-z0-9_]*)__/g)].map((m) => m[1]);

describe('varNamesIn', () => {
  it('finds what the placeholder regular expression finds', () => {
    for (const s of [
      `^(?:${varToken('koda')}(?:\\/(?!\\.)(?:.*))?)$`,
      `${varToken('root')}\\/x\\/${varToken('home')}`,
      `${varToken('a__b')}`,
      `${varToken('koda')}_x`,
      '__OFFHOST_VAR_9x__',
      '__OFFHOST_VAR___',
      'no placeholder',
      '__OFFHOST_VAR_koda',
    ]) {
      expect(varNamesIn(s), s).toEqual(byRegex(s));
    }
  });
  it('agrees with it on any mix of placeholders and text', () => {
    const piece = fc.oneof(fc.constantFrom('__OFFHOST_VAR_', '__', '_', 'a', 'z9', '/', '\\/', 'koda', 'Q'), fc.string({ maxLength: 3 }));
    fc.assert(fc.property(fc.array(piece, { maxLength: 12 }), (parts) => {
      const s = parts.join('');
      expect(varNamesIn(s)).toEqual(byRegex(s));
    }), { numRuns: 3000 });
  });
});
