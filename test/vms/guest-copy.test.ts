// Lima and Tart guests (issue 26, seed 001): the laptop's tree is mounted read-only there, so `offhost
// run` builds in a guest-local copy of the exact source (rsync through `limactl shell` / `tart exec -i`,
// a directory per branch), never in the mount; `vm status` checks the guest's architecture against the
// catalogue (an arm64 guest is no x86_64 evidence), that the laptop tree is mounted read-only, and that
// the copy's directory can be written. The stand-in limactl and tart run the guest side on this machine
// with a fresh environment (test/helpers/standins); rsync is the real one on both ends; the mounts are
// real bind mounts (root only: skipped, saying so, otherwise).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { standinPath } from '../helpers/standins.js';
import { cleanEnv, configure, ensureBuilt, g, BIN } from '../locks/lifecycle-helpers.js';
import { preflight } from '../../src/vms/preflight.js';
import { syncMode } from '../../src/routes/sync.js';
import type { VmSpec } from '../../src/routes/types.js';
import { coveredArch, recordText, type RunRecord } from '../../src/run/record.js';

const hasRsync = spawnSync('sh', ['-c', 'command -v rsync && command -v findmnt'], { encoding: 'utf8' }).status === 0;
const why = hasRsync ? null : 'rsync or findmnt is not installed (.ci/run installs rsync and util-linux)';
const root = process.getuid?.() === 0;

let base = '';
let fakeArm = '';
beforeAll(() => {
  ensureBuilt();
  base = realpathSync(mkdtempSync(join(tmpdir(), 'offhost-guest-')));
  // A guest that reports arm64: `uname -m` says aarch64 (the rest from the real uname).
  fakeArm = join(base, 'arm-bin');
  mkdirSync(fakeArm);
  writeFileSync(join(fakeArm, 'uname'), '#!/bin/sh\nif [ "$1" = -m ]; then echo aarch64; exit 0; fi\nexec /bin/uname "$@"\n');
  chmodSync(join(fakeArm, 'uname'), 0o755);
});
afterAll(() => {
  for (const m of mounted.reverse()) spawnSync('umount', [m]);
  if (base) rmSync(base, { recursive: true, force: true });
});
const mounted: string[] = [];

function laptopWith(backend: 'lima' | 'tart', name: string) {
  const home = join(base, name, 'Users', 'me');
  const repo = join(home, 'dev', 'koder');
  const koda = join(repo, 'engines', 'lang', 'koda');
  const guestDir = join(base, name, 'guest', 'var', 'tmp', 'offhost');
  const guestHome = join(base, name, 'guest', 'home');
  mkdirSync(koda, { recursive: true });
  mkdirSync(guestHome, { recursive: true });
  g(repo, 'init', '-q', '-b', 'main');
  configure(repo);
  writeFileSync(join(koda, 'Makefile'), 'build-safe:\n\t@echo "built $$(cat version.txt) in $$(pwd)"\n\t@echo out > built.txt\n');
  writeFileSync(join(koda, 'version.txt'), 'v1\n');
  const vm = { id: `s.laptop.dev-${backend}-koda`, backend, instance: 'default', kind: 'vm', arch: 'x86_64', guest_dir: guestDir };
  // A Lima or Tart guest runs on the laptop: sending the Koda build there weakens the built-in route's
  // `require: {where: remote}`, which takes the named opt-in (docs/VMS.md).
  writeFileSync(join(repo, 'offhost.config.yaml'), `vms:\n  - ${JSON.stringify(vm)}\nroutes:\n  koda:\n    vms: [${vm.id}]\n    weaken_builtin_require: true\n`);
  g(repo, 'add', '.');
  g(repo, 'commit', '-q', '-m', 'v1');
  const env = {
    ...(cleanEnv() as Record<string, string>),
    HOME: home,
    PATH: `${standinPath()}:${process.env.PATH}`,
    OFFHOST_ROLE: 'laptop',
    OFFHOST_SESSION: 'guest-copy',
    OFFHOST_AI: 'claude',
    OFFHOST_STANDIN_HOME: guestHome,
  };
  return { home, repo, koda, guestDir, env, vm: vm as unknown as VmSpec };
}

function records(home: string): RunRecord[] {
  const dir = join(home, '.local', 'state', 'offhost', 'runs');
  if (!existsSync(dir)) return [];
  return readdirSync(dir).sort().map((id) => JSON.parse(readFileSync(join(dir, id, 'record.json'), 'utf8')) as RunRecord);
}

