// A dirty tree's snapshot commit (git mode, ./sync.ts snapshotCommit) kept for the next run while nothing
// it was made from has changed. An agent's tree is dirty most of the time and often unchanged between two
// runs; the snapshot is then the same commit (its tree from the same index and files, its date HEAD's),
// and making it again cost four git processes. What it is made from, all in the key:
//   - HEAD, the branch (in the message), the folders left out;
//   - the checkout's index file, by device, inode, size and times (git writes an index whole, under a new
//     name renamed over the old one, so the same file is the same index);
//   - each path git status named as changed (the only ones `git add` reads), by its lstat: mode, device,
//     inode, size, mtime and ctime to the nanosecond, or its absence.
// A commit is kept only when every named file's times are more than 3 s old when the snapshot is started
// (git's racy rule: a file written in the tick it was read can change again without its times changing;
// a later write moves its ctime, which no one can set back). The VM's fingerprint check still decides
// the run: a kept commit that lied could only make it refuse.
import { createHash } from 'node:crypto';
import { existsSync, lstatSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { commonDirOf } from './index-hashes.js';
import type { SourceState } from './source.js';

const RACY_NS = 3_000_000_000n;

export interface SnapshotKey {
  key: string;
  /** A named file was written within the racy margin: the commit made now is not kept. */
  racy: boolean;
}

export const snapshotRecordFile = (gitDir: string) => join(gitDir, 'offhost-snapshot.json');

/** The key of a snapshot made now from `named` (the changed paths `git add -A` will read); null: none can be kept. */
export function snapshotKey(state: Pick<SourceState, 'root' | 'gitDir' | 'head' | 'branch'>, skipDirs: readonly string[], named: readonly string[], nowNs: bigint = BigInt(Date.now()) * 1_000_000n): SnapshotKey | null {
  if (!state.head) return null;
  let index;
  try {
    index = statSync(join(state.gitDir, 'index'), { bigint: true });
  } catch {
    return null;
  }
  const h = createHash('sha256').update(`offhost-snapshot 1\0${state.head}\0${state.branch ?? ''}\0${skipDirs.join('\n')}\0${index.dev}:${index.ino}:${index.size}:${index.mtimeNs}:${index.ctimeNs}\0`);
  let racy = false;
  for (const p of named) {
    try {
      const st = lstatSync(join(state.root, p), { bigint: true });
      h.update(`${p}\0${st.mode}:${st.dev}:${st.ino}:${st.size}:${st.mtimeNs}:${st.ctimeNs}\n`);
      if (nowNs - st.mtimeNs <= RACY_NS || nowNs - st.ctimeNs <= RACY_NS) racy = true;
    } catch {
      h.update(`${p}\0absent\n`);
    }
  }
  return { key: h.digest('hex'), racy };
}

/** The commit kept for `key`, when its object is still in the repository (loose, or asked of `hasCommit`). */
export async function keptSnapshot(gitDir: string, key: string, hasCommit: (sha: string) => Promise<boolean>): Promise<string | null> {
  let rec: { key?: unknown; commit?: unknown };
  try {
    rec = JSON.parse(readFileSync(snapshotRecordFile(gitDir), 'utf8')) as typeof rec;
  } catch {
    return null;
  }
  if (rec.key !== key || typeof rec.commit !== 'string' || !/^[0-9a-f]{40}([0-9a-f]{24})?$/.test(rec.commit)) return null;
  const sha = rec.commit;
  if (existsSync(join(commonDirOf(gitDir), 'objects', sha.slice(0, 2), sha.slice(2)))) return sha;
  return (await hasCommit(sha)) ? sha : null;
}

/** Keeps `commit` for `key` (written whole; one that cannot be written only costs the next run the snapshot). */
export function keepSnapshot(gitDir: string, key: string, commit: string): void {
  const f = snapshotRecordFile(gitDir);
  const tmp = `${f}.${process.pid}.tmp`;
  try {
    writeFileSync(tmp, JSON.stringify({ key, commit }));
    renameSync(tmp, f);
  } catch {
    rmSync(tmp, { force: true });
  }
}

/**
 * Forgets the kept commit: the VM found the copy checked out from it not to be the laptop's tree. The key
 * held, so a file changed without its lstat moving (a file system whose ctime does not follow writes):
 * the next run makes its snapshot again, instead of being refused with the same commit for ever.
 */
export function forgetSnapshot(gitDir: string): void {
  rmSync(snapshotRecordFile(gitDir), { force: true });
}
