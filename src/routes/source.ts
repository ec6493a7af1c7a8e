// The laptop's source state for `offhost run` (issue 11 item 1): which files make up the tree a command
// sees, and a fingerprint of their content that the VM recomputes in the same session.
//
// The source set is what git would call the working tree: tracked files that exist plus untracked files
// that are not ignored (`git ls-files --cached --others --exclude-standard`), minus the configured
// exclusions (whole path segments: `.git`, `node_modules`, `target`), minus directories (submodules) and
// dangling symlinks. The manifest is exactly what GNU coreutils print for that list, in that order, on
// the VM:
//
//   <sha256sum of each file, "HASH  ./path" lines>
//   --exec--
//   <the paths whose owner-execute bit is set, one a line>
//
// and the fingerprint is its sha256. It covers HEAD's tree plus every uncommitted change (content and
// the execute bit), whichever way the VM got its copy (a mount, rsync, a git checkout). HEAD's commit id
// and the dirty summary are kept beside it for the record.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { closeSync, constants, existsSync, openSync, readSync, statSync, fstatSync, type BigIntStats } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { GitError } from '../errors.js';
import { hashCacheFile, openHashCache, type HashCache } from './hash-cache.js';
import { directoriesOf, indexSnapshotFile, readIndexSnapshot, writeIndexSnapshot, type TrackedSnapshot } from './index-snapshot.js';
import { BLOB_ASK_MAX, blobHashesFile, blobSums, commonDirOf, distrust, openBlobHashes, ordinaryEntry, parseConfigZ, parseStagedIndex, TRUST_CONFIG, type BlobHashes, type IndexEntry } from './index-hashes.js';

const run = promisify(execFile);

/** Default exclusions (path segments): never copied, never verified. */
export const DEFAULT_SYNC_EXCLUDE = ['.git', 'node_modules', 'target'];

export interface DirtySummary {
  modified: number;
  added: number;
  deleted: number;
  untracked: number;
  /** Up to 20 dirty paths, for the record. */
  paths: string[];
}

export interface SourceState {
  /** The repository's top level (physical path). */
  root: string;
  gitDir: string;
  head: string | null;
  branch: string | null;
  /** Source files, `./`-prefixed, sorted bytewise (the order the VM processes them in). */
  files: string[];
  /** `files` NUL-terminated: what the VM reads. */
  list: Buffer;
  manifest: string;
  fingerprint: string;
  dirty: DirtySummary;
  clean: boolean;
  /**
   * The laptop hash cache's stamp for this read, as seconds with a fraction (find's `%T@`), or null: the
   * racy margin a shared VM's cache measures the files' times against (they are the laptop's times).
   */
  stamp: string | null;
  /**
   * The paths whose working-tree file was not the index's when the source was read (git status's second
   * column: modified, deleted, type changed; unmerged; untracked): everywhere else the tree is the index.
   * Null when not read from a working tree.
   */
  changed: string[] | null;
}

/** Environment for git: no inherited GIT_* (inside a hook they point at git's own files), no prompts. */
export function gitEnv(extra: Record<string, string> = {}, base: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(base)) {
    if (k.startsWith('GIT_') && !/^GIT_(AUTHOR|COMMITTER)_(NAME|EMAIL)$|^GIT_CONFIG_NOSYSTEM$/.test(k)) continue;
    out[k] = v;
  }
  return { ...out, GIT_TERMINAL_PROMPT: '0', ...extra };
}

export async function gitBuf(cwd: string, args: string[], env?: NodeJS.ProcessEnv): Promise<Buffer> {
  try {
    const r = await run('git', args, { cwd, env: env ?? gitEnv(), encoding: 'buffer', maxBuffer: 1 << 30 });
    return r.stdout as Buffer;
  } catch (err) {
    const e = err as { stderr?: Buffer; message: string };
    throw new GitError(`git ${args.join(' ')} (in ${cwd}) failed: ${(e.stderr?.toString() || e.message).trim()}`);
  }
}

export async function gitText(cwd: string, args: string[], env?: NodeJS.ProcessEnv): Promise<string> {
  return (await gitBuf(cwd, args, env)).toString('utf8').trim();
}

