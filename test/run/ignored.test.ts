// Ignored files on the VM (issue 24) against a real sshd on 127.0.0.1, real rsync and real git: the run's
// record says which files the VM's copy holds outside the source set that the laptop does not have
// (collapsed to the outermost directory the laptop lacks), --clean (or the VM's `clean: true`) removes
// them before the build and keeps the declared caches, never following a symlink out of the copy. The
// assertions are on the VM's directory and on the record.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { missing, titled } from '../helpers/tools.js';
import { BIN, g } from '../locks/lifecycle-helpers.js';
import { RUN_EXIT } from '../../src/errors.js';
import { records, runOn, verdict, type Laptop, loopbackSshd } from './loopback.js';

const noSshd = missing('sshd');
const noRsync = missing('rsync');
const loop = loopbackSshd();
function mk(vm: (vmRoot: string) => Record<string, unknown>): Laptop {
  const l = loop.laptop(vm);
  return l;
}

const K = 'engines/lang/koda';
/** What the build sees of the stale outputs (one line each), then the build itself. */
const PROBE = 'for f in build/a.o build/sub/b.o stale.o; do test -e "$f" && echo "sees $f"; done; make build-safe';

function put(root: string, rel: string, text = 'x\n'): void {
  mkdirSync(dirname(join(root, rel)), { recursive: true });
  writeFileSync(join(root, rel), text);
}
function gone(p: string): boolean {
  try {
    lstatSync(p);
    return false;
  } catch {
    return true;
  }
}

/**
 * Leaves on the VM's copy what earlier builds leave, and what is built to fool a cleaner: outputs in an
 * ignored directory (one with a space and a line break in its name), a stray object file, a symlink in
 * the ignored directory to a directory outside the copy and one to a file there, a dependency cache, and
 * an ignored log the laptop has too. Returns the directory outside the copy.
 */
function staleOutputs(l: Laptop, copy: string): string {
  const outside = join(l.base, 'outside');
  put(outside, 'precious.txt', 'not the VM copy\'s\n');
  put(copy, `${K}/build/a.o`);
  put(copy, `${K}/build/sub/b.o`);
  put(copy, `${K}/build/we ird\nname.o`);
  put(copy, `${K}/stale.o`);
  symlinkSync(outside, join(copy, K, 'build', 'escape-dir'));
  symlinkSync(join(outside, 'precious.txt'), join(copy, K, 'build', 'escape-file'));
  put(copy, `${K}/node_modules/dep/index.js`, 'cache\n');
  put(copy, `${K}/app.log`, 'the VM\'s log\n');
  // The laptop has an ignored file of the same path: not VM-only.
  put(l.repo, `${K}/app.log`, 'the laptop\'s log\n');
  return outside;
}

