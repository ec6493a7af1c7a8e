// Findings for one lock file's content at an instant: schema and name (parse), then expiry and future
// timestamps for active locks. Archived locks are an audit trail that can no longer be changed: their
// findings are warnings. Pure.
import type { Finding, Lock } from '../types.js';
import { lockState } from './expiry.js';
import { parseLockBuffer, parseLockText } from './parse.js';
import { utcDay } from './paths.js';

export interface LockCheckContext {
  now: Date;
  /** Severity of findings that depend on the clock (expired): 'warning' at commit time, 'error' in CI. */
  severityForTime: 'warning' | 'error';
  skewSeconds?: number;
  noticesDir?: string;
}

export type LockFileKind = 'active' | 'archive';

/** The findings for one lock file (text or bytes) of the given kind. */
export function lintLockContent(
  file: string,
  content: string | Uint8Array,
  kind: LockFileKind,
  ctx: LockCheckContext,
): { lock: Lock | null; findings: Finding[] } {
  const { lock, findings } = typeof content === 'string' ? parseLockText(content, file) : parseLockBuffer(content, file);
  if (kind === 'archive') {
    for (const f of findings) {
      if (f.severity === 'error') {
        f.severity = 'warning';
        f.message = `${f.message} (archived: kept as written, the archive is append-only)`;
      }
    }
    return { lock, findings };
  }
  if (lock) {
    const opts = ctx.skewSeconds === undefined ? {} : { skewSeconds: ctx.skewSeconds };
    const st = lockState(lock, ctx.now, opts);
    if (st.state === 'future') {
      const field = st.why.startsWith('heartbeat') ? 'heartbeat' : 'started';
      findings.push({
        file,
        line: lock.positions[field] ?? 1,
        column: 1,
        ruleId: 'lock-future-timestamp',
        severity: 'error',
        message: st.why,
      });
    } else if (st.state === 'expired') {
      const field = lock.heartbeat ? 'heartbeat' : 'started';
      findings.push({
        file,
        line: lock.positions[field] ?? 1,
        column: 1,
        ruleId: 'lock-expired',
        severity: ctx.severityForTime,
        message: `lock of session ${lock.session} on ${lock.vm} has expired: ${st.why}`,
        suggestion: `archive it as vm-active-archive/lock-${lock.vm}-expired-${utcDay(ctx.now)}.md (offhost lock gc), or refresh heartbeat if the session is still working`,
      });
    }
  }
  return { lock, findings };
}
