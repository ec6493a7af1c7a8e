// The tracked part of the source manifest as the last run built it from git's index alone
// (./index-hashes.ts), kept with the index listing it came from: `<gitDir>/offhost/index-snapshot`.
//
// When `git ls-files --stage` prints the same bytes again, with the same exclusions and object format,
// and git status finds nothing changed or untracked in the source set, that manifest and file list are
// this run's as well: every line of it was a function of the listing (a blob id and a mode per path)
// and of the content-addressed blob hashes. So a run on an unchanged 10,000-file tree neither parses the
// listing nor looks up 10,000 blobs. Whether the index may stand for the files at all (attributes,
// settings) is still decided on every run, from the directories kept here.
import { mkdirSync, readFileSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

const FORMAT = 'offhost-index-snapshot 1';

export interface TrackedSnapshot {
  /** The tracked files' manifest (./source.ts's format). */
  manifest: string;
  /** Their paths, `./`-prefixed, each followed by a NUL (what the VM reads). */
  list: Buffer;
  /** The directories holding them ('' for the root): where a `.gitattributes` could apply to them. */
  dirs: string[];
}

export function indexSnapshotFile(gitDir: string): string {
  return join(gitDir, 'offhost', 'index-snapshot');
}

/** The snapshot kept for exactly this listing and key, or null. Never throws. */
export function readIndexSnapshot(file: string, key: string, listing: Buffer): TrackedSnapshot | null {
  let buf: Buffer;
  try {
    buf = readFileSync(file);
  } catch {
    return null;
  }
  const nl = buf.indexOf(10);
  if (nl < 0) return null;
  // `FORMAT<TAB>KEY<TAB>listing bytes<TAB>manifest bytes<TAB>list bytes<TAB>dirs bytes`, then the four.
  const head = buf.subarray(0, nl).toString('utf8').split('\t');
  if (head.length !== 6 || head[0] !== FORMAT || head[1] !== key) return null;
  const sizes = head.slice(2).map(Number);
  if (!sizes.every((n) => Number.isSafeInteger(n) && n >= 0) || nl + 1 + sizes.reduce((a, b) => a + b, 0) !== buf.length) return null;
  let at = nl + 1;
  const part = (n: number) => buf.subarray(at, (at += n));
  if (!part(sizes[0]!).equals(listing)) return null;
  const manifest = part(sizes[1]!).toString('utf8');
  const list = Buffer.from(part(sizes[2]!));
  const dirs = part(sizes[3]!).toString('utf8').split('\0');
  return { manifest, list, dirs };
}

/** Keeps `snap` for `listing` and `key` (written whole under another name, then renamed). Never throws. */
export function writeIndexSnapshot(file: string, key: string, listing: Buffer, snap: TrackedSnapshot): void {
  const manifest = Buffer.from(snap.manifest, 'utf8');
  const dirs = Buffer.from(snap.dirs.join('\0'), 'utf8');
  const head = Buffer.from(`${[FORMAT, key, listing.length, manifest.length, snap.list.length, dirs.length].join('\t')}\n`);
  const tmp = `${file}.${process.pid}.tmp`;
  try {
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(tmp, Buffer.concat([head, listing, manifest, snap.list, dirs]));
    renameSync(tmp, file);
  } catch {
    try {
      unlinkSync(tmp);
    } catch {
      // never written
    }
  }
}

/** The directories holding `paths` and every directory above them ('' for the root). */
export function directoriesOf(paths: Iterable<string>): string[] {
  const dirs = new Set<string>(['']);
  for (const p of paths) {
    let d = p.slice(0, Math.max(0, p.lastIndexOf('/')));
    while (d !== '' && !dirs.has(d)) {
      dirs.add(d);
      d = d.slice(0, Math.max(0, d.lastIndexOf('/')));
    }
  }
  return [...dirs];
}
