// Source state (issue 11 item 1) against a real sshd on 127.0.0.1, real rsync and real git push: an edited
// laptop tree is what the VM builds in every sync mode; a copy that differs is refused, not run; the
// record names the commit and the fingerprint that ran.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startSshd, type Sshd } from '../helpers/sshd.js';
import { missing, titled } from '../helpers/tools.js';
import { sampling, type TestFn } from '../helpers/sample.js';
import { ensureBuilt, g } from '../locks/lifecycle-helpers.js';
import { RUN_EXIT } from '../../src/errors.js';
import { kodaDir, laptop, records, runOn, verdict, type Laptop } from './loopback.js';

let s: Sshd;
const made: Laptop[] = [];
const without = missing('sshd');
// rsync is optional on a laptop: the rsync-mode tests skip, saying why, when it is missing (`.ci/run` installs it).
const noRsync = missing('rsync');
const itRsync = it.skipIf(noRsync !== null);
/** Tests that repeat what a kept test does end to end run in `npm run test:full` (test/helpers/sample.ts). */
const sample = sampling('full');
const fullRsync: TestFn = (title, fn, timeout) => sample.fullOnly(title, fn, timeout, itRsync);
beforeAll(async () => {
  if (without) return;
  ensureBuilt();
  s = await startSshd();
});
afterAll(async () => {
  for (const l of made) l.cleanup();
  await s?.stop();
});
function mk(vm: (l: { vm: string }) => Record<string, unknown>, opts?: Parameters<typeof laptop>[2]): Laptop {
  const l = laptop(s, (vmRoot) => vm({ vm: vmRoot }), opts);
  made.push(l);
  return l;
}

/** Edits the laptop tree without committing: a changed tracked file, a new untracked one, a deleted one. */
function edit(l: Laptop): void {
  const k = kodaDir(l);
  writeFileSync(join(k, 'version.txt'), 'v2-uncommitted\n');
  writeFileSync(join(k, 'new.txt'), 'untracked but not ignored\n');
  unlinkSync(join(k, 'gone.txt'));
  mkdirSync(join(k, 'build'), { recursive: true });
  writeFileSync(join(k, 'build', 'ignored.o'), 'ignored output\n');
}

const PROBE = 'make build-safe; cat new.txt; test -e gone.txt && echo gone-still-there; test -e build/ignored.o && echo ignored-copied; true';

