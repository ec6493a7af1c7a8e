// offhost from a clone of its own repository: what a person trying it from source does. A copy of exactly
// what a clone holds (the files git tracks or would track: no dist/, no node_modules), then:
// - in every run: the dependencies as `npm ci` installs them (a link to this checkout's node_modules), and
//   npm's `prepare` lifecycle builds dist/ in the clone; `npx offhost check 'make build-safe'` in the sample
//   checkout (fixtures/sample-checkout) then does offhost's main job on the built-in policy;
// - with OFFHOST_TEST_CLONE=full (`npm run test:clone`, which .ci/run runs): a real `npm ci` (offline, from
//   npm's cache) gives a working `npx offhost` by itself; `npm pack` of the clone makes a tarball that
//   installs and runs in a fresh project; and an install from a git URL (git+file://) builds it there.
// Nothing here writes into this checkout's dist/ or node_modules.
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..', '..');
const FULL = process.env.OFFHOST_TEST_CLONE === 'full';
const made: string[] = [];
afterAll(() => {
  for (const d of made) rmSync(d, { recursive: true, force: true });
});

/** npm's own cache (where .ci/run's `npm ci` put every package), read before HOME is changed. */
const NPM_CACHE = spawnSync('npm', ['config', 'get', 'cache'], { encoding: 'utf8' }).stdout.trim();

function sandbox(): { tmp: string; env: NodeJS.ProcessEnv } {
  const tmp = realpathSync(mkdtempSync(join(tmpdir(), 'offhost-clone-')));
  made.push(tmp);
  mkdirSync(join(tmp, 'home'));
  // npm's cache of packages (for the offline `npm ci`), but an _npx folder of its own: npx reuses any
  // offhost it installed before (from another checkout), which would hide this clone's.
  const cache = join(tmp, 'npm-cache');
  mkdirSync(cache);
  if (existsSync(join(NPM_CACHE, '_cacache'))) symlinkSync(join(NPM_CACHE, '_cacache'), join(cache, '_cacache'));
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: join(tmp, 'home'),
    TMPDIR: tmp,
    LANG: 'C.UTF-8',
    npm_config_cache: cache,
    npm_config_offline: 'true',
    npm_config_audit: 'false',
    npm_config_fund: 'false',
    npm_config_update_notifier: 'false',
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_AUTHOR_NAME: 't',
    GIT_AUTHOR_EMAIL: 't@t',
    GIT_COMMITTER_NAME: 't',
    GIT_COMMITTER_EMAIL: 't@t',
    OFFHOST_ROLE: 'laptop',
  };
  return { tmp, env };
}

/** What a clone of this checkout holds: the tracked files and the new ones git would add, as they are now. */
function cloneOf(dest: string): string {
  const files = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: ROOT, encoding: 'utf8' }).split('\0').filter(Boolean);
  for (const f of files) {
    if (f === 'node_modules' || f.startsWith('dist/') || !existsSync(join(ROOT, f))) continue; // the worktree's link to the shared install; deleted files
    mkdirSync(dirname(join(dest, f)), { recursive: true });
    cpSync(join(ROOT, f), join(dest, f), { verbatimSymlinks: true });
  }
  return dest;
}

function runner(env: NodeJS.ProcessEnv) {
  const run = (cmd: string, args: string[], cwd: string) => spawnSync(cmd, args, { cwd, env, encoding: 'utf8', input: '' });
  const ok = (cmd: string, args: string[], cwd: string) => {
    const r = run(cmd, args, cwd);
    expect(r.status, `${cmd} ${args.join(' ')} in ${cwd}\n${r.stdout}\n${r.stderr}`).toBe(0);
    return r;
  };
  return { run, ok };
}

