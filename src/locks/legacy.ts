// Locks committed by hand to the checked-out branch the old way (POLICY R4 read literally: a file committed
// at vm-active/lock-<vm>.md). They are still honoured: a live one of another session holds its VM. A
// branch lock is superseded once the lock ref knows it: the ref holds an active lock at that path, or
// archived the same hold (same session and started); `offhost lock gc` migrates live ones into the ref and
// archives expired ones there. Read-only: HEAD's tree through git, never the working tree.
import { listTree, readPaths, readRef, readTree, type Repo } from '../git/ref-tree.js';
import { LockError } from '../errors.js';
import { DEFAULT_SKEW_SECONDS } from './expiry.js';
import { holderOf, type Holder } from './holder.js';
import { parseRecord, type LockRecord, type LockTarget } from './record.js';
import { LOCK_REF, type LockStore, type Snapshot } from './store.js';

export interface BranchLock {
  /** Repository-relative path. */
  path: string;
  /** As shown to people: `HEAD:<path>`. */
  file: string;
  text?: string;
  holder?: Holder;
  error?: string;
}

function targetOfPath(s: LockStore, p: string): LockTarget | null {
  const m = /\/lock-([^/]+)\.md$/.exec(p);
  if (!m) return null;
  if (p === `${s.dirs.active}/lock-${m[1]}.md`) return { kind: 'vm', vm: m[1]! };
  if (p === `${s.dirs.components}/lock-${m[1]}.md`) return { kind: 'component', slug: m[1]! };
  return null;
}

async function superseded(s: LockStore, snap: Snapshot, rec: LockRecord, path: string, name: string): Promise<boolean> {
  if (snap.files.has(path)) return true;
  const dir = rec.target.kind === 'vm' ? s.dirs.archive : s.dirs.componentArchive;
  const day = rec.started.toISOString().slice(0, 10);
  const candidates = [...(await snap.archiveNames())].filter((p) => {
    if (!p.startsWith(`${dir}/lock-${name}-`)) return false;
    const d = /(\d{4}-\d{2}-\d{2})(?:-\d+)?\.md$/.exec(p)?.[1];
    return d !== undefined && d >= day;
  });
  if (candidates.length === 0) return false;
  for (const [p, data] of await snap.read(candidates)) {
    try {
      const a = parseRecord(data, rec.target, p, p);
      if (a.session === rec.session && a.started.getTime() === rec.started.getTime()) return true;
    } catch {
      /* an unreadable archive proves nothing */
    }
  }
  return false;
}

/** Branch locks at HEAD that the lock ref does not supersede. */
export async function legacyLocks(s: LockStore, snap: Snapshot, now: Date): Promise<BranchLock[]> {
  if (!s.repo.root) return [];
  // No commit yet lists nothing; a HEAD that cannot be read counts as none, as it always has.
  const listed = await listTree(s.repo, 'HEAD', [s.dirs.active, s.dirs.components], { noTree: 'empty' }).catch(() => null);
  if (listed === null) return [];
  const entries = listed.filter((e) => e.type === 'blob' && targetOfPath(s, e.path));
  if (entries.length === 0) return [];
  const out: BranchLock[] = [];
  const bytes = await readPaths(s.repo, 'HEAD', entries.filter((e) => e.mode !== '120000').map((e) => e.path));
  for (const e of entries) {
    const t = targetOfPath(s, e.path)!;
    const file = `HEAD:${e.path}`;
    if (e.mode === '120000') {
      out.push({ path: e.path, file, error: `${file}: is a symbolic link committed to the branch: offhost does not follow it; remove it from the branch (git rm --cached ${e.path})` });
      continue;
    }
    const data = bytes.get(e.path);
    if (!data) continue;
    try {
      const rec = parseRecord(data, t, e.path, file);
      const name = t.kind === 'vm' ? t.vm : t.slug;
      if (await superseded(s, snap, rec, e.path, name)) continue;
      out.push({ path: e.path, file, text: data.toString('utf8'), holder: holderOf(rec, file, now, 'branch', s.opts.skewSeconds ?? DEFAULT_SKEW_SECONDS) });
    } catch (err) {
      out.push({ path: e.path, file, error: (err as Error).message });
    }
  }
  return out;
}

/** The branch lock on `t` that still counts, if any. An unreadable one fails closed (LockError). */
export async function legacyHolder(s: LockStore, snap: Snapshot, t: LockTarget, now: Date): Promise<Holder | null> {
  const path = t.kind === 'vm' ? `${s.dirs.active}/lock-${t.vm}.md` : `${s.dirs.components}/lock-${t.slug}.md`;
  const l = (await legacyLocks(s, snap, now)).find((x) => x.path === path);
  if (!l) return null;
  if (l.error || !l.holder) throw new LockError(`${l.error ?? 'unreadable'} (a lock committed to the branch; offhost cannot tell who holds the VM, so nothing was changed)`);
  return l.holder;
}

/**
 * Whether the lock ref knows the hold that `text` (a lock file deleted from the branch) records: it holds it
 * at `path` or archived it (same session and started). Removing such a migrated file from the branch is
 * not a deletion of a lock (lint --staged).
 */
export async function refKnowsHold(repo: Repo, path: string, text: string, noticesDir: string): Promise<boolean> {
  const tip = await readRef(repo, LOCK_REF);
  if (!tip) return false;
  const m = /\/lock-([^/]+)\.md$/.exec(path);
  if (!m) return false;
  const nd = noticesDir ? `${noticesDir}/` : '';
  const isVm = path === `${nd}vm-active/lock-${m[1]}.md`;
  const t: LockTarget = isVm ? { kind: 'vm', vm: m[1]! } : { kind: 'component', slug: m[1]! };
  let rec: LockRecord;
  try {
    rec = parseRecord(Buffer.from(text, 'utf8'), t, path, path);
  } catch {
    return false;
  }
  const dir = `${nd}${isVm ? 'vm-active-archive' : 'archive'}`;
  const { names } = await readTree(repo, tip, [], [dir]);
  const wanted = [path, ...[...names].filter((p) => p.startsWith(`${dir}/lock-${m[1]}-`))];
  for (const [p, data] of await readPaths(repo, tip, wanted)) {
    try {
      const r = parseRecord(data, t, p, p);
      if (r.session === rec.session && r.started.getTime() === rec.started.getTime()) return true;
    } catch {
      /* not this hold */
    }
  }
  return false;
}
