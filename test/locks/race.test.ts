// Concurrent acquires as real processes: in one checkout, and across clones of one bare remote (--push).
// The lock history is refs/offhost/locks (issue 10): these tests read it where they read the branch.
import { beforeAll, describe, expect, it } from 'vitest';
import { chmodSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ACTIVE, REF, VM, archives, bareWithClones, ensureBuilt, g, makeUserWork, offhost, read, sessionEnv, snapshot, strayPrivateFiles, tempRepo, userStoreOf } from './lifecycle-helpers.js';
import { sampling } from '../helpers/sample.js';

/** Tests that repeat what a kept test does end to end run in `npm run test:full` (test/helpers/sample.ts). */
const sample = sampling('full');

beforeAll(() => ensureBuilt());

const N = 8;
/** Rounds of each race: the default run races once, the full run three times. */
const ROUNDS = sample.full ? 3 : 1;

function commitCount(dir: string, rev = REF): number {
  return Number(g(dir, 'rev-list', '--count', rev).trim());
}

describe("this clone's copy of the lock ref, with many processes writing through the user store", () => {
  it('ends at the store\'s tip: a process that wrote earlier but follows later does not move it back', async () => {
    const dir = tempRepo();
    const vms = Array.from({ length: 4 }, (_, i) => `s.khost1.dev-linux-race${i}`);
    for (let round = 0; round < ROUNDS; round++) {
      // Acquires and releases of different VMs at once: each writes the store, then moves this clone's copy.
      await Promise.all(
        vms.map(async (vm, i) => {
          const env = sessionEnv(`follow-${round}-${i}`);
          expect((await offhost(['lock', 'acquire', vm, '--reason', 'race'], { cwd: dir, env })).code).toBe(0);
          expect((await offhost(['lock', 'release', vm], { cwd: dir, env })).code).toBe(0);
        }),
      );
      const storeTip = g(userStoreOf(dir), 'rev-parse', REF).trim();
      expect(g(dir, 'rev-parse', REF).trim(), `round ${round}`).toBe(storeTip);
    }
  });
});

describe('N parallel acquires in one checkout', () => {
  it('exactly one wins, every round', async () => {
    const dir = tempRepo();
    const files = makeUserWork(dir);
    const before = snapshot(dir, files);
    const head = g(dir, 'rev-parse', 'HEAD');
    for (let round = 0; round < ROUNDS; round++) {
      const commits = round === 0 ? 0 : commitCount(dir);
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
      // Exactly one lock commit on the ref, holding only the lock file; the branch did not move.
      expect(commitCount(dir)).toBe(commits + 1);
      expect(g(dir, 'show', '--name-only', '--format=', REF).trim()).toBe(ACTIVE);
      expect(g(dir, 'rev-parse', 'HEAD')).toBe(head);
      expect(g(dir, 'status', '--porcelain', '--', 'meta')).toBe('');
      // No temporary files left behind: the view holds the lock alone, no private index remains.
      expect(readdirSync(join(dir, 'meta/context/notices/vm-active'))).toEqual([`lock-${VM}.md`]);
      expect(strayPrivateFiles(dir)).toEqual([]);
      expect(snapshot(dir, files)).toBe(before);
      expect((await offhost(['lock', 'release', VM], { cwd: dir, env: sessionEnv(holder) })).code).toBe(0);
    }
    expect(g(dir, 'fsck', '--no-progress', '--no-dangling').trim()).toBe('');
  }, 240_000);
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
    expect(results.filter((r) => r.code === 1), results.map((r) => `${r.code} ${r.stderr}`).join("\n")).toHaveLength(N - 1);
    expect(read(dir, ACTIVE)).toContain(`session: taker-${winners[0]}`);
    expect(archives(dir)).toEqual(['lock-s.khost1.dev-linux-koda-expired-2026-05-19.md']);
    expect(g(dir, 'status', '--porcelain')).toBe('');
  }, 180_000);
});

