// A commit of a few changed files on a ref's history, written by offhost itself (issue 24: keep the lock
// ref's writes to what they need). git's own way (hash-object, read-tree into a private index,
// update-index, write-tree, commit-tree) is five processes a commit; the objects are simple enough to make
// here: the trees along the changed paths are read through the batch process (./batch.ts), the new blobs
// and trees are hashed and written as loose objects (zlib, `<type> <size>\0<body>`, the format every git
// reads), and so is the commit, except the first of a process for an identity: that one is git's own
// `commit-tree`, and its author and committer lines are then reused (so no `git var` runs). The ref is
// still moved by `git update-ref` (the compare-and-swap stays git's). The same objects can then be written into a second repository whose copy of the ref is at the parent commit (the clone that
// follows the user store), instead of packing and unpacking them there.
//
// Used only where it is exactly what git would write: sha1 or sha256 from the parent's id length, no
// GIT_AUTHOR_DATE/GIT_COMMITTER_DATE (git's date parsing is git's), a base commit to build on. Otherwise
// the caller uses git's way (ref-tree.ts buildCommit).
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, linkSync, mkdirSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { deflateSync } from 'node:zlib';
import { runGit, type GitCall } from './run.js';
import { catFile } from './batch.js';

export interface LooseObject {
  type: 'blob' | 'tree' | 'commit';
  body: Buffer;
  id: string;
}

interface Entry {
  mode: string;
  name: Buffer;
  id: Buffer;
}

function hashOf(type: string, body: Buffer, algo: 'sha1' | 'sha256'): string {
  return createHash(algo).update(`${type} ${body.length}\0`).update(body).digest('hex');
}

function object(type: LooseObject['type'], body: Buffer, algo: 'sha1' | 'sha256'): LooseObject {
  return { type, body, id: hashOf(type, body, algo) };
}

/** A tree's entries from its body (`<mode> <name>\0<raw id>`...). */
export function parseTree(body: Buffer, idLen: number): Entry[] {
  const out: Entry[] = [];
  let i = 0;
  while (i < body.length) {
    const sp = body.indexOf(0x20, i);
    const nul = body.indexOf(0, sp + 1);
    if (sp < 0 || nul < 0 || nul + 1 + idLen > body.length) throw new Error('a tree object that does not parse');
    out.push({ mode: body.toString('latin1', i, sp), name: body.subarray(sp + 1, nul), id: body.subarray(nul + 1, nul + 1 + idLen) });
    i = nul + 1 + idLen;
  }
  return out;
}

/** git's order: names compared as bytes, a tree's name as if it ended in `/`. */
function sortKey(e: Entry): Buffer {
  return e.mode === '40000' ? Buffer.concat([e.name, Buffer.from('/')]) : e.name;
}

export function serializeTree(entries: Entry[]): Buffer {
  const sorted = [...entries].sort((a, b) => Buffer.compare(sortKey(a), sortKey(b)));
  return Buffer.concat(sorted.flatMap((e) => [Buffer.from(`${e.mode} `, 'latin1'), e.name, Buffer.from([0]), e.id]));
}

/**
 * Reads the objects named by `names` (any `<rev>` or `<rev>:<path>`) through the batch process (git's
 * one-shot `cat-file --batch` when that fails, so that an error is git's own); null for a missing one.
 */
