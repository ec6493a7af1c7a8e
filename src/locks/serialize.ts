// Renders a VM lock file (frontmatter + body) that parseLockText reads back to the same fields.
import { stringify } from 'yaml';
import { LockError } from '../errors.js';
import { formatUtc, vmIdProblem } from './schema.js';

export interface LockFields {
  vm: string;
  session: string;
  ai: string;
  started: Date;
  reason: string;
  heartbeat?: Date | undefined;
  /** Written only when given (absent means the default, 120). */
  ttlMinutes?: number | undefined;
  /** Free-form Markdown after the frontmatter (commands running, output snapshots, an archive note). */
  body?: string | undefined;
}

/** The lock file text for `fields`. Throws LockError for a value parseLockText would reject. */
export function serializeLock(fields: LockFields): string {
  const problem = vmIdProblem(fields.vm);
  if (problem) throw new LockError(`vm '${fields.vm}' ${problem}`);
  if (!/^\S+$/.test(fields.session)) throw new LockError(`session '${fields.session}' must be one non-empty word`);
  if (!/^[a-z][a-z0-9._-]*$/.test(fields.ai)) throw new LockError(`ai '${fields.ai}' must be a lowercase name (claude, codex, gemini, human, ...)`);
  if (fields.reason.trim() === '') throw new LockError('reason must not be empty');
  for (const [k, d] of [['started', fields.started], ['heartbeat', fields.heartbeat]] as const) {
    if (d !== undefined && Number.isNaN(d.getTime())) throw new LockError(`${k} is not a valid date`);
  }
  if (fields.ttlMinutes !== undefined && !(Number.isInteger(fields.ttlMinutes) && fields.ttlMinutes > 0)) {
    throw new LockError(`ttl_minutes must be a positive whole number of minutes, not ${fields.ttlMinutes}`);
  }
  const data: Record<string, string | number> = {
    vm: fields.vm,
    session: fields.session,
    ai: fields.ai,
    started: formatUtc(fields.started),
    reason: fields.reason.trim(),
  };
  if (fields.heartbeat) data.heartbeat = formatUtc(fields.heartbeat);
  if (fields.ttlMinutes !== undefined) data.ttl_minutes = fields.ttlMinutes;
  const yaml = stringify(data, { lineWidth: 0, schema: 'core' });
  const body = fields.body ?? '';
  return `---\n${yaml}---\n${body && !body.endsWith('\n') ? `${body}\n` : body}`;
}
