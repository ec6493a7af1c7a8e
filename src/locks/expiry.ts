// When a lock is expired (POLICY R4), judged at a given instant with a clock-skew margin. Pure.
import type { Lock } from '../types.js';
import { formatUtc } from './schema.js';

/** Margin for clocks that disagree between machines: default 120 s. */
export const DEFAULT_SKEW_SECONDS = 120;
/** A lock with no heartbeat is expired 24 h after `started`, whatever its ttl. */
export const NO_HEARTBEAT_MAX_MS = 24 * 60 * 60 * 1000;

export type LockStateName = 'live' | 'expired' | 'future';
export interface LockState {
  state: LockStateName;
  /** One sentence for a person: why the lock is in this state. */
  why: string;
  /** The instant after which the lock is expired (without the skew margin). */
  expiresAt: Date;
}

/** `1h 5m`, `42s`, `3d 2h`: offhost's one duration style (src/report/duration.ts). */
export { formatDuration } from '../report/duration.js';
import { formatDuration } from '../report/duration.js';

/**
 * R4: expired when more than `ttl_minutes` have passed since `heartbeat` (or since `started` when there is no
 * heartbeat), or when `started` is more than 24 h ago and there is no heartbeat. The holder gets the benefit of
 * the skew margin: expired only once `now` is past `expiresAt + skew`. A `started` or `heartbeat` later than
 * `now + skew` is 'future' (a wrong clock or a local time written with Z), checked first.
 */
export function lockState(lock: Lock, now: Date, opts: { skewSeconds?: number } = {}): LockState {
  const skewMs = Math.max(0, opts.skewSeconds ?? DEFAULT_SKEW_SECONDS) * 1000;
  const t = now.getTime();
  const ttlMs = lock.ttlMinutes * 60_000;
  const expiresAt = lock.heartbeat
    ? new Date(lock.heartbeat.getTime() + ttlMs)
    : new Date(lock.started.getTime() + Math.min(ttlMs, NO_HEARTBEAT_MAX_MS));

  for (const [name, d] of [['heartbeat', lock.heartbeat], ['started', lock.started]] as const) {
    if (d && d.getTime() > t + skewMs) {
      return {
        state: 'future',
        why: `${name} ${formatUtc(d)} is ${formatDuration(d.getTime() - t)} in the future (now ${formatUtc(now)}, clock-skew margin ${formatDuration(skewMs)}): write the current UTC time, e.g. date -u +%Y-%m-%dT%H:%M:%SZ`,
        expiresAt,
      };
    }
  }
  if (t > expiresAt.getTime() + skewMs) {
    let why: string;
    if (lock.heartbeat) {
      why = `no heartbeat for ${formatDuration(t - lock.heartbeat.getTime())} (last ${formatUtc(lock.heartbeat)}), more than ttl_minutes ${lock.ttlMinutes}`;
    } else if (ttlMs <= NO_HEARTBEAT_MAX_MS) {
      why = `started ${formatDuration(t - lock.started.getTime())} ago (${formatUtc(lock.started)}) with no heartbeat, more than ttl_minutes ${lock.ttlMinutes}`;
    } else {
      why = `started ${formatDuration(t - lock.started.getTime())} ago (${formatUtc(lock.started)}) with no heartbeat, more than 24h`;
    }
    return { state: 'expired', why: `${why}; expired at ${formatUtc(expiresAt)}`, expiresAt };
  }
  return {
    state: 'live',
    why: t <= expiresAt.getTime()
      ? `live: expires at ${formatUtc(expiresAt)}, in ${formatDuration(expiresAt.getTime() - t)}`
      : `live: expired at ${formatUtc(expiresAt)} by the clock here, but within the ${formatDuration(skewMs)} clock-skew margin`,
    expiresAt,
  };
}
