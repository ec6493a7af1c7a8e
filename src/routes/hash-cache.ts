// A cache of the laptop's file hashes for the source manifest (src/routes/source.ts): a run on an unchanged
// 10,000-file tree hashed every file again (about half a second on the development machine). A file whose
// device, inode, size, mode, mtime and ctime (nanoseconds) are those recorded with its hash has that hash
// still, with one exception git knows as the "racy" entry: a file written in the same clock tick as it was
// hashed can change again without its times changing. So each run first touches a stamp file beside the
// cache and reads its mtime back (the filesystem's clock, not the laptop's), and a hash is recorded only
// when its file's times are older than that stamp by more than any filesystem's tick (FAT's 2 s): a file
// changed after it was hashed then has times past the stamp, or a ctime of its own; a racy file is hashed
// again by the next run. A cache that cannot be read or written only costs the hashing; it never decides
// what the VM runs (the VM recomputes the manifest from its own copy in the run's session, and a
// difference stops the run).
//
// Records are appended (an edited file adds a line, not a rewrite of a 10,000-line file); the lines that no
// longer hold (a file changed, gone, or not asked for) are dropped when they are over a third of the file,
// which is then written whole under a name of its own and renamed over the old one. The same rules as the
// VM's own cache (src/run/remote.ts verifyLines).
//
// One cache per checkout, in its git directory (a worktree has its own): `<gitDir>/offhost/hash-cache`.
import { mkdirSync, statSync, writeFileSync, type BigIntStats } from 'node:fs';
import { dirname, join } from 'node:path';
import { appendRecords, readRecords, rewriteRecords } from './record-file.js';

/** Wider than the coarsest timestamp a laptop's filesystem keeps (FAT: 2 s), in nanoseconds. */
const RACY_NS = 3_000_000_000n;
const FORMAT = 'offhost-hash-cache 2';
/** Lines that no longer hold, past which (and past a third of the file) the cache is written whole again. */
const DEAD_MIN = 16;
/** No cache: every file is hashed (the stamp could not be written). */
const NONE: HashCache = { stampNs: null, get: () => undefined, set: () => {}, save: () => {} };

export interface HashCache {
  /**
   * This run's stamp (the stamp file's mtime, nanoseconds, on the checkout's own filesystem), or null
   * without a cache. A shared VM, which sees these files through a mount, uses it for its own cache.
   */
  readonly stampNs: bigint | null;
  /** The recorded hash of `path`, when `st` (its stat now, bigint) is what was recorded. */
  get(path: string, st: BigIntStats): string | undefined;
  /** Records the hash of `path` read while its stat was `st`, unless that is within the racy margin of the stamp. */
  set(path: string, st: BigIntStats, sum: string): void;
  /** Appends what was recorded, or writes the cache whole when over a third of it no longer holds. Never throws. */
  save(): void;
}

function key(st: BigIntStats): string {
  return `${st.dev}:${st.ino}:${st.size}:${st.mode}:${st.mtimeNs}:${st.ctimeNs}`;
}

export function hashCacheFile(gitDir: string): string {
  return join(gitDir, 'offhost', 'hash-cache');
}

/**
 * Opens the cache at `file` (missing or unreadable: empty; a folder offhost cannot write in: none).
 * `stampNs`: the stamp to measure the racy margin against, instead of touching the stamp file (a test's
 * "a run a minute later").
 */
export function openHashCache(file: string, opts: { stampNs?: bigint } = {}): HashCache {
  let stamp: bigint;
  try {
    mkdirSync(dirname(file), { recursive: true });
    if (opts.stampNs !== undefined) stamp = opts.stampNs;
    else {
      writeFileSync(`${file}.stamp`, '');
      stamp = statSync(`${file}.stamp`, { bigint: true }).mtimeNs;
    }
  } catch {
    return NONE;
  }
  const trustBefore = stamp - RACY_NS;
  const old = new Map<string, [string, string]>();
  // `key\tsum\tpath`: the path is the last field, taken whole (it may hold a tab); a later line wins.
  const { valid, records: lines } = readRecords(file, FORMAT, (l) => {
    const a = l.indexOf('\t');
    const b = a < 0 ? -1 : l.indexOf('\t', a + 1);
    if (b < 0 || b - a !== 65) return false;
    old.set(l.slice(b + 1), [l.slice(0, a), l.slice(a + 1, b)]);
    return true;
  });
  const now = new Map<string, [string, string]>();
  const added: string[] = [];
  let hits = 0;
  return {
    stampNs: stamp,
    get(path, st) {
      const e = old.get(path);
      if (!e || e[0] !== key(st)) return undefined;
      hits++;
      now.set(path, e);
      return e[1];
    },
    set(path, st, sum) {
      if (st.mtimeNs >= trustBefore || st.ctimeNs >= trustBefore) return;
      const e: [string, string] = [key(st), sum];
      now.set(path, e);
      if (!/[\n\r]/.test(path)) added.push(`${e[0]}\t${sum}\t${path}\n`);
    },
    save() {
      const dead = lines - hits;
      const whole = valid ? dead > DEAD_MIN && dead * 3 > lines : added.length > 0;
      if (!whole) {
        // A read-only git directory or a full disk: the next run hashes them again.
        appendRecords(file, added);
        return;
      }
      const out: string[] = [];
      for (const [path, [k, sum]] of now) if (!/[\n\r]/.test(path)) out.push(`${k}\t${sum}\t${path}\n`);
      rewriteRecords(file, FORMAT, out);
    },
  };
}