describe.skipIf(noSshd)(titled('ignored files on the VM copy, and --clean', noSshd), () => {
  for (const mode of ['rsync', 'git'] as const) {
    const why = mode === 'rsync' ? noRsync : null;
    it.skipIf(why !== null)(titled(`${mode}: the record names the VM-only files; --clean removes them, keeps the cache, follows no symlink out`, why), async () => {
      const l = mk((vm) => ({ sync: mode, guest_dir: join(vm, 'g') }));
      const copy = join(l.vm, 'g', 'koder', 'main');
      expect((await runOn(l, ['--', 'make build-safe'])).code).toBe(0);
      const first = records(l).at(-1)!;
      expect(first.ignored).toMatchObject({ mode, listed: true, clean: false, vmOnly: { count: 0 } });
      const outside = staleOutputs(l, copy);

      // Without --clean: reported (and the build sees them), nothing removed.
      const r = await runOn(l, ['--json', '--', PROBE]);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toContain('sees build/a.o\nsees build/sub/b.o\nsees stale.o\n');
      const rec = records(l).at(-1)!;
      expect(rec.ignored!.vmOnly.count).toBe(6); // three outputs + the odd name + two symlinks; not app.log, not the cache
      expect(rec.ignored!.vmOnly.shown).toEqual([
        { path: `${K}/build/`, files: 5 },
        { path: `${K}/stale.o`, files: 1 },
      ]);
      expect(rec.ignored!.kept).toEqual({ count: 1, paths: [`${K}/node_modules`] });
      expect(rec.ignored!.removed).toBeUndefined();
      expect(r.stderr).toContain(`the VM's copy has 6 files outside the source set that the laptop does not have (ignored, or left by earlier builds), which the build may use: ${K}/build/ (5 files), ${K}/stale.o`);
      expect(existsSync(join(copy, K, 'build', 'a.o'))).toBe(true);
      expect(existsSync(join(copy, K, 'build', 'we ird\nname.o'))).toBe(true);
      // The record's text (`offhost runs show`, the archived lock) says it too.
      const shown = execFileSync(process.execPath, [BIN, 'runs', 'show', rec.id], { env: l.env, encoding: 'utf8' });
      expect(shown).toContain(`- ignored files on the VM: the VM's copy has 6 files outside the source set`);

      // --clean: removed before the build, the cache kept, the symlinks' targets untouched.
      const c = await runOn(l, ['--json', '--clean', '--', PROBE]);
      expect(c.code, c.stderr).toBe(0);
      expect(c.stdout).not.toContain('sees ');
      expect(c.stdout).toContain('built v1 in');
      for (const p of ['build/a.o', 'build/sub/b.o', 'build/we ird\nname.o', 'build/escape-dir', 'build/escape-file', 'stale.o', 'app.log', 'build']) {
        expect(gone(join(copy, K, p)), p).toBe(true);
      }
      expect(readFileSync(join(outside, 'precious.txt'), 'utf8')).toBe('not the VM copy\'s\n');
      expect(readFileSync(join(copy, K, 'node_modules', 'dep', 'index.js'), 'utf8')).toBe('cache\n');
      expect(readFileSync(join(copy, K, 'version.txt'), 'utf8')).toBe('v1\n'); // the source stays
      expect(readFileSync(join(l.repo, K, 'app.log'), 'utf8')).toBe('the laptop\'s log\n');
      const crec = records(l).at(-1)!;
      expect(crec.ignored).toMatchObject({ clean: true, vmOnly: { count: 0 }, removed: { count: 7 }, kept: { count: 1 } });
      expect(crec.ignored!.removed!.shown).toEqual([
        { path: `${K}/app.log`, files: 1 },
        { path: `${K}/build/`, files: 5 },
        { path: `${K}/stale.o`, files: 1 },
      ]);
      if (mode === 'git') {
        // The checkout is intact: its .git link survives, and the next run checks out and verifies again.
        expect(existsSync(join(copy, '.git'))).toBe(true);
        expect(g(copy, 'status', '--porcelain', '--untracked-files=all', '--ignored').split('\n').filter(Boolean)).toEqual([`?? ${K}/node_modules/dep/index.js`]);
      }
      const again = await runOn(l, ['--', PROBE]);
      expect(again.code, again.stderr).toBe(0);
      expect(records(l).at(-1)!.ignored!.vmOnly.count).toBe(0);
    });
  }

  it.skipIf(noRsync !== null)(titled('the VM\'s `clean: true` and `keep:` globs; --no-clean overrides it', noRsync), async () => {
    const l = mk((vm) => ({ sync: 'rsync', guest_dir: join(vm, 'g'), clean: true, keep: [`${K}/cache`, '*.keepme'] }));
    const copy = join(l.vm, 'g', 'koder', 'main');
    expect((await runOn(l, ['--', 'make build-safe'])).code).toBe(0);
    put(copy, `${K}/cache/big.bin`);
    put(copy, `${K}/build/out.keepme`);
    put(copy, `${K}/build/a.o`);
    put(copy, `${K}/node_modules/x.js`); // not in this VM's keep list (it replaces the defaults)
    const off = await runOn(l, ['--no-clean', '--', 'make build-safe']);
    expect(off.code, off.stderr).toBe(0);
    expect(existsSync(join(copy, K, 'build', 'a.o'))).toBe(true);
    expect(records(l).at(-1)!.ignored).toMatchObject({ clean: false, vmOnly: { count: 2 }, kept: { count: 2 } });
    const on = await runOn(l, ['--', 'make build-safe']);
    expect(on.code, on.stderr).toBe(0);
    expect(gone(join(copy, K, 'build', 'a.o'))).toBe(true);
    expect(gone(join(copy, K, 'node_modules', 'x.js'))).toBe(true);
    expect(existsSync(join(copy, K, 'cache', 'big.bin'))).toBe(true);
    expect(existsSync(join(copy, K, 'build', 'out.keepme'))).toBe(true);
    const rec = records(l).at(-1)!;
    expect(rec.ignored).toMatchObject({ clean: true, keep: [`${K}/cache`, '*.keepme'], removed: { count: 2 } });
    expect(rec.ignored!.kept.paths.sort()).toEqual([`${K}/build/out.keepme`, `${K}/cache`]);
  });

  it('a keep glob that could name something outside the copy is refused with the file and line; nothing runs', async () => {
    for (const bad of ['/etc', '../up', 'a/../../b', 'build/']) {
      const l = mk((vm) => ({ sync: 'git', guest_dir: join(vm, 'g'), keep: [bad] }));
      const r = await runOn(l, ['--json', '--', `make build-safe; touch ${l.out}/ran`]);
      expect(r.code, r.stderr).toBe(RUN_EXIT.configError);
      expect(verdict(r).detail).toMatch(/offhost\.config\.yaml:2/);
      expect(verdict(r).detail).toContain('keep glob');
      expect(existsSync(join(l.out, 'ran'))).toBe(false);
      expect(existsSync(join(l.vm, 'g'))).toBe(false);
    }
  });

  it('shared: the VM builds in the laptop\'s tree; --clean removes nothing there and says why', async () => {
    const l = mk(() => ({ sync: 'shared' }));
    put(l.repo, `${K}/build/a.o`);
    const r = await runOn(l, ['--clean', '--', 'make build-safe']);
    expect(r.code, r.stderr).toBe(0);
    expect(existsSync(join(l.repo, K, 'build', 'a.o'))).toBe(true);
    expect(records(l).at(-1)!.ignored).toMatchObject({ mode: 'shared', listed: false, clean: true, vmOnly: { count: 0 } });
    expect(r.stderr).toContain('offhost never deletes in the laptop\'s tree');
    // Asking for it in the configuration of a shared VM is refused with the file and line.
    const bad = mk(() => ({ sync: 'shared', clean: true }));
    const refused = await runOn(bad, ['--json', '--', `make build-safe; touch ${bad.out}/ran`]);
    expect(refused.code, refused.stderr).toBe(RUN_EXIT.configError);
    expect(verdict(refused).detail).toMatch(/offhost\.config\.yaml:2.*clean: true needs a VM-side copy/);
    expect(existsSync(join(bad.out, 'ran'))).toBe(false);
  });
});
