// The git mode's snapshot of a dirty working tree (src/routes/sync.ts snapshotCommit): the commit offhost
// pushes to the VM. Built in a private index (a copy of the checkout's own, so that only changed files are
// hashed again): its tree must be the working tree's tracked and not-ignored files, whatever the index
// held, and the user's index, HEAD and files must be as they were.
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readSourceState } from '../../src/routes/source.js';
import { snapshotCommit } from '../../src/routes/sync.js';

const tmp = mkdtempSync(join(tmpdir(), 'offhost-snapshot-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const env: NodeJS.ProcessEnv = { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@example.test', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@example.test', GIT_CONFIG_NOSYSTEM: '1' };
for (const k of Object.keys(env)) if (k.startsWith('GIT_') && !/^GIT_(AUTHOR|COMMITTER)_|^GIT_CONFIG_NOSYSTEM$/.test(k)) delete env[k];
const git = (cwd: string, ...args: string[]) => execFileSync('git', args, { cwd, env, encoding: 'utf8' });
const write = (repo: string, rel: string, text: string) => {
  mkdirSync(join(repo, rel, '..'), { recursive: true });
  writeFileSync(join(repo, rel), text);
};

/** An empty repository (branch main) in the test's folder. */
function newRepo(name: string): string {
  const repo = join(tmp, name);
  mkdirSync(repo);
  git(repo, 'init', '-q', '-b', 'main');
  return repo;
}

/** A repository with `a.txt` committed ("a"), then edited in the tree to `edited`. */
function committedThenEdited(name: string, edited: string): string {
  const repo = newRepo(name);
  write(repo, 'a.txt', 'a\n');
  git(repo, 'add', '.');
  git(repo, 'commit', '-q', '-m', 'base');
  write(repo, 'a.txt', edited);
  return repo;
}

/** path -> "mode blob-content" of a commit's tree. */
function treeOf(repo: string, commit: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const l of git(repo, 'ls-tree', '-r', commit).split('\n').filter(Boolean)) {
    const [meta, path] = l.split('\t') as [string, string];
    const [mode, , id] = meta.split(' ') as [string, string, string];
    out.set(path, `${mode} ${git(repo, 'cat-file', 'blob', id)}`);
  }
  return out;
}

describe('snapshotCommit (git mode)', () => {
  it("is the working tree's tracked and not-ignored files, whatever the index held; the user's index, HEAD and files are untouched", async () => {
    const repo = newRepo('dirty');
    write(repo, '.gitignore', 'build/\n*.log\n');
    write(repo, 'kept.txt', 'kept\n');
    write(repo, 'edited.txt', 'old\n');
    write(repo, 'deleted.txt', 'gone soon\n');
    write(repo, 'staged-then-edited.txt', 'v1\n');
    write(repo, 'untracked-later.txt', 'was tracked\n');
    write(repo, 'run.sh', '#!/bin/sh\n');
    for (let i = 0; i < 50; i++) write(repo, `many/f${i}.txt`, `file ${i}\n`);
    git(repo, 'add', '.');
    git(repo, 'commit', '-q', '-m', 'base');
    // Every kind of difference between HEAD, the index and the working tree.
    write(repo, 'edited.txt', 'new\n');
    rmSync(join(repo, 'deleted.txt'));
    write(repo, 'staged-then-edited.txt', 'v2 staged\n');
    git(repo, 'add', 'staged-then-edited.txt');
    write(repo, 'staged-then-edited.txt', 'v3 in the tree\n');
    write(repo, 'staged-new.txt', 'staged new\n');
    git(repo, 'add', 'staged-new.txt');
    write(repo, 'new dir/untracked.txt', 'untracked\n');
    write(repo, 'build/out.o', 'ignored output\n');
    write(repo, 'x.log', 'ignored log\n');
    chmodSync(join(repo, 'run.sh'), 0o755);
    // Taken out of the index and now ignored: the source set leaves it out, and so must the snapshot.
    git(repo, 'rm', '-q', '--cached', 'untracked-later.txt');
    write(repo, '.git/info/exclude', 'untracked-later.txt\n');
    const head = git(repo, 'rev-parse', 'HEAD').trim();
    const indexBefore = readFileSync(join(repo, '.git', 'index'));
    const statusBefore = git(repo, 'status', '--porcelain=v1', '-z', '--untracked-files=all');

    const state = await readSourceState({ root: repo, gitDir: join(repo, '.git') });
    const commit = await snapshotCommit(state);
    const tree = treeOf(repo, commit);
    // Exactly the source set (the files the VM verifies), each with the working tree's bytes and mode.
    expect([...tree.keys()].map((p) => `./${p}`).sort()).toEqual([...state.files].sort());
    for (const [path, got] of tree) {
      const mode = statSync(join(repo, path)).mode & 0o111 ? '100755' : '100644';
      expect(got, path).toBe(`${mode} ${readFileSync(join(repo, path), 'utf8')}`);
    }
    expect(tree.has('deleted.txt')).toBe(false);
    expect(tree.has('untracked-later.txt')).toBe(false);
    expect(git(repo, 'rev-parse', `${commit}^`).trim()).toBe(head);
    // The user's side: nothing moved.
    expect(git(repo, 'rev-parse', 'HEAD').trim()).toBe(head);
    expect(readFileSync(join(repo, '.git', 'index')).equals(indexBefore)).toBe(true);
    expect(git(repo, 'status', '--porcelain=v1', '-z', '--untracked-files=all')).toBe(statusBefore);
    expect(git(repo, 'show', ':staged-then-edited.txt')).toBe('v2 staged\n');
  });

  it("leaves out offhost's own lock files (the lock's view in the tree): the same source is the same commit, whatever they say", async () => {
    const repo = committedThenEdited('with-locks', 'edited\n');
    const dirs = ['meta/context/notices/vm-active/', 'meta/context/notices/active/'];
    const snap = async (claim: string) => {
      write(repo, 'meta/context/notices/vm-active/lock-s.khost1.dev-linux-x.md', claim);
      write(repo, 'meta/context/notices/active/lock-[odd]*name.md', claim);
      const state = await readSourceState({ root: repo, gitDir: join(repo, '.git') }, ['.git'], dirs);
      const commit = await snapshotCommit(state, dirs);
      expect([...treeOf(repo, commit).keys()].map((p) => `./${p}`).sort()).toEqual([...state.files].sort());
      return commit;
    };
    const one = await snap('run 1, heartbeat 10:00\n');
    expect([...treeOf(repo, one).keys()]).toEqual(['a.txt']);
    expect(await snap('run 2, heartbeat 10:05\n')).toBe(one);
  });

  it("takes an edit that keeps the size and the mtime, made in the tick the index was written (git's racily clean entry)", async () => {
    const repo = newRepo('racy');
    // ctime not compared (as on some laptops' filesystems): only the size and the mtime speak for the file.
    git(repo, 'config', 'core.trustctime', 'false');
    write(repo, 'a.txt', 'v3\n');
    execFileSync('touch', ['-d', '@1600000000', join(repo, 'a.txt')]);
    git(repo, 'add', 'a.txt');
    git(repo, 'commit', '-q', '-m', 'v3');
    // Rewritten in place, same size, its mtime put back; the index written in that same second.
    write(repo, 'a.txt', 'v4\n');
    execFileSync('touch', ['-d', '@1600000000', join(repo, 'a.txt')]);
    execFileSync('touch', ['-d', '@1600000000', join(repo, '.git', 'index')]);
    const state = await readSourceState({ root: repo, gitDir: join(repo, '.git') });
    expect(state.manifest).toContain('./a.txt');
    const commit = await snapshotCommit(state);
    expect(treeOf(repo, commit).get('a.txt')).toBe('100644 v4\n');
  });

  it('a repository without an index yet (no commit, nothing staged) still gets its snapshot', async () => {
    const repo = newRepo('fresh');
    write(repo, 'a.txt', 'a\n');
    const state = await readSourceState({ root: repo, gitDir: join(repo, '.git') });
    const commit = await snapshotCommit(state);
    expect([...treeOf(repo, commit)]).toEqual([['a.txt', '100644 a\n']]);
  });
});

describe('an unchanged dirty tree keeps its snapshot commit (src/routes/snapshot-reuse.ts)', () => {
  const WHOLE = Math.floor(Date.now() / 1000) - 60;
  /** A dirty repository: one file edited, one deleted, one new. */
  function dirty(name: string): string {
    const repo = newRepo(name);
    write(repo, 'a.txt', 'a\n');
    write(repo, 'b.txt', 'b\n');
    write(repo, 'gone.txt', 'gone\n');
    git(repo, 'add', '.');
    git(repo, 'commit', '-q', '-m', 'base');
    write(repo, 'a.txt', 'a edited\n');
    // A whole-second mtime, so that a test can put it back exactly (to the nanosecond).
    utimesSync(join(repo, 'a.txt'), WHOLE, WHOLE);
    rmSync(join(repo, 'gone.txt'));
    write(repo, 'new.txt', 'new\n');
    return repo;
  }
  /** Dirty repositories whose changed files are past the racy margin, with the state read from each. */
  async function aged(...names: string[]) {
    const repos = names.map(dirty);
    await new Promise((r) => setTimeout(r, 3_200)); // the edits' ctimes past the racy margin
    return Promise.all(repos.map(async (repo) => ({ repo, state: await readSourceState({ root: repo, gitDir: join(repo, '.git') }) })));
  }
  /** Puts another commit in the record, so that the next snapshot shows whether the record was used. */
  const lie = (repo: string) => {
    const rec = JSON.parse(readFileSync(join(repo, '.git', 'offhost-snapshot.json'), 'utf8')) as { key: string; commit: string };
    const other = git(repo, 'rev-parse', 'HEAD').trim();
    writeFileSync(join(repo, '.git', 'offhost-snapshot.json'), JSON.stringify({ key: rec.key, commit: other }));
    return other;
  };

  it('the same commit again, from the record; and a record that lies is what the next snapshot says (so it is read)', async () => {
    const [{ repo, state }] = (await aged('keep')) as [{ repo: string; state: Awaited<ReturnType<typeof readSourceState>> }];
    const first = await snapshotCommit(state);
    expect(await snapshotCommit(await readSourceState({ root: repo, gitDir: join(repo, '.git') }))).toBe(first);
    const other = lie(repo);
    expect(await snapshotCommit(await readSourceState({ root: repo, gitDir: join(repo, '.git') }))).toBe(other);
  }, 30_000);

  it('is not used once a changed file is written again (its size and mtime put back), the index is written, a path appears, or HEAD moves', async () => {
    const cases: [string, (repo: string) => void][] = [
      ['rewritten, size and mtime kept', (repo) => {
        write(repo, 'a.txt', 'A EDITED\n');
        utimesSync(join(repo, 'a.txt'), WHOLE, WHOLE);
        expect(statSync(join(repo, 'a.txt'), { bigint: true }).mtimeNs).toBe(BigInt(WHOLE) * 1_000_000_000n);
      }],
      ['the changed file staged (the index is written; the named paths and their files as they were)', (repo) => git(repo, 'add', 'a.txt')],
      ['a new untracked file', (repo) => write(repo, 'another.txt', 'x\n')],
      ['a commit (HEAD moves)', (repo) => { git(repo, 'add', '-A'); git(repo, 'commit', '-q', '-m', 'next'); write(repo, 'a.txt', 'dirty again\n'); }],
    ];
    const made = await aged(...cases.map((_, i) => `change-${i}`));
    for (const [i, [what, change]] of cases.entries()) {
      const { repo, state } = made[i]!;
      await snapshotCommit(state);
      const other = lie(repo);
      change(repo);
      const now = await readSourceState({ root: repo, gitDir: join(repo, '.git') });
      const again = await snapshotCommit(now);
      expect(again, what).not.toBe(other);
      // And it is the working tree as it is now.
      const tree = treeOf(repo, again);
      expect([...tree.keys()].map((p) => `./${p}`).sort(), what).toEqual([...now.files].sort());
      expect(tree.get('a.txt'), what).toBe(`100644 ${readFileSync(join(repo, 'a.txt'), 'utf8')}`);
    }
  }, 60_000);

  it('is not used once the index changes where git status does not look (a tracked file in a folder left out, staged anew)', async () => {
    const dirs = ['meta/context/notices/vm-active/'];
    const lock = 'meta/context/notices/vm-active/lock-by-hand.md';
    const repo = dirty('left-out');
    write(repo, lock, 'committed by hand\n');
    git(repo, 'add', '-f', lock);
    git(repo, 'commit', '-q', '-m', 'a lock the old way');
    await new Promise((r) => setTimeout(r, 3_200));
    await snapshotCommit(await readSourceState({ root: repo, gitDir: join(repo, '.git') }), dirs);
    const other = lie(repo);
    write(repo, lock, 'staged anew\n');
    git(repo, 'add', '-f', lock);
    const again = await snapshotCommit(await readSourceState({ root: repo, gitDir: join(repo, '.git') }), dirs);
    expect(again).not.toBe(other);
    expect(treeOf(repo, again).get(lock)).toBe('100644 staged anew\n');
  }, 30_000);

  it('in a worktree beside the checkout: kept in the worktree\'s own git dir, its objects found in the common one', async () => {
    const main = dirty('wt-main');
    git(main, 'add', '-A');
    git(main, 'commit', '-q', '-m', 'all');
    const wt = join(tmp, 'wt-beside');
    git(main, 'worktree', 'add', '-q', '-b', 'task', wt);
    write(wt, 'a.txt', 'edited in the worktree\n');
    await new Promise((r) => setTimeout(r, 3_200));
    const gitDir = git(wt, 'rev-parse', '--absolute-git-dir').trim();
    const first = await snapshotCommit(await readSourceState({ root: wt, gitDir }));
    const kept = JSON.parse(readFileSync(join(gitDir, 'offhost-snapshot.json'), 'utf8')) as { key: string; commit: string };
    expect(kept.commit).toBe(first);
    expect(() => statSync(join(main, '.git', 'offhost-snapshot.json'))).toThrow(); // not the main checkout's
    const other = git(wt, 'rev-parse', 'HEAD').trim();
    writeFileSync(join(gitDir, 'offhost-snapshot.json'), JSON.stringify({ key: kept.key, commit: other }));
    expect(await snapshotCommit(await readSourceState({ root: wt, gitDir }))).toBe(other);
  }, 30_000);

  it('a snapshot of files written within the racy margin is not kept', async () => {
    const repo = committedThenEdited('racy-not-kept', 'just written\n');
    await snapshotCommit(await readSourceState({ root: repo, gitDir: join(repo, '.git') }));
    expect(() => statSync(join(repo, '.git', 'offhost-snapshot.json'))).toThrow();
  }, 30_000);
});
