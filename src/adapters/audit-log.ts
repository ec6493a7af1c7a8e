// The audit log: one JSON line per decision an agent (or the shell wrapper) was given.
//
// Where: `$OFFHOST_AUDIT_LOG`, else the config's `audit.path`, else `$XDG_STATE_HOME/offhost/audit.jsonl`, else
// `~/.local/state/offhost/audit.jsonl`. `OFFHOST_AUDIT_LOG=off` turns it off.
// Concurrency: many hook processes append at once. Each line is written with one write(2) on a descriptor
// opened with O_APPEND, so lines never interleave or overwrite each other. The command is capped so a line
// stays small.
// Size: past `OFFHOST_AUDIT_MAX_BYTES` (else the config's `audit.max_bytes`, default 5 MiB) the file is rotated to `.1` (`.1` -> `.2` -> `.3`,
// the oldest dropped). Rotation takes a directory lock (`<log>.rotating`, mkdir is atomic); a process that
// does not get it simply appends, and a lock older than 30 s is taken as stale. The size is judged again
// under the lock, so two processes that both saw the file too big rotate it once.
// Failure: the caller notes it on stderr and carries on; the decision it logs stands either way.
// What: refusals and reroutes by default; every decision (allows too) with `OFFHOST_AUDIT=all` or the
// config's `audit.record: all`. A line the user's shell keeps out of history (HISTCONTROL ignorespace/
// ignoreboth, HISTIGNORE) is never written: the snippets tell `offhost shell --check --private`. Values of
// variables whose names look secret (TOKEN, SECRET, PASSWORD, KEY, CREDENTIAL, AUTH...) and of --password=
// style options are written as `***`.
import { closeSync, mkdirSync, openSync, renameSync, rmdirSync, statSync, writeSync, constants } from 'node:fs';
import { dirname, join } from 'node:path';
import type { AuditRecord } from './common.js';

export const DEFAULT_MAX_BYTES = 5 * 1024 * 1024;
export const KEEP = 3;
/** Longest command text kept in a line (the length is always recorded). */
export const MAX_COMMAND_CHARS = 4096;

/** The config file's `audit:` section (path absolute or `~/…`, already expanded by the config loader). */
export interface AuditSettings {
  path?: string;
  maxBytes?: number;
  record?: 'decisions' | 'all';
}

/** Does this record go to the log at all (allows only when asked for)? */
export function recorded(rec: AuditRecord, env: NodeJS.ProcessEnv, settings: AuditSettings = {}): boolean {
  if (rec.decision !== 'allow') return true;
  const level = env.OFFHOST_AUDIT || settings.record || 'decisions';
  return level === 'all';
}