async function readObjects(call: GitCall, names: string[]): Promise<({ type: string; body: Buffer } | null)[]> {
  const fast = await catFile(call, names).catch(() => null);
  if (fast) return fast.objects.map((o) => (o ? { type: o.type, body: o.data } : null));
  const r = await runGit(['cat-file', '--batch'], { ...call, input: names.map((n) => `${n}\n`).join('') });
  if (r.code !== 0) throw new Error(`git cat-file --batch failed: ${r.stderr.trim()}`);
  const out: ({ type: string; body: Buffer } | null)[] = [];
  const buf = r.stdout;
  let i = 0;
  for (let k = 0; k < names.length; k++) {
    const nl = buf.indexOf(0x0a, i);
    if (nl < 0) throw new Error('git cat-file --batch answered less than it was asked');
    const head = buf.toString('utf8', i, nl);
    i = nl + 1;
    const m = /^[0-9a-f]{40,64} (\S+) (\d+)$/.exec(head);
    if (!m) {
      if (/ missing$/.test(head)) out.push(null);
      else throw new Error(`git cat-file --batch: ${head}`);
      continue;
    }
    const size = Number(m[2]);
    out.push({ type: m[1]!, body: buf.subarray(i, i + size) });
    i += size + 1;
  }
  return out;
}

/** "Name <email>" of git's author and committer (without the time). */
export type Idents = { author: string; committer: string };

/**
 * git's identity as it wrote it into a commit (`author`/`committer` lines, made by commit-tree with the
 * same ident code `git var` uses), without the time; null when the body has no such lines.
 */
export function identsOf(commitBody: Buffer): Idents | null {
  const head = commitBody.toString('utf8').split('\n\n')[0]!.split('\n');
  const field = (k: string) => head.find((l) => l.startsWith(`${k} `))?.slice(k.length + 1).replace(/ \d+ [+-]\d{4}$/, '');
  const author = field('author');
  const committer = field('committer');
  return author !== undefined && committer !== undefined ? { author, committer } : null;
}

/**
 * The identities learned per key (repository and identity variables; `fallback` when git had none and the
 * fallback identity was used) and process: the first commit of a key is git's (commit-tree), the next ones
 * are written here with the identity read back from it.
 */
const identCache = new Map<string, Idents | 'fallback'>();

export function knownIdents(key: string): Idents | 'fallback' | undefined {
  return identCache.get(key);
}

export function rememberIdents(key: string, v: Idents | 'fallback'): void {
  identCache.set(key, v);
}

/** `+0100` for the local zone at `now` (git writes the committer's zone, as the TZ variable gives it). */
function zone(now: Date): string {
  const off = -now.getTimezoneOffset();
  const a = Math.abs(off);
  return `${off < 0 ? '-' : '+'}${String(Math.floor(a / 60)).padStart(2, '0')}${String(a % 60).padStart(2, '0')}`;
}

/**
 * The objects of a commit on `base` with `changes` applied (path -> bytes, or null to delete), as git's
 * read-tree/update-index/write-tree/commit-tree would make them; null when that cannot be promised here
 * (no base, a path crossing a file, an odd object): the caller then asks git.
 */