/** `git config -z --get-regexp RE`: nothing set is an empty answer (git exits 1), any other failure throws. */
async function gitConfig(cwd: string, re: string): Promise<Buffer> {
  try {
    const r = await run('git', ['config', '-z', '--get-regexp', re], { cwd, env: gitEnv(), encoding: 'buffer', maxBuffer: 1 << 20 });
    return r.stdout as Buffer;
  } catch (err) {
    const e = err as { code?: number; stderr?: Buffer; message: string };
    if (e.code === 1 && !e.stderr?.length) return Buffer.alloc(0);
    throw new GitError(`git config --get-regexp (in ${cwd}) failed: ${(e.stderr?.toString() || e.message).trim()}`);
  }
}

async function tryGit(cwd: string, args: string[]): Promise<string | null> {
  try {
    return await gitText(cwd, args);
  } catch {
    return null;
  }
}

/** The repository holding `cwd`: { root, gitDir }, or null when there is none. */
export async function findRepo(cwd: string): Promise<{ root: string; gitDir: string } | null> {
  const out = await tryGit(cwd, ['rev-parse', '--show-toplevel', '--absolute-git-dir']);
  if (!out) return null;
  const [root, gitDir] = out.split('\n');
  return root && gitDir ? { root, gitDir } : null;
}

/** True when a whole segment of `path` is one of `exclude` (no split: this runs for every file of the tree). */
export function excluded(path: string, exclude: readonly string[]): boolean {
  for (const seg of exclude) {
    const at = path.indexOf(seg);
    if (at < 0) continue;
    if (path === seg || path.startsWith(`${seg}/`) || path.endsWith(`/${seg}`) || path.includes(`/${seg}/`)) return true;
  }
  return false;
}

/** Names the VM-side coreutils would print differently (escaped) or a line protocol cannot carry. */
function unverifiable(path: string): boolean {
  return /[\\\n\r]/.test(path);
}

/**
 * The sha256 of a regular file (following symlinks, as sha256sum does) and its stat, or null. `blobAlgo`:
 * also the git blob id of the same bytes (`blob <size>\0` + content) in that object format.
 */