const SECRET_NAME = /(TOKEN|SECRET|PASSW(OR)?D|PASS|PWD|API_?KEY|ACCESS_?KEY|PRIVATE_?KEY|_KEY|^KEY|CREDENTIAL|AUTH|COOKIE|SESSION_?ID|SIGNATURE|DSN|WEBHOOK)/i;
// NAME=value, with the value quoted or bare (a bare value ends at a blank or a shell operator).
const ASSIGNMENT = /(^|[\s;&|(`'"]|\$\()((?:export\s+|declare\s+-x\s+)?)([A-Za-z_][A-Za-z0-9_]*)=("(?:[^"\\]|\\.)*"|'[^']*'|(?:[^\s;&|()`'"\\]|\\.)+)/g;
const SECRET_OPTION = /(--?(?:password|passwd|token|secret|api-?key|access-?key|auth|private-?key)[=\s])("(?:[^"\\]|\\.)*"|'[^']*'|[^\s;&|]+)/gi;

/** The line with the values of secret-looking variables and options replaced by `***`. */
export function redactSecrets(text: string): string {
  let out = text.replace(ASSIGNMENT, (m, pre: string, kw: string, name: string) => (SECRET_NAME.test(name) && !name.startsWith('OFFHOST_') ? `${pre}${kw}${name}=***` : m));
  out = out.replace(SECRET_OPTION, (_m, opt: string) => `${opt}***`);
  return out;
}

export function auditLogPath(env: NodeJS.ProcessEnv, settings: AuditSettings = {}): string | null {
  let explicit = env.OFFHOST_AUDIT_LOG || settings.path;
  if (explicit === 'off' || explicit === '0') return null;
  if (explicit && (explicit === '~' || explicit.startsWith('~/')) && env.HOME) explicit = join(env.HOME, explicit.slice(1));
  if (explicit) return explicit;
  const state = env.XDG_STATE_HOME && env.XDG_STATE_HOME.startsWith('/') ? env.XDG_STATE_HOME : env.HOME ? join(env.HOME, '.local', 'state') : null;
  return state ? join(state, 'offhost', 'audit.jsonl') : null;
}

const pad = (n: number, w = 2): string => String(n).padStart(w, '0');

/**
 * Date#toISOString, written out: V8 loads the local time zone (/etc/localtime and its symlinks, a quarter
 * millisecond) the first time toISOString runs, although the result is in UTC.
 */
export function isoUtc(d: Date): string {
  const y = d.getUTCFullYear();
  if (!(y >= 0 && y <= 9999)) return d.toISOString(); // extended years (and invalid dates: it throws)
  return `${pad(y, 4)}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}T${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}.${pad(d.getUTCMilliseconds(), 3)}Z`;
}

export function auditLine(rec: AuditRecord, now: Date): string {
  const command = rec.command === null ? null : redactSecrets(rec.command);
  const out: Record<string, unknown> = {
    time: isoUtc(now),
    agent: rec.agent,
    session: rec.session,
    cwd: rec.cwd,
    command: command !== null && command.length > MAX_COMMAND_CHARS ? command.slice(0, MAX_COMMAND_CHARS) : command,
    decision: rec.decision,
    rule: rec.rule,
  };
  if (command !== null && command.length > MAX_COMMAND_CHARS) out.commandLength = command.length;
  if (rec.reason !== undefined) out.reason = rec.reason.length > 1000 ? `${rec.reason.slice(0, 1000)}…` : rec.reason;
  if (rec.mode !== undefined) out.mode = rec.mode;
  if (rec.rewrite !== undefined) {
    const rewrite = redactSecrets(rec.rewrite);
    out.rewrite = rewrite.length > MAX_COMMAND_CHARS ? rewrite.slice(0, MAX_COMMAND_CHARS) : rewrite;
  }
  // JSON.stringify escapes control characters, so one record is always exactly one line.
  return `${JSON.stringify(out)}\n`;
}

function sizeOf(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
}

function openAppend(path: string): number {
  const flags = constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT;
  try {
    return openSync(path, flags, 0o600);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    return openSync(path, flags, 0o600);
  }
}

/**
 * Rotates `path` if a line of `incoming` bytes would still take it past `max`, judged again under the lock:
 * a process that saw the old file too big and takes the lock just after another rotated it must not rotate
 * the new, empty file (that would drop a generation and leave no `.1`). Returns whether it rotated.
 */
export function rotateIfOver(path: string, incoming: number, max: number, now: Date): boolean {
  const lock = `${path}.rotating`;
  try {
    mkdirSync(lock);
  } catch {
    try {
      if (now.getTime() - statSync(lock).mtimeMs > 30_000) rmdirSync(lock);
    } catch {
      /* someone else removed it */
    }
    return false; // another process rotates; we append to whichever file is current
  }
  try {
    const size = sizeOf(path);
    if (size === 0 || size + incoming <= max) return false;
    for (let i = KEEP - 1; i >= 1; i--) {
      try {
        renameSync(`${path}.${i}`, `${path}.${i + 1}`);
      } catch {
        /* that generation does not exist yet */
      }
    }
    try {
      renameSync(path, `${path}.1`);
    } catch {
      /* gone already */
    }
    return true;
  } finally {
    rmdirSync(lock);
  }
}

/**
 * Appends one record. Throws on failure (the caller reports it); never partially writes a line unless the
 * disk is full.
 */
export function appendAudit(rec: AuditRecord, env: NodeJS.ProcessEnv, now: Date = new Date(), settings: AuditSettings = {}): string | null {
  const path = auditLogPath(env, settings);
  if (!path || !recorded(rec, env, settings)) return null;
  const line = auditLine(rec, now);
  const bytes = Buffer.from(line, 'utf8');
  const max = Number(env.OFFHOST_AUDIT_MAX_BYTES) > 0 ? Number(env.OFFHOST_AUDIT_MAX_BYTES) : settings.maxBytes && settings.maxBytes > 0 ? settings.maxBytes : DEFAULT_MAX_BYTES;
  // The size of the file now at `path` (not of a descriptor opened before another process rotated it,
  // which would rotate again and drop a generation); the folder is created only when opening says so.
  if (sizeOf(path) + bytes.length > max) rotateIfOver(path, bytes.length, max, now);
  const fd = openAppend(path);
  try {
    const n = writeSync(fd, bytes, 0, bytes.length);
    if (n !== bytes.length) throw new Error(`short write to ${path} (${n} of ${bytes.length} bytes)`);
  } finally {
    closeSync(fd);
  }
  return path;
}

/** Appends, and on failure writes a note to `stderr` instead of throwing. */
export function tryAppendAudit(rec: AuditRecord, env: NodeJS.ProcessEnv, stderr: (t: string) => void, now?: Date, settings?: AuditSettings): void {
  try {
    appendAudit(rec, env, now, settings);
  } catch (err) {
    stderr(`offhost: could not write the audit log (${err instanceof Error ? err.message : String(err)}); the decision stands\n`);
  }
}