describe('across clones of one bare remote, with --push', () => {
  it('exactly one clone wins; the others exit 1 naming the holder and change nothing', async () => {
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
      // The remote holds the winner's lock, and the winner's ref is the very commit it pushed.
      expect(read(bare, ACTIVE)).toContain(`session: ${holder}`);
      expect(g(clones[w]!, 'rev-parse', REF)).toBe(g(bare, 'rev-parse', REF));
      for (const [i, r] of results.entries()) {
        if (i === w) continue;
        expect(r.code).toBe(1);
        expect(r.stderr).toContain(`held by session ${holder}`);
        // The loser's branch never moved and it shows no lock of its own.
        expect(g(clones[i]!, 'rev-parse', 'HEAD').trim()).toBe(heads[i]);
        // Its view shows the winner's lock, never its own.
        expect(readFileSync(join(clones[i]!, ACTIVE), 'utf8')).toContain(`session: ${holder}`);
        expect(g(clones[i]!, 'status', '--porcelain', '--', 'meta')).toBe('');
      }
      for (const [i, c] of clones.entries()) expect(snapshot(c, work[i]!.files)).toBe(work[i]!.before);
      // The winner releases with --push: the remote's lock is archived.
      const rel = await offhost(['lock', 'release', VM, '--push'], { cwd: clones[w]!, env: sessionEnv(holder) });
      expect(rel.code, rel.stderr).toBe(0);
      expect(rel.stdout).toContain('pushed');
      expect(g(bare, 'ls-tree', '--name-only', REF, '--', ACTIVE).trim()).toBe('');
    }
    // Both rounds left an archive on the remote (audit trail), never a deletion without one.
    expect(archives(bare)).toHaveLength(2);
    expect(g(bare, 'log', '--format=%s', 'main').trim()).toBe('init');
  }, 240_000);

  sample.fullOnly('a clone that sees the remote lock refuses without committing anything', async () => {
    const { bare, clones } = bareWithClones(2);
    const [a, b] = clones as [string, string];
    expect((await offhost(['lock', 'acquire', VM, '--reason', 'a', '--push'], { cwd: a, env: sessionEnv('sa') })).code).toBe(0);
    const head = g(b, 'rev-parse', 'HEAD');
    const r = await offhost(['lock', 'acquire', VM, '--reason', 'b', '--push'], { cwd: b, env: sessionEnv('sb') });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('held by session sa');
    expect(r.stderr).toContain('on the shared remote');
    expect(g(b, 'rev-parse', 'HEAD')).toBe(head);
    expect(g(b, 'rev-parse', REF)).toBe(g(bare, 'rev-parse', REF));
  });

  sample.fullOnly('locks.push in the configuration pushes without --push; --no-push is then refused (the locks are shared there)', async () => {
    const { bare, clones } = bareWithClones(1);
    const c = clones[0]!;
    writeFileSync(join(c, 'offhost.config.yaml'), 'locks:\n  push: true\n');
    const r = await offhost(['lock', 'acquire', VM, '--reason', 'cfg'], { cwd: c, env: sessionEnv('cfg') });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('pushed');
    expect(read(bare, ACTIVE)).toContain('session: cfg');
    const rel = await offhost(['lock', 'release', VM, '--no-push'], { cwd: c, env: sessionEnv('cfg') });
    expect(rel.code).toBe(2);
    expect(rel.stderr).toContain('--no-push would take a lock no other clone sees');
    expect(read(bare, ACTIVE)).toContain('session: cfg');
    // Without the configuration, a plain call still goes to the remote: the mode is the repository's.
    writeFileSync(join(c, 'offhost.config.yaml'), 'locks:\n  push: false\n');
    const plain = await offhost(['lock', 'release', VM], { cwd: c, env: sessionEnv('cfg') });
    expect(plain.code, plain.stderr).toBe(0);
    expect(plain.stdout).toContain('pushed');
  });

  it('release --push archives the remote copy of the hold; a heartbeat without --push goes to the remote too', async () => {
    const { bare, clones } = bareWithClones(1);
    const c = clones[0]!;
    const env = sessionEnv('hb');
    expect((await offhost(['lock', 'acquire', VM, '--reason', 'r', '--push', '--now', '2026-05-19T10:00:00Z'], { cwd: c, env })).code).toBe(0);
    expect((await offhost(['lock', 'heartbeat', VM, '--now', '2026-05-19T10:30:00Z'], { cwd: c, env })).code).toBe(0);
    const rel = await offhost(['lock', 'release', VM, '--push', '--now', '2026-05-19T10:40:00Z'], { cwd: c, env });
    expect(rel.code, rel.stderr).toBe(0);
    expect(rel.stdout).toContain('pushed');
    expect(g(bare, 'ls-tree', '--name-only', REF, '--', ACTIVE).trim()).toBe('');
    const arch = read(bare, 'meta/context/notices/vm-active-archive/lock-s.khost1.dev-linux-koda-2026-05-19.md');
    expect(arch).toContain('session: hb');
    expect(arch).toContain('## Released');
    expect(arch).toContain('heartbeat: 2026-05-19T10:30:00Z');
  });

  sample.fullOnly('an expired lock on the remote is archived there and taken over', async () => {
    const { bare, clones } = bareWithClones(2);
    const [a, b] = clones as [string, string];
    expect((await offhost(['lock', 'acquire', VM, '--reason', 'a', '--ttl', '30', '--push', '--now', '2026-05-19T10:00:00Z'], { cwd: a, env: sessionEnv('sa') })).code).toBe(0);
    const r = await offhost(['lock', 'acquire', VM, '--reason', 'b', '--push', '--now', '2026-05-19T14:00:00Z'], { cwd: b, env: sessionEnv('sb') });
    expect(r.code, r.stderr).toBe(0);
    expect(read(bare, ACTIVE)).toContain('session: sb');
    const arch = read(bare, 'meta/context/notices/vm-active-archive/lock-s.khost1.dev-linux-koda-expired-2026-05-19.md');
    expect(arch).toContain('session: sa');
    expect(arch).toContain('Archived as expired');
  });
});

