// The exec-time shims with real bash, real GNU make and stand-in heavy programs that record where they
// ran: install/remove, allow/reroute/refuse, recursive make, no loops, the fast path, fail closed.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { BIN, type Tree, clearHeavy, heavyRuns, laptopEnv, makeTree } from './tree.js';

function offhost(t: Tree, args: string[], cwd: string, extra: Record<string, string> = {}) {
  return spawnSync(process.execPath, [BIN, ...args], { cwd, env: laptopEnv(t, extra), encoding: 'utf8', timeout: 60_000 });
}

/** bash -c LINE with the shims first on PATH (what every door arranges). */
function viaShims(t: Tree, line: string, cwd: string, extra: Record<string, string> = {}, pathFront: string[] = [t.shims]) {
  const env = laptopEnv(t, extra);
  env.PATH = [...pathFront, env.PATH].join(':');
  return spawnSync('bash', ['-c', line], { cwd, env: { ...env, PWD: cwd }, encoding: 'utf8', timeout: 60_000 });
}

describe('offhost shim install / remove', () => {
  let t: Tree;
  beforeAll(() => {
    t = makeTree('plain');
  });
  afterAll(() => t.cleanup());

  it('writes one shim per program the rules name, is idempotent, and removes only what it wrote', () => {
    const a = offhost(t, ['shim', 'install'], t.home);
    expect(a.status, a.stderr).toBe(0);
    const files = readdirSync(t.shims).sort();
    for (const p of ['make', 'gmake', 'emulator', 'flutter', 'dart', 'lb', 'qemu-system-x86_64', 'xvfb-run', 'Xvfb', 'weston', 'chromium', 'chromedriver', 'playwright', 'cypress', 'karma']) expect(files).toContain(p);
    for (const p of ['python3', 'node', 'java']) expect(files).not.toContain(p);
    // bash and sh are PATH keepers, not judging shims (test/shims/package-runners.test.ts).
    for (const p of ['sh', 'bash']) expect(readFileSync(join(t.shims, p), 'utf8')).toMatch(/PATH keeper/);
    const b = offhost(t, ['shim', 'install'], t.home);
    expect(b.status).toBe(0);
    expect(readdirSync(t.shims).sort()).toEqual(files);
    writeFileSync(join(t.shims, 'mine.txt'), 'not offhost');
    const r = offhost(t, ['shim', 'remove'], t.home);
    expect(r.status, r.stderr).toBe(0);
    expect(readdirSync(t.shims)).toEqual(['mine.txt']);
    rmSync(join(t.shims, 'mine.txt'));
  });

  it('refuses a directory holding files it did not write', () => {
    const dir = join(t.base, 'busy');
    mkdirSync(dir);
    writeFileSync(join(dir, 'make'), '#!/bin/sh\n');
    const r = offhost(t, ['shim', 'install', '--dir', dir], t.home);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/did not write/);
    expect(readFileSync(join(dir, 'make'), 'utf8')).toBe('#!/bin/sh\n');
  });

  it('init --shims installs them and says how to put them on PATH and remove them; --agent claude-code adds a SessionStart hook once', () => {
    const r = offhost(t, ['init', '--shims'], t.home);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toContain(t.shims);
    expect(r.stdout).toContain('offhost shim remove');
    const project = join(t.base, 'proj');
    mkdirSync(project);
    for (let i = 0; i < 2; i++) expect(offhost(t, ['init', '--shims', '--agent', 'claude-code', '--project', project], t.home).status).toBe(0);
    const settings = JSON.parse(readFileSync(join(project, '.claude', 'settings.json'), 'utf8'));
    expect(settings.hooks.SessionStart).toHaveLength(1);
    const cmd = settings.hooks.SessionStart[0].hooks[0].command as string;
    expect(cmd).toContain('shim env --claude-env-file');
    // What Claude Code does with it: runs the hook with CLAUDE_ENV_FILE, then sources that file before a command.
    const envFile = join(t.base, 'claude.env');
    const hook = spawnSync('sh', ['-c', cmd], { env: laptopEnv(t, { CLAUDE_ENV_FILE: envFile }), encoding: 'utf8' });
    expect(hook.status, hook.stderr).toBe(0);
    const seen = spawnSync('bash', ['-c', `. ${envFile}; . ${envFile}; echo "$PATH"`], { env: laptopEnv(t), encoding: 'utf8' });
    expect(seen.stdout.split(':')[0]).toBe(t.shims);
    expect(seen.stdout.split(':').filter((d) => d === t.shims)).toHaveLength(1);
    const codex = offhost(t, ['init', '--shims', '--agent', 'codex'], t.home);
    expect(codex.stdout).toContain('[shell_environment_policy]');
    expect(offhost(t, ['init', '--shims', '--agent', 'gemini'], t.home).status).toBe(2);
  });
});

