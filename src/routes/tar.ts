// A small tar of a few changed files, sent inside the run's own session (issue 24: one connection per run):
// a one-file edit does not open an rsync session of its own. POSIX ustar with pax records for what ustar
// cannot hold (a long or non-ASCII path, a long link target), so GNU tar and busybox tar extract it alike.
// Regular files (their mode bits and mtime) and symbolic links only; anything else, or more than the
// limits, is rsync's job (null).
import { lstatSync, readFileSync, readlinkSync } from 'node:fs';
import { join } from 'node:path';

export const INLINE_MAX_FILES = 256;
export const INLINE_MAX_BYTES = 8 * 1024 * 1024;

function octal(n: number, width: number): string {
  // width - 1 digits and a NUL, as ustar wants.
  return `${n.toString(8).padStart(width - 1, '0')}\0`;
}

function header(name: Buffer, prefix: Buffer, o: { mode: number; size: number; mtime: number; type: string; link: Buffer }): Buffer {
  const h = Buffer.alloc(512, 0);
  name.copy(h, 0);
  h.write(octal(o.mode & 0o7777, 8), 100, 'latin1');
  h.write(octal(0, 8), 108, 'latin1');
  h.write(octal(0, 8), 116, 'latin1');
  h.write(octal(o.size, 12), 124, 'latin1');
  h.write(octal(Math.max(0, Math.floor(o.mtime)), 12), 136, 'latin1');
  h.write('        ', 148, 'latin1');
  h.write(o.type, 156, 'latin1');
  o.link.copy(h, 157);
  h.write('ustar\0', 257, 'latin1');
  h.write('00', 263, 'latin1');
  prefix.copy(h, 345);
  let sum = 0;
  for (const b of h) sum += b;
  h.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 'latin1');
  return h;
}

function padded(b: Buffer): Buffer[] {
  const rest = b.length % 512;
  return rest ? [b, Buffer.alloc(512 - rest, 0)] : [b];
}

/** A pax record `LEN key=value\n`, whose LEN counts itself. */
function paxRecord(key: string, value: Buffer): Buffer {
  const body = Buffer.concat([Buffer.from(` ${key}=`), value, Buffer.from('\n')]);
  let len = body.length + 1;
  while (String(len).length + body.length !== len) len = String(len).length + body.length;
  return Buffer.concat([Buffer.from(String(len)), body]);
}

/** ustar's name/prefix split of a path, or null when it needs a pax record. */
function ustarName(p: Buffer): { name: Buffer; prefix: Buffer } | null {
  if (p.some((c) => c > 0x7e)) return null;
  if (p.length <= 100) return { name: p, prefix: Buffer.alloc(0) };
  for (let i = Math.min(p.length - 1, 155); i > 0; i--) {
    if (p[i] === 0x2f && p.length - i - 1 <= 100 && p.length - i - 1 > 0) return { name: p.subarray(i + 1), prefix: p.subarray(0, i) };
  }
  return null;
}

/** The tar of `files` (paths `./a/b` relative to `root`), or null when they are not all regular files and symlinks within the limits. */
export function tarOf(root: string, files: readonly string[]): Buffer | null {
  if (files.length === 0 || files.length > INLINE_MAX_FILES) return null;
  const parts: Buffer[] = [];
  let total = 0;
  for (const f of files) {
    const rel = f.replace(/^\.\//, '');
    const abs = join(root, rel);
    let st;
    try {
      st = lstatSync(abs);
    } catch {
      return null; // gone since it was listed: rsync (and the verification) says what is true
    }
    const isLink = st.isSymbolicLink();
    if (!isLink && !st.isFile()) return null;
    const data = isLink ? Buffer.alloc(0) : readFileSync(abs);
    const link = isLink ? Buffer.from(readlinkSync(abs, { encoding: 'buffer' })) : Buffer.alloc(0);
    total += data.length + 1024;
    if (total > INLINE_MAX_BYTES) return null;
    const path = Buffer.from(rel, 'utf8');
    const split = ustarName(path);
    const longLink = link.length > 100 || link.some((c) => c > 0x7e);
    if (!split || longLink) {
      const pax = Buffer.concat([...(split ? [] : [paxRecord('path', path)]), ...(longLink ? [paxRecord('linkpath', link)] : [])]);
      parts.push(header(Buffer.from('PaxHeader'), Buffer.alloc(0), { mode: 0o644, size: pax.length, mtime: st.mtimeMs / 1000, type: 'x', link: Buffer.alloc(0) }), ...padded(pax));
    }
    const named = split ?? { name: path.subarray(Math.max(0, path.length - 100)), prefix: Buffer.alloc(0) };
    parts.push(header(named.name, named.prefix, { mode: st.mode, size: data.length, mtime: st.mtimeMs / 1000, type: isLink ? '2' : '0', link: longLink ? link.subarray(0, 100) : link }));
    if (data.length) parts.push(...padded(data));
  }
  parts.push(Buffer.alloc(1024, 0));
  return Buffer.concat(parts);
}