/** offhost's main job in the sample checkout: the README's commands and what they must answer. */
function mainJob(clone: string, env: NodeJS.ProcessEnv): void {
  const { run } = runner(env);
  const koda = join(clone, 'fixtures', 'sample-checkout', 'engines', 'lang', 'koda');
  const heavy = run('npx', ['offhost', 'check', 'make build-safe'], koda);
  expect(heavy.status, heavy.stderr).toBe(3);
  expect(heavy.stdout).toMatch(/^reroute \(koda-make\): make build-safe\n/);
  expect(heavy.stdout).toContain('route: koda -> s.khost1.dev-linux-koda');
  // This clone's offhost answered, not another one npx found.
  expect(heavy.stdout).toMatch(new RegExp(`run instead: \\S*${clone.split('/').at(-1)}/dist/offhost\\.cjs run -- 'make build-safe'`));
  const light = run('npx', ['offhost', 'check', 'make clean'], koda);
  expect([light.status, light.stdout.split(' ')[0]]).toEqual([0, 'allow']);
  const explained = run('npx', ['offhost', 'explain', 'qemu-system-x86_64 -hda win10.qcow2'], join(clone, 'fixtures', 'sample-checkout'));
  expect(explained.stdout).toContain('deny by qemu-windows');
}

describe('from a clone', () => {
  it("the dependencies installed, npm's prepare builds dist/; npx offhost then does the main job in the sample checkout", () => {
    const { tmp, env } = sandbox();
    const clone = cloneOf(join(tmp, 'offhost'));
    const { ok } = runner(env);
    expect(existsSync(join(clone, 'dist'))).toBe(false);
    symlinkSync(join(ROOT, 'node_modules'), join(clone, 'node_modules'));
    ok('npm', ['run', 'prepare'], clone);
    expect(existsSync(join(clone, 'dist', 'offhost.cjs'))).toBe(true);
    expect(ok('npx', ['offhost', '--version'], clone).stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);
    mainJob(clone, env);
  });

  it.skipIf(!FULL)(`npm ci alone gives a working offhost; npm pack and a git URL install too${FULL ? '' : ' (skipped: OFFHOST_TEST_CLONE=full, npm run test:clone)'}`, () => {
    const { tmp, env } = sandbox();
    const clone = cloneOf(join(tmp, 'offhost'));
    const { ok } = runner(env);
    ok('npm', ['ci'], clone);
    expect(existsSync(join(clone, 'dist', 'offhost.cjs'))).toBe(true);
    mainJob(clone, env);

    // The tarball npm pack makes in the clone installs alone (no dependencies) and runs in a fresh project.
    const packed = ok('npm', ['pack', '--json', '--pack-destination', tmp], clone);
    const tarball = join(tmp, (JSON.parse(packed.stdout) as { filename: string }[])[0]!.filename);
    const user = join(tmp, 'user');
    mkdirSync(user);
    writeFileSync(join(user, 'package.json'), '{ "name": "user", "version": "1.0.0", "private": true }\n');
    ok('npm', ['install', '--save-dev', tarball], user);
    const check = runner(env).run(join(user, 'node_modules', '.bin', 'offhost'), ['check', '--cwd', join(env.HOME!, 'dev/koder/engines/lang/koda'), 'make build-safe'], user);
    expect(check.status, check.stderr).toBe(3);
    expect(check.stdout).toMatch(/^reroute \(koda-make\)/);

    // From a git URL: npm clones it, installs its devDependencies and runs prepare, then packs and installs.
    ok('git', ['init', '-q', '-b', 'main'], clone);
    ok('git', ['add', '-A'], clone);
    ok('git', ['commit', '-qm', 'clone'], clone);
    const fromGit = join(tmp, 'from-git');
    mkdirSync(fromGit);
    writeFileSync(join(fromGit, 'package.json'), '{ "name": "from-git", "version": "1.0.0", "private": true }\n');
    ok('npm', ['install', '--save-dev', `git+file://${clone}`], fromGit);
    expect(readdirSync(join(fromGit, 'node_modules', 'offhost', 'dist'))).toContain('offhost.cjs');
    const viaGit = runner(env).run(join(fromGit, 'node_modules', '.bin', 'offhost'), ['check', '--cwd', join(env.HOME!, 'dev/koder/engines/lang/koda'), 'make build-safe'], fromGit);
    expect(viaGit.status, viaGit.stderr).toBe(3);
  });
});
