// The shims inside package runners' scripts, with the real npm: npm (and npx, pnpm, yarn 1) runs a
// script as `sh -c SCRIPT` with node_modules/.bin ahead of the PATH it got, and bun with the first bash
// on PATH; the PATH keepers (`sh`, `bash` in the shim directory) put the shims first again, so a
// script's `playwright test` meets the playwright shim instead of node_modules/.bin/playwright. A
// negative control without the keeper shows the program then runs on the laptop.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BIN, type Tree, clearHeavy, heavyRuns, laptopEnv, makeTree } from './tree.js';

const have = (tool: string) => spawnSync('sh', ['-c', `command -v ${tool}`], { encoding: 'utf8' }).status === 0;
const NPM = have('npm');

function offhost(t: Tree, args: string[], cwd: string) {
  return spawnSync(process.execPath, [BIN, ...args], { cwd, env: laptopEnv(t), encoding: 'utf8', timeout: 60_000 });
}

/** Plain bash (no static guard) with the shims first on PATH: only the exec-time layer decides. */
function viaShims(t: Tree, line: string, cwd: string) {
  const env = laptopEnv(t, { OFFHOST_SESSION: 'npm-scripts', npm_config_cache: join(t.base, 'npm-cache'), npm_config_update_notifier: 'false', npm_config_offline: 'true' });
  env.PATH = [t.shims, env.PATH].join(':');
  return spawnSync('bash', ['-c', line], { cwd, env: { ...env, PWD: cwd }, encoding: 'utf8', timeout: 60_000 });
}

let t: Tree;
let web: string;

beforeAll(() => {
  t = makeTree('plain');
  const r = offhost(t, ['shim', 'install'], t.home);
  if (r.status !== 0) throw new Error(r.stderr);
  web = join(t.root, 'apps', 'web');
  mkdirSync(join(web, 'node_modules', '.bin'), { recursive: true });
  writeFileSync(join(web, 'package.json'), JSON.stringify({ name: 'web', version: '1.0.0', scripts: { e2e: 'playwright test', version: 'playwright --version', fails: 'exit 3', args: 'echo "$0" "$@"' } }));
  // The package's own bin, as npm links it: a recorder standing in for Playwright's CLI.
  const bin = join(web, 'node_modules', '.bin', 'playwright');
  writeFileSync(bin, readFileSync(join(t.localBin, 'playwright')));
  chmodSync(bin, 0o755);
});
afterAll(() => t.cleanup());

describe('PATH keepers in the shim directory', () => {
  it('are written beside the shims, listed in the marker, and removed with them', () => {
    const marker = JSON.parse(readFileSync(join(t.shims, '.offhost-shims'), 'utf8')) as { keepers: string[]; programs: string[] };
    expect(marker.keepers).toEqual(['sh', 'bash']);
    expect(marker.programs).not.toContain('sh');
    expect(readFileSync(join(t.shims, 'sh'), 'utf8')).toMatch(/PATH keeper/);
  });

  it('a runner that prepends node_modules/.bin and starts bash through PATH (what bun does): the playwright shim judges the script', () => {
    clearHeavy(t);
    const r = viaShims(t, `PATH=${web}/node_modules/.bin:$PATH bash -c 'playwright test'`, web);
    expect(r.status, r.stderr).toBe(0);
    expect(heavyRuns(t).map((h) => [h.prog, h.laptop])).toEqual([['playwright', false]]);
  });

  it('the keeper passes arguments, argv[0] and the exit status through', () => {
    const r = viaShims(t, `PATH=/nowhere:$PATH; sh -c 'echo "$0:$1"; exit 7' zero one`, web);
    expect(r.stdout).toBe('zero:one\n');
    expect(r.status).toBe(7);
  });
});

describe.skipIf(!NPM)('npm scripts with the real npm', () => {
  it('npm run e2e: the script\'s playwright meets its shim and runs on the VM', () => {
    clearHeavy(t);
    const r = viaShims(t, 'npm run --silent e2e', web);
    expect(r.status, r.stderr).toBe(0);
    expect(heavyRuns(t).map((h) => [h.prog, h.laptop])).toEqual([['playwright', false]]);
  });

  it('npx playwright test (npm exec runs it through sh too)', () => {
    clearHeavy(t);
    const r = viaShims(t, 'npx --no-install playwright test', web);
    expect(r.status, r.stderr).toBe(0);
    expect(heavyRuns(t).map((h) => [h.prog, h.laptop])).toEqual([['playwright', false]]);
  });

  it('a light script still runs here, the package\'s own bin (the shim execs node_modules/.bin/playwright)', () => {
    clearHeavy(t);
    const r = viaShims(t, 'npm run --silent version', web);
    expect(r.status, r.stderr).toBe(0);
    expect(heavyRuns(t).map((h) => [h.prog, h.laptop, h.args])).toEqual([['playwright', true, '--version']]);
  });

  it("a script's exit status comes back through the keeper", () => {
    expect(viaShims(t, 'npm run --silent fails', web).status).not.toBe(0);
  });

  it('negative control: without the sh keeper, npm run e2e starts node_modules/.bin/playwright on the laptop', () => {
    const keeper = readFileSync(join(t.shims, 'sh'));
    rmSync(join(t.shims, 'sh'));
    try {
      clearHeavy(t);
      const r = viaShims(t, 'npm run --silent e2e', web);
      expect(r.status, r.stderr).toBe(0);
      expect(heavyRuns(t).map((h) => [h.prog, h.laptop])).toEqual([['playwright', true]]);
    } finally {
      writeFileSync(join(t.shims, 'sh'), keeper, { mode: 0o755 });
    }
  });
});

describe('other package runners', () => {
  for (const tool of ['pnpm', 'yarn', 'bun']) {
    it.skipIf(!have(tool))(`${tool} run e2e (${tool} is ${have(tool) ? 'installed' : 'not installed here and cannot be fetched offline: skipped'})`, () => {
      clearHeavy(t);
      const r = viaShims(t, `${tool} run e2e`, web);
      expect(r.status, r.stderr).toBe(0);
      expect(heavyRuns(t).map((h) => [h.prog, h.laptop])).toEqual([['playwright', false]]);
    });
  }
});
