// A broken store is an error, never an empty store; a refused push is a refusal, not contention (docs/LOCKS.md
// "Repair", "Across machines"). Real repositories, a real bare remote with a real pre-receive hook, the
// built CLI. Each failure must come at once: the tests' timeouts (far under the 60 s retry deadline) are the
// hang guard.
import { beforeAll, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ACTIVE, REF, VM, archives, bareWithClones, cleanEnv, cliInProcess, ensureBuilt, g, offhost, read, sessionEnv, tempRepo, userStores } from './lifecycle-helpers.js';
import { sampling } from '../helpers/sample.js';

// Lock commands' decisions and writes, not the process boundary: the CLI runs in this process.
cliInProcess();

const sample = sampling('full');

beforeAll(() => ensureBuilt());

const BROKEN = 230;
const REFUSED = 231;

/** The user store of the repository `dir` (the store-id offhost cached in its git directory). */
function storeOf(dir: string): string {
  const id = readFileSync(join(dir, '.git', 'offhost', 'store-id'), 'utf8').trim();
  const s = userStores().find((p) => p.endsWith(`${id}.git`));
  if (!s) throw new Error(`no user store for ${dir}`);
  return s;
}

/** A repository holding one live lock (session a) in its user store. */
async function withLock(): Promise<{ dir: string; store: string }> {
  const dir = tempRepo();
  const r = await offhost(['lock', 'acquire', VM, '--reason', 'live work'], { cwd: dir, env: sessionEnv('a') });
  expect(r.code, r.stderr).toBe(0);
  return { dir, store: storeOf(dir) };
}

/** A commit whose tree puts `entry` (mode, type-less object id) at `path`, on top of the tip of `repo`'s lock ref. */
function commitWithEntry(repo: string, path: string, mode: string, sha: string): string {
  const env = { ...cleanEnv(), GIT_INDEX_FILE: join(repo, 'test-index'), GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@x', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@x' };
  execFileSync('git', ['read-tree', REF], { cwd: repo, env });
  execFileSync('git', ['update-index', '--add', '--cacheinfo', `${mode},${sha},${path}`], { cwd: repo, env });
  const tree = execFileSync('git', ['write-tree'], { cwd: repo, env }).toString().trim();
  return execFileSync('git', ['commit-tree', tree, '-p', REF, '-m', 'by hand'], { cwd: repo, env }).toString().trim();
}

const expectBroken = (r: { code: number | null; stderr: string }, what: RegExp) => {
  expect(r.code, r.stderr).toBe(BROKEN);
  expect(r.stderr).toMatch(what);
  expect(r.stderr).toContain('offhost lock repair');
  expect(r.stderr).not.toContain('no active locks');
};