describe.skipIf(why !== null)(`offhost run on a Lima or Tart guest builds in a guest-local copy${why ? `: skipped, ${why}` : ''}`, () => {
  it.each(['lima', 'tart'] as const)('%s: sync defaults to rsync; the build runs in <guest_dir>/<repo>/<branch>, never in the laptop tree', (backend) => {
    const l = laptopWith(backend, `run-${backend}`);
    expect(syncMode(l.vm)).toBe('rsync');
    writeFileSync(join(l.koda, 'version.txt'), 'v2-uncommitted\n');
    const r = spawnSync(process.execPath, [BIN, 'run', '--', 'make build-safe'], { cwd: l.koda, env: l.env, encoding: 'utf8', timeout: 120_000 });
    expect(r.status, r.stderr).toBe(0);
    const copy = join(l.guestDir, 'koder', 'main');
    expect(r.stdout).toBe(`built v2-uncommitted in ${copy}/engines/lang/koda\n`);
    expect(readFileSync(join(copy, 'engines/lang/koda/built.txt'), 'utf8')).toBe('out\n');
    expect(existsSync(join(l.koda, 'built.txt'))).toBe(false);
    const rec = records(l.home).at(-1)!;
    expect(rec.source).toMatchObject({ mode: 'rsync', branch: 'main' });
    expect(rec.vm).toMatchObject({ id: l.vm.id, backend, dir: copy });
    expect(rec.vm!.uname).toMatch(/^Linux \S+ x86_64$/);
    expect(recordText(rec)).toContain('- architecture covered: x86_64\n');
    // Another branch: its own directory.
    g(l.repo, 'checkout', '-q', '-b', 'feature/x');
    const r2 = spawnSync(process.execPath, [BIN, 'run', '--', 'make build-safe'], { cwd: l.koda, env: l.env, encoding: 'utf8', timeout: 120_000 });
    expect(r2.status, r2.stderr).toBe(0);
    expect(r2.stdout).toMatch(new RegExp(`in ${l.guestDir}/koder/feature-x-[0-9a-f]{8}/engines/lang/koda\\n$`));
  });
});

describe.skipIf(why !== null)(`vm status on a Lima guest${why ? `: skipped, ${why}` : ''}`, () => {
  it('sync: shared on a Lima or Tart guest is refused: its builds would run in the mounted laptop tree', async () => {
    const l = laptopWith('lima', 'shared');
    const r = await preflight({ ...l.vm, sync: 'shared' } as VmSpec, l.env, { full: false });
    expect(r.status).not.toBe(0);
    expect(r.checks.at(-1)).toMatchObject({ name: 'sync', ok: false });
    expect(r.checks.at(-1)!.fix).toContain('remove `sync: shared`');
  });
  it('the guest architecture against the catalogue: an arm64 guest declared x86_64 fails (no x86_64 evidence)', async () => {
    const l = laptopWith('lima', 'arch');
    const ok = await preflight(l.vm, l.env, { full: false });
    expect(ok.checks.find((c) => c.name === 'arch')).toMatchObject({ ok: true, detail: 'the guest is x86_64 as declared' });
    const arm = await preflight(l.vm, { ...l.env, PATH: `${fakeArm}:${l.env.PATH}` }, { full: false });
    expect(arm.status).not.toBe(0);
    expect(arm.checks.find((c) => c.name === 'arch')).toMatchObject({ ok: false, detail: 'the guest is aarch64; the catalogue says x86_64 (an arm64 guest is no x86_64 evidence)' });
  });
  it.skipIf(!root)(`the laptop tree mounted writable fails, read-only passes; a copy directory that cannot be written fails${root ? '' : ' (skipped: bind mounts need root)'}`, async () => {
    const l = laptopWith('lima', 'mounts');
    // Not a mount at all: nothing to protect.
    expect((await preflight(l.vm, l.env, { full: false })).checks.find((c) => c.name === 'host tree')).toMatchObject({ ok: true });
    expect(spawnSync('mount', ['--bind', l.home, l.home]).status).toBe(0);
    mounted.push(l.home);
    const rw = await preflight(l.vm, l.env, { full: false });
    expect(rw.checks.find((c) => c.name === 'host tree')).toMatchObject({ ok: false, detail: `${l.home} is mounted writable in the guest (${l.home})` });
    expect(rw.checks.find((c) => c.name === 'host tree')!.fix).toContain('writable: false');
    expect(spawnSync('mount', ['-o', 'remount,ro,bind', l.home]).status).toBe(0);
    const ro = await preflight(l.vm, l.env, { full: false });
    expect(ro.checks.find((c) => c.name === 'host tree')).toMatchObject({ ok: true });
    expect(ro.checks.find((c) => c.name === 'copy dir')).toMatchObject({ ok: true });
    expect(ro.status).toBe(0);
    // The copy directory inside the read-only tree: refused, nothing made.
    const inside = { ...l.vm, guest_dir: join(l.home, 'copies') } as VmSpec;
    const bad = await preflight(inside, l.env, { full: false });
    expect(bad.checks.find((c) => c.name === 'copy dir')).toMatchObject({ ok: false });
    expect(existsSync(join(l.home, 'copies'))).toBe(false);
  });
});

describe('the architecture a run is evidence for', () => {
  it("is the guest's own, from its uname; arm64 is aarch64 and never x86_64", () => {
    expect(coveredArch('Linux 6.8.0-45-generic aarch64')).toBe('aarch64');
    expect(coveredArch('Darwin 24.1.0 arm64')).toBe('aarch64');
    expect(coveredArch('Linux 6.1.0 x86_64')).toBe('x86_64');
    expect(coveredArch(undefined)).toBeNull();
    expect(coveredArch('garbage')).toBeNull();
    const rec = { id: 'r', outcome: 'exit', status: 0, exit: 0, command: { line: 'make', cwd: '/c', env: {} }, started: 's', ended: 'e', session: 's', ai: 'claude', laptop: { hostname: 'h', user: 'u', cwd: '/' }, vm: { id: 's.laptop.dev-lima-koda', backend: 'lima', uname: 'Linux 6.8.0 aarch64' }, log: 'l' } as unknown as RunRecord;
    expect(recordText(rec)).toContain('- architecture covered: aarch64 (not x86_64)\n');
  });
});
