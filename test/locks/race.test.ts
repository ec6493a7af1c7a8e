// Concurrent acquires as real processes: in one checkout, and across clones of one bare remote (--push).
import { beforeAll, describe, expect, it } from 'vitest';
import { chmodSync, existsSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ACTIVE, VM, bareWithClones, ensureBuilt, g, makeUserWork, offhost, read, sessionEnv, snapshot, tempRepo } from './lifecycle-helpers.js';

beforeAll(() => ensureBuilt());

const N = 8;

function commitCount(dir: string, rev = 'HEAD'): number {
  return Number(g(dir, 'rev-list', '--count', rev).trim());
}

describe('N parallel acquires in one checkout', () => {
  it('exactly one wins, every round', async () => {
    const dir = tempRepo();
    const files = makeUserWork(dir);
    const before = snapshot(dir, files);
    for (let round = 0; round < 3; round++) {
      const commits = commitCount(dir);
      const results = await Promise.all(
        Array.from({ length: N }, (_, i) =>
          offhost(['lock', 'acquire', VM, '--reason', `round ${round} racer ${i}`], { cwd: dir, env: sessionEnv(`racer-${round}-${i}`) }),
        ),
      );
      const codes = results.map((r) => r.code);
      const winners = codes.flatMap((c, i) => (c === 0 ? [i] : []));
      expect(winners, results.map((r) => r.stderr).join('\n')).toHaveLength(1);
      expect(codes.filter((c) => c === 1)).toHaveLength(N - 1);
      const w = winners[0]!;
      const holder = `racer-${round}-${w}`;
      expect(read(dir, ACTIVE)).toContain(`session: ${holder}`);
      for (const [i, r] of results.entries()) if (i !== w) expect(r.stderr).toContain(`held by session ${holder}`);
      // Exactly one lock commit, holding only the lock file.
      expect(commitCount(dir)).toBe(commits + 1);
      expect(g(dir, 'show', '--name-only', '--format=', 'HEAD').trim()).toBe(ACTIVE);
      expect(g(dir, 'status', '--porcelain', '--', 'meta')).toBe('');
      // No temporary files or mutex left behind.
      expect(readdirSync(join(dir, 'meta/context/notices/vm-active'))).toEqual([`lock-${VM}.md`]);
      expect(existsSync(join(dir, '.git', 'offhost', 'lock.mutex'))).toBe(false);
      expect(snapshot(dir, files)).toBe(before);
      expect((await offhost(['lock', 'release', VM], { cwd: dir, env: sessionEnv(holder) })).code).toBe(0);
    }
    expect(g(dir, 'fsck', '--no-progress', '--no-dangling').trim()).toBe('');
  });
});

describe('N parallel takeovers of an expired lock in one checkout', () => {
  it('exactly one archives it and wins; one -expired- archive', async () => {
    const dir = tempRepo();
    expect((await offhost(['lock', 'acquire', VM, '--reason', 'old', '--ttl', '30', '--now', '2026-05-19T08:00:00Z'], { cwd: dir, env: sessionEnv('old') })).code).toBe(0);
    const results = await Promise.all(
      Array.from({ length: N }, (_, i) =>
        offhost(['lock', 'acquire', VM, '--reason', `taker ${i}`, '--now', '2026-05-19T12:00:00Z'], { cwd: dir, env: sessionEnv(`taker-${i}`) }),
      ),
    );
    const winners = results.flatMap((r, i) => (r.code === 0 ? [i] : []));
    expect(winners, results.map((r) => r.stderr).join('\n')).toHaveLength(1);
    expect(results.filter((r) => r.code === 1)).toHaveLength(N - 1);
    expect(read(dir, ACTIVE)).toContain(`session: taker-${winners[0]}`);
    expect(readdirSync(join(dir, 'meta/context/notices/vm-active-archive'))).toEqual(['lock-s.khost1.dev-linux-koda-expired-2026-05-19.md']);
    expect(g(dir, 'status', '--porcelain')).toBe('');
  });
});

