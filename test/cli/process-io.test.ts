// The real process behind Io (src/cli/process-io.ts), as units; reading standard input end to end is in
// test/e2e/hooks-stdin.test.ts.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { utf8 } from '../../src/cli/process-io.js';

describe('utf8', () => {
  it('decodes what Buffer#toString decodes, invalid and cut-off sequences included', () => {
    for (const s of ['', 'a', 'é😀', '{"command":"echo ü"}']) {
      const b = Buffer.from(s);
      expect(utf8(b, b.length)).toBe(s);
    }
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 64 }), fc.nat(), (bytes, cut) => {
        const b = Buffer.from(bytes);
        const n = bytes.length === 0 ? 0 : cut % (bytes.length + 1);
        return utf8(b, n) === b.toString('utf8', 0, n);
      }),
      { numRuns: 20_000 },
    );
  });
});
