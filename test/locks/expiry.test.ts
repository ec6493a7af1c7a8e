// R4 expiry at exact boundaries, with an injected clock and the skew margin.
import { describe, expect, it } from 'vitest';
import { DEFAULT_SKEW_SECONDS, lockState } from '../../src/locks/expiry.js';
import type { Lock } from '../../src/types.js';

const T0 = Date.parse('2026-05-19T22:30:00Z');
const min = 60_000;
const sec = 1000;

function lock(over: Partial<Lock> = {}): Lock {
  return { vm: 's.khost1.dev-linux-koda', session: 's', ai: 'claude', started: new Date(T0), ttlMinutes: 120, reason: 'r', body: '', file: 'f', positions: {}, ...over };
}
const at = (ms: number) => new Date(ms);

describe('lockState', () => {
  it('default skew is 120 s', () => expect(DEFAULT_SKEW_SECONDS).toBe(120));

  it('no heartbeat: expires ttl after started; expired only past ttl + skew', () => {
    const l = lock({ ttlMinutes: 60 });
    const exp = T0 + 60 * min;
    expect(lockState(l, at(exp)).expiresAt.getTime()).toBe(exp);
    expect(lockState(l, at(exp - 1)).state).toBe('live');
    expect(lockState(l, at(exp)).state).toBe('live');
    expect(lockState(l, at(exp + 120 * sec)).state).toBe('live'); // exactly at the margin: still the holder's
    expect(lockState(l, at(exp + 120 * sec + 1)).state).toBe('expired');
    expect(lockState(l, at(exp + 120 * sec + 1)).why).toContain('with no heartbeat, more than ttl_minutes 60');
    expect(lockState(l, at(exp + 1), { skewSeconds: 0 }).state).toBe('expired');
    expect(lockState(l, at(exp), { skewSeconds: 0 }).state).toBe('live');
  });

  it('heartbeat: expires ttl after the heartbeat', () => {
    const hb = T0 + 90 * min;
    const l = lock({ ttlMinutes: 60, heartbeat: new Date(hb) });
    expect(lockState(l, at(hb + 60 * min), { skewSeconds: 0 }).state).toBe('live');
    expect(lockState(l, at(hb + 60 * min + 1), { skewSeconds: 0 }).state).toBe('expired');
    expect(lockState(l, at(hb + 60 * min + 1), { skewSeconds: 0 }).why).toContain('no heartbeat for 1h (last 2026-05-20T00:00:00Z), more than ttl_minutes 60');
    expect(lockState(l, at(hb + 60 * min + 1)).state).toBe('live');
  });

  it('no heartbeat: 24 h after started even with a longer ttl', () => {
    const l = lock({ ttlMinutes: 48 * 60 });
    const day = T0 + 24 * 60 * min;
    expect(lockState(l, at(day)).expiresAt.getTime()).toBe(day);
    expect(lockState(l, at(day), { skewSeconds: 0 }).state).toBe('live');
    const r = lockState(l, at(day + 1), { skewSeconds: 0 });
    expect(r.state).toBe('expired');
    expect(r.why).toContain('with no heartbeat, more than 24h');
  });

  it('with a heartbeat the 24 h rule does not apply (ttl from the heartbeat)', () => {
    const l = lock({ ttlMinutes: 48 * 60, heartbeat: new Date(T0 + 23 * 60 * min) });
    expect(lockState(l, at(T0 + 30 * 60 * min), { skewSeconds: 0 }).state).toBe('live');
  });

  it('future: started or heartbeat later than now + skew', () => {
    const l = lock();
    expect(lockState(l, at(T0 - 120 * sec)).state).toBe('live');
    const f = lockState(l, at(T0 - 120 * sec - 1));
    expect(f.state).toBe('future');
    expect(f.why).toMatch(/^started 2026-05-19T22:30:00Z is 2m in the future/);
    const hb = lock({ heartbeat: new Date(T0 + 10 * min) });
    const g = lockState(hb, at(T0 + 5 * min));
    expect(g.state).toBe('future');
    expect(g.why).toMatch(/^heartbeat /);
    expect(lockState(hb, at(T0 + 5 * min), { skewSeconds: 600 }).state).toBe('live');
  });

  it('reports why a live lock is live', () => {
    const r = lockState(lock(), at(T0 + 30 * min));
    expect(r.state).toBe('live');
    expect(r.why).toBe('live: expires at 2026-05-20T00:30:00Z, in 1h 30m');
  });
});
