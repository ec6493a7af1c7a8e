// The commits offhost writes itself (src/git/loose-objects.ts) against git's own way (read-tree,
// update-index, write-tree, commit-tree: OFFHOST_GIT_OBJECTS=git) on the same base and the same random
// changes: the same tree, parent, identity and message, and `git fsck --strict` finds nothing wrong. The
// base holds what a lock ref never does (an executable, a symlink, a gitlink, names that sort around `/`),
// so that a tree rewritten here must keep them exactly.
import { afterAll, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { buildCommit, madeHere, writtenInto, type Repo } from '../../src/git/ref-tree.js';
import { cleanEnv } from '../locks/lifecycle-helpers.js';

const tmp = mkdtempSync(join(tmpdir(), 'offhost-loose-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

function git(cwd: string, args: string[], input?: string, env: NodeJS.ProcessEnv = cleanEnv()): string {
  return execFileSync('git', args, { cwd, env, input, encoding: 'utf8', stdio: ['pipe', 'pipe', 'pipe'] });
}

/** A bare repository with a base commit of odd entries, and a second one holding the same history. */
function repos(identity: boolean): { a: Repo; b: Repo; base: string; envA: NodeJS.ProcessEnv } {
  const dir = mkdtempSync(join(tmp, 'r-'));
  const a = join(dir, 'a.git');
  git(dir, ['init', '-q', '--bare', a]);
  if (identity) {
    git(a, ['config', 'user.name', 'Dev <Name>']);
    git(a, ['config', 'user.email', 'dev@example.test']);
  }
  const blob = (s: string) => git(a, ['hash-object', '-w', '--stdin'], s).trim();
  const x = blob('x\n');
  const index = join(dir, 'index');
  const env = { ...cleanEnv(), GIT_INDEX_FILE: index, HOME: dir };
  const info = [
    `100644 ${x}\tn/a`,
    `100755 ${x}\tn/run.sh`,
    `120000 ${blob('a')}\tn/link`,
    `160000 ${x}\tn/sub`,
    `100644 ${x}\tn/a.b`,
    `100644 ${x}\tn/a-b/c`,
    `100644 ${x}\tn/a0`,
    // Files whose names start with a folder's name that a change makes (n/q/x): git puts the folder after
    // `q.b` and before `q0`, as if its name ended in `/`.
    `100644 ${x}\tn/q-b`,
    `100644 ${x}\tn/q.b`,
    `100644 ${x}\tn/q0`,
    `100644 ${x}\tsp ace/ünï.md`,
    `100644 ${x}\tkeep/deep/er/f`,
  ];
  execFileSync('git', ['update-index', '--index-info'], { cwd: a, env, input: info.join('\n') + '\n' });
  const tree = execFileSync('git', ['write-tree'], { cwd: a, env, encoding: 'utf8' }).trim();
  const base = git(a, ['commit-tree', tree, '-m', 'base'], undefined, { ...cleanEnv(), HOME: dir, GIT_AUTHOR_NAME: 'b', GIT_AUTHOR_EMAIL: 'b@b', GIT_COMMITTER_NAME: 'b', GIT_COMMITTER_EMAIL: 'b@b' }).trim();
  git(a, ['update-ref', 'refs/offhost/locks', base]);
  const b = join(dir, 'b.git');
  git(dir, ['clone', '-q', '--bare', a, b]);
  git(b, ['fetch', '-q', a, 'refs/offhost/locks:refs/offhost/locks']);
  const envA = { ...cleanEnv(), HOME: dir };
  return { a: { root: null, gitDir: a, commonDir: a, env: envA }, b: { root: null, gitDir: b, commonDir: b, env: envA }, base, envA };
}

const PATHS = ['n/a', 'n/new', 'n/a-b/c', 'n/a-b/d', 'n/a-b.x', 'n/a.b', 'n/a0', 'n/q/x', 'n/q.b', 'n/deeper/x/y.md', 'keep/deep/er/f', 'keep/deep/er/g', 'top.md', 'sp ace/ünï.md', 'fresh/dir/file'];
const changesArb = fc.uniqueArray(fc.record({ path: fc.constantFrom(...PATHS), body: fc.option(fc.string({ maxLength: 20 }), { nil: null }) }), { selector: (c) => c.path, minLength: 1, maxLength: 6 });

function shape(repo: string, commit: string): { tree: string; parent: string; author: string; committer: string; message: string } {
  const text = git(repo, ['cat-file', 'commit', commit]);
  const [head, ...msg] = text.split('\n\n');
  const field = (k: string) => head!.split('\n').find((l) => l.startsWith(`${k} `))!.slice(k.length + 1);
  return { tree: field('tree'), parent: field('parent'), author: field('author').replace(/ \d+ [+-]\d{4}$/, ''), committer: field('committer').replace(/ \d+ [+-]\d{4}$/, ''), message: msg.join('\n\n') };
}

describe("a commit written here is git's commit", () => {
  for (const identity of [true, false]) {
    it(`same tree, parent, identity and message as git's way, fsck clean (${identity ? 'a configured identity' : 'no identity: the fallback'})`, async () => {
      const { a, base } = repos(identity);
      await fc.assert(
        fc.asyncProperty(changesArb, async (cs) => {
          const changes = new Map(cs.map((c) => [c.path, c.body === null ? null : `${c.body}\n`] as const));
          const fallback = { name: 'offhost (s<1>)', email: 'offhost@host' };
          const here = await buildCommit(a, base, changes, 'offhost: lock x (s)', fallback);
          const theirs = await buildCommit({ ...a, env: { ...a.env, OFFHOST_GIT_OBJECTS: 'git' } }, base, changes, 'offhost: lock x (s)', fallback);
          expect(madeHere(here)).toBe(true); // the way under test, not git's twice
          // The same id is the same bytes (both made in one second); another id must be git's own.
          if (theirs !== here) expect(madeHere(theirs)).toBe(false);
          expect(shape(a.gitDir, here)).toEqual(shape(a.gitDir, theirs));
        }),
        { numRuns: 25 },
      );
      git(a.gitDir, ['update-ref', 'refs/heads/check', (await buildCommit(a, base, new Map([['n/z', 'z\n']]), 'm', { name: 'o', email: 'o@h' }))]);
      expect(() => git(a.gitDir, ['fsck', '--strict', '--no-dangling'])).not.toThrow();
    }, 120_000);
  }

  it('a path through a file (n/a/x over the file n/a) is left to git, whose answer stands', async () => {
    const { a, base } = repos(true);
    const viaGit = await buildCommit({ ...a, env: { ...a.env, OFFHOST_GIT_OBJECTS: 'git' } }, base, new Map([['n/a/x', 'x\n']]), 'm', { name: 'o', email: 'o@h' }).then((c) => shape(a.gitDir, c).tree, (e: Error) => e.message);
    const here = await buildCommit(a, base, new Map([['n/a/x', 'x\n']]), 'm', { name: 'o', email: 'o@h' }).then((c) => shape(a.gitDir, c).tree, (e: Error) => e.message);
    expect(here).toEqual(viaGit);
  });

  it('a second repository at the parent gets the new objects (fsck clean); one at another commit does not', async () => {
    const { a, b, base } = repos(true);
    const c = await buildCommit(a, base, new Map([['meta/notices/vm-active/lock-x.md', 'held\n']]), 'm', { name: 'o', email: 'o@h' });
    expect(writtenInto(b, c, 'f'.repeat(40))).toBe(false);
    expect(() => git(b.gitDir, ['cat-file', '-e', c])).toThrow();
    expect(writtenInto(b, c, base)).toBe(true);
    git(b.gitDir, ['update-ref', 'refs/offhost/locks', c, base]);
    expect(git(b.gitDir, ['show', 'refs/offhost/locks:meta/notices/vm-active/lock-x.md'])).toBe('held\n');
    expect(() => git(b.gitDir, ['fsck', '--strict', '--no-dangling'])).not.toThrow();
  });
});
