// The lock store's public API (docs/LOCKS.md): open a store on a repository, then acquire / heartbeat /
// release / status / gc, with per-run claims. Errors: LockError (nothing changed), LockLostError (the lock
// or the claim is no longer this session's: stop the work under it).
export { openLockStore, LockStore, LOCK_REF, type LockStoreOptions } from './store.js';
export {
  acquire,
  acquireFirstFree,
  gc,
  heartbeat,
  release,
  status,
  type AcquireArgs,
  type AcquireResult,
  type GcResult,
  type HeartbeatResult,
  type ReleaseResult,
  type StatusEntry,
  type StoreStatus,
  type TargetArg,
  type WaitOptions,
} from './lifecycle.js';
export { LockLostError, isLockLost, type Holder, type LockLostReason } from './holder.js';
export type { Claim, LockRecord, LockTarget } from './record.js';
export type { ClaimSpec } from './claims.js';
export { heartbeatIntervalMs, heartbeatDelay, startHeartbeats, type Timers } from './schedule.js';