describe('a shim at work', () => {
  let t: Tree;
  beforeAll(() => {
    t = makeTree('symlinked');
    const r = offhost(t, ['shim', 'install'], t.home);
    if (r.status !== 0) throw new Error(r.stderr);
  });
  afterAll(() => t.cleanup());

  it('runs a light program here, reroutes a heavy one to its VM, refuses a forbidden one (126)', () => {
    clearHeavy(t);
    expect(viaShims(t, 'make clean', t.koda).status).toBe(0);
    expect(heavyRuns(t).map((h) => [h.prog, h.laptop, h.args])).toEqual([['make', true, 'clean']]);
    clearHeavy(t);
    const r = viaShims(t, 'python3 -c "import subprocess,sys; subprocess.run(sys.argv[1:])" make build-safe', t.physicalKoda);
    expect(r.status, r.stderr).toBe(0);
    expect(heavyRuns(t).map((h) => [h.prog, h.laptop, h.cwd])).toEqual([['make', false, t.physicalKoda]]);
    clearHeavy(t);
    const d = viaShims(t, 'perl -e "exec @ARGV" qemu-system-x86_64 -hda win10.qcow2', t.elsewhere);
    expect(d.status).toBe(126);
    expect(d.stderr).toMatch(/offhost shim: refused \(rule qemu-windows\)/);
    expect(heavyRuns(t)).toEqual([]);
    const audit = readFileSync(t.audit, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
    expect(audit.filter((a) => a.agent === 'shim').map((a) => [a.decision, a.rule])).toEqual([['reroute', 'koda-make'], ['deny', 'qemu-windows']]);
  });

  it('offhost run puts the shims first for a line it runs here', () => {
    clearHeavy(t);
    const line = `python3 -c 'import subprocess, sys; subprocess.run(sys.argv[1:])' make build-safe`;
    const r = offhost(t, ['run', '--', line], t.koda, { PWD: t.koda, OFFHOST_SESSION: 'run-local' });
    expect(r.status, r.stderr).toBe(0);
    expect(heavyRuns(t).map((h) => [h.prog, h.laptop])).toEqual([['make', false]]);
  });

  it('shim env --browsers: a tool that starts the browser by the path in CHROME_BIN/PUPPETEER_EXECUTABLE_PATH is judged too', () => {
    const env = offhost(t, ['shim', 'env', '--browsers'], t.home);
    expect(env.status, env.stderr).toBe(0);
    writeFileSync(join(t.base, 'browsers.env'), env.stdout);
    clearHeavy(t);
    // What karma-chrome-launcher or Puppeteer do: exec the configured executable by its absolute path.
    const r = viaShims(t, `. ${join(t.base, 'browsers.env')}; sh -c 'exec "$PUPPETEER_EXECUTABLE_PATH" --headless --dump-dom http://localhost'`, t.elsewhere, { OFFHOST_SESSION: 'browsers' }, []);
    expect(r.status, r.stderr).toBe(0);
    expect(heavyRuns(t).map((h) => [h.prog, h.laptop])).toEqual([['chromium', false]]);
  });

  it('a shim whose next program is a shim again refuses instead of looping; no real program: 127', () => {
    const loop = join(t.base, 'loop');
    mkdirSync(loop, { recursive: true });
    if (!existsSync(join(loop, 'make'))) symlinkSync(join(t.shims, 'make'), join(loop, 'make'));
    clearHeavy(t);
    const r = viaShims(t, 'make clean', t.elsewhere, {}, [t.shims, loop]);
    expect(r.status).toBe(126);
    expect(r.stderr).toMatch(/shim again/);
    expect(heavyRuns(t)).toEqual([]);
    const env = laptopEnv(t);
    const nf = spawnSync('/bin/bash', ['-c', 'gmake -v'], { cwd: t.elsewhere, env: { ...env, PATH: `${t.shims}:/nonexistent` }, encoding: 'utf8' });
    expect(nf.status).toBe(127);
  });

  it('one shimmed program exec-ing another in the same process is not taken for a loop', () => {
    const wrap = join(t.base, 'wrap');
    mkdirSync(wrap, { recursive: true });
    writeFileSync(join(wrap, 'lb'), '#!/bin/sh\nexec make clean\n', { mode: 0o755 });
    clearHeavy(t);
    const r = viaShims(t, 'lb config', t.koda, {}, [t.shims, wrap]);
    expect(r.status, r.stderr).toBe(0);
    expect(heavyRuns(t).map((h) => [h.prog, h.laptop, h.args])).toEqual([['make', true, 'clean']]);
  });

  it('fails closed when the configuration cannot be read: the program does not start', () => {
    const dir = join(t.base, 'badproj');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'offhost.config.yaml'), 'rules: [\n');
    clearHeavy(t);
    const r = viaShims(t, 'make clean', dir);
    expect(r.status).toBe(2);
    expect(heavyRuns(t)).toEqual([]);
  });

  it('the fast path starts make without node outside the rules\' directories, and asks the judge inside them', () => {
    const log = join(t.base, 'judge.log');
    const wrapper = join(t.base, 'judge-wrapper.cjs');
    writeFileSync(wrapper, `require('fs').appendFileSync(${JSON.stringify(log)}, process.argv.slice(2).join(' ') + '\\n');\nrequire(${JSON.stringify(BIN)});\n`);
    const dir = join(t.base, 'shims-logged');
    const inst = offhost(t, ['shim', 'install', '--dir', dir], t.home, { OFFHOST_SHIM_BIN: wrapper });
    expect(inst.status, inst.stderr).toBe(0);
    const judged = () => (existsSync(log) ? readFileSync(log, 'utf8').split('\n').filter(Boolean) : []);
    clearHeavy(t);
    expect(viaShims(t, 'make hello V=1', t.elsewhere, {}, [dir]).status).toBe(0);
    expect(judged()).toEqual([]);
    expect(viaShims(t, 'make clean', t.koda, {}, [dir]).status).toBe(0);
    expect(viaShims(t, 'make -C sub', t.elsewhere, {}, [dir]).status).toBe(0);
    expect(judged()).toEqual(['shim judge make -- clean', 'shim judge make -- -C sub']);
    // An unknown project config in force: the judge decides.
    writeFileSync(join(t.elsewhere, 'offhost.config.yaml'), 'rules: []\n');
    expect(viaShims(t, 'make hello', t.elsewhere, {}, [dir]).status).toBe(0);
    expect(judged()).toHaveLength(3);
    expect(heavyRuns(t).every((h) => h.laptop)).toBe(true);
  });
});

