// End to end with REAL husky 9 and lint-staged 16 in a temp repository: `offhost init` sets it up, then real
// `git commit`s: a bad lock is rejected by the hook (non-zero exit, the finding shows), a good one goes
// through, a deletion-only change (which lint-staged never sees) is still checked, and a release by rename
// goes through. CI=true is set on purpose (husky 9 and lint-staged do not skip under CI; HUSKY=0 would).
import { spawnSync } from 'node:child_process';
import { mkdirSync, symlinkSync, writeFileSync, chmodSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { formatUtc } from '../../src/locks/schema.js';
import { ACTIVE, VM, bin, cleanEnv, git, lockText, root, tempDir, write } from './helpers.js';
import { missing, titled } from '../helpers/tools.js';

// A commit with a warning is made under script(1), a terminal (util-linux).
const noScript = missing('script');

describe('husky + lint-staged pre-commit (real)', () => {
  it.skipIf(noScript !== null)(titled('rejects a bad lock, accepts a good one, checks deletions, accepts a release', noScript), () => {
    const dir = tempDir('offhost-husky-');
    const home = tempDir('offhost-home-');
    const binDir = tempDir('offhost-bin-');
    writeFileSync(join(binDir, 'offhost'), `#!/bin/sh\nexec "${process.execPath}" "${bin}" "$@"\n`);
    chmodSync(join(binDir, 'offhost'), 0o755);
    const env = cleanEnv({ PATH: `${binDir}:${process.env.PATH ?? ''}`, HOME: home, XDG_CONFIG_HOME: join(home, '.config'), CI: 'true', npm_config_offline: 'true' });
    delete env.HUSKY;
    const run = (cmd: string, args: string[]) => spawnSync(cmd, args, { cwd: dir, env, encoding: 'utf8' });

    git(dir, 'init', '-q', '-b', 'main');
    git(dir, 'config', 'commit.gpgsign', 'false');
    symlinkSync(join(root, 'node_modules'), join(dir, 'node_modules'));
    write(dir, '.gitignore', 'node_modules\n');
    write(dir, 'package.json', `${JSON.stringify({ name: 'e2e', private: true, devDependencies: { husky: '^9.1.7', 'lint-staged': '^16.4.0' } }, null, 2)}\n`);

    const init = run(process.execPath, [bin, 'init']);
    expect(init.status, init.stderr).toBe(0);
    expect(init.stdout).toContain('husky: hooks installed (core.hooksPath .husky/_)');
    expect(git(dir, 'config', 'core.hooksPath').trim()).toBe('.husky/_');
    git(dir, 'add', '.gitignore', 'package.json', '.husky/pre-commit');
    const c0 = run('git', ['commit', '-q', '-m', 'set up offhost']);
    expect(c0.status, c0.stdout + c0.stderr).toBe(0);
    const head0 = git(dir, 'rev-parse', 'HEAD');

    const now = formatUtc(new Date(Math.floor(Date.now() / 1000) * 1000 - 60_000));
    // a bad lock: rejected by the hook, with the finding shown
    write(dir, ACTIVE, lockText({ ai: 'Claude', started: now }));
    git(dir, 'add', ACTIVE);
    const bad = run('git', ['commit', '-m', 'acquire (bad)']);
    expect(bad.status).not.toBe(0);
    const said = bad.stdout + bad.stderr;
    expect(said).toContain('lock-schema');
    expect(said).toContain('ai: Claude must be a lowercase name');
    expect(said).toContain('husky - pre-commit script failed');
    expect(git(dir, 'rev-parse', 'HEAD')).toBe(head0);

    // a good lock goes through
    write(dir, ACTIVE, lockText({ started: now }));
    git(dir, 'add', ACTIVE);
    const good = run('git', ['commit', '-m', 'acquire']);
    expect(good.status, good.stdout + good.stderr).toBe(0);
    const head1 = git(dir, 'rev-parse', 'HEAD');
    expect(head1).not.toBe(head0);

    // deleting the lock (no archive): lint-staged does not see deletions, the hook's own check does
    git(dir, 'rm', '-q', ACTIVE);
    const del = run('git', ['commit', '-m', 'delete lock']);
    expect(del.status).not.toBe(0);
    expect(del.stdout + del.stderr).toContain('lock-deleted-unarchived');
    expect(git(dir, 'rev-parse', 'HEAD')).toBe(head1);

    // release = rename to the archive: goes through
    git(dir, 'reset', '-q', 'HEAD', '--', ACTIVE);
    git(dir, 'checkout', '--', ACTIVE);
    const arch = `meta/context/notices/vm-active-archive/lock-${VM}-${now.slice(0, 10)}.md`;
    mkdirSync(join(dir, 'meta/context/notices/vm-active-archive'), { recursive: true });
    git(dir, 'mv', ACTIVE, arch);
    const rel = run('git', ['commit', '-m', 'release']);
    expect(rel.status, rel.stdout + rel.stderr).toBe(0);
    expect(git(dir, 'ls-files').split('\n')).toContain(arch);

    // a lock committed already expired: an error, the commit is refused (issue 14)
    const old = formatUtc(new Date(Math.floor(Date.now() / 1000) * 1000 - 5 * 3600_000));
    write(dir, ACTIVE, lockText({ started: old }));
    git(dir, 'add', ACTIVE);
    const expired = run('git', ['commit', '-m', 'acquire (expired)']);
    expect(expired.status).not.toBe(0);
    expect(expired.stdout + expired.stderr).toContain('lock-expired');
    git(dir, 'rm', '-q', '--cached', ACTIVE);

    // warnings of a passing check reach the person at the terminal, although lint-staged hides the output
    // of tasks that succeed: a real pty (script(1)) stands for the terminal
    write(dir, ACTIVE, lockText({ started: now }).replace('---\n', '---\ncolour: blue\n'));
    git(dir, 'add', ACTIVE);
    const warn = run('script', ['-qec', 'git commit -q -m "acquire (with a warning)"', '/dev/null']);
    expect(warn.status, warn.stdout + warn.stderr).toBe(0);
    expect(warn.stdout).toContain('lock-unknown-field');
    // shown once: lint-staged --verbose prints it, and OFFHOST_NO_TTY=1 on init's hook line keeps lint from
    // writing it to the terminal a second time
    expect(warn.stdout.match(/lock-unknown-field/g)).toHaveLength(1);
    expect(git(dir, 'log', '-1', '--format=%s').trim()).toBe('acquire (with a warning)');
  });
});