describe('across clones of one bare remote, with --push', () => {
  it('exactly one clone wins; the others exit 1 naming the holder and back out their local lock commit', async () => {
    const { bare, clones } = bareWithClones(3);
    const work = clones.map((c) => {
      const files = makeUserWork(c);
      return { files, before: snapshot(c, files) };
    });
    for (let round = 0; round < 2; round++) {
      const heads = clones.map((c) => g(c, 'rev-parse', 'HEAD').trim());
      const results = await Promise.all(
        clones.map((c, i) => offhost(['lock', 'acquire', VM, '--reason', `round ${round} clone ${i}`, '--push'], { cwd: c, env: sessionEnv(`clone-${round}-${i}`) })),
      );
      const winners = results.flatMap((r, i) => (r.code === 0 ? [i] : []));
      expect(winners, results.map((r) => `${r.code} ${r.stdout} ${r.stderr}`).join('\n')).toHaveLength(1);
      const w = winners[0]!;
      const holder = `clone-${round}-${w}`;
      expect(results[w]!.stdout).toContain('pushed');
      // The remote holds the winner's lock.
      expect(g(bare, 'show', `main:${ACTIVE}`)).toContain(`session: ${holder}`);
      for (const [i, r] of results.entries()) {
        if (i === w) continue;
        expect(r.code).toBe(1);
        expect(r.stderr).toContain(`held by session ${holder}`);
        // The loser's local lock commit (if it made one) is gone and its lock file with it.
        expect(g(clones[i]!, 'rev-parse', 'HEAD').trim()).toBe(heads[i]);
        expect(existsSync(join(clones[i]!, ACTIVE))).toBe(false);
        expect(g(clones[i]!, 'status', '--porcelain', '--', 'meta')).toBe('');
      }
      for (const [i, c] of clones.entries()) expect(snapshot(c, work[i]!.files)).toBe(work[i]!.before);
      // The winner releases with --push: the remote's lock is archived.
      const rel = await offhost(['lock', 'release', VM, '--push'], { cwd: clones[w]!, env: sessionEnv(holder) });
      expect(rel.code, rel.stderr).toBe(0);
      expect(rel.stdout).toContain('pushed');
      expect(g(bare, 'ls-tree', '--name-only', 'main', '--', ACTIVE).trim()).toBe('');
    }
    // Both rounds left an archive on the remote (audit trail), never a deletion without one.
    const archived = g(bare, 'ls-tree', '--name-only', 'main', 'meta/context/notices/vm-active-archive/').trim().split('\n');
    expect(archived).toHaveLength(2);
  });

  it('a clone that sees the remote lock refuses without committing anything', async () => {
    const { clones } = bareWithClones(2);
    const [a, b] = clones as [string, string];
    expect((await offhost(['lock', 'acquire', VM, '--reason', 'a', '--push'], { cwd: a, env: sessionEnv('sa') })).code).toBe(0);
    const head = g(b, 'rev-parse', 'HEAD');
    const r = await offhost(['lock', 'acquire', VM, '--reason', 'b', '--push'], { cwd: b, env: sessionEnv('sb') });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('held by session sa');
    expect(r.stderr).toContain('on the shared remote');
    expect(g(b, 'rev-parse', 'HEAD')).toBe(head);
  });

  it('locks.push in the configuration pushes without --push; --no-push keeps it local', async () => {
    const { bare, clones } = bareWithClones(1);
    const c = clones[0]!;
    writeFileSync(join(c, 'offhost.config.yaml'), 'locks:\n  push: true\n');
    const r = await offhost(['lock', 'acquire', VM, '--reason', 'cfg'], { cwd: c, env: sessionEnv('cfg') });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('pushed');
    expect(g(bare, 'show', `main:${ACTIVE}`)).toContain('session: cfg');
    const rel = await offhost(['lock', 'release', VM, '--no-push'], { cwd: c, env: sessionEnv('cfg') });
    expect(rel.code).toBe(0);
    expect(rel.stdout).not.toContain('pushed');
    expect(g(bare, 'show', `main:${ACTIVE}`)).toContain('session: cfg');
  });

  it('release --push archives the remote copy of the same hold even after a local-only heartbeat', async () => {
    const { bare, clones } = bareWithClones(1);
    const c = clones[0]!;
    const env = sessionEnv('hb');
    expect((await offhost(['lock', 'acquire', VM, '--reason', 'r', '--push', '--now', '2026-05-19T10:00:00Z'], { cwd: c, env })).code).toBe(0);
    expect((await offhost(['lock', 'heartbeat', VM, '--now', '2026-05-19T10:30:00Z'], { cwd: c, env })).code).toBe(0);
    const rel = await offhost(['lock', 'release', VM, '--push', '--now', '2026-05-19T10:40:00Z'], { cwd: c, env });
    expect(rel.code, rel.stderr).toBe(0);
    expect(rel.stdout).toContain('pushed');
    expect(g(bare, 'ls-tree', '--name-only', 'main', '--', ACTIVE).trim()).toBe('');
    const arch = g(bare, 'show', 'main:meta/context/notices/vm-active-archive/lock-s.khost1.dev-linux-koda-2026-05-19.md');
    expect(arch).toContain('session: hb');
    expect(arch).toContain('## Released');
  });

  it('an expired lock on the remote is archived there and taken over', async () => {
    const { bare, clones } = bareWithClones(2);
    const [a, b] = clones as [string, string];
    expect((await offhost(['lock', 'acquire', VM, '--reason', 'a', '--ttl', '30', '--push', '--now', '2026-05-19T10:00:00Z'], { cwd: a, env: sessionEnv('sa') })).code).toBe(0);
    const r = await offhost(['lock', 'acquire', VM, '--reason', 'b', '--push', '--now', '2026-05-19T14:00:00Z'], { cwd: b, env: sessionEnv('sb') });
    expect(r.code, r.stderr).toBe(0);
    expect(g(bare, 'show', `main:${ACTIVE}`)).toContain('session: sb');
    const arch = g(bare, 'show', 'main:meta/context/notices/vm-active-archive/lock-s.khost1.dev-linux-koda-expired-2026-05-19.md');
    expect(arch).toContain('session: sa');
    expect(arch).toContain('Archived as expired');
  });
});

