// The pieces of the VM copy's listing (src/run/ignored.ts): the VM-side lines run by real sh over names
// built to fool a line protocol (a backslash, a line break, a leading dash, `\n` spelled out) and read back
// by the run's own stream reader; the laptop-side grouping; the keep globs the config refuses.
import { afterAll, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { collapse, ignoredRecord, ignoredText, ignoredScript, keepGlobProblem } from '../../src/run/ignored.js';
import { StreamReader } from '../../src/run/remote.js';

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
function tmp(): string {
  const d = mkdtempSync(join(tmpdir(), 'offhost-ignored-'));
  dirs.push(d);
  return d;
}
function put(root: string, rel: string): void {
  mkdirSync(dirname(join(root, rel)), { recursive: true });
  writeFileSync(join(root, rel), 'x');
}

const N = '@offhost-0123456789abcdef';
/** Runs the listing lines in `copy` with `list` as the source set; what the reader made of the output. */
function listing(copy: string, list: string[], o: { clean?: boolean; keep?: string[]; path?: string } = {}) {
  const parts = ignoredScript({ git: false, clean: o.clean ?? false, keep: o.keep ?? ['node_modules'] });
  const script = [
    `N=${N}`,
    'say() { printf "%s %s\\n" "$N" "$*"; }',
    'T=$(mktemp -d)',
    'trap \'[ -n "$XP" ] && wait "$XP"; rm -rf "$T"\' EXIT',
    `printf '%s\\0' "$@" > "$T/list"`,
    'cd -- "$0"',
    ...parts.start,
    ...parts.finish,
    'say go',
  ].join('\n');
  const out = execFileSync('sh', ['-c', script, copy, ...list.map((p) => `./${p}`)], o.path ? { env: { ...process.env, PATH: o.path } } : {});
  const r = new StreamReader(N, () => undefined);
  r.push(out);
  return r.preamble;
}

function listingGo(...a: Parameters<typeof listing>) {
  const p = listing(...a);
  expect(p.end).toBe('go');
  return p.tree!;
}

describe('the VM copy listing', () => {
  it('names every file outside the source set exactly, however it is spelled; kept paths are not entered', () => {
    const copy = tmp();
    const odd = ['a\\b.o', 'new\nline.o', 'sp ace/x.o', '-dash.o', 'lit\\nname.o', 'build/deep/er/y.o'];
    for (const p of [...odd, 'src/main.c', 'node_modules/dep/a.js', 'sub/node_modules/b.js']) put(copy, p);
    symlinkSync('/etc', join(copy, 'build', 'etc-link'));
    mkdirSync(join(copy, '.git'));
    put(copy, '.git/HEAD');
    const t = listingGo(copy, ['src/main.c']);
    expect(t.error).toBeUndefined();
    expect(t.extra.sort()).toEqual([...odd, 'build/etc-link'].sort());
    expect(t.extraCount).toBe(odd.length + 1);
    expect(t.kept.sort()).toEqual(['node_modules', 'sub/node_modules']);
    expect(t.keptCount).toBe(2);
  });

  it('--clean removes exactly those files and the directories they leave, never the link\'s target', () => {
    const copy = tmp();
    const outside = tmp();
    put(outside, 'keep-me');
    for (const p of ['build/a/b.o', 'src/main.c', 'src/gen.o', 'node_modules/x.js']) put(copy, p);
    symlinkSync(outside, join(copy, 'build', 'out'));
    const t = listingGo(copy, ['src/main.c'], { clean: true });
    expect(t.cleaned).toBe(true);
    expect(t.extra.sort()).toEqual(['build/a/b.o', 'build/out', 'src/gen.o']);
    const left = execFileSync('find', ['.', '-mindepth', '1'], { cwd: copy, encoding: 'utf8' }).trim().split('\n').sort();
    expect(left).toEqual(['./node_modules', './node_modules/x.js', './src', './src/main.c']);
    expect(execFileSync('ls', [outside], { encoding: 'utf8' })).toBe('keep-me\n');
  });

  it('anchored keep globs keep a path from the root only', () => {
    const copy = tmp();
    for (const p of ['a/cache/1', 'b/a/cache/2', 'x.keep', 'd/y.keep', 'z.o']) put(copy, p);
    const t = listingGo(copy, [], { clean: true, keep: ['a/cache', '*.keep'] });
    expect(t.extra.sort()).toEqual(['b/a/cache/2', 'z.o']);
    expect(t.kept.sort()).toEqual(['a/cache', 'd/y.keep', 'x.keep']);
  });
  it('a find that fails is said (xfail) and, with --clean, stops the run before the build (fail)', () => {
    const copy = tmp();
    put(copy, 'build/a.o');
    const bin = tmp();
    writeFileSync(join(bin, 'find'), '#!/bin/sh\necho "find: unknown predicate -fprint0" >&2\nexit 1\n', { mode: 0o755 });
    const path = `${bin}:${process.env.PATH}`;
    const plain = listing(copy, [], { path });
    expect(plain.end).toBe('go');
    expect(plain.tree!.error).toContain('unknown predicate -fprint0');
    const cleaning = listing(copy, [], { path, clean: true });
    expect(cleaning.end).toBe('fail');
    expect(cleaning.failure).toContain('--clean: could not list');
    expect(execFileSync('ls', [join(copy, 'build')], { encoding: 'utf8' })).toBe('a.o\n');
  });
});

describe('the record of it', () => {
  it('keeps what the laptop lacks, grouped under the outermost directory it lacks', () => {
    const laptop = tmp();
    put(laptop, 'engines/koda/src/main.c');
    put(laptop, 'engines/koda/app.log');
    const rec = ignoredRecord(laptop, 'rsync', { clean: false, keep: ['node_modules'] }, {
      extra: ['engines/koda/build/a.o', 'engines/koda/build/sub/b.o', 'engines/koda/app.log', 'engines/koda/src/gen.o', 'other/x'],
      extraCount: 5,
      kept: ['engines/koda/node_modules'],
      keptCount: 1,
      cleaned: false,
    });
    expect(rec.vmOnly).toEqual({ count: 4, shown: [{ path: 'engines/koda/build/', files: 2 }, { path: 'engines/koda/src/gen.o', files: 1 }, { path: 'other/', files: 1 }] });
    expect(ignoredText(rec)).toContain('4 files outside the source set that the laptop does not have');
    expect(ignoredText(rec)).toContain('engines/koda/build/ (2 files), engines/koda/src/gen.o, other/ (1 file); kept 1 (engines/koda/node_modules)');
  });

  it('shows at most 20 entries, and says there are more', () => {
    const laptop = tmp();
    const paths = Array.from({ length: 30 }, (_, i) => `f${String(i).padStart(2, '0')}.o`);
    expect(collapse(laptop, paths)).toHaveLength(20);
    const rec = ignoredRecord(laptop, 'git', { clean: false, keep: [] }, { extra: paths, extraCount: 1234, kept: [], keptCount: 0, cleaned: false });
    expect(rec.vmOnly.count).toBe(30 + 1204);
    expect(rec.vmOnly.partial).toBe(true);
    expect(ignoredText(rec)).toMatch(/1,234 files .*f19\.o, \.\.\./);
  });

  it('a listing that failed is said, not taken for a clean copy', () => {
    const rec = ignoredRecord(tmp(), 'rsync', { clean: false, keep: [] }, { extra: [], extraCount: 0, kept: [], keptCount: 0, cleaned: false, error: 'find: unknown predicate' });
    expect(rec.listed).toBe(false);
    expect(ignoredText(rec)).toContain('could not be listed (find: unknown predicate)');
  });
});

describe('keep globs', () => {
  it('refuses what could name a path outside the copy, and takes the rest', () => {
    for (const bad of ['', '/abs', '..', 'a/../b', './a', 'a//b', 'a/', 'x\ny']) expect(keepGlobProblem(bad), JSON.stringify(bad)).not.toBeNull();
    for (const ok of ['node_modules', '*.o', 'engines/lang/koda/.cache', 'a/*/b', '.venv']) expect(keepGlobProblem(ok), ok).toBeNull();
  });
});
