// The lock store's record types (record.ts reads and writes them; claims.ts and component.ts use them).
import type { Lock } from '../types.js';

export type LockTarget = { kind: 'vm'; vm: string } | { kind: 'component'; slug: string };

export interface Claim {
  id: string;
  pid: number;
  host: string;
  command: string;
  started: Date;
  heartbeat?: Date;
  /** The process's start time and the host's boot id when it was made (holder-process.ts). */
  start?: string;
  boot?: string;
  /** The run's job on the VM (its marker there), to make sure it is gone once the process is. */
  job?: string;
}

/** The R3 fields of a lock (src/types.ts Lock), for any target, with the store's own fields. */
export interface LockRecord extends Pick<Lock, 'session' | 'ai' | 'started' | 'heartbeat' | 'ttlMinutes' | 'reason' | 'body'> {
  target: LockTarget;
  /** Held by `offhost lock acquire`, not only by runs' claims. */
  explicit: boolean;
  /** The host whose clock wrote it (`host:`): its expiry is judged by that clock only on that host. */
  host?: string;
  claims: Claim[];
}

