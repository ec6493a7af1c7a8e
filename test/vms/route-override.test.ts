// Overriding a built-in route never weakens the isolation it requires (issue 24): a project config that
// redefines route `koda` keeps `require: {where: remote}`, so a VM declared `where: laptop` is refused
// (234) and nothing runs; only the named opt-in `weaken_builtin_require: true` replaces it, and `offhost
// doctor` lists every override. The run is the built CLI in a real git repository.
import { beforeAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BIN, cleanEnv, configure, ensureBuilt, g } from '../locks/lifecycle-helpers.js';
import { routeOverrideItems } from '../../src/vms/route-overrides.js';
import { loadConfig } from '../../src/config/load-config.js';

beforeAll(() => ensureBuilt());

function project(routeExtra: string): { home: string; koda: string; repo: string; ran: string } {
  const home = mkdtempSync(join(tmpdir(), 'offhost-override-'));
  const repo = join(home, 'dev', 'koder');
  const koda = join(repo, 'engines', 'lang', 'koda');
  mkdirSync(koda, { recursive: true });
  g(repo, 'init', '-q', '-b', 'main');
  configure(repo);
  const ran = join(home, 'ran-here');
  writeFileSync(join(koda, 'Makefile'), `build-safe:\n\t@touch '${ran}'\n`);
  writeFileSync(
    join(repo, 'offhost.config.yaml'),
    [
      'vms:',
      // Declared as what it is: a VM on this laptop (ssh to 127.0.0.1, nothing listens there in the tests).
      '  - { id: s.khost1.dev-linux-koda, backend: ssh, host: 127.0.0.1, where: laptop }',
      'routes:',
      '  koda:',
      '    vms: [s.khost1.dev-linux-koda]',
      ...routeExtra.split('\n').filter(Boolean).map((l) => `    ${l}`),
      '',
    ].join('\n'),
  );
  g(repo, 'add', '.');
  g(repo, 'commit', '-qm', 'init');
  return { home, koda, repo, ran };
}

function run(p: { home: string; koda: string }, args: string[]) {
  return spawnSync(process.execPath, [BIN, ...args], {
    cwd: p.koda,
    env: { ...(cleanEnv() as Record<string, string>), HOME: p.home, OFFHOST_ROLE: 'laptop', OFFHOST_SESSION: 'override-test' },
    encoding: 'utf8',
    timeout: 120_000,
  });
}

describe('a project config redefining a built-in route', () => {
  it('keeps the built-in require {where: remote}: a laptop VM is refused (234), nothing runs here or there', () => {
    const p = project('');
    const r = run(p, ['run', '--json', '--', 'make build-safe']);
    expect(r.status, r.stderr).toBe(234);
    expect(r.stderr).toMatch(/route koda: .*remote/);
    expect(existsSync(p.ran)).toBe(false);
    const cfg = loadConfig({ cwd: p.koda, env: { HOME: p.home } });
    expect(cfg.routes.get('koda')!.require).toEqual({ where: 'remote' });
  });

  it('an override cannot relax a built-in demand by restating it: `where: laptop` in the entry is overruled, other demands are added', () => {
    const p = project('require: { where: laptop, arch: x86_64 }');
    const cfg = loadConfig({ cwd: p.koda, env: { HOME: p.home } });
    expect(cfg.routes.get('koda')!.require).toEqual({ where: 'remote', arch: ['x86_64'] });
    const r = run(p, ['run', '--json', '--', 'make build-safe']);
    expect(r.status, r.stderr).toBe(234);
    expect(existsSync(p.ran)).toBe(false);
  });

  it('weaken_builtin_require: true is the named opt-in: the isolation check passes (the run then meets the VM preflight)', () => {
    const p = project('weaken_builtin_require: true');
    const cfg = loadConfig({ cwd: p.koda, env: { HOME: p.home } });
    expect(cfg.routes.get('koda')!.require).toBeUndefined();
    const r = run(p, ['run', '--json', '--', 'make build-safe']);
    expect(r.status).not.toBe(234);
    expect(existsSync(p.ran)).toBe(false);
  });

  it('doctor lists each override: kept as an ok line, weakened as a problem with the fix', () => {
    const kept = project('');
    const items = routeOverrideItems(loadConfig({ cwd: kept.koda, env: { HOME: kept.home } }));
    expect(items).toEqual([{ ok: true, detail: expect.stringMatching(/redefines the built-in route koda; it still requires where: remote/) }]);
    const d = run(kept, ['doctor']);
    expect(d.stdout).toMatch(/redefines the built-in route koda; it still requires where: remote/);
    const weak = project('weaken_builtin_require: true');
    const d2 = run(weak, ['doctor']);
    expect(d2.stdout).toMatch(/redefines the built-in route koda with weaken_builtin_require: it requires nothing instead of the built-in where: remote/);
    expect(d2.status).toBe(1);
  });
});
