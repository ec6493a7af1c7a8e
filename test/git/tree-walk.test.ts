// The lock store's tree listing through the batch process (src/git/ref-tree.ts walkTree) against git's own
// `ls-tree -r -z --full-tree <commit> -- <specs>` on random trees: names that sort around `/`, executables,
// symbolic links, gitlinks, deep folders, non-ASCII names, and modes only old gits wrote (100664, 100775:
// ls-tree shows them as 100644/100755). It must list exactly what ls-tree lists, in ls-tree's order; and a
// tree it cannot read must make it give up (null), so that ls-tree itself answers.
import { afterAll, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { listTree, walkTree, type Repo } from '../../src/git/ref-tree.js';
import { parseLsTree } from '../../src/git/plumbing.js';
import { closeGitBatches } from '../../src/git/batch.js';
import { cleanEnv } from '../locks/lifecycle-helpers.js';

const tmp = mkdtempSync(join(tmpdir(), 'offhost-walk-'));
afterAll(() => {
  closeGitBatches();
  rmSync(tmp, { recursive: true, force: true });
});
const env = cleanEnv();
const git = (cwd: string, args: string[], input?: string | Buffer, more: NodeJS.ProcessEnv = {}) => execFileSync('git', args, { cwd, env: { ...env, ...more }, input, stdio: ['pipe', 'pipe', 'pipe'] });

const dir = join(tmp, 'r.git');
git(tmp, ['init', '-q', '--bare', dir]);
const repo: Repo = { root: null, gitDir: dir, commonDir: dir, env };
const blob = git(dir, ['hash-object', '-w', '--stdin'], 'x\n').toString().trim();

/** A tree object written as raw bytes (git hash-object --literally), for modes git no longer writes. */
function literalTree(entries: [string, string, string][]): string {
  const sorted = [...entries].sort((a, b) => Buffer.compare(Buffer.from(a[0] === '40000' ? `${a[1]}/` : a[1]), Buffer.from(b[0] === '40000' ? `${b[1]}/` : b[1])));
  const body = Buffer.concat(sorted.flatMap(([mode, name, id]) => [Buffer.from(`${mode} ${name}\0`), Buffer.from(id, 'hex')]));
  return git(dir, ['hash-object', '-w', '-t', 'tree', '--literally', '--stdin'], body).toString().trim();
}

function commitOf(tree: string): string {
  return git(dir, ['commit-tree', tree, '-m', 't'], undefined, { GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@x', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@x' }).toString().trim();
}

function lsTree(commit: string, specs: string[]) {
  const under = (p: string) => specs.some((d) => p.startsWith(`${d}/`));
  return parseLsTree(git(dir, ['ls-tree', '-r', '-z', '--full-tree', commit, '--', ...specs])).filter((e) => under(e.path));
}

const NAMES = ['a', 'a-b', 'a.b', 'a0', 'b', 'lock-x.md', 'ünï', 'sp ace', 'z'];
const MODES = ['100644', '100755', '120000', '160000'];
const pathArb = fc.array(fc.constantFrom(...NAMES), { minLength: 1, maxLength: 4 }).map((p) => p.join('/'));
const SPECS = ['a', 'a/b', 'a-b', 'b/a', 'z', 'a.b/a'];

describe('walkTree lists what ls-tree -r lists', () => {
  it('on random trees (index-made: every mode git writes today)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.uniqueArray(fc.record({ path: pathArb, mode: fc.constantFrom(...MODES) }), { selector: (e) => e.path, minLength: 1, maxLength: 12 }), fc.subarray(SPECS, { minLength: 1 }), async (files, specs) => {
        // A path that is also a folder of another path cannot be in one index: keep the first of each.
        const kept: typeof files = [];
        for (const f of files) if (!kept.some((k) => k.path.startsWith(`${f.path}/`) || f.path.startsWith(`${k.path}/`))) kept.push(f);
        const index = join(tmp, `index-${Math.random().toString(36).slice(2)}`);
        git(dir, ['update-index', '--index-info'], kept.map((f) => `${f.mode} ${blob}\t${f.path}`).join('\n') + '\n', { GIT_INDEX_FILE: index });
        const commit = commitOf(git(dir, ['write-tree'], undefined, { GIT_INDEX_FILE: index }).toString().trim());
        rmSync(index, { force: true });
        expect(await walkTree(repo, commit, specs)).toEqual(lsTree(commit, specs));
      }),
      { numRuns: 60 },
    );
  }, 120_000);

  it('on modes old gits wrote (100664, 100775), shown as ls-tree shows them', async () => {
    const inner = literalTree([['100664', 'lock-a.md', blob], ['100775', 'run', blob], ['120000', 'link', blob]]);
    const top = literalTree([['40000', 'a', inner], ['100644', 'a-b', blob]]);
    const commit = commitOf(top);
    const walked = await walkTree(repo, commit, ['a']);
    expect(walked).toEqual(lsTree(commit, ['a']));
    expect(walked!.map((e) => e.mode)).toEqual(['120000', '100644', '100755']);
  });

  it('gives up (null) on a tree whose object is missing, and listTree then answers with ls-tree\'s own error', async () => {
    const missing = 'd'.repeat(40);
    const top = literalTree([['40000', 'a', missing]]);
    const commit = commitOf(top);
    expect(await walkTree(repo, commit, ['a'])).toBeNull();
    await expect(listTree(repo, commit, ['a'])).rejects.toThrow(/git ls-tree -r -z \.\.\. failed: .*d{40}/);
    // Outside the specs a missing tree is not read, by either.
    expect(await walkTree(repo, commit, ['b'])).toEqual(lsTree(commit, ['b']));
  });
});
