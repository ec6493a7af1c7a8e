// The file-system side of lock files: atomic exclusive create, atomic rewrite, archive move, and a
// short-lived per-checkout mutex that serialises offhost's own read-decide-write-commit steps.
//
// Exclusive create is link-based: the full content is written to a private temporary file first, then
// hard-linked to the lock path (link(2) fails with EEXIST when the path exists). So a lock file is never
// seen half-written and, of two concurrent creators, exactly one wins. Where hard links are not supported
// it falls back to `open(path, 'wx')`.
import {
  closeSync,
  existsSync,
  linkSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  unlinkSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { hostname } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { LockError } from '../errors.js';

function tmpName(path: string): string {
  return join(dirname(path), `.${basename(path)}.${process.pid}.${Math.random().toString(36).slice(2, 10)}.tmp`);
}

/** Reads a file, or null when it does not exist. */
export function readText(path: string): string | null {
  try {
    return readFileSync(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
}

/**
 * Creates `path` with `content` only if it does not exist yet. true: created by this call; false: the path
 * already existed (someone else won).
 */
export function createExclusive(path: string, content: string): boolean {
  mkdirSync(dirname(path), { recursive: true });
  const tmp = tmpName(path);
  writeFileSync(tmp, content, { flag: 'wx' });
  try {
    linkSync(tmp, path);
    return true;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') return false;
    if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'EXDEV' && code !== 'ENOSYS') throw err;
    // No hard links here: exclusive open (the file may be seen empty for a moment by a reader).
    let fd: number;
    try {
      fd = openSync(path, 'wx');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'EEXIST') return false;
      throw e;
    }
    try {
      writeSync(fd, content);
    } finally {
      closeSync(fd);
    }
    return true;
  } finally {
    try {
      unlinkSync(tmp);
    } catch {
      /* already gone */
    }
  }
}

/** Replaces `path`'s content atomically (temporary file + rename). */
export function writeAtomic(path: string, content: string): void {
  mkdirSync(dirname(path), { recursive: true });
  const tmp = tmpName(path);
  writeFileSync(tmp, content);
  renameSync(tmp, path);
}

/** Removes a file; no error when it is already gone. */
export function removeFile(path: string): void {
  try {
    unlinkSync(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
}

/**
 * Moves the lock at `from` to the archive path `to` with `note` appended (the archive is created
 * exclusively: an existing archive is never overwritten). Returns the original content of `from`, for a
 * rollback with `unarchive`.
 */
export function archiveMove(from: string, to: string, note: string): string {
  const original = readText(from);
  if (original === null) throw new LockError('the lock file disappeared before it could be archived', from);
  const body = original.endsWith('\n') ? original : `${original}\n`;
  if (!createExclusive(to, `${body}${note}`)) throw new LockError('an archive with this name exists already', to);
  removeFile(from);
  return original;
}

/**
 * Undoes `archiveMove`: puts `original` back at `from` and removes the archive `to`. If `from` has been
 * taken meanwhile (a lock written by someone else), it is left alone and the archive is kept, so neither
 * text is lost.
 */
export function unarchive(from: string, to: string, original: string): void {
  if (!createExclusive(from, original)) return;
  removeFile(to);
}

export function fileExists(path: string): boolean {
  return existsSync(path);
}

// ---------------------------------------------------------------------------------------------------
// Per-checkout mutex

export interface MutexOptions {
  /** Give up after this long (ms). */
  timeoutMs?: number;
  /** A holder on another host older than this (ms) is taken as stale (same host: only a dead pid is). */
  staleMs?: number;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Runs `fn` holding an exclusive mutex file (`<gitDir>/offhost/lock.mutex`), so that the read, decision,
 * write and commit of one lock operation are not interleaved with another session's in the same checkout.
 * A mutex left by a dead process (same host) is broken.
 */
export async function withMutex<T>(gitDir: string, fn: () => Promise<T>, opts: MutexOptions = {}): Promise<T> {
  const timeoutMs = opts.timeoutMs ?? 60_000;
  const staleMs = opts.staleMs ?? 120_000;
  const path = join(gitDir, 'offhost', 'lock.mutex');
  const me = `${process.pid} ${hostname()} ${Date.now()}\n`;
  const start = Date.now();
  let delay = 10;
  for (;;) {
    if (createExclusive(path, me)) break;
    const held = readText(path);
    if (held !== null) {
      const [pidS, host, atS] = held.trim().split(' ');
      const pid = Number(pidS);
      const at = Number(atS);
      // Broken only when its holder is provably gone: a dead process on this host, or (a checkout on a
      // shared file system) a holder on another host that has kept it far longer than any lock step takes.
      const sameHost = host === hostname();
      const dead = sameHost && Number.isInteger(pid) && pid > 0 && !alive(pid);
      const old = !sameHost && Number.isFinite(at) && Date.now() - at > staleMs;
      if (dead || old) {
        // Break it only if it is still the same holder (rename is atomic; then check what we took).
        const grab = `${path}.${process.pid}.stale`;
        try {
          renameSync(path, grab);
          const taken = readText(grab);
          removeFile(grab);
          if (taken !== held && taken !== null) {
            // We took a fresh holder's mutex by accident: give it back if nobody took the path since.
            createExclusive(path, taken);
          }
        } catch {
          /* someone else broke or released it */
        }
        continue;
      }
    }
    if (Date.now() - start > timeoutMs) {
      throw new LockError(`another offhost lock operation in this checkout has held ${path} for over ${Math.round(timeoutMs / 1000)} s`);
    }
    await new Promise((r) => setTimeout(r, delay));
    delay = Math.min(delay * 2, 200);
  }
  try {
    return await fn();
  } finally {
    if (readText(path) === me) removeFile(path);
  }
}
