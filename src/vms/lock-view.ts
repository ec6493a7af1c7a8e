// A read-only look at one active VM lock file (meta/context/notices/vm-active/lock-<vm>.md), lean enough
// for the guard (no yaml, no zod: it runs before every command that names a catalogue VM). It reads the
// R3 frontmatter's scalar fields and applies R4's expiry rule; anything it cannot read counts as held
// (fail closed). Full validation is `offhost lint`'s job (src/locks/parse.ts).
import { readFileSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';

export interface LockView {
  vm: string;
  session: string;
  ai: string;
  started: Date | null;
  heartbeat: Date | null;
  ttlMinutes: number;
  reason: string;
  /** Repository-relative path. */
  file: string;
}

export type LockLook =
  | { state: 'absent'; file: string }
  | { state: 'live' | 'expired'; lock: LockView; file: string }
  | { state: 'unreadable'; why: string; file: string };

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

function date(v: string | undefined): Date | null {
  if (!v || !ISO.test(v)) return null;
  const d = new Date(v);
  return Number.isNaN(d.getTime()) ? null : d;
}

function unquote(v: string): string {
  const t = v.trim();
  if ((t.startsWith('"') && t.endsWith('"')) || (t.startsWith("'") && t.endsWith("'"))) return t.slice(1, -1);
  return t.replace(/\s+#.*$/, '');
}

/** The R3 frontmatter's scalar fields (a `reason: |` block is taken as its first line). */
export function readFrontmatter(text: string): Record<string, string> | null {
  const lines = text.replace(/^\uFEFF/, '').split(/\r?\n/);
  if (lines[0]?.trim() !== '---') return null;
  const out: Record<string, string> = {};
  for (let i = 1; i < lines.length; i++) {
    const l = lines[i]!;
    if (l.trim() === '---') return out;
    const m = /^([a-z_]+):\s*(.*)$/.exec(l);
    if (!m) continue;
    let v = m[2]!;
    if (/^[|>][-+]?\s*$/.test(v)) v = (lines[i + 1] ?? '').trim();
    out[m[1]!] = unquote(v);
  }
  return null;
}

/** R4: expired when more than ttl_minutes passed since the heartbeat (or `started`), or started over 24 h ago with no heartbeat. */
export function isExpired(lock: LockView, now: Date): boolean {
  const last = lock.heartbeat ?? lock.started;
  if (!last) return false;
  if (now.getTime() - last.getTime() > lock.ttlMinutes * 60_000) return true;
  return !lock.heartbeat && lock.started !== null && now.getTime() - lock.started.getTime() > 24 * 3_600_000;
}

/** The active lock of `vm` in the repository at `repo`. */
export function lookAtLock(repo: string, noticesDir: string, vm: string, now: Date): LockLook {
  const file = `${noticesDir.replace(/\/+$/, '')}/vm-active/lock-${vm}.md`;
  let text: string;
  try {
    const st = statSync(join(repo, file));
    if (!st.isFile()) return { state: 'unreadable', why: 'it is not a regular file', file };
    if (st.size > 1024 * 1024) return { state: 'unreadable', why: 'it is over 1 MiB', file };
    text = readFileSync(join(repo, file), 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { state: 'absent', file };
    return { state: 'unreadable', why: (err as Error).message, file };
  }
  const fm = readFrontmatter(text);
  if (!fm || !fm.session) return { state: 'unreadable', why: 'its frontmatter has no session', file };
  const ttl = fm.ttl_minutes !== undefined ? Number(fm.ttl_minutes) : 120;
  const lock: LockView = {
    vm: fm.vm ?? vm,
    session: fm.session,
    ai: fm.ai ?? '?',
    started: date(fm.started),
    heartbeat: date(fm.heartbeat),
    ttlMinutes: Number.isFinite(ttl) && ttl > 0 ? ttl : 120,
    reason: fm.reason ?? '',
    file,
  };
  return { state: isExpired(lock, now) ? 'expired' : 'live', lock, file };
}

/** The git work tree holding `cwd` (walks up to a `.git`), or null. */
export function worktreeOf(cwd: string): string | null {
  let dir = cwd;
  for (let n = 0; n < 200; n++) {
    try {
      statSync(join(dir, '.git'));
      return dir;
    } catch {
      /* keep walking */
    }
    const up = dirname(dir);
    if (up === dir) return null;
    dir = up;
  }
  return null;
}

export function describeLock(l: LockView): string {
  return `held by session ${l.session} (${l.ai}) since ${l.started?.toISOString() ?? '?'}${l.reason ? ` for: ${l.reason}` : ''} (${l.file})`;
}
