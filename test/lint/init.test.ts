// `offhost init` (husky): merges into what is there, refuses what it cannot merge safely (changing nothing),
// and is idempotent. Real git repositories; husky is not installed in these (see husky-e2e for the real hook).
import { chmodSync, existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { git, initRepo, offhost, tempDir, write } from './helpers.js';

const GLOB = 'meta/context/notices/**/*.md';
const CMD = 'offhost lint --staged';

function repo(pkg: object | null = { name: 'x', private: true }): string {
  const dir = initRepo('offhost-init-');
  git(dir, 'config', '--unset', 'core.hooksPath');
  if (pkg) write(dir, 'package.json', `${JSON.stringify(pkg, null, 2)}\n`);
  return dir;
}

function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string, rel: string): void => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      if (e.name === '.git') continue;
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p, `${rel}${e.name}/`);
      else out[`${rel}${e.name}`] = `${readFileSync(p, 'utf8')}|${statSync(p).mode}`;
    }
  };
  walk(dir, '');
  return out;
}

const pkgOf = (dir: string) => JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as Record<string, any>;

describe('offhost init (husky)', () => {
  it('sets up a fresh repository and a second run changes nothing', () => {
    const dir = repo();
    const r = offhost(['init'], dir);
    expect(r.status, r.stderr).toBe(0);
    const pkg = pkgOf(dir);
    expect(pkg.scripts.prepare).toBe('husky');
    expect(pkg['lint-staged']).toEqual({ [GLOB]: CMD });
    expect(pkg.devDependencies).toMatchObject({ husky: expect.any(String), 'lint-staged': expect.any(String) });
    const hook = readFileSync(join(dir, '.husky/pre-commit'), 'utf8');
    expect(hook).toContain('npx lint-staged --verbose\n');
    expect(hook).toContain(`git diff --cached --quiet --diff-filter=D -- 'meta/context/notices' || OFFHOST_NO_TTY=1 ${CMD}`);
    expect(r.stdout).toContain('run `npm install`');
    const once = snapshot(dir);
    const again = offhost(['init', '--husky'], dir);
    expect(again.status).toBe(0);
    expect(again.stdout).toContain('already set up');
    expect(snapshot(dir)).toEqual(once);
  });

  it('keeps an existing prepare script, pre-commit hook and lint-staged entries', () => {
    const dir = repo({ name: 'x', scripts: { prepare: 'npm run build' }, devDependencies: { husky: '^9' }, 'lint-staged': { '*.ts': 'eslint --fix', [GLOB]: 'prettier --check' } });
    write(dir, '.husky/pre-commit', 'npm test\n');
    expect(offhost(['init'], dir).status).toBe(0);
    const pkg = pkgOf(dir);
    expect(pkg.scripts.prepare).toBe('npm run build && husky');
    expect(pkg.devDependencies.husky).toBe('^9');
    expect(pkg['lint-staged']).toEqual({ '*.ts': 'eslint --fix', [GLOB]: ['prettier --check', CMD] });
    const hook = readFileSync(join(dir, '.husky/pre-commit'), 'utf8');
    expect(hook.startsWith('npm test\n')).toBe(true);
    expect(hook).toContain('npx lint-staged');
    const once = snapshot(dir);
    expect(offhost(['init'], dir).status).toBe(0);
    expect(snapshot(dir)).toEqual(once);
  });

  it('an existing hook that already runs lint-staged only gets the deletion check', () => {
    const dir = repo();
    write(dir, '.husky/pre-commit', 'npx lint-staged --concurrent false\n');
    expect(offhost(['init'], dir).status).toBe(0);
    const hook = readFileSync(join(dir, '.husky/pre-commit'), 'utf8');
    expect(hook.match(/lint-staged/g)?.length).toBe(2); // the user's line + the comment of the deletion check
    expect(hook).not.toContain('\nnpx lint-staged\n');
    expect(hook).toContain(CMD);
  });

  it('merges into .lintstagedrc (JSON) and .lintstagedrc.yaml (keeping comments), not package.json', () => {
    const dir = repo();
    write(dir, '.lintstagedrc', '{\n    "*.js": ["eslint"]\n}\n');
    expect(offhost(['init'], dir).status).toBe(0);
    expect(JSON.parse(readFileSync(join(dir, '.lintstagedrc'), 'utf8'))).toEqual({ '*.js': ['eslint'], [GLOB]: CMD });
    expect(readFileSync(join(dir, '.lintstagedrc'), 'utf8')).toContain('\n    "*.js"');
    expect(pkgOf(dir)['lint-staged']).toBeUndefined();

    const y = repo();
    write(y, '.lintstagedrc.yaml', '# our linters\n"*.js": eslint # fast\n');
    expect(offhost(['init'], y).status).toBe(0);
    const text = readFileSync(join(y, '.lintstagedrc.yaml'), 'utf8');
    expect(text).toContain('# our linters');
    expect(text).toContain('# fast');
    expect(text).toContain(`${GLOB}: ${CMD}`);
    const once = snapshot(y);
    expect(offhost(['init'], y).status).toBe(0);
    expect(snapshot(y)).toEqual(once);
  });

  it('refuses a JavaScript lint-staged config, changing nothing', () => {
    const dir = repo();
    write(dir, 'lint-staged.config.js', 'export default { "*.js": "eslint" };\n');
    const before = snapshot(dir);
    const r = offhost(['init'], dir);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('lint-staged is configured in lint-staged.config.js, which offhost cannot merge safely');
    expect(r.stderr).toContain(`"${GLOB}": "${CMD}"`);
    expect(snapshot(dir)).toEqual(before);
  });

  it('refuses another hook manager or a plain .git/hooks/pre-commit that husky would switch off', () => {
    const a = repo();
    git(a, 'config', 'core.hooksPath', '.githooks');
    const before = snapshot(a);
    const r = offhost(['init'], a);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain("core.hooksPath is set to '.githooks'");
    expect(snapshot(a)).toEqual(before);

    const b = repo();
    write(b, '.git/hooks/pre-commit', '#!/bin/sh\nexit 0\n');
    chmodSync(join(b, '.git/hooks/pre-commit'), 0o755);
    const r2 = offhost(['init'], b);
    expect(r2.status).toBe(2);
    expect(r2.stderr).toContain('.git/hooks/pre-commit exists');
    expect(existsSync(join(b, '.husky'))).toBe(false);
  });

  it('refuses invalid JSON with the line, and a missing package.json; exit 2 outside a repository', () => {
    const dir = repo(null);
    write(dir, 'package.json', '{\n  "name": "x",\n  oops\n}\n');
    const r = offhost(['init'], dir);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/package\.json:3(:\d+)?: is not valid JSON/);
    const none = repo(null);
    const r2 = offhost(['init'], none);
    expect(r2.status).toBe(2);
    expect(r2.stderr).toContain('no package.json at the repository root');
    expect(offhost(['init'], tempDir('offhost-norepo-')).status).toBe(2);
  });

  it('--dry-run writes nothing; --notices-dir changes the glob; one mode at a time', () => {
    const dir = repo();
    const before = snapshot(dir);
    const r = offhost(['init', '--dry-run'], dir);
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('would change:');
    expect(snapshot(dir)).toEqual(before);
    expect(offhost(['init', '--notices-dir', 'docs/notices'], dir).status).toBe(0);
    expect(pkgOf(dir)['lint-staged']).toEqual({ 'docs/notices/**/*.md': CMD });
    expect(offhost(['init', '--husky', '--shell', 'bash'], dir).status).toBe(2);
  });
});
