// The git mode's snapshot of a dirty working tree (src/routes/sync.ts snapshotCommit): the commit offhost
// pushes to the VM. Built in a private index (a copy of the checkout's own, so that only changed files are
// hashed again): its tree must be the working tree's tracked and not-ignored files, whatever the index
// held, and the user's index, HEAD and files must be as they were.
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
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
    const repo = newRepo('with-locks');
    write(repo, 'a.txt', 'a\n');
    git(repo, 'add', '.');
    git(repo, 'commit', '-q', '-m', 'base');
    write(repo, 'a.txt', 'edited\n');
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
