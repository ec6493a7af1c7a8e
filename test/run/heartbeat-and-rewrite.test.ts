// Pure parts of `offhost run`: the heartbeat schedule (fake clock and timers) and the rewrite line
// (checked by a real bash reading it back).
import { describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import fc from 'fast-check';
import { heartbeatDelay, heartbeatIntervalMs, startHeartbeats, type Timers } from '../../src/locks/schedule.js';
import { offhostExecutable, runRewrite, singleQuote } from '../../src/adapters/run-rewrite.js';
import { LockError } from '../../src/errors.js';

/** A clock and timers that only move when the test says so. */
function fakeTime(start = Date.parse('2026-05-19T22:30:00Z')) {
  let now = start;
  let seq = 0;
  const pending = new Map<number, { at: number; fn: () => void }>();
  const timers: Timers = {
    set: (fn, ms) => {
      const id = ++seq;
      pending.set(id, { at: now + ms, fn });
      return id;
    },
    clear: (h) => void pending.delete(h as number),
  };
  return {
    clock: { now: () => new Date(now) },
    timers,
    pending,
    /** Moves time forward, firing due timers in order (and awaiting the work they start). */
    async advance(ms: number) {
      const end = now + ms;
      for (;;) {
        const due = [...pending.entries()].filter(([, t]) => t.at <= end).sort((a, b) => a[1].at - b[1].at)[0];
        if (!due) break;
        pending.delete(due[0]);
        now = Math.max(now, due[1].at);
        due[1].fn();
        for (let i = 0; i < 5; i++) await Promise.resolve();
      }
      now = end;
    },
  };
}

describe('heartbeat interval', () => {
  it('is a quarter of the ttl, always under ttl/3', () => {
    expect(heartbeatIntervalMs(120)).toBe(30 * 60_000);
    expect(heartbeatIntervalMs(60)).toBe(15 * 60_000);
    expect(heartbeatIntervalMs(1)).toBe(15_000);
    fc.assert(fc.property(fc.integer({ min: 1, max: 100_000 }), (ttl) => heartbeatIntervalMs(ttl) < (ttl * 60_000) / 3));
  });
  it('accepts an override only under ttl/3', () => {
    expect(heartbeatIntervalMs(1, 500)).toBe(500);
    expect(() => heartbeatIntervalMs(1, 20_000)).toThrow(LockError);
    expect(() => heartbeatIntervalMs(1, 0)).toThrow(LockError);
  });
  it('delay counts from the last beat', () => {
    const last = new Date('2026-05-19T22:30:00Z');
    expect(heartbeatDelay(last, new Date('2026-05-19T22:40:00Z'), 15 * 60_000)).toBe(5 * 60_000);
    expect(heartbeatDelay(last, new Date('2026-05-19T22:50:00Z'), 15 * 60_000)).toBe(0);
  });
});

describe('startHeartbeats', () => {
  it('beats every interval on the clock, never two at once, and stop() waits for the one in flight', async () => {
    const t = fakeTime();
    const at: string[] = [];
    let release: (() => void) | null = null;
    let slow = false;
    const hb = startHeartbeats({
      clock: t.clock,
      intervalMs: 15 * 60_000,
      timers: t.timers,
      beat: async () => {
        at.push(t.clock.now().toISOString());
        if (slow) await new Promise<void>((r) => (release = r));
      },
    });
    await t.advance(14 * 60_000);
    expect(at).toEqual([]);
    await t.advance(60_000);
    expect(at).toEqual(['2026-05-19T22:45:00.000Z']);
    await t.advance(30 * 60_000);
    expect(at).toEqual(['2026-05-19T22:45:00.000Z', '2026-05-19T23:00:00.000Z', '2026-05-19T23:15:00.000Z']);
    // A slow beat: no timer is pending while it runs, so no second beat starts.
    slow = true;
    await t.advance(15 * 60_000);
    expect(at).toHaveLength(4);
    expect(t.pending.size).toBe(0);
    await t.advance(60 * 60_000);
    expect(at).toHaveLength(4);
    let stopped = false;
    const stopping = hb.stop().then(() => (stopped = true));
    await Promise.resolve();
    expect(stopped).toBe(false);
    (release as unknown as () => void)();
    await stopping;
    expect(stopped).toBe(true);
    expect(t.pending.size).toBe(0);
    expect(hb.beats()).toBe(4);
  });

  it('a failing beat does not stop the schedule', async () => {
    const t = fakeTime();
    let n = 0;
    const hb = startHeartbeats({
      clock: t.clock,
      intervalMs: 1000,
      timers: t.timers,
      beat: async () => {
        n++;
        throw new Error('git busy');
      },
    });
    await t.advance(3500);
    expect(n).toBe(3);
    await hb.stop();
    await t.advance(5000);
    expect(n).toBe(3);
  });
});

describe('runRewrite', () => {
  it('has the documented form', () => {
    expect(runRewrite('make build-safe', { executable: '/opt/offhost/dist/offhost.mjs' })).toBe(`/opt/offhost/dist/offhost.mjs run -- 'make build-safe'`);
    expect(runRewrite('make build-safe', { executable: 'offhost' })).toBe(`offhost run -- 'make build-safe'`);
    expect(runRewrite('make build', { executable: '/home/me/my tools/offhost.mjs' })).toBe(`'/home/me/my tools/offhost.mjs' run -- 'make build'`);
    expect(runRewrite("make -C '/x y' build", { executable: 'offhost', session: 'claude-1', cwd: '/home/koder/dev/koder' })).toBe(
      `offhost run --session 'claude-1' --cwd '/home/koder/dev/koder' -- 'make -C '\\''/x y'\\'' build'`,
    );
  });
  it('names the running offhost.mjs by its real path, else offhost', () => {
    expect(offhostExecutable('/usr/lib/node_modules/vitest/vitest.mjs')).toBe('offhost');
    expect(offhostExecutable(undefined)).toBe('offhost');
    expect(offhostExecutable('/nonexistent/dist/offhost.mjs')).toBe('/nonexistent/dist/offhost.mjs');
  });
  it('bash reads every word back exactly (property)', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 40 }).filter((s) => !s.includes('\0')), fc.string({ maxLength: 12 }).filter((s) => !s.includes('\0')), (line, session) => {
        const rw = runRewrite(line, { executable: 'off host', session: session || 'x' });
        const out = execFileSync('bash', ['-c', `for w in ${rw}; do printf '%s\\0' "$w"; done`], { encoding: 'utf8' });
        expect(out.split('\0').slice(0, -1)).toEqual(['off host', 'run', '--session', session || 'x', '--', line]);
      }),
      { numRuns: 60 },
    );
    expect(singleQuote("it's")).toBe(`'it'\\''s'`);
  });
});
