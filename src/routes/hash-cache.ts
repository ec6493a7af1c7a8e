// A cache of the laptop's file hashes for the source manifest (src/routes/source.ts): a run on an unchanged
// 10,000-file tree hashed every file again (about half a second on the development machine). A file whose
// device, inode, size, mode, mtime and ctime (nanoseconds) are those recorded with its hash has that hash
// still, with one exception git knows as the "racy" entry: a file written in the same clock tick as it was
// hashed can change again without its times changing. So each run first touches a stamp file beside the
// cache and reads its mtime back (the filesystem's clock, not the laptop's), and an entry recorded in that
// run is trusted later only when the file's times are older than that stamp by more than any filesystem's
// tick (FAT's 2 s): a file changed after it was hashed then has times past the stamp, or a ctime of its own.
// A cache that cannot be read or written only costs the hashing; it never decides what the VM runs (the VM
// recomputes the manifest from its own copy in the run's session, and a difference stops the run).
//
// One cache per checkout, in its git directory (a worktree has its own): `<gitDir>/offhost/hash-cache`.
import { mkdirSync, readFileSync, renameSync, statSync, unlinkSync, writeFileSync, type BigIntStats } from 'node:fs';
import { dirname, join } from 'node:path';

/** Wider than the coarsest timestamp a laptop's filesystem keeps (FAT: 2 s), in nanoseconds. */
const RACY_NS = 3_000_000_000n;
const FORMAT = 'offhost-hash-cache 1';
/** No cache: every file is hashed (the stamp could not be written). */
const NONE: HashCache = { stampNs: null, get: () => undefined, set: () => {}, save: () => {} };

export interface HashCache {
  /**
   * This run's stamp (the stamp file's mtime, nanoseconds, on the checkout's own filesystem), or null
   * without a cache. A shared VM, which sees these files through a mount, uses it for its own cache.
   */
  readonly stampNs: bigint | null;
  /** The recorded hash of `path`, when `st` (its stat now, bigint) is what was recorded and not racy. */
  get(path: string, st: BigIntStats): string | undefined;
  /** Records the hash of `path` read while its stat was `st`. */
  set(path: string, st: BigIntStats, sum: string): void;
  /** Writes the cache when it changed, keeping only the paths asked for this run. Never throws. */
  save(): void;
}

function key(st: BigIntStats): string {
  return `${st.dev}:${st.ino}:${st.size}:${st.mode}:${st.mtimeNs}:${st.ctimeNs}`;
}

export function hashCacheFile(gitDir: string): string {
  return join(gitDir, 'offhost', 'hash-cache');
}

/** Opens the cache at `file` (missing or unreadable: empty; a folder offhost cannot write in: none). */
export function openHashCache(file: string): HashCache {
  let stamp: bigint;
  try {
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(`${file}.stamp`, '');
    stamp = statSync(`${file}.stamp`, { bigint: true }).mtimeNs;
  } catch {
    return NONE;
  }
  const old = new Map<string, [string, string]>();
  let trustBefore = -1n;
  try {
    const lines = readFileSync(file, 'utf8').split('\n');
    const head = /^offhost-hash-cache 1 (\d+)$/.exec(lines[0] ?? '');
    if (head) {
      trustBefore = BigInt(head[1]!) - RACY_NS;
      // `key\tsum\tpath`: the path is the last field, taken whole (it may hold a tab).
      for (let i = 1; i < lines.length; i++) {
        const l = lines[i]!;
        const a = l.indexOf('\t');
        const b = a < 0 ? -1 : l.indexOf('\t', a + 1);
        if (b < 0) continue;
        old.set(l.slice(b + 1), [l.slice(0, a), l.slice(a + 1, b)]);
      }
    }
  } catch {
    // No cache yet, or one that cannot be read: every file is hashed.
  }
  const now = new Map<string, [string, string]>();
  let changed = false;
  return {
    stampNs: stamp,
    get(path, st) {
      const e = old.get(path);
      if (!e || e[0] !== key(st)) return undefined;
      if (st.mtimeNs >= trustBefore || st.ctimeNs >= trustBefore) return undefined;
      now.set(path, e);
      return e[1];
    },
    set(path, st, sum) {
      now.set(path, [key(st), sum]);
      // Hashed again, even to the same record: a racy entry left under its old stamp would stay racy and be
      // hashed on every later run (a tree copied just before its first run: every file, every time).
      changed = true;
    },
    save() {
      // Entries kept from the last run keep their trust only under their own stamp: rewrite whenever
      // anything was hashed again, and keep the file as it is when nothing was.
      if (!changed && now.size === old.size) return;
      const tmp = `${file}.${process.pid}.tmp`;
      try {
        const out = [`${FORMAT} ${stamp}`];
        for (const [path, [k, sum]] of now) if (!/[\n\r]/.test(path)) out.push(`${k}\t${sum}\t${path}`);
        writeFileSync(tmp, `${out.join('\n')}\n`);
        renameSync(tmp, file);
      } catch {
        // A read-only git directory or a full disk: the next run hashes again.
        try {
          unlinkSync(tmp);
        } catch {
          // never written
        }
      }
    },
  };
}
