// The laptop's hash cache for the source manifest (src/routes/hash-cache.ts): a manifest made with it is
// the manifest made without it, whatever happened to the files between two runs; a hash is recorded only
// when its file's times are older than the run's stamp by the racy margin, and trusted while the file's
// stat is the one recorded.
import { afterAll, describe, expect, it } from 'vitest';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, statSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openHashCache } from '../../src/routes/hash-cache.js';
import { manifestOf, readSourceState } from '../../src/routes/source.js';
import { execFileSync } from 'node:child_process';

const made: string[] = [];
afterAll(() => {
  for (const d of made) rmSync(d, { recursive: true, force: true });
});
function temp(): string {
  const d = mkdtempSync(join(tmpdir(), 'offhost-hash-cache-'));
  made.push(d);
  return d;
}

const LATER = 60_000_000_000n; // a minute
/** The cache opened as by a run a minute from now: every file's times are past the racy margin. */
const later = (cache: string) => openHashCache(cache, { stampNs: BigInt(Date.now()) * 1_000_000n + LATER });
/** A whole second an hour ago. */
const OLD = Math.floor(Date.now() / 1000) - 3600;

function tree(): { root: string; cache: string; files: string[] } {
  const root = temp();
  mkdirSync(join(root, 'src'));
  writeFileSync(join(root, 'src/a.c'), 'int a;\n');
  writeFileSync(join(root, 'src/b.c'), 'int b;\n');
  writeFileSync(join(root, 'run.sh'), '#!/bin/sh\n');
  chmodSync(join(root, 'run.sh'), 0o755);
  writeFileSync(join(root, 'tab\tname.txt'), 'tab\n');
  symlinkSync('src/a.c', join(root, 'link.c'));
  symlinkSync('missing', join(root, 'dangling'));
  mkdirSync(join(root, 'sub'));
  // Whole-second times, so that a test can put a file's mtime back exactly (to the nanosecond).
  for (const f of ['src/a.c', 'src/b.c', 'run.sh', 'tab\tname.txt']) utimesSync(join(root, f), OLD, OLD);
  return { root, cache: join(temp(), 'offhost', 'hash-cache'), files: ['./dangling', './link.c', './run.sh', './src/a.c', './src/b.c', './sub', './tab\tname.txt'] };
}

/** The manifest made through the cache (opened as a minute from now) and without it. */
function both(t: { root: string; cache: string; files: string[] }): { cached: string; plain: string } {
  const c = later(t.cache);
  const cached = manifestOf(t.root, t.files, c).manifest;
  c.save();
  return { cached, plain: manifestOf(t.root, t.files).manifest };
}

describe('a manifest made with the cache is the one made without it', () => {
  it('on the first run, on an unchanged tree, and after each kind of change a cached entry could hide', () => {
    const t = tree();
    const first = both(t);
    expect(first.cached).toBe(first.plain);
    expect(first.plain).toContain('--exec--\n./run.sh\n');
    const again = both(t);
    expect(again.cached).toBe(first.plain);

    const changes: [string, () => void][] = [
      // Same size, and the mtime put back: only the ctime (which nobody can set) says it changed.
      ['content of the same size, mtime restored', () => {
        const f = join(t.root, 'src/a.c');
        writeFileSync(f, 'int A;\n');
        utimesSync(f, OLD, OLD);
        expect(statSync(f, { bigint: true }).mtimeNs).toBe(BigInt(OLD) * 1_000_000_000n);
      }],
      // Another file renamed over it: a new inode, same size, same times.
      ['replaced by a rename (new inode, same size and mtime)', () => {
        const f = join(t.root, 'src/b.c');
        writeFileSync(join(t.root, 'b.new'), 'int B;\n');
        utimesSync(join(t.root, 'b.new'), OLD, OLD);
        renameSync(join(t.root, 'b.new'), f);
      }],
      ['the execute bit', () => chmodSync(join(t.root, 'src/a.c'), 0o755)],
      ['a symlink pointed elsewhere', () => {
        rmSync(join(t.root, 'link.c'));
        symlinkSync('src/b.c', join(t.root, 'link.c'));
      }],
      ['a file become a directory', () => {
        rmSync(join(t.root, 'run.sh'));
        mkdirSync(join(t.root, 'run.sh'));
      }],
      ['a directory become a file', () => {
        rmSync(join(t.root, 'sub'), { recursive: true });
        writeFileSync(join(t.root, 'sub'), 'now a file\n');
      }],
    ];
    for (const [what, change] of changes) {
      const before = manifestOf(t.root, t.files).manifest;
      change();
      const after = both(t);
      expect(after.plain, what).not.toBe(before);
      expect(after.cached, what).toBe(after.plain);
      expect(both(t).cached, `${what}, a run later`).toBe(after.plain);
    }
  });

  it('a cache file that is garbage, truncated or of another format is ignored', () => {
    const t = tree();
    const { plain } = both(t);
    for (const bad of ['garbage', '', 'offhost-hash-cache 2\nno tabs here', `offhost-hash-cache 1 99999999999999999999\n${readFileSync(t.cache, 'utf8').split('\n').slice(1).join('\n')}`, readFileSync(t.cache, 'utf8').slice(0, 40)]) {
      writeFileSync(t.cache, bad);
      expect(both(t).cached, JSON.stringify(bad)).toBe(plain);
    }
  });

  it('a git directory offhost cannot write in: no cache, the same manifest', () => {
    const t = tree();
    const blocked = join(temp(), 'offhost');
    writeFileSync(blocked, 'a file where the folder would be\n');
    const c = openHashCache(join(blocked, 'hash-cache'));
    expect(manifestOf(t.root, t.files, c).manifest).toBe(manifestOf(t.root, t.files).manifest);
    c.save();
    expect(readFileSync(blocked, 'utf8')).toBe('a file where the folder would be\n');
  });
});

