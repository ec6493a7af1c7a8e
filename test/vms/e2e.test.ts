// A new user with only a VM host: `offhost vm provision s.khost1.dev-linux-koda`, then a rerouted
// `make build-safe`, with the runbook written and committed; and every failure on the way stops with its
// own status and what to do. The built CLI as a child process, a real git monorepo in a temp HOME, the
// stateful stand-in ssh + incus (instances, devices, packages, snapshots, disk in a state directory).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { standinPath, readStandinLog } from '../helpers/standins.js';
import { cleanEnv, configure, ensureBuilt, g, offhost } from '../locks/lifecycle-helpers.js';
import { sampling } from '../helpers/sample.js';

/** Tests that repeat what a kept test does end to end run in `npm run test:full` (test/helpers/sample.ts). */
const sample = sampling('full');

beforeAll(() => ensureBuilt());
const made: string[] = [];
afterAll(() => {
  for (const d of made) rmSync(d, { recursive: true, force: true });
});

const VM = 's.khost1.dev-linux-koda';
const RUNBOOK = 'meta/context/runbooks/test-vm-provisioning.md';

function world() {
  const home = mkdtempSync(join(tmpdir(), 'offhost-vms-'));
  made.push(home);
  const repo = join(home, 'dev', 'koder');
  const koda = join(repo, 'engines', 'lang', 'koda');
  const out = join(home, 'out');
  mkdirSync(koda, { recursive: true });
  mkdirSync(out);
  g(repo, 'init', '-q', '-b', 'main');
  configure(repo);
  // build-safe records where it ran and which nasm it found (the guest's, installed by provisioning).
  writeFileSync(join(koda, 'Makefile'), ['build-safe:', `\t@echo "built in $$(pwd) with $$(command -v nasm)" > '${out}/built'`, ''].join('\n'));
  writeFileSync(join(repo, 'README.md'), 'monorepo\n');
  g(repo, 'add', '.');
  g(repo, 'commit', '-q', '-m', 'init');
  const state = join(home, 'vmhost');
  const env = {
    ...(cleanEnv() as Record<string, string>),
    HOME: home,
    PATH: `${standinPath()}:${process.env.PATH}`,
    OFFHOST_ROLE: 'laptop',
    OFFHOST_SESSION: 'vms-e2e',
    OFFHOST_AI: 'claude',
    OFFHOST_STANDIN_LOG: join(out, 'standin.log'),
    OFFHOST_STANDIN_PROBE_LOG: join(out, 'probe.log'),
    OFFHOST_STANDIN_STATE: state,
  };
  return { home, repo, koda, out, state, env };
}
type World = ReturnType<typeof world>;
const vm = (w: World, args: string[], extra: Record<string, string> = {}) => offhost(['vm', ...args], { cwd: w.repo, baseEnv: { ...w.env, ...extra } });
const run = (w: World, line: string, extra: Record<string, string> = {}) => offhost(['run', '--', line], { cwd: w.koda, baseEnv: { ...w.env, ...extra } });
const incusState = (w: World) => JSON.parse(readFileSync(join(w.state, 'incus.json'), 'utf8'));
const saveState = (w: World, s: unknown) => writeFileSync(join(w.state, 'incus.json'), JSON.stringify(s));

