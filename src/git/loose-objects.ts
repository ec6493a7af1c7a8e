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
  return writeTree([...entries].sort((a, b) => Buffer.compare(sortKey(a), sortKey(b))));
}

/** The bytes of a tree whose entries are in git's order already. */
function writeTree(sorted: readonly Entry[]): Buffer {
  let size = 0;
  for (const e of sorted) size += e.mode.length + 2 + e.name.length + e.id.length;
  const out = Buffer.allocUnsafe(size);
  let at = 0;
  for (const e of sorted) {
    at += out.write(e.mode, at, 'latin1');
    out[at++] = 0x20;
    at += e.name.copy(out, at);
    out[at++] = 0;
    at += e.id.copy(out, at);
  }
  return out;
}

/**
 * A tree object as git wrote it, with where each entry is (no object or string per entry): a folder of
 * thousands of archived locks is read, searched and written again in one pass over its bytes.
 */
export interface RawTree {
  body: Buffer;
  count: number;
  /** Each entry's first byte, the start and end of its name, and whether it is a folder (mode 40000). */
  start: Int32Array;
  nameStart: Int32Array;
  nameEnd: Int32Array;
  folder: Uint8Array;
  /** Each entry's kind as tree-walk.h's canon_mode reads its mode: 0o040000, 0o100000, 0o120000 or 0o160000. */
  kind: Int32Array;
}

/** The entries of a tree object, by offsets; throws on one that does not parse (a mode that is not octal). */
export function scanTree(body: Buffer, idLen: number): RawTree {
  let n = 0;
  for (let i = 0; i < body.length; n++) {
    const nul = body.indexOf(0, i);
    if (nul < 0 || nul + 1 + idLen > body.length) throw new Error('a tree object that does not parse');
    i = nul + 1 + idLen;
  }
  const t: RawTree = { body, count: n, start: new Int32Array(n + 1), nameStart: new Int32Array(n), nameEnd: new Int32Array(n), folder: new Uint8Array(n), kind: new Int32Array(n) };
  let i = 0;
  for (let k = 0; k < n; k++) {
    // The mode, in octal digits up to the space; a folder is any mode git reads as one (`40000`, and the
    // `040000` of old writers), as tree-walk.h's canon_mode does.
    let sp = i;
    let mode = 0;
    while (sp < body.length && body[sp]! >= 0x30 && body[sp]! <= 0x37) mode = mode * 8 + (body[sp++]! - 0x30);
    if (sp === i || body[sp] !== 0x20) throw new Error('a tree object that does not parse');
    const nul = body.indexOf(0, sp + 1);
    t.start[k] = i;
    t.nameStart[k] = sp + 1;
    t.nameEnd[k] = nul;
    const fmt = mode & 0o170000;
    t.kind[k] = fmt === 0o040000 || fmt === 0o100000 || fmt === 0o120000 ? fmt : 0o160000;
    t.folder[k] = fmt === 0o040000 ? 1 : 0;
    i = nul + 1 + idLen;
  }
  t.start[n] = body.length;
  return t;
}

/** git's order (sortKey's, without making the keys): bytes, a folder's name as if it ended in `/`. */
function order(a: Buffer, as: number, ae: number, aFolder: boolean, b: Buffer, bs: number, be: number, bFolder: boolean): number {
  const la = ae - as;
  const lb = be - bs;
  const len = la < lb ? la : lb;
  for (let k = 0; k < len; k++) {
    const d = a[as + k]! - b[bs + k]!;
    if (d !== 0) return d;
  }
  const ac = la > len ? a[as + len]! : aFolder ? 0x2f : 0;
  const bc = lb > len ? b[bs + len]! : bFolder ? 0x2f : 0;
  return ac - bc;
}

const rawVsEntry = (t: RawTree, i: number, e: Entry) => order(t.body, t.nameStart[i]!, t.nameEnd[i]!, t.folder[i] === 1, e.name, 0, e.name.length, e.mode === '40000');
const entryOrder = (a: Entry, b: Entry) => order(a.name, 0, a.name.length, a.mode === '40000', b.name, 0, b.name.length, b.mode === '40000');

/** Whether the entries are strictly in git's order (a tree git wrote is; a broken one may not be). */
function inOrder(t: RawTree): boolean {
  for (let k = 1; k < t.count; k++) {
    if (order(t.body, t.nameStart[k - 1]!, t.nameEnd[k - 1]!, t.folder[k - 1] === 1, t.body, t.nameStart[k]!, t.nameEnd[k]!, t.folder[k] === 1) >= 0) return false;
  }
  return true;
}

/** The entry named `name` in an ordered tree, as a folder or not, by binary search; -1 when there is none. */
function indexOfName(t: RawTree, name: Buffer): number {
  for (const mode of ['100644', '40000']) {
    const probe = { mode, name, id: name };
    let lo = 0;
    let hi = t.count;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (rawVsEntry(t, mid, probe) < 0) lo = mid + 1;
      else hi = mid;
    }
    if (lo < t.count && t.nameEnd[lo]! - t.nameStart[lo]! === name.length && t.body.compare(name, 0, name.length, t.nameStart[lo]!, t.nameEnd[lo]!) === 0) return lo;
  }
  return -1;
}