describe('recursive builds with the real GNU make', () => {
  let t: Tree;
  beforeAll(() => {
    t = makeTree('symlinked', { makeIsStandin: false });
    writeFileSync(join(t.physicalRoot, 'Makefile'), 'all:\n\t$(MAKE) -C engines/lang/koda build-safe\n\t$(MAKE) -C engines/lang/koda clean\n\t@echo outer-done\n');
    const r = offhost(t, ['shim', 'install'], t.home);
    if (r.status !== 0) throw new Error(r.stderr);
  });
  afterAll(() => t.cleanup());

  it('make calling make: the outer make runs here, the inner heavy one on the VM, the inner light one here', () => {
    clearHeavy(t);
    const r = viaShims(t, 'make all', t.root, { OFFHOST_SESSION: 'recursive-test' });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toContain('cleaned');
    expect(r.stdout).toContain('outer-done');
    // The Koda recipe's heavy program ran once, on the "VM" (the stand-in incus's fresh environment).
    expect(heavyRuns(t).map((h) => [h.prog, h.laptop, h.args])).toEqual([['heavy-build', false, 'build-safe']]);
    expect(r.stderr).toContain('handing `make -C engines/lang/koda build-safe` to offhost run');
  });

  it('make -f - judges the Makefile read from standard input, and make reads the very copy it judged', () => {
    // Straight through the shims (no line check first), so the shim's copy of stdin is all the judge sees.
    clearHeavy(t);
    const light = viaShims(t, "printf 'x:\\n\\t@echo hi-from-stdin\\n' | make -f - x", t.physicalKoda);
    expect(light.status, light.stderr).toBe(0);
    expect(light.stdout).toBe('hi-from-stdin\n');
    expect(heavyRuns(t)).toEqual([]);
    // The same door, where the Makefile's recipe builds: on the VM, with the same input (a heredoc in the line).
    writeFileSync(join(t.base, 'stdin.mk'), 'x:\n\t$(MAKE) build-safe\n');
    const heavy = viaShims(t, `cat ${JSON.stringify(join(t.base, 'stdin.mk'))} | make --file=/dev/stdin x`, t.physicalKoda, { OFFHOST_SESSION: 'stdin-test' });
    expect(heavy.status, heavy.stderr).toBe(0);
    expect(heavyRuns(t).map((h) => [h.prog, h.laptop, h.args])).toEqual([['heavy-build', false, 'build-safe']]);
    // What cannot be judged does not start: more input than the shim copies.
    clearHeavy(t);
    const big = viaShims(t, 'head -c 1048577 /dev/zero | make -f- x', t.physicalKoda);
    expect(big.status).toBe(126);
    expect(big.stderr).toMatch(/over 1048576 bytes/);
    // Input that is not text (a NUL byte): nothing the line can carry, so unknown, refused.
    const bin = viaShims(t, "printf 'x:\\n\\t@echo \\0hi\\n' | make -sf - x", t.physicalKoda);
    expect(bin.status).toBe(126);
    expect(bin.stderr).toMatch(/unknown-program/);
    // No copy is left behind.
    expect(readdirSync(tmpdir()).filter((f) => f.startsWith('offhost-stdin.'))).toEqual([]);
  });
});