describe('from nothing to a rerouted make build-safe', () => {
  let w: World;
  beforeAll(() => {
    w = world();
  });

  it('a run before provisioning says the instance is missing, with the provision command, and takes no lock', async () => {
    const r = await run(w, 'make build-safe');
    expect(r.code, r.stderr).toBe(243);
    expect(r.stderr).toContain('instance dev-linux-koda does not exist on khost1');
    expect(r.stderr).toContain(`offhost vm provision ${VM}`);
    expect(r.stderr).toMatch(/not the command's result\)\. Nothing was run; no lock was taken/);
    expect(g(w.repo, 'log', '--format=%s').trim().split('\n')).toEqual(['init']);
    expect(existsSync(join(w.out, 'built'))).toBe(false);
  });

  it('provision launches, mounts, installs, smokes, snapshots, and commits the runbook alone', async () => {
    // Unrelated work the user has staged, and a file they have not: neither is committed.
    writeFileSync(join(w.repo, 'README.md'), 'monorepo, edited\n');
    g(w.repo, 'add', 'README.md');
    writeFileSync(join(w.repo, 'notes.txt'), 'mine\n');
    const r = await vm(w, ['provision', VM]);
    expect(r.code, r.stderr + r.stdout).toBe(0);
    for (const step of ['instance', 'mount', 'packages', 'smoke', 'snapshot']) expect(r.stdout).toMatch(new RegExp(`(done|unchanged)\\s+${step}`));
    expect(r.stdout).toContain('$ ssh khost1 -- incus launch images:debian/13 dev-linux-koda');
    expect(r.stdout).toContain(`disk source=${w.repo} path=${w.repo} readonly=true`);
    expect(r.stdout).toMatch(/installed nasm gcc binutils make git/);
    // What the VM host now holds (the stand-in's state).
    const i = incusState(w).instances['dev-linux-koda'];
    expect(i.status).toBe('Running');
    expect(i.image).toBe('images:debian/13');
    expect(i.devices.koder).toEqual({ type: 'disk', source: w.repo, path: w.repo, readonly: 'true' });
    expect(i.packages).toEqual(['nasm', 'gcc', 'binutils', 'make', 'git']);
    expect(i.snapshots.map((s: { name: string }) => s.name)).toEqual(['provisioned']);
    // The runbook: written, committed as its own commit, nothing else in it.
    const book = readFileSync(join(w.repo, RUNBOOK), 'utf8');
    expect(book).toContain(`## `);
    expect(book).toContain(VM);
    expect(book).toContain('incus launch images:debian/13 dev-linux-koda');
    expect(g(w.repo, 'show', '--name-only', '--format=%s', 'HEAD').trim().split('\n')).toEqual([`runbook: provisioned ${VM} (offhost vm provision)`, '', RUNBOOK]);
    // The user's staged edit is still staged and uncommitted; the untracked file untouched.
    expect(g(w.repo, 'diff', '--cached', '--name-only').trim()).toBe('README.md');
    expect(g(w.repo, 'show', 'HEAD:README.md')).toBe('monorepo\n');
    expect(g(w.repo, 'status', '--porcelain').split('\n').filter(Boolean).sort()).toEqual(['?? notes.txt', 'M  README.md']);
  });

  it('a second provision changes nothing, says so, and leaves the runbook alone', async () => {
    const before = g(w.repo, 'rev-parse', 'HEAD');
    const stateBefore = readFileSync(join(w.state, 'incus.json'), 'utf8');
    const r = await vm(w, ['provision', VM]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).not.toMatch(/^\s+done/m);
    expect(r.stdout).toContain('already provisioned: nothing changed (runbook not touched)');
    expect(g(w.repo, 'rev-parse', 'HEAD')).toBe(before);
    expect(readFileSync(join(w.state, 'incus.json'), 'utf8')).toBe(stateBefore);
  });

  it('vm status: every check passes', async () => {
    const r = await vm(w, ['status', VM]);
    expect(r.code, r.stdout).toBe(0);
    expect(r.stdout).toContain(`${VM}: ready`);
    for (const c of ['laptop tool', 'host', 'instance', 'disk', 'mount', 'tools']) expect(r.stdout).toMatch(new RegExp(`ok\\s+${c}`));
  });

  it('make build-safe is rerouted and runs in the VM, in the same path, with the guest\'s toolchain', async () => {
    const r = await run(w, 'make build-safe');
    expect(r.code, r.stderr).toBe(0);
    const built = readFileSync(join(w.out, 'built'), 'utf8');
    expect(built).toContain(`built in ${w.koda} with ${join(w.state, 'incus-guests', 'dev-linux-koda', 'bin', 'nasm')}`);
    // The guest exec ran the run's session bootstrap, which ran offhost run's VM script (src/run/remote.ts,
    // carrying the command) sent on its stdin: the guest exec names the bootstrap, not the command.
    const log = readStandinLog(join(w.out, 'standin.log')).filter((e) => e.tool === 'incus' && e.instance === 'dev-linux-koda' && Array.isArray(e.argv));
    expect(log.some((e) => (e.argv as string[]).join(' ').includes(': offhost-end-'))).toBe(true);
    // The preflight ran (its own log), before the command.
    expect(readStandinLog(join(w.out, 'probe.log')).some((e) => e.tool === 'incus' && e.sub === 'list')).toBe(true);
  });
});

describe('every failure on the way stops with what to do', () => {
  let w: World;
  beforeAll(async () => {
    w = world();
    const r = await vm(w, ['provision', VM]);
    expect(r.code, r.stderr).toBe(0);
  });

  it('host unreachable: run and status exit 232 and say how to make ssh work; provision too', async () => {
    writeFileSync(join(w.state, 'unreachable-khost1'), '');
    try {
      const r = await run(w, 'make build-safe');
      expect(r.code).toBe(232);
      expect(r.stderr).toContain('cannot reach khost1 over ssh: ssh: connect to host khost1 port 22: No route to host');
      expect(r.stderr).toContain('make `ssh khost1 true` work without a prompt');
      const s = await vm(w, ['status', VM]);
      expect(s.code).toBe(232);
      const p = await vm(w, ['provision', VM]);
      expect(p.code).toBe(232);
      expect(p.stderr).toContain('cannot reach khost1 over ssh');
    } finally {
      rmSync(join(w.state, 'unreachable-khost1'));
    }
  });

  it('mount missing: run exits 232 naming the device to add; status too; provision puts it back', async () => {
    const s = incusState(w);
    delete s.instances['dev-linux-koda'].devices.koder;
    saveState(w, s);
    const r = await run(w, 'make build-safe');
    expect(r.code).toBe(232);
    expect(r.stderr).toContain(`has no disk device at ${w.repo}: the source is not mounted (R6)`);
    expect(r.stderr).toContain(`incus config device add dev-linux-koda koder disk source=${w.repo} path=${w.repo} readonly=true`);
    expect((await vm(w, ['status', VM])).code).toBe(232);
    const p = await vm(w, ['provision', VM]);
    expect(p.code, p.stderr).toBe(0);
    expect(p.stdout).toMatch(/done\s+mount/);
    expect((await run(w, 'make build-safe')).code).toBe(0);
  });

  sample.fullOnly('a writable mount where the catalogue says read-only: status refuses it, provision will not overwrite it', async () => {
    const s = incusState(w);
    s.instances['dev-linux-koda'].devices.koder.readonly = 'false';
    saveState(w, s);
    const st = await vm(w, ['status', VM]);
    expect(st.code).toBe(232);
    expect(st.stdout).toContain('mounted writable in the guest; the catalogue says read-only');
    const p = await vm(w, ['provision', VM]);
    expect(p.code).toBe(232);
    expect(p.stderr).toContain('Nothing was changed');
    s.instances['dev-linux-koda'].devices.koder.readonly = 'true';
    saveState(w, s);
  });

  it('disk full: run and status exit 233, say to report it, and the VM is neither stopped nor deleted', async () => {
    const s = incusState(w);
    const snaps = s.instances['dev-linux-koda'].snapshots.length;
    s.instances['dev-linux-koda'].disk.used_mb = s.instances['dev-linux-koda'].disk.size_mb - 100;
    saveState(w, s);
    const r = await run(w, 'make build-safe');
    expect(r.code).toBe(233);
    expect(r.stderr).toMatch(/the guest disk is full: 100 MB free on \/tmp .* under the floor of 2048 MB/);
    expect(r.stderr).toContain('never stops, deletes or cleans a VM to make room');
    const st = await vm(w, ['status', VM]);
    expect(st.code).toBe(233);
    const after = incusState(w).instances['dev-linux-koda'];
    expect(after.status).toBe('Running');
    expect(after.snapshots.length).toBe(snaps);
    s.instances['dev-linux-koda'].disk.used_mb = 900;
    saveState(w, s);
  });

  sample.fullOnly('a package install on a full disk: provision exits 233 with apt\'s message', async () => {
    const s = incusState(w);
    const i = s.instances['dev-linux-koda'];
    i.packages = i.packages.filter((p: string) => p !== 'nasm');
    i.disk.used_mb = i.disk.size_mb - 10;
    saveState(w, s);
    const p = await vm(w, ['provision', VM]);
    expect(p.code).toBe(233);
    expect(p.stderr).toContain("E: You don't have enough free space in /var/cache/apt/archives/.");
    expect(p.stderr).toContain('Report it and ask before reclaiming space');
    expect(incusState(w).instances['dev-linux-koda'].status).toBe('Running');
    i.disk.used_mb = 900;
    saveState(w, s);
  });

  sample.fullOnly('a declared tool missing: status exits 232 and points at provision', async () => {
    const s = incusState(w);
    const i = s.instances['dev-linux-koda'];
    i.packages = i.packages.filter((p: string) => p !== 'nasm');
    saveState(w, s);
    rmSync(join(w.state, 'incus-guests', 'dev-linux-koda', 'bin', 'nasm'));
    const st = await vm(w, ['status', VM]);
    expect(st.code).toBe(232);
    expect(st.stdout).toContain('missing in the guest: nasm');
    expect(st.stdout).toContain(`offhost vm provision ${VM}\` installs the VM's packages`);
    const p = await vm(w, ['provision', VM]);
    expect(p.code, p.stderr).toBe(0);
    expect(p.stdout).toMatch(/done\s+packages\s+installed nasm/);
    // Something changed after the first snapshot: a new one, the earlier ones kept.
    const names = incusState(w).instances['dev-linux-koda'].snapshots.map((x: { name: string }) => x.name);
    expect(names[0]).toBe('provisioned');
    expect(names.at(-1)).toMatch(/^provisioned-\d{8}T\d{6}Z$/);
  });

  sample.fullOnly('a stopped instance: run exits 232 and says how to start it (offhost does not start it itself)', async () => {
    const s = incusState(w);
    s.instances['dev-linux-koda'].status = 'Stopped';
    saveState(w, s);
    const r = await run(w, 'make build-safe');
    expect(r.code).toBe(232);
    expect(r.stderr).toContain('instance dev-linux-koda is Stopped');
    expect(r.stderr).toContain('ssh khost1 -- incus start dev-linux-koda');
    expect(incusState(w).instances['dev-linux-koda'].status).toBe('Stopped');
    s.instances['dev-linux-koda'].status = 'Running';
    saveState(w, s);
  });

  sample.fullOnly('provision of a VM another session holds waits for it (exit 1), changing nothing; otherwise it holds the lock while it works', async () => {
    const other = { ...w.env, OFFHOST_SESSION: 'someone-else', OFFHOST_AI: 'codex' };
    const a = await offhost(['lock', 'acquire', VM, '--reason', 'soak test'], { cwd: w.repo, baseEnv: other });
    expect(a.code, a.stderr).toBe(0);
    const before = readFileSync(join(w.state, 'incus.json'), 'utf8');
    const p = await vm(w, ['provision', VM]);
    expect(p.code).toBe(1);
    expect(p.stderr).toMatch(/held by session someone-else \(codex\)/);
    expect(p.stderr).toContain('Nothing was done');
    expect(readFileSync(join(w.state, 'incus.json'), 'utf8')).toBe(before);
    expect((await offhost(['lock', 'release', VM], { cwd: w.repo, baseEnv: other })).code).toBe(0);
    // Free again: provision takes the lock, and archives it when done.
    const q = await vm(w, ['provision', VM]);
    expect(q.code, q.stderr).toBe(0);
    const hist = g(w.repo, 'log', 'refs/offhost/locks', '--format=%s');
    expect(hist).toMatch(/vms-e2e/);
    const st = await offhost(['lock', 'status', VM], { cwd: w.repo, baseEnv: w.env });
    expect(st.stdout + st.stderr).not.toMatch(/held by session vms-e2e/);
  });

  it('a backend provision does not handle, and an id not in the catalogue, are refused with status 2', async () => {
    const a = await vm(w, ['provision', 's.khost1.dev-win10']);
    expect(a.code).toBe(2);
    expect(a.stderr).toContain('bootstraps incus instances');
    const b = await vm(w, ['provision', 's.khost1.dev-nothing']);
    expect(b.code).toBe(2);
    expect(b.stderr).toContain('is not in the VM catalogue');
    const c = await vm(w, ['provision', 's.khost1.flow']);
    expect(c.code).toBe(2);
    expect(c.stderr).toContain('production container');
  });

  sample.fullOnly('a numbered VM of the pool is provisioned like its base (R4 option b)', async () => {
    const p = await vm(w, ['provision', `${VM}-2`]);
    expect(p.code, p.stderr).toBe(0);
    expect(p.stdout).toContain('incus launch images:debian/13 dev-linux-koda-2');
    expect(p.stdout).toContain('add it to the catalogue and to the route\'s vms');
    expect(incusState(w).instances['dev-linux-koda-2'].packages).toEqual(['nasm', 'gcc', 'binutils', 'make', 'git']);
  });
});

describe('a pool whose every VM is busy', () => {
  it('run says who holds them and offers a new numbered VM (R4 option b)', async () => {
    const w = world();
    const env = { ...w.env } as Record<string, string>;
    delete env.OFFHOST_STANDIN_STATE; // a host where every instance runs as provisioned
    writeFileSync(
      join(w.repo, 'offhost.config.yaml'),
      [
        'vms:',
        '  - { id: s.khost1.dev-linux-koda-1, backend: incus, host: khost1, instance: dev-linux-koda-1, mount: { source: "{root}", path: "{root}" } }',
        '  - { id: s.khost1.dev-linux-koda-2, backend: incus, host: khost1, instance: dev-linux-koda-2, mount: { source: "{root}", path: "{root}" } }',
        'routes:',
        '  koda:',
        '    vms: [s.khost1.dev-linux-koda-1, s.khost1.dev-linux-koda-2]',
        '',
      ].join('\n'),
    );
    g(w.repo, 'add', 'offhost.config.yaml');
    g(w.repo, 'commit', '-q', '-m', 'config');
    for (const id of ['s.khost1.dev-linux-koda-1', 's.khost1.dev-linux-koda-2']) {
      const a = await offhost(['lock', 'acquire', id, '--reason', 'soak'], { cwd: w.repo, baseEnv: { ...env, OFFHOST_SESSION: 'other-session' } });
      expect(a.code, a.stderr).toBe(0);
    }
    const r = await offhost(['run', '--', 'make build-safe'], { cwd: w.koda, baseEnv: env });
    expect(r.code).toBe(241); // offhost run's own "held" outcome
    expect(r.stdout + r.stderr).toContain('other-session');
    expect(r.stderr).toContain('Every VM of route koda is busy');
    expect(r.stderr).toContain('`offhost vm provision s.khost1.dev-linux-koda-3` (a copy of s.khost1.dev-linux-koda-1)');
    expect(existsSync(join(w.out, 'built'))).toBe(false);
  });
});

describe('a VM on another host the config names (one grammar for check, run and lock)', () => {
  it('s.khost2.dev-linux-gui is routed to, locked and archived like the built-ins', async () => {
    const w = world();
    const env = { ...w.env } as Record<string, string>;
    delete env.OFFHOST_STANDIN_STATE;
    writeFileSync(
      join(w.repo, 'offhost.config.yaml'),
      [
        'vms:',
        '  - { id: s.khost2.dev-linux-gui, backend: incus, host: khost2, instance: dev-linux-gui, kind: container, where: remote }',
        'routes:',
        '  koda: { vms: [s.khost2.dev-linux-gui] }',
        '',
      ].join('\n'),
    );
    g(w.repo, 'add', 'offhost.config.yaml');
    g(w.repo, 'commit', '-q', '-m', 'config');
    const c = await offhost(['check', '--json', 'make build-safe'], { cwd: w.koda, baseEnv: env });
    expect(JSON.parse(c.stdout).route.vm).toBe('s.khost2.dev-linux-gui');
    const r = await offhost(['run', '--', 'make build-safe'], { cwd: w.koda, baseEnv: env });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain('holding s.khost2.dev-linux-gui');
    const ssh = readStandinLog(join(w.out, 'standin.log')).find((e) => e.tool === 'ssh');
    expect(ssh?.host).toBe('khost2');
    // The lock store's history (refs/offhost/locks) names the VM.
    expect(g(w.repo, 'log', 'refs/offhost/locks', '--format=%s').split('\n').some((s) => s.includes('s.khost2.dev-linux-gui'))).toBe(true);
    const l = await offhost(['lock', 'acquire', 's.khost2.dev-linux-gui', '--reason', 'x'], { cwd: w.repo, baseEnv: env });
    expect(l.code, l.stderr).toBe(0);
  });
});

describe('provisioning refuses what it will not repair by itself', () => {
  it('an instance of another kind than declared: provision and status exit 234, nothing changed', async () => {
    const w = world();
    expect((await vm(w, ['provision', VM])).code).toBe(0);
    writeFileSync(join(w.repo, 'offhost.config.yaml'), `vms:\n  - { id: ${VM}, backend: incus, host: khost1, instance: dev-linux-koda, kind: vm, arch: x86_64, where: remote, image: "images:debian/13" }\n`);
    const before = readFileSync(join(w.state, 'incus.json'), 'utf8');
    const p = await vm(w, ['provision', VM]);
    expect(p.code).toBe(234);
    expect(p.stderr).toContain('dev-linux-koda exists as a container; the catalogue declares a vm. Nothing was changed');
    expect(readFileSync(join(w.state, 'incus.json'), 'utf8')).toBe(before);
    const s = await vm(w, ['status', VM]);
    expect(s.code).toBe(234);
    expect(s.stdout).toContain('dev-linux-koda is a container on x86_64; the catalogue says vm, x86_64, on khost1');
  });
  sample.fullOnly('an arm64 instance where the catalogue says x86_64: status exits 234', async () => {
    const w = world();
    expect((await vm(w, ['provision', VM], { OFFHOST_STANDIN_ARCH: 'aarch64' })).code).toBe(0);
    const s = await vm(w, ['status', VM]);
    expect(s.code).toBe(234);
    expect(s.stdout).toContain('is a container on aarch64; the catalogue says container, x86_64');
  });
  sample.fullOnly('a mount source missing on the host: provision exits 232 and says where the monorepo must be', async () => {
    const w = world();
    writeFileSync(join(w.repo, 'offhost.config.yaml'), `vms:\n  - { id: ${VM}, backend: incus, host: khost1, instance: dev-linux-koda, kind: container, image: "images:debian/13", mount: { source: /nonexistent/koder, path: "{root}" } }\n`);
    const p = await vm(w, ['provision', VM]);
    expect(p.code).toBe(232);
    expect(p.stderr).toContain('the mount source /nonexistent/koder does not exist on khost1');
    expect(p.stderr).toContain('Put the monorepo there');
    expect(incusState(w).instances['dev-linux-koda'].devices).toEqual({});
  });
  sample.fullOnly('a smoke command that fails: provision exits 232 with its output, and takes no snapshot', async () => {
    const w = world();
    writeFileSync(join(w.repo, 'offhost.config.yaml'), `vms:\n  - { id: ${VM}, backend: incus, host: khost1, instance: dev-linux-koda, kind: container, image: "images:debian/13", packages: [make], smoke: "nasm -v" }\n`);
    const p = await vm(w, ['provision', VM]);
    expect(p.code).toBe(232);
    expect(p.stderr).toMatch(/the smoke command failed \(exit 127\)/);
    expect(incusState(w).instances['dev-linux-koda'].snapshots).toEqual([]);
  });
});
