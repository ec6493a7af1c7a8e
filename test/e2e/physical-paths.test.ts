// Every door judges the canonical directory: in a plain checkout and in one where ~/dev/koder is a
// symlink (to /data/koder), from the path as the configuration spells it, from the physical path an agent
// reports (getcwd()), and from a symlink to the engine, `make build-safe` in the Koda engine gets one
// verdict, and the heavy program (a stand-in that records where it ran) never starts on the laptop.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { readStandinLog } from '../helpers/standins.js';
import { BIN, SHELL, type Layout, type Tree, clearHeavy, heavyRuns, laptopEnv, makeTree } from '../shims/tree.js';
import { sampling } from '../helpers/sample.js';

const sample = sampling('full');

const layouts: Layout[] = ['plain', 'symlinked'];

function offhost(t: Tree, args: string[], cwd: string, extra: Record<string, string> = {}, input?: string) {
  return spawnSync(process.execPath, [BIN, ...args], { cwd, env: laptopEnv(t, { PWD: cwd, ...extra }), encoding: 'utf8', timeout: 60_000, ...(input !== undefined ? { input } : {}) });
}

function git(t: Tree, ...args: string[]) {
  const r = spawnSync('git', args, { cwd: t.physicalRoot, encoding: 'utf8', env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: t.home } });
  if (r.status !== 0) throw new Error(`git ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
}

describe.each(layouts)('a %s checkout', (layout) => {
  let t: Tree;
  let dirs: [string, string][];
  beforeAll(() => {
    t = makeTree(layout);
    writeFileSync(join(t.physicalKoda, 'build.sh'), '#!/bin/sh\nmake build-safe\n');
    // Task runners whose file is in a parent of the engine: they search from the physical directory.
    writeFileSync(join(t.physicalRoot, 'justfile'), 'koda:\n  make -C engines/lang/koda build-safe\n');
    writeFileSync(join(t.physicalRoot, 'Taskfile.yml'), "version: '3'\ntasks:\n  koda:\n    dir: engines/lang/koda\n    cmds: [make build-safe]\n");
    git(t, 'add', '-A');
    git(t, 'commit', '-q', '-m', 'build script');
    dirs = [
      ['the configured path', t.koda],
      ['the physical path', t.physicalKoda],
      ['a symlink to the engine', t.kodaLink],
    ];
  });
  afterAll(() => t.cleanup());
  // The doors that start shells and runs cost most: the symlinked layout (the harder case) runs them in the
  // default run, the plain one in `npm run test:full` (test/helpers/sample.ts); the rest runs in both.
  const itCostly = layout === 'symlinked' ? it : sample.fullOnly;

  it('check and explain give the same reroute from every spelling, with the VM cwd as configured', () => {
    const verdicts = new Set<string>();
    for (const [, d] of dirs) {
      for (const args of [['check', '--json', '--cwd', d, 'make build-safe'], ['check', '--json', 'make build-safe']]) {
        const r = offhost(t, args, d);
        expect(r.status, `${args.join(' ')} in ${d}: ${r.stderr}`).toBe(3);
        const v = JSON.parse(r.stdout);
        expect(v.route.cwd).toBe(t.koda);
        verdicts.add(JSON.stringify(v));
      }
      // An agent's getcwd() with a stale PWD: the physical directory is judged.
      const stale = offhost(t, ['check', '--json', 'make build-safe'], d, { PWD: t.elsewhere });
      expect(stale.status).toBe(3);
      verdicts.add(JSON.stringify(JSON.parse(stale.stdout)));
      const e = offhost(t, ['explain', '--json', '--cwd', d, 'make build-safe'], d);
      expect(JSON.parse(e.stdout).decision).toBe('reroute');
    }
    expect(verdicts.size).toBe(1);
    expect(offhost(t, ['check', '--cwd', t.elsewhere, 'make build-safe'], t.elsewhere).status).toBe(0);
  });

  it('just and task, whose files are in the checkout above the engine, are judged alike from every spelling (check and the hook)', () => {
    for (const [what, d] of dirs) {
      for (const line of ['just koda', 'task koda']) {
        const r = offhost(t, ['check', '--json', line], d);
        expect(r.status, `${what}: ${line}: ${r.stderr}`).toBe(3);
        expect(JSON.parse(r.stdout).rule).toBe('koda-make');
        const payload = { session_id: 's1', cwd: d, hook_event_name: 'PreToolUse', tool_name: 'Bash', tool_input: { command: line } };
        const h = spawnSync(process.execPath, [BIN, 'hook', 'claude-code'], { input: JSON.stringify(payload), env: laptopEnv(t), encoding: 'utf8', timeout: 30_000 });
        expect(h.status, h.stderr).toBe(0);
        expect(h.stdout, `${what}: ${line}`).toContain('koda-make');
      }
    }
  });

  it('the agent hook reroutes from every spelling (agents report getcwd())', () => {
    for (const [, d] of dirs) {
      const payload = { session_id: 's1', cwd: d, hook_event_name: 'PreToolUse', tool_name: 'Bash', tool_input: { command: 'make -k build-safe' } };
      const r = spawnSync(process.execPath, [BIN, 'hook', 'claude-code'], { input: JSON.stringify(payload), env: laptopEnv(t), encoding: 'utf8', timeout: 30_000 });
      expect(r.status, r.stderr).toBe(0);
      expect(r.stdout).toContain('koda-make');
      expect(r.stdout).toContain(' run -- ');
    }
  });

  itCostly('offhost shell, offhost run and the bash snippet run the build on the VM, in the configured directory', () => {
    for (const [what, d] of dirs) {
      for (const line of ['make build-safe', 'echo $(make build-safe)']) {
        clearHeavy(t);
        const before = readStandinLog(t.standinLog).length;
        const r = spawnSync(SHELL, ['-c', line], { cwd: d, env: laptopEnv(t, { PWD: d, SHELL }), encoding: 'utf8', timeout: 60_000 });
        expect(r.status, `${what}: ${line}: ${r.stderr}`).toBe(0);
        expect(heavyRuns(t).map((h) => [h.prog, h.laptop])).toEqual([['make', false]]);
        const incus = readStandinLog(t.standinLog).slice(before).filter((e) => e.tool === 'incus');
        // (offhost run's supervisor starts at / and changes into the VM's directory itself: check's route.cwd,
        // asserted above, is the mapped one.)
        expect(incus.map((e) => e.instance)).toContain('dev-linux-koda');
      }
      clearHeavy(t);
      const run = offhost(t, ['run', '--', 'make build-safe'], d, { OFFHOST_SESSION: 'doors-test' });
      expect(run.status, `${what}: offhost run: ${run.stderr}`).toBe(0);
      expect(heavyRuns(t).map((h) => [h.prog, h.laptop])).toEqual([['make', false]]);
    }
    // offhost shell starts every shell with the exec-time shims first on PATH.
    const first = spawnSync(SHELL, ['-c', 'echo "${PATH%%:*}"'], { cwd: t.elsewhere, env: laptopEnv(t, { PWD: t.elsewhere }), encoding: 'utf8' });
    expect(first.stdout).toBe(`${t.shims}\n`);
    // On a VM nothing is rerouted: no shims.
    const onVm = spawnSync(SHELL, ['-c', 'echo "${PATH%%:*}"'], { cwd: t.elsewhere, env: laptopEnv(t, { PWD: t.elsewhere, OFFHOST_ROLE: 'vm' }), encoding: 'utf8' });
    expect(onVm.stdout).not.toBe(`${t.shims}\n`);
    // Outside the engine the same line is light and runs here.
    clearHeavy(t);
    const here = spawnSync(SHELL, ['-c', 'make build-safe'], { cwd: t.elsewhere, env: laptopEnv(t, { PWD: t.elsewhere }), encoding: 'utf8' });
    expect(here.status, here.stderr).toBe(0);
    expect(heavyRuns(t).map((h) => [h.prog, h.laptop])).toEqual([['make', true]]);
  });

  itCostly('the bash snippet at a real interactive bash', () => {
    const snippet = offhost(t, ['init', '--shell', 'bash'], t.home);
    expect(snippet.status, snippet.stderr).toBe(0);
    const rc = join(t.base, 'bashrc');
    writeFileSync(rc, `PS1='$ '\n${snippet.stdout}`);
    expect(offhost(t, ['shim', 'install'], t.home).status).toBe(0);
    for (const [what, d] of dirs) {
      clearHeavy(t);
      const r = spawnSync('bash', ['--noprofile', '--rcfile', rc, '-i'], {
        cwd: d,
        input: 'make build-safe\necho "first=${PATH%%:*}"\necho end\n',
        encoding: 'utf8',
        env: laptopEnv(t, { PWD: d, HISTFILE: join(t.base, 'hist'), OFFHOST_SESSION: 'snippet-test' }),
        timeout: 60_000,
      });
      expect(r.stdout, `${what}: ${r.stderr}`).toContain('end\n');
      // The snippet put the exec-time shims first on PATH for everything this shell starts.
      expect(r.stdout).toContain(`first=${t.shims}\n`);
      expect(heavyRuns(t).map((h) => [h.prog, h.laptop]), `${what}: ${r.stderr}`).toEqual([['make', false]]);
    }
  });

  it('scan and ci find the build script from every spelling, with the same findings', () => {
    const scans = new Set<string>();
    for (const [, d] of dirs) {
      const r = offhost(t, ['scan', '--format', 'json'], d);
      expect(r.status, r.stderr).toBe(1);
      expect(r.stdout).toContain('koda-make');
      scans.add(r.stdout);
    }
    expect(scans.size).toBe(1);
    git(t, 'checkout', '-q', '-b', 'pr');
    writeFileSync(join(t.physicalKoda, 'ci-build.sh'), '#!/bin/sh\nmake -j8 build-safe\n');
    git(t, 'add', '-A');
    git(t, 'commit', '-q', '-m', 'ci build script');
    const cis = new Set<string>();
    for (const [, d] of dirs) {
      const r = offhost(t, ['ci', '--base', 'main', '--format', 'json'], d, { GITHUB_STEP_SUMMARY: '' });
      expect(r.status, r.stderr).toBe(1);
      expect(r.stdout).toContain('ci-build.sh');
      cis.add(r.stdout);
    }
    expect(cis.size).toBe(1);
    git(t, 'checkout', '-q', 'main');
  });
});