describe('the fast path after the checkout moved', () => {
  let t: Tree;
  beforeAll(() => {
    t = makeTree('symlinked');
    const r = offhost(t, ['shim', 'install'], t.home);
    if (r.status !== 0) throw new Error(r.stderr);
  });
  afterAll(() => t.cleanup());

  it('a symlink re-pointed since the shims were made sends make to the judge, which reroutes it', () => {
    // ~/dev/koder now points at a second copy of the monorepo (a new disk): its engine is still the engine.
    const moved = join(t.base, 'disk2', 'koder');
    const engine = join(moved, 'engines', 'lang', 'koda');
    mkdirSync(engine, { recursive: true });
    writeFileSync(join(engine, 'Makefile'), 'build-safe:\n\theavy-build build-safe\n');
    spawnSync('git', ['init', '-q', '-b', 'main'], { cwd: moved, env: { PATH: process.env.PATH ?? '', HOME: t.home } });
    spawnSync('git', ['commit', '-q', '--allow-empty', '-m', 'init'], { cwd: moved, env: { PATH: process.env.PATH ?? '', HOME: t.home } });
    rmSync(t.root);
    symlinkSync(moved, t.root);
    clearHeavy(t);
    const r = viaShims(t, 'make build-safe', engine, { OFFHOST_SESSION: 'moved' });
    expect(r.status, r.stderr).toBe(0);
    expect(heavyRuns(t).map((h) => [h.prog, h.laptop])).toEqual([['make', false]]);
  });
});
