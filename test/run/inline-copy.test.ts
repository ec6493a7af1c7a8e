// sync: rsync, a few files changed since the copy the VM verified: they go inside the run's own session
// (src/routes/tar.ts), not by an rsync session of their own. Against a real sshd on loopback with a
// recording ssh: no `rsync --server` after the first copy, and the VM's copy is the laptop's tree exactly
// (an edit, a new file in a new folder, a mode change, a symlink, a long and a non-ASCII name, a deletion),
// which the run's own verification also says.
import { describe, expect, it } from 'vitest';
import { chmodSync, lstatSync, mkdirSync, readFileSync, readlinkSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { missing } from '../helpers/tools.js';
import { kodaDir, loopbackSshd, recordSsh, records, runOn, verdict } from './loopback.js';

const loop = loopbackSshd();
const skip = missing('sshd') ?? missing('rsync');

describe.skipIf(skip !== null)('changed files in the run\'s own session (sync: rsync)', () => {
  it('after the first copy, edits reach the VM without an rsync session, and the copy is the laptop\'s tree', async () => {
    const l = loop.laptop((vm) => ({ sync: 'rsync', guest_dir: join(vm, 'src') }));
    const calls = recordSsh(l);
    const first = await runOn(l, ['--json', '--', 'bash -c "cat version.txt"']);
    expect(verdict(first).outcome, first.stderr).toBe('exit');
    expect(calls().some((c) => c.includes('rsync --server'))).toBe(true); // the first copy is rsync's
    const copy = join(l.vm, 'src', 'koder', 'main');
    const koda = kodaDir(l);
    // The edits: content, a new file in a new folder, a mode, a symlink, a long path, a non-ASCII name, a deletion.
    writeFileSync(join(koda, 'version.txt'), 'v2\n');
    const long = join(koda, `${'folder-with-a-long-name/'.repeat(5)}file.txt`);
    mkdirSync(dirname(long), { recursive: true });
    writeFileSync(long, 'long\n');
    writeFileSync(join(koda, 'ünïcode name.txt'), 'u\n');
    writeFileSync(join(l.repo, 'run.sh'), '#!/bin/sh\necho ran\n');
    chmodSync(join(l.repo, 'run.sh'), 0o755);
    symlinkSync('version.txt', join(koda, 'current'));
    rmSync(join(koda, 'gone.txt'));
    const before = calls().length;
    const second = await runOn(l, ['--json', '--', 'bash -c "cat version.txt current; ./../../../run.sh"']);
    expect(verdict(second).outcome, second.stderr).toBe('exit');
    expect(second.stdout).toBe('v2\nv2\nran\n');
    expect(calls().slice(before).some((c) => c.includes('rsync --server'))).toBe(false);
    const rec = records(l).at(-1)!;
    expect(rec.source!.sentInSession).toBe(true);
    expect(rec.source!.sent).toBe(5);
    // The copy, file by file.
    expect(readFileSync(join(copy, 'engines/lang/koda/version.txt'), 'utf8')).toBe('v2\n');
    expect(readFileSync(join(copy, 'engines/lang/koda', `${'folder-with-a-long-name/'.repeat(5)}file.txt`), 'utf8')).toBe('long\n');
    expect(readFileSync(join(copy, 'engines/lang/koda/ünïcode name.txt'), 'utf8')).toBe('u\n');
    expect(lstatSync(join(copy, 'run.sh')).mode & 0o111).not.toBe(0);
    expect(readlinkSync(join(copy, 'engines/lang/koda/current'))).toBe('version.txt');
    expect(() => lstatSync(join(copy, 'engines/lang/koda/gone.txt'))).toThrow();
  });

  it('a copy changed on the VM behind offhost\'s back is still caught: the edit goes inline, the rest is sent again, then it runs', async () => {
    const l = loop.laptop((vm) => ({ sync: 'rsync', guest_dir: join(vm, 'src') }));
    expect(verdict(await runOn(l, ['--json', '--', 'bash -c true'])).outcome).toBe('exit');
    const copy = join(l.vm, 'src', 'koder', 'main');
    writeFileSync(join(copy, 'README.md'), 'changed on the VM\n');
    writeFileSync(join(kodaDir(l), 'version.txt'), 'v3\n');
    const r = await runOn(l, ['--json', '--', 'bash -c "cat version.txt; cat ../../../README.md"']);
    expect(verdict(r).outcome, r.stderr).toBe('exit');
    expect(r.stdout).toBe('v3\nmonorepo\n');
    expect(r.stderr).toContain("the VM's copy differs");
  });

  it('sync: git: an edit after the verified commit goes as a pack in the session (no receive-pack), and a VM that lost the repository gets a push', async () => {
    const l = loop.laptop((vm) => ({ sync: 'git', guest_dir: join(vm, 'git') }));
    const calls = recordSsh(l);
    expect(verdict(await runOn(l, ['--json', '--', 'bash -c "cat version.txt"'])).outcome).toBe('exit');
    expect(calls().some((c) => c.includes('receive-pack'))).toBe(true);
    writeFileSync(join(kodaDir(l), 'version.txt'), 'v4\n');
    let before = calls().length;
    const r = await runOn(l, ['--json', '--', 'bash -c "cat version.txt"']);
    expect(verdict(r).outcome, r.stderr).toBe('exit');
    expect(r.stdout).toBe('v4\n');
    expect(calls().slice(before).some((c) => c.includes('receive-pack'))).toBe(false);
    expect(records(l).at(-1)!.source!.sentInSession).toBe(true);
    // The VM's copies are gone (a wiped /var/tmp): the pack cannot land, offhost pushes instead, once.
    rmSync(join(l.vm, 'git'), { recursive: true, force: true });
    writeFileSync(join(kodaDir(l), 'version.txt'), 'v5\n');
    before = calls().length;
    const again = await runOn(l, ['--json', '--', 'bash -c "cat version.txt"']);
    expect(verdict(again).outcome, again.stderr).toBe('exit');
    expect(again.stdout).toBe('v5\n');
    expect(calls().slice(before).some((c) => c.includes('receive-pack'))).toBe(true);
    expect(records(l).at(-1)!.source!.sentInSession).toBeUndefined();
  });
});
