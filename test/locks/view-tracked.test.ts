// The view never writes over a lock file the branch tracks (src/locks/view.ts). A process refreshes the
// view more than once (a run: when it takes the lock and when it gives it back) and asks git which paths
// the index tracks once while the index is the same file: a path tracked in between must still be seen.
import { describe, expect, it } from 'vitest';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { openRepoAt } from '../../src/git/ref-tree.js';
import { forgetTrackedInProcess, refreshView } from '../../src/locks/view.js';
import { cleanEnv, g, tempRepo } from './lifecycle-helpers.js';

const DIR = 'meta/context/notices/vm-active';
const lockAt = (name: string) => `${DIR}/lock-${name}.md`;

/** A repository whose view has been refreshed once, with lock a's view in it (b: another VM's lock path). */
async function viewedOnce(name: string) {
  const dir = tempRepo(name);
  const repo = await openRepoAt(dir, cleanEnv());
  const a = lockAt('s.khost1.dev-linux-a');
  const b = lockAt('s.khost1.dev-linux-b');
  expect(await refreshView(repo, [DIR], new Map([[a, Buffer.from('view a\n')]]))).toEqual([]);
  return { dir, repo, a, b };
}

describe('the view and the paths the index tracks', () => {
  it('a lock file tracked between two refreshes of one process is seen as tracked by the second (not written over)', async () => {
    const { dir, repo, a, b } = await viewedOnce('view-tracked');
    expect(readFileSync(join(dir, a), 'utf8')).toBe('view a\n');
    // Someone commits b by hand the old way: the index is a new file now.
    mkdirSync(join(dir, DIR), { recursive: true });
    writeFileSync(join(dir, b), 'committed by hand\n');
    g(dir, 'add', '-f', b);
    g(dir, 'commit', '-q', '-m', 'a lock committed by hand');
    const problems = await refreshView(repo, [DIR], new Map([[a, Buffer.from('view a\n')], [b, Buffer.from('view b\n')]]));
    expect(problems.map((p) => p.path)).toEqual([b]);
    expect(problems[0]!.why).toContain('tracked by the checked-out branch');
    expect(readFileSync(join(dir, b), 'utf8')).toBe('committed by hand\n');
    // Untracked again (git rm --cached, a new index once more): the next refresh of this process writes its view.
    g(dir, 'rm', '-q', '--cached', b);
    expect(existsSync(join(dir, b))).toBe(true);
    const after = await refreshView(repo, [DIR], new Map([[a, Buffer.from('view a\n')], [b, Buffer.from('view b\n')]]));
    // Its bytes are a blob the repository holds (the commit's), which the view takes for its own: written.
    expect(after).toEqual([]);
    expect(readFileSync(join(dir, b), 'utf8')).toBe('view b\n');
  });

  it('the answer is kept between processes for the same index file: a record made to lie is what the next process believes, until the index is another file', async () => {
    const { dir, repo, a, b } = await viewedOnce('view-tracked-kept');
    const file = join(repo.gitDir, 'offhost', 'view-tracked.json');
    const kept = JSON.parse(readFileSync(file, 'utf8')) as { paths: string[] };
    expect(kept.paths).toEqual([]);
    // A new process (its memo empty) reads the record: one that says b is tracked is believed, so b's view is
    // not written (the record is read, not asked again).
    forgetTrackedInProcess();
    writeFileSync(file, JSON.stringify({ ...kept, paths: [b] }));
    const lied = await refreshView(repo, [DIR], new Map([[a, Buffer.from('view a\n')], [b, Buffer.from('view b\n')]]));
    expect(lied.map((p) => p.path)).toEqual([b]);
    expect(existsSync(join(dir, b))).toBe(false);
    // The index becomes another file (any commit): the record is not used, git is asked, b is written.
    forgetTrackedInProcess();
    writeFileSync(join(dir, 'other.txt'), 'x\n');
    g(dir, 'add', 'other.txt');
    g(dir, 'commit', '-q', '-m', 'another index');
    expect(await refreshView(repo, [DIR], new Map([[a, Buffer.from('view a\n')], [b, Buffer.from('view b\n')]]))).toEqual([]);
    expect(readFileSync(join(dir, b), 'utf8')).toBe('view b\n');
    // An unreadable record is not used either.
    forgetTrackedInProcess();
    writeFileSync(file, '{"key": ');
    expect(await refreshView(repo, [DIR], new Map([[a, Buffer.from('view a\n')], [b, Buffer.from('view b\n')]]))).toEqual([]);
    expect(JSON.parse(readFileSync(file, 'utf8')).paths).toEqual([]);
  });
});