/**
 * A pre-receive hook that, once, moves the remote branch itself just before our push lands (what a push
 * from another machine in the same instant does): the push is rejected and offhost must re-decide.
 */
function injectConcurrentPush(bare: string, path: string, content: string): void {
  const payload = join(bare, 'inject-payload');
  writeFileSync(payload, content);
  const hook = join(bare, 'hooks', 'pre-receive');
  writeFileSync(
    hook,
    `#!/bin/sh
set -e
[ -f "$GIT_DIR/injected" ] && exit 0
touch "$GIT_DIR/injected"
unset GIT_QUARANTINE_PATH GIT_OBJECT_DIRECTORY GIT_ALTERNATE_OBJECT_DIRECTORIES
tip=$(git rev-parse refs/heads/main)
export GIT_INDEX_FILE="$GIT_DIR/inject-index"
git read-tree "$tip"
blob=$(git hash-object -w "${payload}")
git update-index --add --cacheinfo 100644,"$blob","${path}"
tree=$(git write-tree)
c=$(echo "someone else, elsewhere" | git -c user.name=other -c user.email=o@x commit-tree "$tree" -p "$tip")
git update-ref refs/heads/main "$c" "$tip"
rm -f "$GIT_INDEX_FILE"
exit 0
`,
  );
  chmodSync(hook, 0o755);
}

