// Component locks (POLICY R7: `<notices>/active/lock-<slug>.md`, orthogonal to VM locks, released after
// them): their frontmatter names a component instead of a VM and is read loosely (the policy gives them
// no schema beyond session and started). Paths: paths.ts (componentLockPath, componentArchivePath). Pure.
import { LockError } from '../errors.js';
import type { LockRecord, LockTarget } from './lock-types.js';
import { parseClaims } from './claims.js';
import { DEFAULT_TTL_MINUTES, MAX_TTL_MINUTES, parseUtc } from './schema.js';

/** A component lock's record from its loosely read frontmatter; LockError naming `shownAs` when unusable. */
export function parseComponentRecord(fm: Record<string, unknown> | null, target: Extract<LockTarget, { kind: 'component' }>, body: string, shownAs: string): LockRecord {
  const session = typeof fm?.session === 'string' ? fm.session : null;
  const started = typeof fm?.started === 'string' ? parseUtc(fm.started) : null;
  if (!fm || !session || !started) {
    throw new LockError('cannot be read as a component lock (it needs session and started in a YAML frontmatter); nothing was changed', shownAs);
  }
  if (fm.ttl_minutes !== undefined && !(typeof fm.ttl_minutes === 'number' && Number.isInteger(fm.ttl_minutes) && fm.ttl_minutes > 0 && fm.ttl_minutes <= MAX_TTL_MINUTES)) {
    throw new LockError(`ttl_minutes ${String(fm.ttl_minutes)} must be a whole number of minutes from 1 to ${MAX_TTL_MINUTES} (24 h); nothing was changed`, shownAs);
  }
  const r: LockRecord = {
    target,
    session,
    ai: typeof fm.ai === 'string' ? fm.ai : 'unknown',
    started,
    ttlMinutes: typeof fm.ttl_minutes === 'number' ? fm.ttl_minutes : DEFAULT_TTL_MINUTES,
    reason: typeof fm.reason === 'string' ? fm.reason : '',
    body,
    explicit: fm.explicit === true,
    claims: parseClaims(fm.claims),
  };
  const hb = typeof fm.heartbeat === 'string' ? parseUtc(fm.heartbeat) : null;
  if (hb) r.heartbeat = hb;
  if (typeof fm.host === 'string' && fm.host) r.host = fm.host;
  return r;
}
