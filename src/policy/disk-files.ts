// The guard's read access to the files a line runs (`bash run.sh`, `./build.sh`, a package.json for
// `npm run e2e`): the walker (src/shell/commands.ts) stays free of I/O and gets this. Never blocks (a FIFO
// is not read), never reads much (a head to tell binaries, then at most SCRIPT_MAX bytes), and remembers
// what it read for the one line it serves.
import { closeSync, constants, fstatSync, openSync, readdirSync, readSync, realpathSync, statSync, type Stats } from 'node:fs';
import type { FileAccess, FileRead } from '../shell/commands.js';
import { diskCaseRule, foldCase } from './case-rule.js';

/** Scripts larger than this are not read (their commands are unknown: the rules decide). */
export const SCRIPT_MAX = 512 * 1024;
const HEAD = 4096;

/**
 * A binary, as the shell sees it: an executable format's magic number, or a NUL byte in the first line
 * (bash refuses such a file as "cannot execute binary file"). A NUL further on is not that: bash runs
 * the lines, so the file is reported unreadable rather than waved through as a binary.
 */
function isBinaryHead(b: Buffer, n: number): boolean {
  if (n >= 4) {
    const m = b.readUInt32BE(0);
    // ELF, Mach-O (both byte orders, 32/64-bit, fat), PE ("MZ").
    if (m === 0x7f454c46 || m === 0xfeedface || m === 0xfeedfacf || m === 0xcefaedfe || m === 0xcffaedfe || m === 0xcafebabe) return true;
  }
  if (n >= 2 && b[0] === 0x4d && b[1] === 0x5a) return true;
  const eol = b.subarray(0, n).indexOf(0x0a);
  return b.subarray(0, Math.min(eol < 0 ? n : eol, 80)).includes(0);
}

function readOne(path: string): FileRead {
  // Most paths looked at do not exist (make's GNUmakefile/makefile/Makefile, package.json upwards): a stat
  // that returns nothing costs a quarter of an open that throws.
  let pre: Stats | undefined;
  try {
    pre = statSync(path, { throwIfNoEntry: false });
  } catch (err) {
    return { kind: 'unreadable', why: (err as NodeJS.ErrnoException).code ?? String(err) };
  }
  if (pre === undefined) return { kind: 'missing' };
  if (pre.isDirectory()) return { kind: 'directory' };
  let fd: number;
  try {
    // O_NONBLOCK: opening a FIFO must not wait for a writer (it is then refused below as not a file).
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK | (constants.O_NOCTTY ?? 0));
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return { kind: 'missing' };
    return { kind: 'unreadable', why: code ?? String(err) };
  }
  try {
    const st = fstatSync(fd);
    if (st.isDirectory()) return { kind: 'directory' };
    if (!st.isFile()) return { kind: 'unreadable', why: 'not a regular file: a FIFO, a device or a socket' };
    const head = Buffer.allocUnsafe(Math.min(HEAD, Math.max(st.size, 1)));
    const n = readSync(fd, head, 0, head.length, 0);
    if (isBinaryHead(head, n)) return { kind: 'binary' };
    if (st.size > SCRIPT_MAX) return { kind: 'unreadable', why: `larger than ${SCRIPT_MAX / 1024} KiB` };
    if (st.size <= n) {
      if (head.subarray(0, n).includes(0)) return { kind: 'unreadable', why: 'NUL bytes in it' };
      return { kind: 'text', text: head.toString('utf8', 0, n) };
    }
    const all = Buffer.allocUnsafe(st.size);
    let got = 0;
    while (got < all.length) {
      const k = readSync(fd, all, got, all.length - got, got);
      if (k === 0) break;
      got += k;
    }
    const text = all.subarray(0, got);
    if (text.includes(0)) return { kind: 'unreadable', why: 'NUL bytes in it' };
    return { kind: 'text', text: text.toString('utf8') };
  } catch (err) {
    return { kind: 'unreadable', why: (err as NodeJS.ErrnoException).code ?? String(err) };
  } finally {
    closeSync(fd);
  }
}

/** Subdirectories (and links, which may point at one) of a directory; null if it cannot be listed. */
function listDirs(dir: string): string[] | null {
  try {
    return readdirSync(dir, { withFileTypes: true })
      .filter((e) => e.isDirectory() || e.isSymbolicLink())
      .map((e) => e.name);
  } catch {
    return null;
  }
}

/** Entries of a directory that are not directories (files, and links to anything but one); null if it cannot be listed. */
function listFiles(dir: string): string[] | null {
  try {
    return readdirSync(dir, { withFileTypes: true })
      .filter((e) => {
        if (e.isDirectory()) return false;
        if (!e.isSymbolicLink()) return true;
        try {
          return !statSync(`${dir}/${e.name}`).isDirectory();
        } catch {
          return false; // a dangling link runs nothing
        }
      })
      .map((e) => e.name);
  } catch {
    return null;
  }
}

/** Disk access for one classification: each path is read once. */
export function diskFiles(): FileAccess {
  const seen = new Map<string, FileRead>();
  return {
    read(path) {
      let r = seen.get(path);
      if (!r) seen.set(path, (r = readOne(path)));
      return r;
    },
    list: listDirs,
    listFiles,
    physical(dir) {
      try {
        return realpathSync.native(dir);
      } catch {
        return dir; // a directory that does not exist (yet): as given
      }
    },
    nameKey: (dir) => (diskCaseRule(dir) === 'insensitive' ? foldCase : null),
  };
}