describe('a rejected push', () => {
  it('for an unrelated change: fetch, re-decide, push again on the new tip', async () => {
    const { bare, clones } = bareWithClones(1);
    const c = clones[0]!;
    injectConcurrentPush(bare, 'docs/other.md', 'unrelated work\n');
    const files = makeUserWork(c);
    const before = snapshot(c, files);
    const r = await offhost(['lock', 'acquire', VM, '--reason', 'x', '--push'], { cwd: c, env: sessionEnv('me') });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain('rejected');
    expect(g(bare, 'show', `main:${ACTIVE}`)).toContain('session: me');
    expect(g(bare, 'show', 'main:docs/other.md')).toBe('unrelated work\n');
    expect(g(bare, 'log', '--format=%s', '-2', 'main').trim().split('\n')[0]).toBe(`offhost: lock ${VM} for me`);
    expect(snapshot(c, files)).toBe(before);
  });

  it('for a lock by another session: back out the local lock commit, exit 1 naming the holder', async () => {
    const { bare, clones } = bareWithClones(1);
    const c = clones[0]!;
    const other = `---\nvm: ${VM}\nsession: elsewhere-session\nai: codex\nstarted: ${new Date(Date.now() - 60_000).toISOString().replace(/\.\d+Z$/, 'Z')}\nreason: android emulator run, AND-7\nttl_minutes: 120\n---\n`;
    injectConcurrentPush(bare, ACTIVE, other);
    const files = makeUserWork(c);
    const before = snapshot(c, files);
    const head = g(c, 'rev-parse', 'HEAD');
    const r = await offhost(['lock', 'acquire', VM, '--reason', 'x', '--push'], { cwd: c, env: sessionEnv('me') });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('held by session elsewhere-session (codex)');
    expect(r.stderr).toContain('android emulator run, AND-7');
    expect(g(c, 'rev-parse', 'HEAD')).toBe(head);
    expect(existsSync(join(c, ACTIVE))).toBe(false);
    expect(g(c, 'ls-files', '--', 'meta')).toBe('');
    expect(snapshot(c, files)).toBe(before);
    expect(g(bare, 'show', `main:${ACTIVE}`)).toBe(other);
  });

  it('backs out by moving HEAD back only while HEAD is still the lock commit, else with a back-out commit', async () => {
    const { backOut } = await import('../../src/locks/lifecycle.js');
    const { openRepo, commitPaths } = await import('../../src/git/repo.js');
    const lockText = `---\nvm: ${VM}\nsession: me\nai: claude\nstarted: 2026-05-19T10:00:00Z\nreason: r\n---\n`;
    const mk = async () => {
      const dir = tempRepo();
      const repo = await openRepo(dir);
      const files = makeUserWork(dir);
      const before = snapshot(dir, files);
      const base = g(dir, 'rev-parse', 'HEAD').trim();
      const { mkdirSync } = await import('node:fs');
      mkdirSync(join(dir, 'meta/context/notices/vm-active'), { recursive: true });
      writeFileSync(join(dir, ACTIVE), lockText);
      const commit = await commitPaths(repo, [ACTIVE], 'lock');
      const ctx = { repo, clock: { now: () => new Date() }, session: 'me', ai: 'claude' };
      return { dir, repo, files, before, base, commit, ctx };
    };
    // HEAD is still our commit: the branch moves back, nothing else changes.
    const a = await mk();
    await backOut(a.ctx, a.commit, [ACTIVE], 'lock');
    expect(g(a.dir, 'rev-parse', 'HEAD').trim()).toBe(a.base);
    expect(existsSync(join(a.dir, ACTIVE))).toBe(false);
    expect(g(a.dir, 'status', '--porcelain', '--', 'meta')).toBe('');
    expect(snapshot(a.dir, a.files)).toBe(a.before);
    // Someone committed on top meanwhile: history is kept, a back-out commit removes only the lock.
    const b = await mk();
    writeFileSync(join(b.dir, 'late.txt'), 'late\n');
    const late = await commitPaths(b.repo, ['late.txt'], 'late work');
    await backOut(b.ctx, b.commit, [ACTIVE], 'lock');
    expect(g(b.dir, 'rev-parse', 'HEAD~1').trim()).toBe(late);
    expect(g(b.dir, 'log', '-1', '--format=%s').trim()).toBe('offhost: back out lock');
    expect(g(b.dir, 'show', '--name-only', '--format=', 'HEAD').trim()).toBe(ACTIVE);
    expect(existsSync(join(b.dir, ACTIVE))).toBe(false);
    expect(read(b.dir, 'late.txt')).toBe('late\n');
    expect(snapshot(b.dir, b.files)).toBe(b.before);
  });
});