describe.skipIf(without)(titled('sync over a real sshd', without), () => {
  itRsync(titled('rsync: the VM builds the edited tree in a guest-local directory; the next run sends only what changed', noRsync), async () => {
    const l = mk((v) => ({ sync: 'rsync', guest_dir: join(v.vm, 'src') }));
    const v1 = g(l.repo, 'rev-parse', 'HEAD').trim();
    edit(l);
    const r = await runOn(l, ['--json', '--', PROBE]);
    expect(r.code, r.stderr).toBe(0);
    const guest = join(l.vm, 'src', 'koder', 'main');
    expect(r.stdout).toBe(`built v2-uncommitted in ${guest}/engines/lang/koda\nuntracked but not ignored\n`);
    expect(readFileSync(join(guest, 'engines/lang/koda/version.txt'), 'utf8')).toBe('v2-uncommitted\n');
    expect(existsSync(join(guest, 'engines/lang/koda/build'))).toBe(false);
    const rec = records(l).at(-1)!;
    expect(rec.outcome).toBe('exit');
    expect(rec.source).toMatchObject({ commit: v1, branch: 'main', mode: 'rsync' });
    expect(rec.source!.dirty).toBe('1 modified, 1 deleted, 1 untracked');
    expect(rec.source!.fingerprint).toMatch(/^[0-9a-f]{64}$/);
    expect(rec.vm!.uname).toMatch(/^Linux \S+ \S+$/);
    expect(rec.vm!.dir).toBe(guest);
    expect(rec.source!.sent).toBeNull(); // a first copy: every file, by checksum

    // A one-file edit, then a file deleted on the laptop: the copy follows.
    writeFileSync(join(kodaDir(l), 'version.txt'), 'v3\n');
    unlinkSync(join(kodaDir(l), 'new.txt'));
    const r2 = await runOn(l, ['--', 'make build-safe; test -e new.txt && echo new-still-there; true']);
    expect(r2.code, r2.stderr).toBe(0);
    expect(r2.stdout).toBe(`built v3 in ${guest}/engines/lang/koda\n`);
    expect(records(l).at(-1)!.source!.fingerprint).not.toBe(rec.source!.fingerprint);
    expect(records(l).at(-1)!.source!.sent).toBe(1); // only version.txt; new.txt was deleted on the VM by the run
    // Nothing changed: nothing sent, still verified.
    const r3 = await runOn(l, ['--', 'make build-safe']);
    expect(r3.code, r3.stderr).toBe(0);
    expect(records(l).at(-1)!.source!.sent).toBe(0);
  });

  fullRsync('rsync: a VM copy changed behind offhost is put right before the command runs (same size, same second)', async () => {
    const l = mk((v) => ({ sync: 'rsync', guest_dir: join(v.vm, 'src') }));
    expect((await runOn(l, ['--', 'make build-safe'])).code).toBe(0);
    const guestFile = join(l.vm, 'src', 'koder', 'main', 'engines/lang/koda/version.txt');
    writeFileSync(guestFile, 'XX\n'); // same length as v1\n
    const r = await runOn(l, ['--', 'make build-safe']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('built v1 in');
    expect(r.stderr).toContain("the VM's copy differs");
  });

  it('git: HEAD plus a snapshot of the dirty tree is pushed and checked out; the user\'s index, tree and refs stay as they were', async () => {
    const l = mk((v) => ({ sync: 'git', guest_dir: join(v.vm, 'git') }));
    edit(l);
    g(l.repo, 'add', 'engines/lang/koda/version.txt'); // something staged, to prove the index is left alone
    const before = {
      status: g(l.repo, 'status', '--porcelain=v1', '--untracked-files=all'),
      cached: g(l.repo, 'diff', '--cached'),
      refs: g(l.repo, 'for-each-ref'),
      stash: g(l.repo, 'stash', 'list'),
    };
    const r = await runOn(l, ['--', PROBE]);
    expect(r.code, r.stderr).toBe(0);
    const guest = join(l.vm, 'git', 'koder', 'main');
    expect(r.stdout).toBe(`built v2-uncommitted in ${guest}/engines/lang/koda\nuntracked but not ignored\n`);
    // The user's repository is as it was (the lock store keeps its own ref).
    expect(g(l.repo, 'status', '--porcelain=v1', '--untracked-files=all')).toBe(before.status);
    expect(g(l.repo, 'diff', '--cached')).toBe(before.cached);
    const userRefs = (t: string) => t.split('\n').filter((r) => !r.includes('\trefs/offhost/')).join('\n');
    expect(userRefs(g(l.repo, 'for-each-ref'))).toBe(userRefs(before.refs)); // only the lock store's ref moved
    expect(g(l.repo, 'stash', 'list')).toBe(before.stash);
    const rec = records(l).at(-1)!;
    expect(rec.source!.mode).toBe('git');
    expect(rec.source!.ranCommit).toMatch(/^[0-9a-f]{40}$/);
    expect(rec.source!.ranCommit).not.toBe(rec.source!.commit);
    // The snapshot's parent is the laptop's HEAD, and it is in the VM's repository.
    const bare = join(l.vm, 'git', 'koder.git');
    expect(g(bare, 'rev-parse', `${rec.source!.ranCommit}^`).trim()).toBe(rec.source!.commit);
    expect(g(bare, 'rev-parse', 'refs/offhost/run/main').trim()).toBe(rec.source!.ranCommit);
  });

  it('git: an unchanged dirty tree runs the snapshot commit the last run kept; a kept commit the VM finds wrong is refused once, then made again', async () => {
    const l = mk((v) => ({ sync: 'git', guest_dir: join(v.vm, 'git') }));
    edit(l);
    await new Promise((r) => setTimeout(r, 3_200)); // the edits past the racy margin: the snapshot is kept
    const guest = join(l.vm, 'git', 'koder', 'main');
    const built = `built v2-uncommitted in ${guest}/engines/lang/koda\nuntracked but not ignored\n`;
    const first = await runOn(l, ['--', PROBE]);
    expect(first.code, first.stderr).toBe(0);
    const kept = join(l.repo, '.git', 'offhost-snapshot.json');
    const rec = JSON.parse(readFileSync(kept, 'utf8')) as { key: string; commit: string };
    expect(rec.commit).toBe(records(l).at(-1)!.source!.ranCommit);
    const again = await runOn(l, ['--', PROBE]);
    expect(again.stdout).toBe(built);
    expect(records(l).at(-1)!.source!.ranCommit).toBe(rec.commit);
    // A kept commit that is not this tree (HEAD, without the edits): the VM's check refuses it, nothing runs,
    // and the record is dropped, so the next run makes its snapshot again and runs.
    writeFileSync(kept, JSON.stringify({ key: rec.key, commit: g(l.repo, 'rev-parse', 'HEAD').trim() }));
    const lied = await runOn(l, ['--', PROBE]);
    expect(lied.code, lied.stderr).toBe(RUN_EXIT.sourceMismatch);
    expect(lied.stdout).not.toContain('built');
    expect(existsSync(kept)).toBe(false);
    const after = await runOn(l, ['--', PROBE]);
    expect(after.code, after.stderr).toBe(0);
    expect(after.stdout).toBe(built);
    expect(records(l).at(-1)!.source!.ranCommit).toBe(rec.commit);
  });

  sample.fullOnly('git: --commit REF runs that clean commit; a dirty tree is refused unless --allow-dirty', async () => {
    const l = mk((v) => ({ sync: 'git', guest_dir: join(v.vm, 'git') }));
    const v1 = g(l.repo, 'rev-parse', 'HEAD').trim();
    writeFileSync(join(kodaDir(l), 'version.txt'), 'v2\n');
    g(l.repo, 'commit', '-q', '-am', 'v2');
    writeFileSync(join(kodaDir(l), 'version.txt'), 'v3-dirty\n');
    const refused = await runOn(l, ['--json', '--commit', v1, '--', 'make build-safe']);
    expect(refused.code).toBe(RUN_EXIT.dirtyTree);
    expect(verdict(refused).outcome).toBe('dirty-tree');
    expect(refused.stdout).toBe('');
    const r = await runOn(l, ['--commit', v1, '--allow-dirty', '--', 'make build-safe']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('built v1 in');
    expect(records(l).at(-1)!.source).toMatchObject({ commit: v1, ranCommit: v1, requestedCommit: v1 });
    expect(readFileSync(join(kodaDir(l), 'version.txt'), 'utf8')).toBe('v3-dirty\n');
  });

  fullRsync('an unchanged tree sends nothing; a VM copy that vanished since is sent again in full (rsync and git)', async () => {
    for (const mode of ['rsync', 'git'] as const) {
      const l = mk((v) => ({ sync: mode, guest_dir: join(v.vm, mode) }));
      writeFileSync(join(kodaDir(l), 'version.txt'), `v2-${mode}\n`);
      expect((await runOn(l, ['--', 'make build-safe'])).code).toBe(0);
      expect((await runOn(l, ['--', 'make build-safe'])).stdout).toContain(`built v2-${mode} in`);
      rmSync(join(l.vm, mode), { recursive: true, force: true });
      const r = await runOn(l, ['--', 'make build-safe']);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stderr).toContain('sending it again');
      expect(r.stdout).toContain(`built v2-${mode} in ${join(l.vm, mode)}`);
    }
  });

  fullRsync('rsync: --commit REF copies that commit, not the working tree', async () => {
    const l = mk((v) => ({ sync: 'rsync', guest_dir: join(v.vm, 'src') }));
    const v1 = g(l.repo, 'rev-parse', 'HEAD').trim();
    writeFileSync(join(kodaDir(l), 'version.txt'), 'v2\n');
    g(l.repo, 'commit', '-q', '-am', 'v2');
    const r = await runOn(l, ['--commit', v1, '--', 'make build-safe']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('built v1 in');
  });

  it('shared: the VM sees the laptop tree at the mapped path: verified, then run; a stale copy is refused with the difference', async () => {
    const l = mk(() => ({ sync: 'shared' }));
    edit(l);
    const ok = await runOn(l, ['--', 'make build-safe']);
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stdout).toBe(`built v2-uncommitted in ${kodaDir(l)}\n`);

    // The VM's "mount" is a copy from before the edit.
    const stale = join(l.vm, 'koder');
    cpSync(l.repo, stale, { recursive: true });
    writeFileSync(join(kodaDir(l), 'version.txt'), 'v4-after-the-copy\n');
    const cfg = readFileSync(join(l.repo, 'offhost.config.yaml'), 'utf8');
    writeFileSync(join(l.repo, 'offhost.config.yaml'), `${cfg}path_map:\n  - { from: ${l.repo}, to: ${stale} }\n`);
    writeFileSync(join(stale, 'offhost.config.yaml'), readFileSync(join(l.repo, 'offhost.config.yaml')));
    const bad = await runOn(l, ['--json', '--', `make build-safe; touch ${l.out}/ran`]);
    expect(bad.code, bad.stderr).toBe(RUN_EXIT.sourceMismatch);
    const v = verdict(bad);
    expect(v.outcome).toBe('source-mismatch');
    expect(v.detail).toContain('different on the VM (1): engines/lang/koda/version.txt');
    expect(bad.stdout).toBe('');
    expect(existsSync(join(l.out, 'ran'))).toBe(false);
    expect(records(l).at(-1)!.outcome).toBe('source-mismatch');

    // A VM that does not see the tree at all: also a mismatch, never a run.
    rmSync(stale, { recursive: true, force: true });
    const none = await runOn(l, ['--json', '--', 'make build-safe']);
    expect(none.code).toBe(RUN_EXIT.sourceMismatch);
    expect(verdict(none).detail).toContain('does not see the laptop');
  });

  itRsync('a sync that fails never runs the command (sync-failed)', async () => {
    const l = mk((v) => ({ sync: 'rsync', guest_dir: join(v.vm, 'a-file', 'src') }));
    writeFileSync(join(l.vm, 'a-file'), 'not a directory\n');
    const r = await runOn(l, ['--json', '--', `make build-safe; touch ${l.out}/ran`]);
    expect(r.code, r.stderr).toBe(RUN_EXIT.syncFailed);
    expect(verdict(r).outcome).toBe('sync-failed');
    expect(existsSync(join(l.out, 'ran'))).toBe(false);
  });
});
