// A new user's whole path, in one test, with real parts only: `npm pack` of this checkout, `npm i -D` of the
// tarball into a fresh git repository (offline: the tarball needs nothing from the registry, and installs
// offhost alone), `npx offhost init` (real husky 9 + lint-staged 16), a guarded commit (a bad lock refused,
// a warning shown on a commit that goes through), an agent hook call from the settings init wrote, a CI
// run (`offhost ci`), the exec-time shims for Claude Code, then `offhost uninstall` and `npm uninstall offhost`,
// after which commits work again and only what the user wrote is left (in the repository and in HOME).
// husky and lint-staged are installed by npm from this checkout's node_modules (as local folders): the point
// here is offhost's own package, and the test must not need the network.
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, readdirSync, realpathSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { formatUtc } from '../../src/locks/schema.js';

const ROOT = join(import.meta.dirname, '..', '..');
const VM = 's.khost1.dev-linux-koda';
const ACTIVE = `meta/context/notices/vm-active/lock-${VM}.md`;

function lock(started: string, extra = ''): string {
  return ['---', `vm: ${VM}`, 'session: claude-a', 'ai: claude', `started: ${started}`, 'reason: e2e of the koda engine', ...(extra ? [extra] : []), '---', '', 'notes', ''].join('\n');
}

