// A lock as offhost's store keeps it: the R3 frontmatter plus two fields of offhost's own,
//   explicit: true      held by `offhost lock acquire` (not only by runs' claims)
//   claims:             the runs holding it now, each {id, pid, host, command, started, heartbeat}
// for VM locks (vm-active/lock-<vm>.md) and component locks (active/lock-<slug>.md, POLICY R7, read by
// component.ts). Pure.
import { stringify } from 'yaml';
import { LockError } from '../errors.js';
import type { Lock } from '../types.js';
import type { Claim, LockRecord, LockTarget } from './lock-types.js';
import { lockState, type LockStateName } from './expiry.js';
import { parseLockBuffer, readFrontmatterLoose } from './parse.js';
import { activeLockPath, componentLockPath } from './paths.js';
import { formatUtc, parseUtc, vmIdProblem } from './schema.js';
import { parseComponentRecord } from './component.js';
import { parseClaims } from './claims.js';

export type { Claim, LockRecord, LockTarget } from './lock-types.js';

export function targetName(t: LockTarget): string {
  return t.kind === 'vm' ? t.vm : t.slug;
}

export function lockPathOf(t: LockTarget, noticesDir: string): string {
  return t.kind === 'vm' ? activeLockPath(t.vm, noticesDir) : componentLockPath(t.slug, noticesDir);
}

/** The record as the R3 `Lock` type (for expiry and messages). */
export function asLock(r: LockRecord, file: string): Lock {
  const l: Lock = {
    vm: targetName(r.target),
    session: r.session,
    ai: r.ai,
    started: r.started,
    ttlMinutes: r.ttlMinutes,
    reason: r.reason,
    body: r.body,
    file,
    positions: {},
  };
  if (r.heartbeat) l.heartbeat = r.heartbeat;
  return l;
}

export function stateOf(r: LockRecord, now: Date, skewSeconds?: number): { state: LockStateName; why: string; expiresAt: Date } {
  return lockState(asLock(r, ''), now, skewSeconds === undefined ? {} : { skewSeconds });
}

function claimYaml(c: Claim): Record<string, string | number> {
  const o: Record<string, string | number> = { id: c.id, pid: c.pid, host: c.host, command: c.command, started: formatUtc(c.started) };
  if (c.heartbeat) o.heartbeat = formatUtc(c.heartbeat);
  if (c.start) o.start = c.start;
  if (c.boot) o.boot = c.boot;
  if (c.job) o.job = c.job;
  return o;
}

/** The file text of a record (R3 field order, then offhost's fields, then the body). */
export function renderRecord(r: LockRecord): string {
  if (r.target.kind === 'vm') {
    const p = vmIdProblem(r.target.vm);
    if (p) throw new LockError(`vm '${r.target.vm}' ${p}`);
  }
  const data: Record<string, unknown> = r.target.kind === 'vm' ? { vm: r.target.vm } : { component: r.target.slug };
  Object.assign(data, { session: r.session, ai: r.ai, started: formatUtc(r.started), reason: r.reason.trim() });
  if (r.heartbeat) data.heartbeat = formatUtc(r.heartbeat);
  data.ttl_minutes = r.ttlMinutes;
  if (r.host) data.host = r.host;
  if (r.explicit) data.explicit = true;
  if (r.claims.length) data.claims = r.claims.map(claimYaml);
  const yaml = stringify(data, { lineWidth: 0, schema: 'core' });
  const body = r.body;
  return `---\n${yaml}---\n${body && !body.endsWith('\n') ? `${body}\n` : body}`;
}

/** The frontmatter's end: the body is what follows the closing `---` line. */
export function bodyOf(text: string): string {
  const src = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  const m = /^---[ \t]*\r?\n[\s\S]*?\r?\n---[ \t]*(?:\r?\n|$)/.exec(src);
  return m ? src.slice(m[0].length) : '';
}

/**
 * Reads a stored lock file; a LockError naming `shownAs` and what is wrong when it is not a valid lock of
 * `target` (schema, a `vm:` that does not match the file name, binary bytes, ...).
 */
export function parseRecord(data: Buffer | string, target: LockTarget, file: string, shownAs: string): LockRecord {
  const buf = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
  const text = buf.toString('utf8');
  if (target.kind === 'vm') {
    // offhost's own fields (explicit, claims, host) from the same reading of the frontmatter (one YAML
    // parse a record: a run reads each lock it meets, on its path).
    const { lock, findings, fields: fm } = parseLockBuffer(buf, file);
    const err = findings.find((f) => f.severity === 'error');
    if (!lock || err) {
      const f = err ?? findings[0];
      throw new LockError(
        `cannot be read as a lock (${f ? `${f.line ? `line ${f.line}: ` : ''}${f.message}` : 'invalid'}); nothing was changed. Fix it or archive it by hand (see \`offhost lint ${file}\`)`,
        shownAs,
      );
    }
    const r: LockRecord = {
      target,
      session: lock.session,
      ai: lock.ai,
      started: lock.started,
      ttlMinutes: lock.ttlMinutes,
      reason: lock.reason,
      body: bodyOf(text),
      explicit: fm?.explicit === true,
      claims: parseClaims(fm?.claims),
    };
    if (lock.heartbeat) r.heartbeat = lock.heartbeat;
    if (typeof fm?.host === 'string' && fm.host) r.host = fm.host;
    return r;
  }
  return parseComponentRecord(readFrontmatterLoose(text), target as Extract<LockTarget, { kind: 'component' }>, bodyOf(text), shownAs);
}

/** `date` without its milliseconds (lock timestamps are written to the second). */
export function toSecond(date: Date): Date {
  return new Date(Math.floor(date.getTime() / 1000) * 1000);
}
