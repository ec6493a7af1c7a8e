// `offhost lock repair`: a broken lock store (docs/LOCKS.md "Repair") gets a new tip. What can still be read
// of the broken one is kept: archives as they are, active locks moved to the archive with a note (a lock read
// from a broken store cannot be trusted to be the latest version, so no one holds it after a repair: its
// holder's next heartbeat says the lock is gone and its work stops); entries that cannot be read are named
// in the new commit's message. The new tip is a root commit (the old history is what is broken); the old
// value stays in the reflog and, when it was a commit, at refs/offhost/broken/<time>.
import { rmSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { LockError } from '../errors.js';
import { parseCatFileBatch, catFileInput, parseLsTree } from '../git/plumbing.js';
import { buildCommit, casRef, fetchRef, inspectRef, objectState, pushLease, remoteRef, type Repo, type RefState } from '../git/ref-tree.js';
import { runGit } from '../git/run.js';
import { archiveLockPath, componentArchivePath } from './paths.js';
import { formatUtc } from './schema.js';
import { parseMarker, remoteNamed, SHARED_THROUGH } from './hub.js';
import { LOCK_REF, type LockStore } from './store.js';

export interface RepairResult {
  status: 'healthy' | 'repaired';
  /** Where the broken ref was: this clone, the user store, or the remote. */
  where: string[];
  /** What was wrong. */
  why: string[];
  /** Active locks moved to the archive, and archives kept. */
  archived: string[];
  kept: number;
  /** Entries that could not be read (named in the new commit's message). */
  lost: string[];
  commit: string | null;
}

const call = (repo: Repo) => ({ cwd: repo.root ?? repo.gitDir, ...(repo.env ? { env: repo.env } : {}) });

/** What can be read of the tree of `sha` (a commit), as path -> bytes, and what cannot. */
async function readable(repo: Repo, sha: string | undefined): Promise<{ files: Map<string, Buffer>; lost: string[] }> {
  const files = new Map<string, Buffer>();
  const lost: string[] = [];
  if (!sha) return { files, lost };
  const t = await runGit(['cat-file', '-t', sha], call(repo));
  if (t.code !== 0 || t.stdout.toString('utf8').trim() !== 'commit') return { files, lost: [`${sha} (${t.code !== 0 ? 'missing' : t.stdout.toString('utf8').trim()})`] };
  const ls = await runGit(['ls-tree', '-r', '-z', '--full-tree', sha], call(repo));
  if (ls.code !== 0) return { files, lost: [`the tree of ${sha} (${ls.stderr.trim().split('\n')[0]})`] };
  const entries = parseLsTree(ls.stdout);
  const blobs = entries.filter((e) => e.type === 'blob' && (e.mode === '100644' || e.mode === '100755'));
  for (const e of entries) if (!blobs.includes(e)) lost.push(`${e.path} (${e.type === 'commit' ? 'a gitlink' : `mode ${e.mode}`})`);
  const { asked, input } = catFileInput(blobs.map((e) => e.sha));
  const got = parseCatFileBatch((await runGit(['cat-file', '--batch'], { ...call(repo), input })).stdout, asked);
  for (const e of blobs) {
    const b = got.get(e.sha);
    if (b) files.set(e.path, b.data);
    else lost.push(`${e.path} (object ${e.sha} missing)`);
  }
  return { files, lost };
}

/** The new tree: archives kept, active locks archived with a note, the user store's marker kept. */
function newTree(s: LockStore, files: Map<string, Buffer>, now: Date, why: string, session: string): { changes: Map<string, Buffer | string>; archived: string[]; kept: number } {
  const changes = new Map<string, Buffer | string>();
  const archived: string[] = [];
  let kept = 0;
  const taken = (p: string) => files.has(p) || changes.has(p);
  for (const [p, data] of files) {
    if (p.startsWith(`${s.dirs.archive}/`) || p.startsWith(`${s.dirs.componentArchive}/`) || p.startsWith('.offhost/')) {
      changes.set(p, data);
      kept++;
    }
  }
  for (const [p, data] of files) {
    const vm = p.startsWith(`${s.dirs.active}/`) ? /\/lock-(.+)\.md$/.exec(p)?.[1] : undefined;
    const slug = p.startsWith(`${s.dirs.components}/`) ? /\/lock-(.+)\.md$/.exec(p)?.[1] : undefined;
    if (!vm && !slug) continue;
    let arch: string;
    try {
      arch = vm ? archiveLockPath(vm, now, 'expired', taken, s.nd) : componentArchivePath(slug!, now, 'expired', taken, s.nd);
    } catch {
      arch = `${s.dirs.archive}/lock-unreadable-name-expired-${formatUtc(now).slice(0, 10)}-${archived.length + 1}.md`;
    }
    const text = data.toString('utf8');
    changes.set(arch, `${text.endsWith('\n') ? text : `${text}\n`}\n## Archived by repair\n\nArchived ${formatUtc(now)} by session ${session} on ${hostname()} with \`offhost lock repair\`: the lock store was broken (${why}), so this lock, read from it, cannot be trusted to be current. No one holds it now.\n`);
    archived.push(`${p} -> ${arch}`);
  }
  return { changes, archived, kept };
}

function message(where: string, why: string, was: string | undefined, lost: string[]): string {
  return `offhost: repair ${LOCK_REF} (${where})\n\nThe lock store was broken: ${why}.\nOld value: ${was ?? '(not an object id)'}\n${lost.length ? `Could not be read: ${lost.join('; ')}\n` : ''}`;
}

/** Points `ref` of a local repository at `next` whatever it holds now (a garbage file is removed first). */
async function forceLocal(repo: Repo, ref: string, next: string, st: RefState): Promise<void> {
  if (st.state === 'commit') {
    await casRef(repo, `refs/offhost/broken/${new Date().toISOString().replace(/[:.]/g, '-')}`, st.sha, null, 'offhost: the lock ref before repair');
  }
  const r = await runGit(['update-ref', '-m', 'offhost: repair', ref, next], call(repo));
  if (r.code === 0) return;
  // A ref git cannot read cannot be updated by git: its loose file goes (its bytes are in the commit message).
  rmSync(join(repo.commonDir, ref), { force: true });
  const again = await runGit(['update-ref', '-m', 'offhost: repair', ref, next], call(repo));
  if (again.code !== 0) throw new LockError(`cannot repair ${ref} in ${repo.commonDir}: ${again.stderr.trim()}`);
}

/** Repairs the broken lock ref of `s` (this clone's, the user store's or the remote's). */
export async function repair(s: LockStore, a: { session: string }): Promise<RepairResult> {
  const now = s.clock.now();
  const out: RepairResult = { status: 'healthy', where: [], why: [], archived: [], kept: 0, lost: [], commit: null };
  // A user store whose locks moved to a remote (its marker): the remote is the store to repair.
  if (s.mode === 'user') {
    const m = await runGit(['cat-file', 'blob', `${LOCK_REF}:${SHARED_THROUGH}`], { cwd: s.opts.remote!, ...(s.repo.env ? { env: s.repo.env } : {}) });
    const marker = m.code === 0 ? parseMarker(m.stdout) : null;
    if (marker) s.opts.remote = await remoteNamed(s.repo, marker.url, marker.name);
  }
  const hub = s.opts.remote ?? null;
  let hubTip: string | null = null;
  if (hub && s.mode === 'user') {
    // The user store is a repository on this machine: repaired in place, like a clone.
    const store = s.db();
    const st = await inspectRef(store, LOCK_REF);
    const bad = st.state === 'broken' ? st.why : st.state === 'commit' ? await treeProblem(s, store, st.sha) : null;
    if (bad) {
      const { files, lost } = await readable(store, st.state === 'absent' ? undefined : (st as { sha?: string }).sha);
      const t = newTree(s, files, now, bad, a.session);
      const commit = await buildCommit(store, null, t.changes, message(`the user store ${hub}`, bad, (st as { sha?: string }).sha, lost), { name: `offhost (${a.session})`, email: `offhost@${hostname()}` });
      await forceLocal(store, LOCK_REF, commit, st);
      Object.assign(out, { status: 'repaired', commit, kept: t.kept });
      out.where.push(`the user store ${hub}`);
      out.why.push(bad);
      out.archived.push(...t.archived);
      out.lost.push(...lost);
    }
    hubTip = (await inspectRef(store, LOCK_REF)).state === 'commit' ? ((await inspectRef(store, LOCK_REF)) as { sha: string }).sha : null;
  } else if (hub) {
    const tip = await remoteRef(s.repo, hub, LOCK_REF);
    if (tip !== null) {
      if (!/^0+$/.test(tip)) await fetchRef(s.repo, hub, LOCK_REF).catch(() => undefined);
      const st = /^0+$/.test(tip) ? ({ state: 'broken', why: 'the ref is not an object id' } as RefState) : await objectState(s.repo, LOCK_REF, tip);
      const bad = st.state === 'broken' ? st.why : await treeProblem(s, s.repo, tip);
      if (bad) {
        const { files, lost } = await readable(s.repo, /^0+$/.test(tip) ? undefined : tip);
        const t = newTree(s, files, now, bad, a.session);
        const commit = await buildCommit(s.repo, null, t.changes, message(`on ${hub}`, bad, tip, lost), { name: `offhost (${a.session})`, email: `offhost@${hostname()}` });
        const r = await pushLease(s.repo, hub, LOCK_REF, commit, tip);
        if (r.outcome === 'refused') throw new LockError(`${r.message}; nothing was changed`);
        if (r.outcome === 'moved') throw new LockError(`${LOCK_REF} on ${hub} moved while offhost repaired it (someone else did?): run \`offhost lock status\`, then repair again if it is still broken`);
        Object.assign(out, { status: 'repaired', commit, kept: t.kept });
        out.where.push(`${LOCK_REF} on ${hub}`);
        out.why.push(bad);
        out.archived.push(...t.archived);
        out.lost.push(...lost);
        hubTip = commit;
      } else hubTip = tip;
    }
  }
  // This clone's own copy: with a hub it only follows, so it is pointed at the hub's (repaired) tip;
  // without one it is the store and is repaired like the user store.
  const local = await inspectRef(s.repo, LOCK_REF);
  const localBad = local.state === 'broken' ? local.why : local.state === 'commit' ? await treeProblem(s, s.repo, local.sha) : null;
  if (hub) {
    if (hubTip && !(await hasCommit(s.repo, hubTip))) await fetchRef(s.repo, hub, LOCK_REF);
    if (localBad || (out.status === 'repaired' && hubTip)) {
      if (hubTip) await forceLocal(s.repo, LOCK_REF, hubTip, local);
      else {
        rmSync(join(s.repo.commonDir, LOCK_REF), { force: true });
        await runGit(['update-ref', '-d', LOCK_REF], call(s.repo));
      }
      if (localBad) {
        out.status = 'repaired';
        out.where.push(`this clone's copy (${s.repo.commonDir})`);
        out.why.push(localBad);
      }
    }
  } else if (localBad) {
    const { files, lost } = await readable(s.repo, local.state === 'absent' ? undefined : (local as { sha?: string }).sha);
    const t = newTree(s, files, now, localBad, a.session);
    const commit = await buildCommit(s.repo, null, t.changes, message(`this clone`, localBad, (local as { sha?: string }).sha, lost), { name: `offhost (${a.session})`, email: `offhost@${hostname()}` });
    await forceLocal(s.repo, LOCK_REF, commit, local);
    Object.assign(out, { status: 'repaired', commit, kept: t.kept });
    out.where.push(`this clone (${s.repo.commonDir})`);
    out.why.push(localBad);
    out.archived.push(...t.archived);
    out.lost.push(...lost);
  }
  return out;
}

async function hasCommit(repo: Repo, sha: string): Promise<boolean> {
  return (await runGit(['cat-file', '-e', `${sha}^{commit}`], call(repo))).code === 0;
}

/** Why the tree of a commit is not a readable lock store (a wrong entry type, a missing object), or null. */
async function treeProblem(s: LockStore, repo: Repo, sha: string): Promise<string | null> {
  const { lost } = await readable(repo, sha);
  const dirs = [s.dirs.active, s.dirs.components, s.dirs.archive, s.dirs.componentArchive];
  const bad = lost.filter((l) => dirs.some((d) => l.startsWith(`${d}/`)) || /^(the tree of |[0-9a-f]{40})/.test(l));
  return bad.length ? `${bad.slice(0, 3).join('; ')}${bad.length > 3 ? ` and ${bad.length - 3} more` : ''}` : null;
}