describe('a broken store is an error, at once, with a distinct status', () => {
  const cases: [string, (store: string) => void, RegExp][] = [
    ['a garbage ref', (store) => writeFileSync(join(store, 'refs/offhost/locks'), 'garbage\n'), /not an object id/],
    ['a missing object', (store) => writeFileSync(join(store, 'refs/offhost/locks'), `${'1234567890'.repeat(4)}\n`), /missing object/],
    [
      'a blob at the ref',
      (store) => {
        const blob = execFileSync('git', ['hash-object', '-w', '--stdin'], { cwd: store, input: 'not a commit\n', env: cleanEnv() }).toString().trim();
        g(store, 'update-ref', REF, blob);
      },
      /which is a blob, not a commit/,
    ],
    [
      'a gitlink at the lock path',
      (store) => {
        const c = commitWithEntry(store, ACTIVE, '160000', g(store, 'rev-parse', REF).trim());
        g(store, 'update-ref', REF, c);
      },
      /is a gitlink \(a submodule commit\), not a lock file/,
    ],
    [
      "a lock file's blob missing",
      (store) => {
        // A lock file whose blob is then lost (its loose object removed, as a broken disk or a bad gc would).
        const blob = execFileSync('git', ['hash-object', '-w', '--stdin'], { cwd: store, input: 'lost lock\n', env: cleanEnv() }).toString().trim();
        const c = commitWithEntry(store, 'meta/context/notices/vm-active/lock-s.khost1.dev-linux-other.md', '100644', blob);
        g(store, 'update-ref', REF, c);
        rmSync(join(store, 'objects', blob.slice(0, 2), blob.slice(2)));
      },
      /is missing/,
    ],
  ];
  // Each case breaks the store its own way; the default run takes every other one (and the last, a lock
  // file's blob lost), `npm run test:full` all of them (test/helpers/sample.ts).
  for (const [name, breakIt, what] of sample.pick(cases, 2, { always: (_c, i) => i === cases.length - 1 })) {
    it(`${name}: status, acquire, release and gc say what is wrong (exit 230); repair archives what can be read`, async () => {
      const { dir, store } = await withLock();
      breakIt(store);
      expectBroken(await offhost(['lock', 'status'], { cwd: dir }), what);
      expectBroken(await offhost(['lock', 'acquire', 's.khost1.dev-linux-x', '--reason', 'r'], { cwd: dir, env: sessionEnv('b') }), what);
      expectBroken(await offhost(['lock', 'release', VM], { cwd: dir, env: sessionEnv('a') }), what);
      expectBroken(await offhost(['lock', 'gc'], { cwd: dir }), what);
      const rep = await offhost(['lock', 'repair'], { cwd: dir });
      expect(rep.code, rep.stderr).toBe(0);
      expect(rep.stdout).toContain('repaired the user store');
      const st = await offhost(['lock', 'status', '--json'], { cwd: dir });
      expect(st.code, st.stderr).toBe(0);
      // Nothing is held after a repair; what could be read of the old tip is in the archive.
      expect((JSON.parse(st.stdout) as { locks: unknown[] }).locks).toEqual([]);
      // The gitlink took the live lock's place: nothing there can be read, and repair says so.
      if (name.startsWith('a gitlink')) expect(rep.stdout).toContain('could not be read: meta/context/notices/vm-active/lock-s.khost1.dev-linux-koda.md (a gitlink)');
      if (name.startsWith("a lock file's")) {
        expect(rep.stdout).toMatch(/archived meta\/context\/notices\/vm-active\/lock-s\.khost1\.dev-linux-koda\.md ->/);
        const arch = archives(store).find((n) => n.includes('-expired-'))!;
        expect(read(store, `meta/context/notices/vm-active-archive/${arch}`)).toContain('## Archived by repair');
      }
      expect((await offhost(['lock', 'acquire', VM, '--reason', 'after repair'], { cwd: dir, env: sessionEnv('b') })).code).toBe(0);
      expect((await offhost(['lock', 'repair'], { cwd: dir })).stdout).toContain('healthy');
    }, 120_000);
  }

  it("this clone's own copy broken (a garbage ref file): an error naming it; repair points it at the store again", async () => {
    const { dir } = await withLock();
    writeFileSync(join(dir, '.git/refs/offhost/locks'), 'garbage\n');
    expectBroken(await offhost(['lock', 'status'], { cwd: dir }), /this clone's refs\/offhost\/locks holds something that is not an object id/);
    const rep = await offhost(['lock', 'repair'], { cwd: dir });
    expect(rep.code, rep.stderr).toBe(0);
    // The store was healthy: the live lock is still held, and this clone sees it again.
    const st = await offhost(['lock', 'status', '--json'], { cwd: dir });
    expect((JSON.parse(st.stdout) as { locks: { session: string }[] }).locks.map((l) => l.session)).toEqual(['a']);
    expect(read(dir, ACTIVE)).toContain('session: a');
  }, 120_000);
});

describe('a remote that refuses the push', () => {
  it('is reported as refused with its own words (exit 231), after one attempt; nothing changed', async () => {
    const { bare, clones } = bareWithClones(1);
    const c = clones[0]!;
    const count = join(bare, 'hook-calls');
    const hook = join(bare, 'hooks', 'pre-receive');
    mkdirSync(join(bare, 'hooks'), { recursive: true });
    writeFileSync(hook, `#!/bin/sh\necho call >> '${count}'\necho "locks are frozen for the release, ask #infra" >&2\nexit 1\n`);
    chmodSync(hook, 0o755);
    const r = await offhost(['lock', 'acquire', VM, '--reason', 'r', '--push'], { cwd: c, env: sessionEnv('a') });
    expect(r.code, r.stderr).toBe(REFUSED);
    expect(r.stderr).toContain('refused the push');
    expect(r.stderr).toContain('pre-receive hook declined');
    expect(r.stderr).toContain('locks are frozen for the release, ask #infra');
    expect(r.stderr).not.toContain('kept changing');
    // One push reached the hook: a refusal is not retried.
    expect(readFileSync(count, 'utf8').trim().split('\n')).toHaveLength(1);
    expect(g(bare, 'for-each-ref', 'refs/offhost').trim()).toBe('');
  }, 120_000);
});
