// readSourceState reads the source set from two git processes (the index's paths and one porcelain v2
// status pass): in every state a checkout can be in, what it reads is what the plain commands give:
// `git ls-files --cached --others --exclude-standard` for the set, `rev-parse HEAD` and `symbolic-ref`
// for HEAD and the branch, and v1 status letters for the dirty summary.
import { afterAll, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, statSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readSourceState } from '../../src/routes/source.js';

const made: string[] = [];
afterAll(() => {
  for (const d of made) rmSync(d, { recursive: true, force: true });
});
const env = { ...process.env, GIT_CONFIG_NOSYSTEM: '1', GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@t', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@t', HOME: tmpdir() };
for (const k of Object.keys(env)) if (k.startsWith('GIT_') && !['GIT_CONFIG_NOSYSTEM', 'GIT_AUTHOR_NAME', 'GIT_AUTHOR_EMAIL', 'GIT_COMMITTER_NAME', 'GIT_COMMITTER_EMAIL'].includes(k)) delete env[k as keyof typeof env];
const git = (cwd: string, ...a: string[]) => execFileSync('git', ['-c', 'commit.gpgsign=false', '-c', 'init.defaultBranch=main', ...a], { cwd, env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
const tryGit = (cwd: string, ...a: string[]) => {
  try {
    return git(cwd, ...a).trim();
  } catch {
    return null;
  }
};

/** What the plain commands say: the files (existing, not directories), HEAD, the branch, the v1 letters. */
function expected(root: string) {
  const listed = [...new Set(git(root, 'ls-files', '-z', '--cached', '--others', '--exclude-standard').split('\0').filter(Boolean))];
  const files = listed
    .filter((p) => {
      try {
        return execFileSync('test', ['-f', join(root, p)]) !== null;
      } catch {
        return false;
      }
    })
    .map((p) => `./${p}`)
    .sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
  const v1 = git(root, 'status', '--porcelain=v1', '-z', '--untracked-files=all', '--ignore-submodules=none').split('\0');
  const xys: string[] = [];
  for (let i = 0; i < v1.length; i++) {
    const e = v1[i]!;
    if (e.length < 4) continue;
    xys.push(`${e.slice(0, 2).trim()} ${e.slice(3)}`);
    if (e[0] === 'R' || e[0] === 'C') i++;
  }
  return { files, head: tryGit(root, 'rev-parse', '--verify', '-q', 'HEAD^{commit}'), branch: tryGit(root, 'symbolic-ref', '-q', '--short', 'HEAD'), paths: xys.slice(0, 20) };
}

function repo(): string {
  const root = mkdtempSync(join(tmpdir(), 'offhost-source-state-'));
  made.push(root);
  git(root, 'init', '-q');
  return root;
}

async function same(root: string, what: string) {
  const st = await readSourceState({ root, gitDir: join(root, '.git') }, ['.git', 'node_modules']);
  const want = expected(root);
  expect(st.files, what).toEqual(want.files.filter((f) => !f.split('/').includes('node_modules')));
  expect(st.head, what).toBe(want.head);
  expect(st.branch, what).toBe(want.branch);
  expect(st.dirty.paths, what).toEqual(want.paths);
  expect(st.clean, what).toBe(want.paths.length === 0);
}

describe('readSourceState agrees with ls-files, rev-parse, symbolic-ref and v1 status', () => {
  it('an unborn branch, then a checkout in every kind of dirty state, detached, and mid-conflict', async () => {
    const root = repo();
    writeFileSync(join(root, 'first.txt'), 'one\n');
    await same(root, 'unborn branch, one untracked file');
    git(root, 'add', '.');
    await same(root, 'unborn branch, one staged file');
    mkdirSync(join(root, 'src/deep/er'), { recursive: true });
    for (const f of ['a.c', 'b.c', 'gone.c', 'moved.c', 'staged-rm.c', 'mode.sh', 'src/deep/er/x.c', 'ignored-but-tracked.log', 'name with space.txt', 'ünïcode.txt']) writeFileSync(join(root, f), `${f}\n`);
    writeFileSync(join(root, '.gitignore'), '*.log\nbuild/\n');
    git(root, 'add', '.');
    git(root, 'add', '-f', 'ignored-but-tracked.log');
    git(root, 'commit', '-qm', 'base');
    await same(root, 'clean');
    writeFileSync(join(root, 'a.c'), 'changed\n');
    rmSync(join(root, 'gone.c'));
    git(root, 'mv', 'moved.c', 'renamed.c');
    git(root, 'rm', '-q', '--cached', 'staged-rm.c');
    chmodSync(join(root, 'mode.sh'), 0o755);
    writeFileSync(join(root, 'new.txt'), 'untracked\n');
    mkdirSync(join(root, 'build'));
    writeFileSync(join(root, 'build/out.o'), 'ignored\n');
    writeFileSync(join(root, 'other.log'), 'ignored\n');
    mkdirSync(join(root, 'fresh/dir'), { recursive: true });
    writeFileSync(join(root, 'fresh/dir/f.txt'), 'untracked deep\n');
    writeFileSync(join(root, 'added.c'), 'added\n');
    git(root, 'add', 'added.c');
    symlinkSync('a.c', join(root, 'link.c'));
    mkdirSync(join(root, 'node_modules/x'), { recursive: true });
    writeFileSync(join(root, 'node_modules/x/i.js'), 'excluded\n');
    // A nested repository (untracked) and a directory of its own.
    const nested = join(root, 'nested');
    mkdirSync(nested);
    git(nested, 'init', '-q');
    writeFileSync(join(nested, 'n.txt'), 'n\n');
    await same(root, 'modified, deleted, renamed, removed from the index, mode, untracked, ignored, symlink, nested repository');
    rmSync(nested, { recursive: true });
    git(root, 'add', '-A');
    git(root, 'commit', '-qm', 'all');
    git(root, 'checkout', '-q', '--detach');
    await same(root, 'detached');
    git(root, 'checkout', '-q', 'main');
    git(root, 'checkout', '-q', '-b', 'feature/x');
    writeFileSync(join(root, 'b.c'), 'theirs\n');
    git(root, 'commit', '-qam', 'theirs');
    git(root, 'checkout', '-q', 'main');
    writeFileSync(join(root, 'b.c'), 'ours\n');
    git(root, 'commit', '-qam', 'ours');
    git(root, 'checkout', '-q', 'feature/x');
    await same(root, 'a branch with a slash');
    tryGit(root, 'merge', '-q', 'main');
    expect(git(root, 'status', '--porcelain')).toMatch(/^UU b\.c$/m);
    await same(root, 'mid-conflict (unmerged entries)');
  });
});

describe("the source read beside the user's own git", () => {
  it('never takes index.lock nor rewrites the index (a commit the user makes meanwhile is not refused)', async () => {
    const root = repo();
    writeFileSync(join(root, 'a.txt'), 'a\n');
    git(root, 'add', '.');
    git(root, 'commit', '-qm', 'a');
    // The index's stat of a.txt no longer holds: a status that may write would refresh and rewrite it.
    const later = new Date(Date.now() + 5_000);
    utimesSync(join(root, 'a.txt'), later, later);
    const index = join(root, '.git', 'index');
    const before = statSync(index, { bigint: true });
    await readSourceState({ root, gitDir: join(root, '.git') });
    const after = statSync(index, { bigint: true });
    expect([after.ino, after.mtimeNs]).toEqual([before.ino, before.mtimeNs]);
    // The plain status of the same checkout does rewrite it (what the read above must not do).
    git(root, 'status', '--porcelain');
    expect(statSync(index, { bigint: true }).mtimeNs).not.toBe(before.mtimeNs);
  });
});
