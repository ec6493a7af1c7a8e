// The suggestion a person reads says `offhost run -- …`, whichever file the running offhost was.
import { describe, expect, it } from 'vitest';
import { portable } from '../../src/adapters/scan.js';

describe('portable rewrite', () => {
  it.each([
    ["/opt/offhost/dist/offhost.cjs run -- 'make build-safe'"],
    ["/opt/offhost/dist/offhost.mjs run -- 'make build-safe'"],
    ["'/home/me/my tools/dist/offhost.cjs' run -- 'make build-safe'"],
    ["offhost run -- 'make build-safe'"],
  ])('%s', (rewrite) => {
    expect(portable(rewrite)).toBe("offhost run -- 'make build-safe'");
  });
  it('leaves a route command alone', () => {
    const route = `ssh khost1 -- incus exec dev-linux-koda --cwd /x -- bash -c "'make'"`;
    expect(portable(route)).toBe(route);
  });
});
