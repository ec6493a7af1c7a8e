// A repository on a full, then a read-only, file system (a real tmpfs mount): every lock command answers in
// bounded time with a clear error naming the cause and what to do, changes nothing, and leaves no temporary
// file. Needs mount(8) (root in a container, as in CI here); elsewhere the test says why it is skipped.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ACTIVE, REF, VM, cleanEnv, configure, cliInProcess, ensureBuilt, g, offhost, sessionEnv } from './lifecycle-helpers.js';

// Lock commands' decisions and writes, not the process boundary: the CLI runs in this process.
cliInProcess();

const mnt = mkdtempSync(join(tmpdir(), 'offhost-fs-'));
const mounted = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=4m', 'tmpfs', mnt]).status === 0;

beforeAll(() => ensureBuilt());
afterAll(() => {
  if (mounted) spawnSync('umount', [mnt]);
  rmSync(mnt, { recursive: true, force: true });
});

describe.skipIf(!mounted)('ENOSPC and EROFS (real tmpfs)', () => {
  it('a full disk, then a read-only one: exit 2 saying so, nothing changed, no temporary files', async () => {
    const dir = join(mnt, 'repo');
    // The lock store every clone of this machine goes through (the user store) on the same file system.
    const state = join(mnt, 'state');
    const env = { ...sessionEnv('a'), OFFHOST_STATE_DIR: state };
    execFileSync('git', ['init', '-q', '-b', 'main', dir], { env: cleanEnv() });
    configure(dir);
    writeFileSync(join(dir, 'a.txt'), 'a\n');
    g(dir, 'add', 'a.txt');
    g(dir, 'commit', '-q', '-m', 'init');
    expect((await offhost(['lock', 'acquire', VM, '--reason', 'x'], { cwd: dir, env })).code).toBe(0);
    const tip = g(dir, 'rev-parse', REF);
    // Fill the file system.
    spawnSync('dd', ['if=/dev/zero', `of=${join(mnt, 'fill')}`, 'bs=64k'], { stdio: 'ignore' });
    const full = await offhost(['lock', 'release', VM], { cwd: dir, env });
    expect(full.code).toBe(2);
    expect(full.stderr).toMatch(/disk holding .* is full/);
    expect(full.stderr).toContain(join(state, 'lock-stores'));
    expect(full.stderr).toContain('nothing was changed');
    expect(full.stderr).not.toMatch(/\n\s+at /); // no stack trace
    expect(g(dir, 'rev-parse', REF)).toBe(tip);
    for (const st of readdirSync(join(state, 'lock-stores'))) {
      const store = join(state, 'lock-stores', st);
      // git's private index (when git builds the commit) and offhost's own half-written objects: none left.
      if (existsSync(join(store, 'offhost', 'tmp'))) expect(readdirSync(join(store, 'offhost', 'tmp'))).toEqual([]);
      const objects = join(store, 'objects');
      const temps = readdirSync(objects).filter((d) => /^[0-9a-f]{2}$/.test(d)).flatMap((d) => readdirSync(join(objects, d)).filter((f) => f.startsWith('tmp_')));
      expect(temps).toEqual([]);
    }
    rmSync(join(mnt, 'fill'));
    // Read-only.
    expect(spawnSync('mount', ['-o', 'remount,ro', mnt]).status).toBe(0);
    try {
      const ro = await offhost(['lock', 'release', VM], { cwd: dir, env });
      expect(ro.code).toBe(2);
      expect(ro.stderr).toMatch(/read-only/i);
      expect(ro.stderr).not.toContain('ENOENT');
      expect(ro.stderr).toContain('nothing was changed');
      const st = await offhost(['lock', 'status'], { cwd: dir, env });
      expect(st.code).toBe(0);
      expect(st.stdout).toContain(VM);
      expect(g(dir, 'rev-parse', REF)).toBe(tip);
    } finally {
      spawnSync('mount', ['-o', 'remount,rw', mnt]);
    }
    expect(readdirSync(join(dir, 'meta/context/notices/vm-active'))).toEqual([`lock-${VM}.md`]);
    expect((await offhost(['lock', 'release', VM], { cwd: dir, env })).code).toBe(0);
    expect(g(dir, 'ls-tree', '--name-only', REF, '--', ACTIVE).trim()).toBe('');
  });
});
