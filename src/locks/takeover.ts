// May this process take over (archive as expired) another session's lock? R4's TTL decides when a lock
// is expired by its timestamps; those timestamps come from the holder's clock, so for a lock written on
// another host they are not enough (docs/LOCKS.md "Time"):
//
//   holder proven gone         -> yes at once, live or not (the seam: LockStoreOptions.holderGone, e.g.
//                                 its process on this host no longer runs; offhost run's liveness check
//                                 plugs in here)
//   live                       -> no
//   expired, written here      -> yes (this machine's own clock wrote and judges it)
//   expired or future, written
//   elsewhere (or unknown)     -> yes only once this machine has seen that exact version unchanged for
//                                 the heartbeat interval + the skew margin on its monotonic clock
//
// A lock whose timestamps are in the future beyond the margin (a wrong clock, `started` in year 9999) is
// judged by the same sighting rule, so it never lasts for ever. Pure, given the sighting.
import type { LockStateName } from './expiry.js';
import { formatDuration } from './expiry.js';
import { heartbeatIntervalMs } from './schedule.js';

export interface TakeoverInput {
  state: LockStateName;
  /** Why the lock is in that state (lockState's sentence). */
  why: string;
  ttlMinutes: number;
  skewSeconds: number;
  /** The host that wrote the lock (`host:`), if it says. */
  lockHost: string | undefined;
  thisHost: string;
  /** Why the holder is known to be gone (its process ended), or null: from the holderGone seam. */
  gone: string | null;
  /** How long this machine has seen this version unchanged (ms), on its monotonic clock. */
  seenForMs: number;
}

export type Takeover = { take: true; why: string } | { take: false; why: string; afterMs?: number };

/** How long a lock of another host must be seen unchanged here before it may be taken over. */
export function observationMs(ttlMinutes: number, skewSeconds: number): number {
  return heartbeatIntervalMs(ttlMinutes) + skewSeconds * 1000;
}

export function takeoverDecision(i: TakeoverInput): Takeover {
  if (i.gone) return { take: true, why: `${i.why}; ${i.gone}` };
  if (i.state === 'live') return { take: false, why: i.why };
  if (i.state === 'expired' && i.lockHost !== undefined && i.lockHost === i.thisHost) return { take: true, why: i.why };
  const need = observationMs(i.ttlMinutes, i.skewSeconds);
  const from = i.lockHost === undefined ? 'a host it does not name' : `host ${i.lockHost}`;
  if (i.seenForMs >= need) {
    return { take: true, why: `${i.why}; unchanged for ${formatDuration(i.seenForMs)} as seen by this machine's own clock (at least the heartbeat interval + the skew margin, ${formatDuration(need)})` };
  }
  const left = need - i.seenForMs;
  return {
    take: false,
    afterMs: left,
    why:
      `${i.why}; but it was written on ${from}, whose clock offhost does not trust, and this machine has seen this version unchanged for only ${formatDuration(i.seenForMs)}: ` +
      `it can be taken over once it has stayed unchanged for ${formatDuration(need)} (heartbeat interval + skew margin), in ${formatDuration(left)} (\`--wait\` waits for it)`,
  };
}