/**
 * A pre-receive hook that, once, moves the remote's lock ref itself just before our push lands (what a push
 * from another machine in the same instant does): the lease fails and offhost must re-decide.
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
tip=$(git rev-parse -q --verify ${REF} || true)
export GIT_INDEX_FILE="$GIT_DIR/inject-index"
if [ -n "$tip" ]; then git read-tree "$tip"; else git read-tree --empty; fi
blob=$(git hash-object -w "${payload}")
git update-index --add --cacheinfo 100644,"$blob","${path}"
tree=$(git write-tree)
c=$(echo "someone else, elsewhere" | git -c user.name=other -c user.email=o@x commit-tree "$tree" \${tip:+-p "$tip"})
git update-ref ${REF} "$c"
rm -f "$GIT_INDEX_FILE"
exit 0
`,
  );
  chmodSync(hook, 0o755);
}

describe('a lost lease', () => {
  it('for an unrelated change: fetch, re-decide, push again on the new tip', async () => {
    const { bare, clones } = bareWithClones(1);
    const c = clones[0]!;
    injectConcurrentPush(bare, 'meta/context/notices/active/lock-other-part.md', `---\ncomponent: other-part\nsession: x\nai: codex\nstarted: ${new Date().toISOString().replace(/\.\d+Z$/, 'Z')}\nreason: r\n---\n`);
    const files = makeUserWork(c);
    const before = snapshot(c, files);
    const r = await offhost(['lock', 'acquire', VM, '--reason', 'x', '--push'], { cwd: c, env: sessionEnv('me') });
    expect(r.code, r.stderr).toBe(0);
    expect(read(bare, ACTIVE)).toContain('session: me');
    expect(read(bare, 'meta/context/notices/active/lock-other-part.md')).toContain('component: other-part');
    expect(g(bare, 'log', '--format=%s', '-2', REF).trim().split('\n')).toEqual([`offhost: lock ${VM} (me)`, 'someone else, elsewhere']);
    expect(g(c, 'rev-parse', REF)).toBe(g(bare, 'rev-parse', REF));
    expect(snapshot(c, files)).toBe(before);
  });

  sample.fullOnly('for a lock by another session: exit 1 naming the holder, nothing changed here or there', async () => {
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
    expect(g(c, 'ls-files', '--', 'meta')).toBe('');
    expect(snapshot(c, files)).toBe(before);
    expect(read(bare, ACTIVE)).toBe(other);
  });
});
