// Who holds a lock, as every operation reports it, and the typed event of losing one. Pure.
import { LockError } from '../errors.js';
import type { LockStateName } from './expiry.js';
import { stateOf, targetName, type Claim, type LockRecord } from './record.js';

/** Where a holder was found: the lock ref (this clone or the remote's), or a branch (a hand-committed lock). */
export type Where = 'ref' | 'remote' | 'branch';

export interface Holder extends Pick<LockRecord, 'session' | 'ai' | 'started' | 'heartbeat' | 'ttlMinutes' | 'reason' | 'explicit' | 'claims'> {
  target: string;
  kind: 'vm' | 'component';
  file: string;
  state: LockStateName;
  why: string;
  expiresAt: Date;
  where: Where;
}

export function holderOf(r: LockRecord, file: string, now: Date, where: Where, skewSeconds?: number): Holder {
  const st = stateOf(r, now, skewSeconds);
  const h: Holder = {
    target: targetName(r.target),
    kind: r.target.kind,
    file,
    session: r.session,
    ai: r.ai,
    started: r.started,
    ttlMinutes: r.ttlMinutes,
    reason: r.reason,
    state: st.state,
    why: st.why,
    expiresAt: st.expiresAt,
    explicit: r.explicit,
    claims: r.claims,
    where,
  };
  if (r.heartbeat) h.heartbeat = r.heartbeat;
  return h;
}

export type LockLostReason = 'taken' | 'absent' | 'expired' | 'claim-gone' | 'clock' | 'not-renewed';

/**
 * The lock (or the run's claim on it) is no longer this session's: taken over, archived, expired before it
 * was renewed, its claim removed, or the clock moved past the skew margin. The work under it must stop.
 */
export class LockLostError extends LockError {
  override readonly name = 'LockLostError';
  constructor(
    message: string,
    readonly reason: LockLostReason,
    readonly target: string,
    readonly holder?: Holder,
  ) {
    super(message);
  }
}

/** `err` is a LockLostError (also one from another bundle's copy of this module). */
export function isLockLost(err: unknown): err is LockLostError {
  return typeof err === 'object' && err !== null && (err as { name?: unknown }).name === 'LockLostError';
}
