// Where lock files live (POLICY R3/R4), relative to the repository root. Pure.
import { LockError } from '../errors.js';
import { vmIdProblem } from './schema.js';
import { foldCase } from '../policy/case-rule.js';

export const DEFAULT_NOTICES_DIR = 'meta/context/notices';
export const ACTIVE_DIR = 'vm-active';
export const ARCHIVE_DIR = 'vm-active-archive';
export const COMPONENT_DIR = 'active';

function dir(noticesDir: string | undefined): string {
  const d = (noticesDir ?? DEFAULT_NOTICES_DIR).replace(/\\/g, '/').replace(/^\.\/+/, '').replace(/\/+$/, '');
  return d === '' || d === '.' ? '' : `${d}/`;
}

function checkVm(vm: string): void {
  const p = vmIdProblem(vm);
  if (p) throw new LockError(`'${vm}' ${p}`);
}

/** `meta/context/notices/vm-active/lock-<vm>.md`. Throws LockError for a non-canonical id. */
export function activeLockPath(vm: string, noticesDir?: string): string {
  checkVm(vm);
  return `${dir(noticesDir)}${ACTIVE_DIR}/lock-${vm}.md`;
}

/** `YYYY-MM-DD` of `date` in UTC. */
export function utcDay(date: Date): string {
  return date.toISOString().slice(0, 10);
}

/**
 * `<base>.md`, else `<base>-0002.md`, `<base>-0003.md`, ...: the number is zero-padded to four digits so that
 * names sort in the order they were written (`-0010` after `-0002`) up to 9999 archives of one name a day.
 */
export function nextFreeName(base: string, exists: (p: string) => boolean, what: string): string {
  let p = `${base}.md`;
  for (let n = 2; exists(p); n++) {
    if (n > 100_000) throw new LockError(`too many archives of ${what}`);
    p = `${base}-${String(n).padStart(4, '0')}.md`;
  }
  return p;
}

/**
 * `meta/context/notices/vm-active-archive/lock-<vm>-<YYYY-MM-DD>.md` (released) or
 * `...lock-<vm>-expired-<YYYY-MM-DD>.md` (expired), date in UTC; when `exists` says that path is taken,
 * `-0002`, `-0003`, ... before `.md`, so two archives of one VM on one day never overwrite each other.
 */
export function archiveLockPath(
  vm: string,
  date: Date,
  kind: 'released' | 'expired',
  exists: (p: string) => boolean,
  noticesDir?: string,
): string {
  checkVm(vm);
  if (Number.isNaN(date.getTime())) throw new LockError('archive date is not a valid date');
  const base = `${dir(noticesDir)}${ARCHIVE_DIR}/lock-${vm}-${kind === 'expired' ? 'expired-' : ''}${utcDay(date)}`;
  return nextFreeName(base, exists, `${vm} on ${utcDay(date)}`);
}

const SLUG_RE = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

/** Where a component lock is archived: `<notices>/archive/lock-<slug>-[expired-]<date>[-NNNN].md`. */
export function componentArchivePath(slug: string, date: Date, kind: 'released' | 'expired', exists: (p: string) => boolean, noticesDir?: string): string {
  componentLockPath(slug, noticesDir);
  return nextFreeName(`${dir(noticesDir)}archive/lock-${slug}-${kind === 'expired' ? 'expired-' : ''}${utcDay(date)}`, exists, `${slug} on ${utcDay(date)}`);
}

/** Component lock (POLICY R7): `meta/context/notices/active/lock-<slug>.md`. */
export function componentLockPath(slug: string, noticesDir?: string): string {
  if (!SLUG_RE.test(slug) || slug.includes('..')) throw new LockError(`component slug '${slug}' must be letters, digits, '.', '_' or '-'`);
  return `${dir(noticesDir)}${COMPONENT_DIR}/lock-${slug}.md`;
}

export type PathKind = 'active' | 'archive' | 'component' | 'other';
export interface PathClass {
  kind: PathKind;
  /** active/archive: the VM id the file name gives (not validated); component: the slug. */
  vm?: string;
  slug?: string;
}

/**
 * What a repository-relative path is: an active VM lock, an archived one, a component lock, or other.
 * The folders and the `lock-….md` frame are compared without case: on a Mac's case-insensitive disk
 * `Meta/Context/Notices/VM-Active/LOCK-x.MD` is the active lock file, so it is checked as one everywhere
 * (never less strict). The id keeps its spelling (lint refuses one that is not canonical).
 */
export function classifyPath(path: string, noticesDir?: string): PathClass {
  const p = path.replace(/\\/g, '/').replace(/^\.\/+/, '');
  const d = dir(noticesDir);
  if (!foldCase(p).startsWith(foldCase(d))) return { kind: 'other' };
  const rest = p.slice(d.length);
  const m = /^([^/]+)\/lock-([^/]+)\.md$/i.exec(rest);
  if (!m) return { kind: 'other' };
  const [, spelledFolder, id] = m as unknown as [string, string, string];
  const folder = foldCase(spelledFolder);
  if (folder === ACTIVE_DIR) return { kind: 'active', vm: id };
  if (folder === ARCHIVE_DIR) {
    const vm = id.replace(/-(?:expired-)?\d{4}-\d{2}-\d{2}(?:-\d+)?$/, '');
    return { kind: 'archive', vm };
  }
  if (folder === COMPONENT_DIR) return { kind: 'component', slug: id, vm: id };
  return { kind: 'other' };
}