export async function commitObjects(
  call: GitCall,
  base: string,
  changes: Map<string, string | Buffer | null>,
  message: string,
  idents: { author: string; committer: string },
  now: Date,
): Promise<LooseObject[] | null> {
  const algo = base.length === 40 ? 'sha1' : base.length === 64 ? 'sha256' : null;
  if (!algo || !/^[0-9a-f]+$/.test(base)) return null;
  const idLen = algo === 'sha1' ? 20 : 32;
  // Every directory holding a change, from the root down.
  const dirs = new Set<string>(['']);
  for (const p of changes.keys()) {
    if (p === '' || p.startsWith('/') || p.endsWith('/') || p.split('/').some((s) => s === '' || s === '.' || s === '..')) return null;
    const parts = p.split('/');
    for (let i = 1; i < parts.length; i++) dirs.add(parts.slice(0, i).join('/'));
  }
  const dirList = [...dirs];
  const read = await readObjects(call, dirList.map((d) => (d === '' ? `${base}^{tree}` : `${base}:${d}`)));
  const trees = new Map<string, Entry[]>();
  for (let i = 0; i < dirList.length; i++) {
    const o = read[i];
    if (o === null || o === undefined) trees.set(dirList[i]!, []);
    else if (o.type !== 'tree') return null; // a file where the change needs a folder: git's way says what it says
    else trees.set(dirList[i]!, parseTree(o.body, idLen));
  }
  const made: LooseObject[] = [];
  const byDir = new Map<string, Map<string, Entry | null>>();
  const put = (dir: string, name: string, e: Entry | null) => {
    let m = byDir.get(dir);
    if (!m) byDir.set(dir, (m = new Map()));
    m.set(name, e);
  };
  for (const [p, content] of changes) {
    const slash = p.lastIndexOf('/');
    const dir = slash < 0 ? '' : p.slice(0, slash);
    const name = p.slice(slash + 1);
    if (content === null) put(dir, name, null);
    else {
      const blob = object('blob', Buffer.isBuffer(content) ? content : Buffer.from(content, 'utf8'), algo);
      made.push(blob);
      put(dir, name, { mode: '100644', name: Buffer.from(name, 'utf8'), id: Buffer.from(blob.id, 'hex') });
    }
  }
  // Deepest first, so that each folder's new id is known before its parent is written.
  let rootId = '';
  for (const dir of dirList.sort((a, b) => (b === '' ? -1 : a === '' ? 1 : b.split('/').length - a.split('/').length))) {
    const entries = new Map<string, Entry>();
    for (const e of trees.get(dir)!) entries.set(e.name.toString('latin1'), e);
    for (const [name, e] of byDir.get(dir) ?? []) {
      const key = Buffer.from(name, 'utf8').toString('latin1');
      const old = entries.get(key);
      if (old && old.mode === '40000' && (e === null || e.mode !== '40000')) {
        // A file over a folder, or a folder deleted as a file: not what these changes do; let git say.
        if (e !== null || !byDir.has(dir === '' ? name : `${dir}/${name}`)) return null;
      }
      if (e === null) entries.delete(key);
      else entries.set(key, e);
    }
    const body = serializeTree([...entries.values()]);
    const tree = object('tree', body, algo);
    if (dir === '') {
      rootId = tree.id;
      made.push(tree);
      break;
    }
    const slash = dir.lastIndexOf('/');
    const parent = slash < 0 ? '' : dir.slice(0, slash);
    const name = dir.slice(slash + 1);
    // git keeps no empty folder: a folder left empty disappears from its parent.
    if (entries.size === 0) put(parent, name, null);
    else {
      made.push(tree);
      put(parent, name, { mode: '40000', name: Buffer.from(name, 'utf8'), id: Buffer.from(tree.id, 'hex') });
    }
  }
  const when = `${Math.floor(now.getTime() / 1000)} ${zone(now)}`;
  const commit = object('commit', Buffer.from(`tree ${rootId}\nparent ${base}\nauthor ${idents.author} ${when}\ncommitter ${idents.committer} ${when}\n\n${message}`, 'utf8'), algo);
  made.push(commit);
  return made;
}

/** Writes the objects into `objectsDir` as loose objects (one already there is left as it is). */
export function writeLoose(objectsDir: string, objects: readonly LooseObject[]): void {
  for (const o of objects) {
    const dir = join(objectsDir, o.id.slice(0, 2));
    const file = join(dir, o.id.slice(2));
    // Not recursive: the objects folder is there, and a recursive mkdir reports a read-only disk as ENOENT.
    // Looked up first: most fan-out folders exist, and a thrown EEXIST costs an Error with its stack each time.
    if (!existsSync(dir)) {
      try {
        mkdirSync(dir);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      }
    }
    const tmp = join(dir, `tmp_obj_offhost_${process.pid}_${randomBytes(4).toString('hex')}`);
    try {
      writeFileSync(tmp, deflateSync(Buffer.concat([Buffer.from(`${o.type} ${o.body.length}\0`), o.body])), { mode: 0o444 });
    } catch (err) {
      // A full disk leaves no half-written file behind.
      rmSync(tmp, { force: true });
      throw err;
    }
    try {
      // As git does: link, never overwrite (an object's content is its name).
      linkSync(tmp, file);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    } finally {
      unlinkSync(tmp);
    }
  }
}
