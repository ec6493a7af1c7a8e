// The inline tar (src/routes/tar.ts) extracted by the real tools a VM has: GNU tar, and busybox tar when
// it is installed, with the options the run's VM script uses (`-xpof`): every file's bytes, mode bits, link
// target and mtime as on the laptop, for the names ustar cannot hold as they are (long, non-ASCII).
import { afterAll, describe, expect, it } from 'vitest';
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, readlinkSync, rmSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { INLINE_MAX_FILES, tarOf } from '../../src/routes/tar.js';

const tmp = mkdtempSync(join(tmpdir(), 'offhost-tar-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
const haveBusybox = spawnSync('sh', ['-c', 'command -v busybox'], { stdio: 'ignore' }).status === 0;

const LONG_DIR = `${'deep-folder-name/'.repeat(7)}`; // 119 bytes: ustar's prefix/name split
const NO_SPLIT = `${'x'.repeat(120)}.txt`; // one long name: only a pax record holds it
const FILES: { path: string; body?: string; mode?: number; link?: string }[] = [
  { path: 'plain.txt', body: 'plain\n' },
  { path: 'run.sh', body: '#!/bin/sh\necho hi\n', mode: 0o755 },
  { path: 'secret', body: 'x', mode: 0o600 },
  { path: 'empty', body: '' },
  { path: 'new/dir/file.md', body: 'nested\n' },
  { path: 'späce ünï.txt', body: 'unicode\n' },
  { path: `${LONG_DIR}file.txt`, body: 'long path\n' },
  { path: NO_SPLIT, body: 'one long name\n' },
  { path: 'link', link: 'plain.txt' },
  { path: 'far-link', link: `../${'t'.repeat(150)}` },
];

function tree(): string {
  const root = mkdtempSync(join(tmp, 'src-'));
  for (const f of FILES) {
    const p = join(root, f.path);
    mkdirSync(dirname(p), { recursive: true });
    if (f.link !== undefined) symlinkSync(f.link, p);
    else {
      writeFileSync(p, f.body!);
      chmodSync(p, f.mode ?? 0o644);
      utimesSync(p, 1_700_000_000, 1_700_000_123);
    }
  }
  return root;
}

function same(from: string, to: string): void {
  for (const f of FILES) {
    const a = lstatSync(join(from, f.path));
    const b = lstatSync(join(to, f.path));
    if (f.link !== undefined) {
      expect(b.isSymbolicLink(), f.path).toBe(true);
      expect(readlinkSync(join(to, f.path)), f.path).toBe(f.link);
      continue;
    }
    expect(readFileSync(join(to, f.path), 'utf8'), f.path).toBe(f.body);
    expect((b.mode & 0o7777).toString(8), f.path).toBe((a.mode & 0o7777).toString(8));
    expect(Math.floor(b.mtimeMs / 1000), f.path).toBe(1_700_000_123);
  }
}

describe('the inline tar', () => {
  const root = tree();
  const tar = tarOf(root, FILES.map((f) => `./${f.path}`))!;
  it('is what GNU tar lists and extracts, names, modes, links and times kept', () => {
    expect(tar).not.toBeNull();
    const listed = execFileSync('tar', ['-tf', '-'], { input: tar, encoding: 'utf8' }).trim().split('\n');
    expect(listed.sort()).toEqual(FILES.map((f) => f.path).sort());
    const out = mkdtempSync(join(tmp, 'gnu-'));
    execFileSync('tar', ['-xpof', '-', '-C', out], { input: tar });
    same(root, out);
  });
  it.skipIf(!haveBusybox)('is what busybox tar extracts (a small VM image), the same way', () => {
    const out = mkdtempSync(join(tmp, 'bb-'));
    execFileSync('busybox', ['tar', '-xpof', '-', '-C', out], { input: tar });
    same(root, out);
  });
  it('over an older copy: a changed file, a file turned into a link, a changed mode', () => {
    const out = mkdtempSync(join(tmp, 'over-'));
    execFileSync('tar', ['-xpof', '-', '-C', out], { input: tar });
    writeFileSync(join(root, 'plain.txt'), 'edited\n');
    rmSync(join(root, 'secret'));
    symlinkSync('plain.txt', join(root, 'secret'));
    chmodSync(join(root, 'run.sh'), 0o644);
    execFileSync('tar', ['-xpof', '-', '-C', out], { input: tarOf(root, ['./plain.txt', './secret', './run.sh'])! });
    expect(readFileSync(join(out, 'plain.txt'), 'utf8')).toBe('edited\n');
    expect(readlinkSync(join(out, 'secret'))).toBe('plain.txt');
    expect(lstatSync(join(out, 'run.sh')).mode & 0o777).toBe(0o644);
  });
  it('leaves to rsync what it does not carry: a folder, a file gone since, too many files', () => {
    expect(tarOf(root, ['./new'])).toBeNull();
    expect(tarOf(root, ['./no-such-file'])).toBeNull();
    expect(tarOf(root, Array.from({ length: INLINE_MAX_FILES + 1 }, () => './plain.txt'))).toBeNull();
  });
});
