// The manifest's hashes of clean tracked files, from git's index instead of a stat of each file.
//
// A run reads the source with `git status` (src/routes/source.ts), which stats every tracked file and says
// which differ from the index. Every other tracked file holds exactly its index blob's content, as long as
// nothing converts content between the blob and the file: no `text`, `eol`, `crlf`, `filter`, `ident` or
// `working-tree-encoding` attribute anywhere git reads attributes from, no `core.autocrlf`, the execute bit
// tracked (`core.fileMode`), and the entry an ordinary one (no assume-unchanged or skip-worktree bit, stage
// 0, a regular file's mode: a symlink's blob is its target's name, while the manifest hashes what it points
// at). For those files the sha256 is the blob's, which this cache keeps: `<blob id> <sha256>` lines in
// `<gitDir>/offhost/blob-hashes`, content-addressed, so a record never goes stale.
//
// A record is written only when a run has read the file whole and the git blob id of the very bytes it
// hashed (`blob <size>\0` + content, in the repository's object format) is the index's: the cache can never
// map a blob to a content it does not have, whatever changed the file meanwhile. On a 10,000-file tree
// this spares the laptop a stat of every file (tens of milliseconds) on every run; a repository that does
// not meet the conditions above is read as before (a stat each, src/routes/hash-cache.ts). What could
// still mislead it is a conversion it cannot see (a `.gitattributes` that git itself ignores): the VM then
// recomputes the manifest from its copy in the run's session, and a difference stops the run.
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { closeSync, constants, fstatSync, openSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';
import { appendRecords, readRecords, rewriteRecords } from './record-file.js';

const FORMAT = 'offhost-blob-hashes 1';
/**
 * Attributes that make a file's content differ from its blob's, set or given a value (`text`, `eol=crlf`,
 * `filter=lfs`; a macro defining one names it too). Unset (`-text`) and unspecified (`!text`) convert nothing.
 */
const CONVERTING = /(^|\s)(text|eol|crlf|filter|ident|working-tree-encoding)(=|\s|$)/m;

/** What `git ls-files -s -v` says of one tracked path. */
export interface IndexEntry {
  /** `H` for an ordinary cached entry (lowercase: assume-unchanged; `S`: skip-worktree; `M`: unmerged). */
  tag: string;
  mode: string;
  blob: string;
  stage: string;
}

/** Parses `git ls-files -z --cached -s -v` (`TAG MODE BLOB STAGE<TAB>PATH`): path -> entry (the last stage wins). */
export function parseStagedIndex(z: Buffer): Map<string, IndexEntry> {
  const out = new Map<string, IndexEntry>();
  for (const rec of z.toString('utf8').split('\0')) {
    const tab = rec.indexOf('\t');
    // `T MODE BLOB S`: one character, a space, the mode, a space, the blob id, a space, the stage.
    const a = rec.indexOf(' ', 2);
    if (tab < 0 || a < 0 || a > tab) continue;
    out.set(rec.slice(tab + 1), { tag: rec.slice(0, rec.indexOf(' ')), mode: rec.slice(rec.indexOf(' ') + 1, a), blob: rec.slice(a + 1, tab - 2), stage: rec.slice(tab - 1, tab) });
  }
  return out;
}

/** True when a tracked file's content is its blob's whenever git status calls it clean (the entry's part). */
export function ordinaryEntry(e: IndexEntry | undefined): e is IndexEntry {
  return e !== undefined && e.tag === 'H' && e.stage === '0' && (e.mode === '100644' || e.mode === '100755');
}

/** The git settings the trust rests on: `git config -z --get-regexp` output, keys lowercased. */
export function parseConfigZ(z: Buffer): Map<string, string> {
  const m = new Map<string, string>();
  for (const rec of z.toString('utf8').split('\0')) {
    if (!rec) continue;
    const nl = rec.indexOf('\n');
    m.set((nl < 0 ? rec : rec.slice(0, nl)).toLowerCase(), nl < 0 ? 'true' : rec.slice(nl + 1));
  }
  return m;
}

/** `git config` regexp for parseConfigZ. */
export const TRUST_CONFIG = '^(core\\.(autocrlf|filemode|attributesfile|trustctime|checkstat)|extensions\\.objectformat)$';

const falsy = (v: string | undefined) => v === undefined || /^(false|no|off|0)$/i.test(v);

/**
 * Why the index cannot stand for the working tree here, or null when it can. `attributeFiles`: the
 * working tree's `.gitattributes` paths (relative to root). Reads those files and the repository's,
 * the user's and the system's attribute files.
 */
export function distrust(root: string, commonDir: string, config: Map<string, string>, attributeFiles: readonly string[], env: NodeJS.ProcessEnv = process.env): string | null {
  if (!falsy(config.get('core.autocrlf'))) return 'core.autocrlf is set';
  const fileMode = config.get('core.filemode');
  if (fileMode !== undefined && falsy(fileMode)) return 'core.fileMode is false';
  // A status that does not compare ctimes passes an edit that kept the size and put the mtime back.
  const trustCtime = config.get('core.trustctime');
  if (trustCtime !== undefined && falsy(trustCtime)) return 'core.trustCtime is false';
  if (/^minimal$/i.test(config.get('core.checkstat') ?? '')) return 'core.checkStat is minimal';
  const sources = attributeFiles.map((p) => join(root, p));
  sources.push(join(commonDir, 'info', 'attributes'));
  const home = env.HOME || homedir();
  const userFile = config.get('core.attributesfile');
  if (userFile !== undefined) sources.push(userFile.startsWith('~/') ? join(home, userFile.slice(2)) : isAbsolute(userFile) ? userFile : resolve(root, userFile));
  else sources.push(join(env.XDG_CONFIG_HOME || join(home, '.config'), 'git', 'attributes'));
  // The system file's place depends on git's prefix: the common ones.
  if (!env.GIT_ATTR_NOSYSTEM) sources.push('/etc/gitattributes', '/usr/local/etc/gitattributes', '/opt/homebrew/etc/gitattributes');
  return convertingFile(sources);
}

/** The first of `files` (absolute) that sets a converting attribute or cannot be read, said why; null: none. */
export function convertingFile(files: readonly string[]): string | null {
  for (const f of files) {
    let text: string;
    let fd: number | null = null;
    try {
      // Not blocking on a FIFO, and not reading a device: only a regular file of a sane size is read.
      fd = openSync(f, constants.O_RDONLY | constants.O_NONBLOCK);
      const st = fstatSync(fd);
      if (!st.isFile() || st.size > ATTRIBUTES_MAX_BYTES) return `${f} is not a regular file of at most ${ATTRIBUTES_MAX_BYTES} bytes`;
      text = readFileSync(fd, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT' || (err as NodeJS.ErrnoException).code === 'ENOTDIR') continue;
      return `${f} could not be read`;
    } finally {
      if (fd !== null) closeSync(fd);
    }
    const live = text
      .split('\n')
      .filter((l) => !/^\s*#/.test(l))
      .join('\n');
    if (CONVERTING.test(live)) return `${f} sets an attribute that converts content`;
  }
  return null;
}

/** An attributes file larger than this is not read (the index is then not trusted). */
const ATTRIBUTES_MAX_BYTES = 1 << 20;

/** The repository's common git directory (a worktree's gitDir names it in `commondir`). */
export function commonDirOf(gitDir: string): string {
  try {
    const rel = readFileSync(join(gitDir, 'commondir'), 'utf8').trim();
    return rel ? resolve(gitDir, rel) : gitDir;
  } catch {
    return gitDir;
  }
}

export interface BlobHashes {
  get(blob: string): string | undefined;
  /** Records that `blob`'s content has sha256 `sum` (the caller proved it: the blob id of the bytes it hashed). */
  set(blob: string, sum: string): void;
  /** Appends the new records; rewrites the file with only `live` blobs when it has grown past twice their number. Never throws. */
  save(live: number, keep: (blob: string) => boolean): void;
}

export function blobHashesFile(gitDir: string): string {
  return join(gitDir, 'offhost', 'blob-hashes');
}

/** Opens the cache (missing, unreadable or of another format: empty). */
export function openBlobHashes(file: string): BlobHashes {
  const map = new Map<string, string>();
  // A blob id (40 or 64 hex), a space, a sha256: a torn last line is skipped.
  const { valid, records: lines } = readRecords(file, FORMAT, (l) => {
    const sp = l.indexOf(' ');
    if ((sp !== 40 && sp !== 64) || l.length !== sp + 65) return false;
    map.set(l.slice(0, sp), l.slice(sp + 1));
    return true;
  });
  const added: string[] = [];
  return {
    get: (blob) => map.get(blob),
    set(blob, sum) {
      if (map.get(blob) === sum) return;
      map.set(blob, sum);
      added.push(`${blob} ${sum}\n`);
    },
    save(live, keep) {
      if (valid && lines + added.length <= Math.max(2 * live, 1000)) return appendRecords(file, added);
      if (!valid && added.length === 0) return;
      const out: string[] = [];
      for (const [b, s] of map) if (keep(b)) out.push(`${b} ${s}\n`);
      rewriteRecords(file, FORMAT, out);
    },
  };
}

/** How many blobs a run asks git for at most (the index blobs of files changed in the working tree). */
export const BLOB_ASK_MAX = 256;

/**
 * The sha256 of each blob's content, read from git's object store (`git cat-file --batch`): for a file
 * changed in the working tree, the index's version is not on disk to be read. Blobs git cannot give are
 * left out; a git that fails gives none. Never throws.
 */
export function blobSums(cwd: string, ids: readonly string[], env: NodeJS.ProcessEnv): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  if (ids.length === 0) return Promise.resolve(out);
  return new Promise((done) => {
    const chunks: Buffer[] = [];
    let child;
    try {
      child = spawn('git', ['cat-file', '--batch'], { cwd, env, stdio: ['pipe', 'pipe', 'ignore'] });
    } catch {
      done(out);
      return;
    }
    child.on('error', () => done(out));
    child.stdin.on('error', () => undefined);
    child.stdout.on('data', (b: Buffer) => chunks.push(b));
    child.on('close', () => {
      // `<id> blob <size>\n<content>\n` per id (`<id> missing\n` for one git does not have).
      const buf = Buffer.concat(chunks);
      let at = 0;
      while (at < buf.length) {
        const nl = buf.indexOf(10, at);
        if (nl < 0) break;
        const [id = '', type = '', size = ''] = buf.subarray(at, nl).toString('latin1').split(' ');
        at = nl + 1;
        if (type !== 'blob' || !/^\d+$/.test(size)) continue;
        const n = Number(size);
        if (at + n > buf.length) break;
        out.set(id, createHash('sha256').update(buf.subarray(at, at + n)).digest('hex'));
        at += n + 1;
      }
      done(out);
    });
    child.stdin.end(ids.map((id) => `${id}\n`).join(''));
  });
}