describe('which entries are recorded and trusted', () => {
  /** A cache whose entry for ./x has the file's real stat key but a forged sum, recorded by a run a minute on. */
  function forged(): { root: string; cache: string } {
    const root = temp();
    writeFileSync(join(root, 'x'), 'real\n');
    const cache = join(temp(), 'offhost', 'hash-cache');
    const c = later(cache);
    c.set('./x', statSync(join(root, 'x'), { bigint: true }), 'f'.repeat(64));
    c.save();
    return { root, cache };
  }

  it('a hash recorded past the racy margin is trusted while the stat holds (what the trust rests on)', () => {
    const { root, cache } = forged();
    expect(manifestOf(root, ['./x'], openHashCache(cache)).manifest).toBe(`${'f'.repeat(64)}  ./x\n--exec--\n`);
  });

  it('a file within the racy margin of the run is hashed but not recorded; a run past the margin records it', () => {
    const root = temp();
    writeFileSync(join(root, 'x'), 'real\n');
    const cache = join(temp(), 'offhost', 'hash-cache');
    const c = openHashCache(cache);
    c.set('./x', statSync(join(root, 'x'), { bigint: true }), 'f'.repeat(64));
    c.save();
    // Not recorded: the next run hashes it (the forged sum is nowhere).
    expect(manifestOf(root, ['./x'], openHashCache(cache)).manifest).toBe(manifestOf(root, ['./x']).manifest);
    const l = later(cache);
    l.set('./x', statSync(join(root, 'x'), { bigint: true }), 'e'.repeat(64));
    l.save();
    expect(manifestOf(root, ['./x'], openHashCache(cache)).manifest).toBe(`${'e'.repeat(64)}  ./x\n--exec--\n`);
  });

  it('appends what a run records, writes nothing when nothing changed, and writes the cache whole without what no longer holds once that is over a third of it', () => {
    const root = temp();
    const files: string[] = [];
    for (let i = 0; i < 40; i++) {
      writeFileSync(join(root, `f${i}.txt`), `file ${i}\n`);
      files.push(`./f${i}.txt`);
    }
    const cache = join(temp(), 'offhost', 'hash-cache');
    const run = (paths: string[]) => {
      const c = later(cache);
      const m = manifestOf(root, paths, c).manifest;
      c.save();
      return m;
    };
    const paths = () => readFileSync(cache, 'utf8').split('\n').filter((l) => l.includes('\t')).map((l) => l.split('\t').slice(2).join('\t'));
    run(files);
    expect(paths()).toEqual(files);
    const text = readFileSync(cache, 'utf8');
    run(files);
    expect(readFileSync(cache, 'utf8')).toBe(text);
    // Ten files edited: ten lines appended, the rest of the file as it was.
    for (let i = 0; i < 10; i++) writeFileSync(join(root, `f${i}.txt`), `edited ${i}\n`);
    expect(run(files)).toBe(manifestOf(root, files).manifest);
    const appended = readFileSync(cache, 'utf8');
    expect(appended.startsWith(text)).toBe(true);
    expect(paths().slice(40)).toEqual(files.slice(0, 10));
    // Ten more: 20 of the 50 lines no longer hold, over a third: written whole, one line a file.
    for (let i = 10; i < 20; i++) writeFileSync(join(root, `f${i}.txt`), `edited ${i}\n`);
    expect(run(files)).toBe(manifestOf(root, files).manifest);
    expect(paths()).toEqual(files);
    // A run asking for half the files: the other half no longer counts, and goes.
    expect(run(files.slice(0, 20))).toBe(manifestOf(root, files.slice(0, 20)).manifest);
    expect(paths()).toEqual(files.slice(0, 20));
  });
});

describe('readSourceState', () => {
  it("keeps the cache in the checkout's own git directory, and gives the same state twice", async () => {
    const root = temp();
    const git = (...a: string[]) => execFileSync('git', a, { cwd: root, env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@t', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@t' } });
    git('init', '-q');
    writeFileSync(join(root, 'a.txt'), 'a\n');
    git('add', 'a.txt');
    git('commit', '-qm', 'a');
    writeFileSync(join(root, 'new.txt'), 'untracked\n');
    const repo = { root, gitDir: join(root, '.git') };
    const one = await readSourceState(repo);
    const two = await readSourceState(repo);
    expect(two.manifest).toBe(one.manifest);
    expect(two.files).toEqual(['./a.txt', './new.txt']);
    // Not a file of the work tree: git status is as it was.
    expect(execFileSync('git', ['status', '--porcelain'], { cwd: root, encoding: 'utf8' })).toBe('?? new.txt\n');
  });
});