function hashFile(abs: string, blobAlgo?: 'sha1' | 'sha256'): { sum: string; st: BigIntStats; blob?: string } | null {
  // Reads in chunks so a big file is not held in memory. O_NONBLOCK: opening a FIFO (a tracked file
  // replaced by one) would otherwise wait for a writer for ever; it is then no regular file, and skipped.
  let fd: number;
  try {
    fd = openSync(abs, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch {
    return null;
  }
  try {
    const st = fstatSync(fd, { bigint: true });
    if (!st.isFile()) return null;
    const h = createHash('sha256');
    // The header states the size seen before reading: bytes that changed meanwhile give another id.
    const g = blobAlgo ? createHash(blobAlgo).update(`blob ${st.size}\0`) : null;
    const buf = Buffer.allocUnsafe(1 << 16);
    for (;;) {
      const n = readSync(fd, buf, 0, buf.length, null);
      if (n === 0) break;
      const chunk = n === buf.length ? buf : buf.subarray(0, n);
      h.update(chunk);
      g?.update(chunk);
    }
    return g ? { sum: h.digest('hex'), st, blob: g.digest('hex') } : { sum: h.digest('hex'), st };
  } catch {
    return null;
  } finally {
    closeSync(fd);
  }
}

/**
 * The manifest of `files` under `root` (the format above). `cache`: hashes of files unchanged since an
 * earlier run (src/routes/hash-cache.ts), consulted with one stat of each file and filled with the rest.
 */
export function manifestOf(root: string, files: readonly string[], cache?: HashCache): { manifest: string; kept: string[] } {
  const entries = new Array<FileEntry | null>(files.length);
  for (let i = 0; i < files.length; i++) entries[i] = entryOf(root, files[i]!, cache);
  return manifestFrom(files, entries);
}

/** One file's line of the manifest and whether its owner may execute it; null: not a readable regular file. */
interface FileEntry {
  line: string;
  exec: boolean;
  /** Taken from the index without reading the file: to be read again if git status says it changed. */
  fromIndex?: true;
}

function entryOf(root: string, f: string, cache?: HashCache): FileEntry | null {
  // `./path` under root (path.join's normalising, at 10,000 files, cost more than the stats' own JS).
  const abs = `${root}/${f.slice(2)}`;
  let sum: string | undefined;
  let mode: bigint;
  const now = cache ? statOrNull(abs) : null;
  if (now && now.isFile() && (sum = cache!.get(f, now)) !== undefined) mode = now.mode;
  else {
    const read = hashFile(abs);
    if (read === null) return null;
    sum = read.sum;
    mode = read.st.mode;
    cache?.set(f, read.st, sum);
  }
  return { line: `${sum}  ${f}\n`, exec: (mode & 0o100n) !== 0n };
}

/**
 * A clean tracked file's entry from its index blob (./index-hashes.ts), or, when the blob's hash is not
 * known yet, from reading the file whole: its blob id proven equal to the index's, the blob's hash is
 * recorded. Null: not for the index (read it as any other file).
 */
function entryFromIndex(root: string, f: string, e: IndexEntry, blobs: BlobHashes, algo: 'sha1' | 'sha256'): FileEntry | null {
  const exec = e.mode === '100755';
  const known = blobs.get(e.blob);
  if (known !== undefined) return { line: `${known}  ${f}\n`, exec, fromIndex: true };
  const read = hashFile(`${root}/${f.slice(2)}`, algo);
  if (read === null) return null;
  if (read.blob === e.blob) blobs.set(e.blob, read.sum);
  return { line: `${read.sum}  ${f}\n`, exec: (read.st.mode & 0o100n) !== 0n };
}

function manifestFrom(files: readonly string[], entries: readonly (FileEntry | null)[]): { manifest: string; kept: string[] } {
  const hashes: string[] = [];
  const execs: string[] = [];
  const kept: string[] = [];
  for (let i = 0; i < files.length; i++) {
    const e = entries[i];
    if (!e) continue;
    kept.push(files[i]!);
    hashes.push(e.line);
    if (e.exec) execs.push(`${files[i]}\n`);
  }
  return { manifest: `${hashes.join('')}--exec--\n${execs.join('')}`, kept };
}

/**
 * The entries of `files` (entryOf each), giving the event loop a turn every few hundred files: `offhost
 * run` takes its lock while it reads the source, and `git status` runs while the tracked files are read;
 * their output waits on this process between these steps.
 */
async function entriesYielding(files: readonly string[], entry: (f: string) => FileEntry | null): Promise<(FileEntry | null)[]> {
  const entries = new Array<FileEntry | null>(files.length);
  for (let i = 0; i < files.length; i++) {
    if ((i & 255) === 255) await new Promise<void>((r) => setImmediate(r));
    entries[i] = entry(files[i]!);
  }
  return entries;
}

/**
 * True when `a` sorts before `b` byte by byte in UTF-8. `<` compares UTF-16 code units, which agree with
 * UTF-8's bytes below U+D800 (surrogate pairs and U+E000-U+FFFF are where the two orders part).
 */
function bytewiseBefore(a: string, b: string): boolean {
  if (!ABOVE_D7FF.test(a) && !ABOVE_D7FF.test(b)) return a < b;
  return Buffer.compare(Buffer.from(a), Buffer.from(b)) < 0;
}
const ABOVE_D7FF = /[\uD800-\uFFFF]/;

/** `xs` in bytewise order: as they are when they already are (git's index order is), else sorted. */
function bytewiseSorted(xs: string[]): string[] {
  let sorted = true;
  for (let i = 1; i < xs.length && sorted; i++) sorted = bytewiseBefore(xs[i - 1]!, xs[i]!);
  if (sorted) return xs;
  return xs.map((x) => Buffer.from(x)).sort(Buffer.compare).map((b) => b.toString('utf8'));
}

function statOrNull(abs: string): BigIntStats | null {
  try {
    return statSync(abs, { bigint: true });
  } catch {
    return null;
  }
}

export function fingerprintOf(manifest: string): string {
  return createHash('sha256').update(manifest).digest('hex');
}

/**
 * `git status --porcelain=v2 -z --branch` in one pass: HEAD's commit and branch (the headers), the dirty
 * summary (each entry's XY, `.` for unchanged, read as v1's letters), and the untracked paths.
 */
export function parseStatus(z: Buffer): { head: string | null; branch: string | null; dirty: DirtySummary; untracked: string[]; changed: string[] } {
  const d: DirtySummary = { modified: 0, added: 0, deleted: 0, untracked: 0, paths: [] };
  const untracked: string[] = [];
  /** The paths whose working-tree file is not the index's: changed in the tree, unmerged, untracked. */
  const changed: string[] = [];
  let head: string | null = null;
  let branch: string | null = null;
  const parts = z.toString('utf8').split('\0');
  const note = (xy: string, path: string) => {
    if (xy.includes('D')) d.deleted++;
    else if (xy.includes('A')) d.added++;
    else d.modified++;
    if (d.paths.length < 20) d.paths.push(`${xy.trim()} ${path}`);
  };
  // Fields before the path: ordinary 8, renamed or copied 9 (its original path is the next entry), unmerged 10.
  const fieldsBefore = { '1': 8, '2': 9, u: 10 } as const;
  for (let i = 0; i < parts.length; i++) {
    const e = parts[i]!;
    const kind = e[0];
    if (kind === '#') {
      const [, key, value = ''] = /^# (\S+) (.*)$/.exec(e) ?? [];
      if (key === 'branch.oid' && /^[0-9a-f]{40,64}$/.test(value)) head = value;
      if (key === 'branch.head' && value !== '(detached)') branch = value;
    } else if (kind === '?') {
      d.untracked++;
      const path = e.slice(2);
      untracked.push(path);
      changed.push(path);
      if (d.paths.length < 20) d.paths.push(`?? ${path}`);
    } else if (kind === '1' || kind === '2' || kind === 'u') {
      let at = 0;
      for (let f = 0; f < fieldsBefore[kind] && at !== -1; f++) at = e.indexOf(' ', at + 1);
      if (at === -1) continue;
      note(e.slice(2, 4).replace(/\./g, ' '), e.slice(at + 1));
      // The working tree differs from the index there (the second column), or the entry is unmerged.
      if (kind === 'u' || e[3] !== '.') changed.push(e.slice(at + 1));
      if (kind === '2') i++; // the original path follows (not in the index any more)
    }
  }
  return { head, branch, dirty: d, untracked, changed: changed.filter(Boolean) };
}

/**
 * The `.gitattributes` files (relative paths) in `dirs` (./index-snapshot.ts directoriesOf: the root and
 * every directory holding a tracked file), tracked, untracked or ignored alike: git reads them all.
 */
function attributesIn(root: string, dirs: readonly string[]): string[] {
  const out: string[] = [];
  for (const d of dirs) {
    const f = d === '' ? '.gitattributes' : `${d}/.gitattributes`;
    if (existsSync(`${root}/${f}`)) out.push(f);
  }
  return out;
}

/** Reads the source state of the repository at `root` (physical path). */
export async function readSourceState(
  repo: { root: string; gitDir: string },
  exclude: readonly string[] = DEFAULT_SYNC_EXCLUDE,
  /** Directories (`a/b/`) whose files are not source (offhost's lock files). */
  skipDirs: readonly string[] = [],
): Promise<SourceState> {
  const { root, gitDir } = repo;
  // Three git processes: the index (paths, modes, blob ids), one status pass for HEAD, the branch, what is
  // dirty and what is untracked (not ignored), and the settings the index's trust rests on
  // (./index-hashes.ts). The first two together are `git ls-files --cached --others --exclude-standard`.
  // The tracked files are read while git status runs; a clean one whose blob's hash is known is not read
  // at all (status has stat'ed it), and one status calls changed is read again afterwards.
  const lsFiles = gitBuf(root, ['ls-files', '-z', '--cached', '--stage', '-v']);
  // --no-optional-locks: offhost runs beside the user's own git commands and never takes index.lock from them.
  const status = gitBuf(root, ['--no-optional-locks', 'status', '--porcelain=v2', '-z', '--branch', '--untracked-files=all', '--ignore-submodules=none']);
  const config = gitConfig(root, TRUST_CONFIG);
  // All are awaited (a failure of any is the read's failure, and none is left unhandled).
  const listed = Promise.all([lsFiles, status, config]);
  listed.catch(() => undefined);
  const cache = openHashCache(hashCacheFile(gitDir));
  // Opened only when the index snapshot does not stand for the tracked files (a 10,000-line read).
  let blobCache: BlobHashes | null = null;
  const blobs = (): BlobHashes => (blobCache ??= openBlobHashes(blobHashesFile(gitDir)));
  const seen = new Set<string>();
  const take = (into: string[], p: string) => {
    if (p === '' || seen.has(p) || excluded(p, exclude) || skipDirs.some((d) => p.startsWith(d))) return;
    seen.add(p);
    if (unverifiable(p)) {
      throw new GitError(`${root}: cannot verify a file whose name holds a backslash or a line break: ${JSON.stringify(p)} (rename it, or exclude it with the VM's sync_exclude)`);
    }
    into.push(`./${p}`);
  };
  const tracked: string[] = [];
  let t: string[];
  let trackedEntries: (FileEntry | null)[];
  let index: Map<string, IndexEntry>;
  let trusted: { algo: 'sha1' | 'sha256' } | null = null;
  let listing: Buffer;
  let snapKey = '';
  let snap: TrackedSnapshot | null = null;
  try {
    listing = await lsFiles;
    const cfg = parseConfigZ(await config);
    const objectFormat = cfg.get('extensions.objectformat')?.toLowerCase() ?? 'sha1';
    const algo = objectFormat === 'sha1' || objectFormat === 'sha256' ? objectFormat : null;
    snapKey = JSON.stringify([algo, exclude, skipDirs]);
    // The same listing as the last run built from the index alone (./index-snapshot.ts): its directories
    // say where attributes could apply, without parsing the listing.
    snap = algo ? readIndexSnapshot(indexSnapshotFile(gitDir), snapKey, listing) : null;
    const dirs = snap ? snap.dirs : null;
    index = snap ? new Map() : parseStagedIndex(listing);
    if (algo && distrust(root, commonDirOf(gitDir), cfg, attributesIn(root, dirs ?? directoriesOf(index.keys()))) === null) trusted = { algo };
    else snap = null;
    if (snap) {
      // Nothing changed or untracked in the source set: the snapshot is this run's manifest, whole. Else
      // its entries are patched below as the index's would be (what status calls changed is read again).
      await listed.catch(() => undefined);
      const st0 = parseStatus((await listed)[1]);
      if (!st0.changed.some((p) => p !== '' && !excluded(p, exclude) && !skipDirs.some((d) => p.startsWith(d)))) {
        return stateOf(repo, st0, snap.manifest, snap.list, cache.stampNs);
      }
      ({ t, entries: trackedEntries } = entriesOfSnapshot(snap));
    } else {
      for (const p of index.keys()) take(tracked, p);
      t = bytewiseSorted(tracked);
      const fromIndex = (f: string): FileEntry | null => {
        const e = index.get(f.slice(2));
        return trusted && ordinaryEntry(e) ? entryFromIndex(root, f, e, blobs(), trusted.algo) : entryOf(root, f, cache);
      };
      trackedEntries = await entriesYielding(t, fromIndex);
    }
  } finally {
    await listed.catch(() => undefined);
  }
  const [, statusOut] = await listed;
  const st = parseStatus(statusOut);
  // What the index says of every tracked file (the snapshot keeps that, below); it is the file's content
  // only where status found the file as the index has it.
  const indexEntries = snap ? null : trackedEntries.slice();
  const changed = new Set(st.changed);
  if (indexEntries && trusted) {
    // A changed file whose index blob is not known yet was read as it is now: the blob's own hash comes
    // from git's object store (a few at most), so that the snapshot can be kept for a tree that stays dirty.
    const ask: number[] = [];
    for (let k = 0; k < t.length && ask.length <= BLOB_ASK_MAX; k++) {
      const e = index.get(t[k]!.slice(2));
      if (!indexEntries[k]?.fromIndex && ordinaryEntry(e) && changed.has(t[k]!.slice(2)) && blobs().get(e.blob) === undefined) ask.push(k);
    }
    if (ask.length > 0 && ask.length <= BLOB_ASK_MAX) {
      const sums = await blobSums(root, ask.map((k) => index.get(t[k]!.slice(2))!.blob), gitEnv());
      for (const k of ask) {
        const e = index.get(t[k]!.slice(2))!;
        const sum = sums.get(e.blob);
        if (sum === undefined) continue;
        blobs().set(e.blob, sum);
        indexEntries[k] = { line: `${sum}  ${t[k]}\n`, exec: e.mode === '100755', fromIndex: true };
      }
    }
  }
  for (let k = 0; k < t.length; k++) {
    if (trackedEntries[k]?.fromIndex && changed.has(t[k]!.slice(2))) trackedEntries[k] = entryOf(root, t[k]!, cache);
  }
  const untracked: string[] = [];
  for (const p of st.untracked) take(untracked, p);
  // One list in bytewise order: the tracked (sorted) and the untracked (sorted), merged.
  const files: string[] = [];
  const entries: (FileEntry | null)[] = [];
  const u = bytewiseSorted(untracked);
  const uEntries = u.map((f) => entryOf(root, f, cache));
  let i = 0;
  let j = 0;
  while (i < t.length || j < u.length) {
    if (j >= u.length || (i < t.length && bytewiseBefore(t[i]!, u[j]!))) {
      files.push(t[i]!);
      entries.push(trackedEntries[i++]!);
    } else {
      files.push(u[j]!);
      entries.push(uEntries[j++]!);
    }
  }
  const { manifest, kept } = manifestFrom(files, entries);
  cache.save();
  if (trusted && !snap) {
    const live = new Set<string>();
    for (const e of index.values()) live.add(e.blob);
    blobs().save(live.size, (b) => live.has(b));
    // Every tracked file known from the index: the next run with this listing takes that, and reads again
    // only what status calls changed then.
    if (indexEntries!.every((e) => e?.fromIndex)) {
      const tm = manifestFrom(t, indexEntries!);
      writeIndexSnapshot(indexSnapshotFile(gitDir), snapKey, listing, { manifest: tm.manifest, list: Buffer.from(tm.kept.map((f) => `${f}\0`).join('')), dirs: directoriesOf(index.keys()) });
    }
  }
  return stateOf(repo, st, manifest, Buffer.from(kept.map((f) => `${f}\0`).join('')), cache.stampNs, kept);
}

/** The snapshot's paths and entries, each as the index gave it (./index-snapshot.ts). */
function entriesOfSnapshot(snap: TrackedSnapshot): { t: string[]; entries: FileEntry[] } {
  const t = snap.list.length ? snap.list.toString('utf8').slice(0, -1).split('\0') : [];
  const cut = snap.manifest.indexOf('--exec--\n');
  const lines = snap.manifest.slice(0, cut).split('\n');
  const exec = new Set(snap.manifest.slice(cut + 9).split('\n'));
  return { t, entries: t.map((f, i) => ({ line: `${lines[i]}\n`, exec: exec.has(f), fromIndex: true as const })) };
}

function stateOf(repo: { root: string; gitDir: string }, st: ReturnType<typeof parseStatus>, manifest: string, list: Buffer, stampNs: bigint | null, files?: string[]): SourceState {
  const { root, gitDir } = repo;
  const dirty = st.dirty;
  return {
    root,
    gitDir,
    head: st.head,
    branch: st.branch,
    files: files ?? (list.length ? list.toString('utf8').slice(0, -1).split('\0') : []),
    list,
    manifest,
    fingerprint: fingerprintOf(manifest),
    dirty,
    clean: dirty.modified + dirty.added + dirty.deleted + dirty.untracked === 0,
    changed: st.changed,
    stamp: stampNs === null ? null : `${stampNs / 1_000_000_000n}.${String(stampNs % 1_000_000_000n).padStart(9, '0')}`,
  };
}

/** `3 modified, 1 untracked` / `clean`. */
export function dirtyText(d: DirtySummary): string {
  const parts = [
    d.modified ? `${d.modified} modified` : '',
    d.added ? `${d.added} added` : '',
    d.deleted ? `${d.deleted} deleted` : '',
    d.untracked ? `${d.untracked} untracked` : '',
  ].filter(Boolean);
  return parts.length ? parts.join(', ') : 'clean';
}

/** Manifest lines -> path -> "hash [x]" (for a difference report). */
function manifestMap(manifest: string): Map<string, string> {
  const m = new Map<string, string>();
  const [hashes = '', execs = ''] = manifest.split('--exec--\n');
  for (const l of hashes.split('\n')) {
    if (l.length > 66) m.set(l.slice(66), l.slice(0, 12));
  }
  for (const l of execs.split('\n')) if (l && m.has(l)) m.set(l, `${m.get(l)} x`);
  return m;
}

export interface ManifestDiff {
  /** In the laptop's tree, not (readable) on the VM. */
  missing: string[];
  /** Content or execute bit differs. */
  differ: string[];
}

export function diffManifests(laptop: string, vm: string): ManifestDiff {
  const a = manifestMap(laptop);
  const b = manifestMap(vm);
  const out: ManifestDiff = { missing: [], differ: [] };
  for (const [p, v] of a) {
    const w = b.get(p);
    if (w === undefined) out.missing.push(p);
    else if (w !== v) out.differ.push(p);
  }
  return out;
}

export function diffText(d: ManifestDiff, max = 10): string {
  const lines: string[] = [];
  const show = (label: string, xs: string[]) => {
    if (!xs.length) return;
    lines.push(`${label} (${xs.length}): ${xs.slice(0, max).map((p) => p.replace(/^\.\//, '')).join(', ')}${xs.length > max ? ', ...' : ''}`);
  };
  show('missing on the VM', d.missing);
  show('different on the VM', d.differ);
  return lines.join('\n') || 'the file lists agree but the fingerprints differ';
}

/**
 * The source state of commit `sha` (for `offhost run --commit`): its tree checked out into `into` with a
 * temporary index (the user's index and working tree are not touched), then read like a working tree.
 */
export async function commitSourceState(
  repo: { root: string; gitDir: string },
  sha: string,
  into: string,
  exclude: readonly string[] = DEFAULT_SYNC_EXCLUDE,
  skipDirs: readonly string[] = [],
): Promise<SourceState> {
  const index = join(repo.gitDir, `offhost-commit-${process.pid}.index`);
  const env = gitEnv({ GIT_INDEX_FILE: index });
  try {
    await gitText(repo.root, ['read-tree', sha], env);
    await gitText(repo.root, ['checkout-index', '-a', '-f', `--prefix=${into.replace(/\/?$/, '/')}`], env);
    const names = (await gitBuf(repo.root, ['ls-files', '-z'], env)).toString('utf8').split('\0');
    const paths = names
      .filter((p) => p !== '' && !excluded(p, exclude) && !skipDirs.some((d) => p.startsWith(d)))
      .map((p) => {
        if (unverifiable(p)) throw new GitError(`commit ${sha}: cannot verify a file whose name holds a backslash or a line break: ${JSON.stringify(p)}`);
        return Buffer.from(`./${p}`);
      })
      .sort(Buffer.compare)
      .map((b) => b.toString('utf8'));
    const { manifest, kept } = manifestOf(into, paths);
    const branch = await tryGit(repo.root, ['symbolic-ref', '-q', '--short', 'HEAD']);
    return {
      root: into,
      gitDir: repo.gitDir,
      head: sha,
      branch,
      files: kept,
      list: Buffer.from(kept.map((f) => `${f}\0`).join('')),
      manifest,
      fingerprint: fingerprintOf(manifest),
      dirty: { modified: 0, added: 0, deleted: 0, untracked: 0, paths: [] },
      clean: true,
      stamp: null,
      changed: null,
    };
  } finally {
    const { rmSync } = await import('node:fs');
    rmSync(index, { force: true });
  }
}
