// `offhost run` from a worktree (issue 20), against a real sshd on 127.0.0.1 with real rsync: a worktree
// beside the canonical checkout builds its own tree on the VM (its own edits, in a directory of its own),
// the canonical checkout still builds its own, and a VM that only sees the canonical checkout through a
// shared mount is refused before any lock is taken, with the fix.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startSshd, sshdAvailable, type Sshd } from '../helpers/sshd.js';
import { ensureBuilt, g } from '../locks/lifecycle-helpers.js';
import { RUN_EXIT } from '../../src/errors.js';
import { LOOP_ACTIVE, kodaDir, laptop, records, runOn, type Laptop } from './loopback.js';

let s: Sshd;
const made: Laptop[] = [];
beforeAll(async () => {
  ensureBuilt();
  s = await startSshd();
});
afterAll(async () => {
  for (const l of made) l.cleanup();
  await s?.stop();
});

describe.skipIf(!sshdAvailable())('offhost run from a worktree beside the checkout', () => {
  it('sync: rsync runs that worktree\'s exact tree, in a VM directory of its own', async () => {
    const l = laptop(s, (vm) => ({ sync: 'rsync', guest_dir: join(vm, 'src') }));
    made.push(l);
    const feature = join(l.home, 'dev', 'koder-feature');
    g(l.repo, 'worktree', 'add', '-q', '-b', 'feature', feature);
    // An uncommitted edit in the worktree only: what the VM builds must be this.
    writeFileSync(join(feature, 'engines', 'lang', 'koda', 'version.txt'), 'v-feature\n');
    const r = await runOn(l, ['--', 'make build-safe'], { cwd: join(feature, 'engines', 'lang', 'koda') });
    expect(r.code, r.stderr).toBe(0);
    const guest = join(l.vm, 'src', 'koder-feature', 'feature');
    expect(r.stdout).toBe(`built v-feature in ${guest}/engines/lang/koda\n`);
    expect(records(l).at(-1)!.source).toMatchObject({ repo: feature, branch: 'feature', mode: 'rsync', dirty: '1 modified' });
    // The canonical checkout, next: its own tree (v1), not the worktree's.
    const c = await runOn(l, ['--', 'make build-safe'], { cwd: kodaDir(l) });
    expect(c.code, c.stderr).toBe(0);
    expect(c.stdout).toBe(`built v1 in ${join(l.vm, 'src', 'koder', 'main')}/engines/lang/koda\n`);
  }, 480_000);

  it('sync: shared with a mount of the canonical checkout refuses the worktree with the fix, before taking the lock', async () => {
    const l = laptop(s, (vm) => ({ sync: 'shared', mount: { source: '~/dev/koder', path: join(vm, 'koder'), readonly: true } }));
    made.push(l);
    const feature = join(l.home, 'dev', 'koder-feature');
    g(l.repo, 'worktree', 'add', '-q', '-b', 'feature', feature);
    const before = g(l.repo, 'for-each-ref', 'refs/offhost/locks');
    const r = await runOn(l, ['--', 'make build-safe'], { cwd: join(feature, 'engines', 'lang', 'koda') });
    expect(r.code, r.stderr).toBe(RUN_EXIT.sourceMismatch);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain(`cannot see this checkout: its shared mount shows ${l.repo}`);
    expect(r.stderr).toContain('sync: rsync');
    // No lock was taken (nothing on the lock ref, no lock file in either checkout).
    expect(g(l.repo, 'for-each-ref', 'refs/offhost/locks')).toBe(before);
    expect(existsSync(join(feature, LOOP_ACTIVE))).toBe(false);
    expect(existsSync(join(l.repo, LOOP_ACTIVE))).toBe(false);
  }, 300_000);
});
