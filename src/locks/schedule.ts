// The heartbeat schedule of a long run (POLICY R4.3: intervals under ttl_minutes/3): pure, driven by a
// Clock and an injected timer.
import { LockError } from '../errors.js';
import type { Clock } from '../types.js';

/**
 * The heartbeat interval for a lock of `ttlMinutes`: a quarter of the ttl (R4 wants intervals under
 * ttl/3), at least 1 s. `overrideMs` (tests, `--heartbeat`) must itself be under ttl/3.
 */
export function heartbeatIntervalMs(ttlMinutes: number, overrideMs?: number): number {
  const third = (ttlMinutes * 60_000) / 3;
  if (overrideMs !== undefined) {
    if (!(overrideMs > 0) || overrideMs >= third) {
      throw new LockError(`the heartbeat interval must be positive and under ttl_minutes/3 (${Math.round(third / 1000)} s for ttl ${ttlMinutes} min)`);
    }
    return overrideMs;
  }
  return Math.max(1000, Math.floor((ttlMinutes * 60_000) / 4));
}

/** ms until the next heartbeat is due, given the last one (0: due now). */
export function heartbeatDelay(last: Date, now: Date, intervalMs: number): number {
  return Math.max(0, last.getTime() + intervalMs - now.getTime());
}

export interface Timers {
  set(fn: () => void, ms: number): unknown;
  clear(handle: unknown): void;
}

export const realTimers: Timers = {
  set: (fn, ms) => {
    const t = setTimeout(fn, ms);
    t.unref?.();
    return t;
  },
  clear: (h) => clearTimeout(h as NodeJS.Timeout),
};

/**
 * Calls `beat()` every `intervalMs` (measured on `clock`) until stopped; a beat that is still running
 * delays the next one (never two at once). `stop()` resolves once any beat in flight has finished.
 */
export function startHeartbeats(opts: {
  clock: Clock;
  intervalMs: number;
  beat: () => Promise<void>;
  timers?: Timers;
  /** When the last heartbeat (or the acquire) happened; default now. */
  last?: Date;
}): { stop(): Promise<void>; beats(): number } {
  const timers = opts.timers ?? realTimers;
  let last = opts.last ?? opts.clock.now();
  let handle: unknown = null;
  let stopped = false;
  let inflight: Promise<void> | null = null;
  let count = 0;
  const schedule = () => {
    if (stopped) return;
    handle = timers.set(tick, heartbeatDelay(last, opts.clock.now(), opts.intervalMs));
  };
  const tick = () => {
    handle = null;
    if (stopped) return;
    const now = opts.clock.now();
    if (heartbeatDelay(last, now, opts.intervalMs) > 0) return schedule();
    inflight = opts
      .beat()
      .catch(() => undefined)
      .then(() => {
        count++;
        last = opts.clock.now();
        inflight = null;
        schedule();
      });
  };
  schedule();
  return {
    async stop() {
      stopped = true;
      if (handle !== null) timers.clear(handle);
      handle = null;
      if (inflight) await inflight;
    },
    beats: () => count,
  };
}
