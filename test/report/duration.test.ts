// offhost's one duration style, used by every message that gives a duration.
import { describe, expect, it } from 'vitest';
import { formatDuration } from '../../src/report/duration.js';
import { formatDuration as fromExpiry } from '../../src/locks/expiry.js';

describe('formatDuration', () => {
  it.each([
    [0, '0ms'],
    [300, '300ms'],
    [999, '999ms'],
    [1000, '1s'],
    [42_000, '42s'],
    [120_000, '2m'],
    [312_000, '5m 12s'],
    [3_900_000, '1h 5m'],
    [86_400_000, '24h'],
    [266_400_000, '3d 2h'],
    [-42_000, '42s'],
  ])('%d ms -> %s', (ms, text) => {
    expect(formatDuration(ms)).toBe(text);
  });

  it('is the one the lock messages use', () => {
    expect(fromExpiry).toBe(formatDuration);
  });
});
