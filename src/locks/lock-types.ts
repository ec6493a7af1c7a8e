// The lock store's record types (record.ts reads and writes them; claims.ts and component.ts use them).

export type LockTarget = { kind: 'vm'; vm: string } | { kind: 'component'; slug: string };

export interface Claim {
  id: string;
  pid: number;
  host: string;
  command: string;
  started: Date;
  heartbeat?: Date;
}

export interface LockRecord {
  target: LockTarget;
  session: string;
  ai: string;
  started: Date;
  heartbeat?: Date;
  ttlMinutes: number;
  reason: string;
  body: string;
  explicit: boolean;
  claims: Claim[];
}