/** The entries of a raw tree, as objects (the way for a tree out of git's order). */
function entriesOf(t: RawTree): Entry[] {
  const out: Entry[] = [];
  for (let k = 0; k < t.count; k++) {
    out.push({ mode: t.body.toString('latin1', t.start[k]!, t.nameStart[k]! - 1), name: t.body.subarray(t.nameStart[k]!, t.nameEnd[k]!), id: t.body.subarray(t.nameEnd[k]! + 1, t.start[k + 1]!) });
  }
  return out;
}

/**
 * A folder's tree with `changes` (name -> entry, or null to delete) applied, written from the tree as git
 * wrote it: the changed names found by binary search, the unchanged runs of entries copied as they are,
 * the new ones merged in at their place. Only for a tree in git's order (inOrder: the caller checks, and
 * sorts every entry as before when it is not). `count`: the entries in the result.
 */
function spliceTree(t: RawTree, changes: ReadonlyMap<string, Entry | null>): { body: Buffer; count: number } {
  const replaced = new Map<number, Entry | null>();
  const added: Entry[] = [];
  for (const [name, e] of changes) {
    const i = indexOfName(t, Buffer.from(name, 'utf8'));
    if (i < 0) {
      if (e !== null) added.push(e);
    } else if (e !== null && (e.mode === '40000') !== (t.folder[i] === 1)) {
      // A file for a folder or a folder for a file sorts elsewhere: out of its place, into the new ones.
      replaced.set(i, null);
      added.push(e);
    } else replaced.set(i, e);
  }
  added.sort(entryOrder);
  const parts: Buffer[] = [];
  let count = 0;
  let run = 0; // the start of the run of unchanged entries not copied yet
  let a = 0;
  const flush = (upTo: number) => {
    if (upTo > run) parts.push(t.body.subarray(t.start[run]!, t.start[upTo]!));
  };
  for (let i = 0; i < t.count; i++) {
    const r = replaced.get(i);
    const here = r === undefined ? null : r;
    // New entries that sort before this one.
    while (a < added.length && rawVsEntry(t, i, added[a]!) > 0) {
      flush(i);
      run = i;
      parts.push(writeTree([added[a++]!]));
      count++;
    }
    if (r === undefined) {
      count++;
      continue;
    }
    flush(i);
    run = i + 1;
    if (here !== null) {
      parts.push(writeTree([here]));
      count++;
    }
  }
  flush(t.count);
  while (a < added.length) {
    parts.push(writeTree([added[a++]!]));
    count++;
  }
  return { body: Buffer.concat(parts), count };
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
  const trees = new Map<string, RawTree>();
  for (let i = 0; i < dirList.length; i++) {
    const o = read[i];
    if (o === null || o === undefined) trees.set(dirList[i]!, scanTree(Buffer.alloc(0), idLen));
    else if (o.type !== 'tree') return null; // a file where the change needs a folder: git's way says what it says
    else trees.set(dirList[i]!, scanTree(o.body, idLen));
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
    const old = trees.get(dir)!;
    const changes = byDir.get(dir) ?? new Map<string, Entry | null>();
    const ordered = inOrder(old);
    const oldEntries = ordered ? null : entriesOf(old);
    for (const [name, e] of changes) {
      if (e !== null && e.mode === '40000') continue;
      const nameBuf = Buffer.from(name, 'utf8');
      const folder = ordered ? (() => {
        const i = indexOfName(old, nameBuf);
        return i >= 0 && old.folder[i] === 1;
      })() : oldEntries!.some((x) => x.mode === '40000' && x.name.equals(nameBuf));
      if (folder) {
        // A file over a folder, or a folder deleted as a file: not what these changes do; let git say.
        if (e !== null || !byDir.has(dir === '' ? name : `${dir}/${name}`)) return null;
      }
    }
    const spliced = ordered ? spliceTree(old, changes) : null;
    let count: number;
    let body: Buffer;
    if (spliced) {
      ({ count, body } = spliced);
    } else {
      // Not in git's order as read: every entry by name, then sorted, as git's own way would leave them.
      const byName = new Map<string, Entry>();
      for (const e of oldEntries ?? entriesOf(old)) byName.set(e.name.toString('latin1'), e);
      for (const [name, e] of changes) {
        const key = Buffer.from(name, 'utf8').toString('latin1');
        if (e === null) byName.delete(key);
        else byName.set(key, e);
      }
      count = byName.size;
      body = serializeTree([...byName.values()]);
    }
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
    if (count === 0) put(parent, name, null);
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
      // Level 1: git's own for loose objects (core.looseCompression's default); the id is of the bytes inflated.
      writeFileSync(tmp, deflateSync(Buffer.concat([Buffer.from(`${o.type} ${o.body.length}\0`), o.body]), { level: 1 }), { mode: 0o444 });
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