describe('a new user installs offhost into their repository and removes it again', () => {
  it('pack, install, init, guarded commit, agent hook, ci, uninstall', () => {
    const tmp = realpathSync(mkdtempSync(join(tmpdir(), 'offhost-newuser-')));
    const home = join(tmp, 'home');
    const repo = join(home, 'dev', 'koder');
    const npmCache = join(tmp, 'npm-cache');
    mkdirSync(repo, { recursive: true });
    const env: NodeJS.ProcessEnv = {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: home,
      TMPDIR: tmp,
      LANG: 'C.UTF-8',
      // husky 9 and lint-staged do not skip under CI (HUSKY=0 would): CI=true keeps npm quiet.
      CI: 'true',
      npm_config_cache: npmCache,
      npm_config_offline: 'true',
      npm_config_audit: 'false',
      npm_config_fund: 'false',
      npm_config_update_notifier: 'false',
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_AUTHOR_NAME: 'New User',
      GIT_AUTHOR_EMAIL: 'new@example.com',
      GIT_COMMITTER_NAME: 'New User',
      GIT_COMMITTER_EMAIL: 'new@example.com',
      OFFHOST_ROLE: 'laptop',
    };
    const run = (cmd: string, args: string[], opts: { input?: string; cwd?: string } = {}) =>
      spawnSync(cmd, args, { cwd: opts.cwd ?? repo, env, encoding: 'utf8', input: opts.input ?? '', timeout: 120_000 });
    const ok = (cmd: string, args: string[], opts: { input?: string; cwd?: string } = {}) => {
      const r = run(cmd, args, opts);
      expect(r.status, `${cmd} ${args.join(' ')}\n${r.stdout}\n${r.stderr}`).toBe(0);
      return r;
    };
    const git = (...args: string[]) => execFileSync('git', args, { cwd: repo, env, encoding: 'utf8' }).trim();

    // 1. The package as npm would publish it.
    // --ignore-scripts: prepare would rebuild this checkout's dist/, which other tests are running (npm test built it).
    const packed = ok('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', tmp, ROOT], { cwd: tmp });
    const tarball = join(tmp, (JSON.parse(packed.stdout) as { filename: string }[])[0]!.filename);

    // 2. A fresh repository, and `npm i -D` of the tarball: offhost alone, nothing from the registry.
    git('init', '-q', '-b', 'main');
    git('config', 'commit.gpgsign', 'false');
    writeFileSync(join(repo, 'package.json'), `${JSON.stringify({ name: 'koder', version: '1.0.0', private: true }, null, 2)}\n`);
    writeFileSync(join(repo, '.gitignore'), 'node_modules\n');
    ok('npm', ['install', '--save-dev', tarball]);
    expect(readdirSync(join(repo, 'node_modules')).filter((n) => !n.startsWith('.')).sort()).toEqual(['offhost']);
    const lockfile = JSON.parse(readFileSync(join(repo, 'package-lock.json'), 'utf8')) as { packages: Record<string, unknown> };
    expect(Object.keys(lockfile.packages).sort()).toEqual(['', 'node_modules/offhost']);
    const offhost = join(repo, 'node_modules', '.bin', 'offhost');
    expect(ok(offhost, ['--version']).stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);
    // Every command's bundle loads with no other package installed (a missing module would fail here)...
    for (const c of ['check', 'explain', 'rules', 'lock', 'run', 'lint', 'init', 'uninstall', 'hook', 'shell', 'scan', 'ci']) ok(offhost, [c, '--help']);
    // ...and the config loader (dist/config-loader.cjs: yaml, zod, picomatch) with a config to read.
    writeFileSync(join(repo, 'offhost.config.yaml'), 'disable: [qemu-local-vm]\n');
    expect(ok(offhost, ['rules', 'list']).stdout).toContain('offhost.config.yaml');
    expect(ok(offhost, ['check', 'qemu-system-aarch64 -hda disk.img']).stdout).toMatch(/^allow/);
    expect(run(offhost, ['scan', '--format', 'json']).stdout.trim()).toBe('[]');
    expect(ok(offhost, ['lock', 'status']).status).toBe(0);

    // 3. husky and lint-staged, installed by npm from this checkout's copies (offline), then init.
    ok('npm', ['install', '--save-dev', join(ROOT, 'node_modules', 'husky'), join(ROOT, 'node_modules', 'lint-staged')]);
    const init = ok(offhost, ['init']);
    expect(init.stdout).toContain('.husky/pre-commit: created');
    expect(init.stdout).toContain('husky: hooks installed');
    expect(git('config', 'core.hooksPath')).toBe('.husky/_');
    git('add', '.gitignore', 'package.json', 'package-lock.json', '.husky/pre-commit', 'offhost.config.yaml');
    ok('git', ['commit', '-q', '-m', 'chore: guard the laptop with offhost']);
    const base = git('rev-parse', 'HEAD');

    // 4. Guarded commits: a bad lock is refused with the finding shown; a lock with a warning goes through
    // and the warning reaches the person committing (lint-staged hides the output of a task that succeeds).
    const now = formatUtc(new Date(Math.floor(Date.now() / 1000) * 1000 - 60_000));
    mkdirSync(join(repo, dirname(ACTIVE)), { recursive: true });
    writeFileSync(join(repo, ACTIVE), lock('2026-13-45T99:00:00Z'));
    git('add', ACTIVE);
    const bad = run('git', ['commit', '-m', 'lock: acquire']);
    expect(bad.status).not.toBe(0);
    expect(bad.stdout + bad.stderr).toContain('lock-schema');
    expect(git('rev-parse', 'HEAD')).toBe(base);
    writeFileSync(join(repo, ACTIVE), lock(now, 'ttl_minute: 90'));
    git('add', ACTIVE);
    const warned = run('git', ['commit', '-m', 'lock: acquire']);
    expect(warned.status, warned.stdout + warned.stderr).toBe(0);
    expect(warned.stdout + warned.stderr).toMatch(/warning.*unknown field 'ttl_minute'/);

    // 5. An agent hook: the command init wrote into .claude/settings.json, fed a tool call.
    ok(offhost, ['init', '--agent', 'claude-code']);
    const settings = JSON.parse(readFileSync(join(repo, '.claude', 'settings.json'), 'utf8')) as { hooks: { PreToolUse: { hooks: { command: string }[] }[] } };
    const hookCmd = settings.hooks.PreToolUse[0]!.hooks[0]!.command;
    // Project-relative (no machine path in the committed file): Claude Code sets CLAUDE_PROJECT_DIR.
    expect(hookCmd.startsWith('exec 3<&0; "$CLAUDE_PROJECT_DIR"/node_modules/.bin/offhost hook claude-code <&3 ')).toBe(true);
    const event = (command: string) => JSON.stringify({ session_id: 's', cwd: repo, hook_event_name: 'PreToolUse', tool_name: 'Bash', tool_input: { command } });
    const asClaude = `CLAUDE_PROJECT_DIR='${repo}'; ${hookCmd}`;
    const heavy = ok('bash', ['-c', asClaude], { input: event('qemu-system-x86_64 -hda win10.qcow2') });
    expect(JSON.parse(heavy.stdout).hookSpecificOutput.permissionDecision).toBe('deny');
    const light = ok('bash', ['-c', asClaude], { input: event('git status') });
    expect(light.stdout).toBe('');

    // 5b. The exec-time shims for Claude Code: a per-user folder, and a SessionStart hook in the project that,
    // run as Claude Code runs it (CLAUDE_ENV_FILE set), puts them first on the Bash tool's PATH.
    const shimsDir = join(home, '.local', 'share', 'offhost', 'shims');
    expect(ok(offhost, ['init', '--shims', '--agent', 'claude-code']).stdout).toContain('recorded in ~/.local/state/offhost/installs.json');
    const withShims = JSON.parse(readFileSync(join(repo, '.claude', 'settings.json'), 'utf8')) as { hooks: { SessionStart: { hooks: { command: string }[] }[] } };
    const envFile = join(tmp, 'claude-env');
    ok('bash', ['-c', `CLAUDE_ENV_FILE='${envFile}'; export CLAUDE_ENV_FILE; ${withShims.hooks.SessionStart[0]!.hooks[0]!.command}`]);
    expect(ok('bash', ['-c', `. '${envFile}'; command -v qemu-system-x86_64`]).stdout.trim()).toBe(join(shimsDir, 'qemu-system-x86_64'));

    // 6. CI: a pull request adding a script that runs heavy work on a laptop fails `offhost ci`.
    mkdirSync(join(repo, 'scripts'));
    writeFileSync(join(repo, 'scripts', 'win.sh'), '#!/bin/sh\nqemu-system-x86_64 -hda win10.qcow2\n');
    chmodSync(join(repo, 'scripts', 'win.sh'), 0o755);
    git('add', 'scripts/win.sh');
    ok('git', ['commit', '-q', '-m', 'feat: windows script']);
    const ci = run(offhost, ['ci', '--base', base, '--format', 'json']);
    expect(ci.status, ci.stderr).toBe(1);
    const findings = JSON.parse(ci.stdout) as { file: string; ruleId: string }[];
    expect(findings.map((f) => `${f.file} ${f.ruleId}`)).toContain('scripts/win.sh qemu-windows');

    // 7. uninstall: exactly what init added goes, and it says what it removed.
    const un = ok(offhost, ['uninstall']);
    expect(un.stdout).toContain('.husky/pre-commit: removed');
    expect(un.stdout).toContain('package.json: removed the lint-staged entry');
    expect(un.stdout).toContain('.claude/settings.json: removed 1 offhost hook and the SessionStart hook that put the shims on PATH');
    // the shims folder is per user: it goes because no other repository asked for it
    expect(un.stdout).toContain('~/.local/share/offhost/shims (the shims folder, per user; only this repository used it): removed the');
    expect(existsSync(join(home, '.local', 'share', 'offhost'))).toBe(false);
    expect(existsSync(join(home, '.local', 'state', 'offhost', 'installs.json'))).toBe(false);
    expect(existsSync(join(repo, '.husky', 'pre-commit'))).toBe(false);
    expect(existsSync(join(repo, '.claude', 'settings.json'))).toBe(false);
    const pkg = JSON.parse(readFileSync(join(repo, 'package.json'), 'utf8')) as Record<string, unknown>;
    expect(pkg['lint-staged']).toBeUndefined();
    ok('npm', ['uninstall', 'offhost']);
    expect(existsSync(join(repo, 'node_modules', 'offhost'))).toBe(false);
    // Commits touching the notices work again (no `offhost: not found` from a hook left behind).
    writeFileSync(join(repo, ACTIVE), `${readFileSync(join(repo, ACTIVE), 'utf8')}more notes\n`);
    git('add', '-A');
    const after = run('git', ['commit', '-m', 'chore: without offhost']);
    expect(after.status, after.stdout + after.stderr).toBe(0);
    expect(git('status', '--porcelain')).toBe('');
  });
});
