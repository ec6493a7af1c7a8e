// `offhost run --fresh` (seeds 001 and 004) and honest isolation (seed 002), end to end with the built CLI
// and stateful stand-ins of the vmbox driver (`vm`) and the Tart helper (`tart-vm.sh`).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { standinPath, readStandinLog } from '../helpers/standins.js';
import { cleanEnv, configure, ensureBuilt, g, offhost } from '../locks/lifecycle-helpers.js';
import { readVerdict, sandboxName } from '../../src/vms/sandbox.js';
import { unmet } from '../../src/vms/isolation.js';

let home: string;
let repo: string;
let env: Record<string, string>;
let state: string;
let log: string;

const rule = (id: string, prog: string, route: string) =>
  `  - { id: ${id}, policy: R1, description: ${id}, decision: reroute, route: ${route}, message: ${id} runs in a sandbox, match: { program: [${prog}] }, examples: { match: [${prog} x] } }`;

beforeAll(() => {
  ensureBuilt();
  home = mkdtempSync(join(tmpdir(), 'offhost-sandbox-'));
  repo = join(home, 'dev', 'koder');
  mkdirSync(repo, { recursive: true });
  g(repo, 'init', '-q', '-b', 'main');
  configure(repo);
  const bin = join(home, 'bin');
  mkdirSync(bin);
  // A probe that leaves a result in guest-local storage (R6: outputs stay on the VM unless fetched).
  writeFileSync(join(bin, 'clean-probe'), `#!/bin/sh\nmkdir -p '${home}/guest-out' && echo "probe ran in $(pwd)" > '${home}/guest-out/result.txt'\n`);
  writeFileSync(join(bin, 'shutdown-installer'), '#!/bin/sh\necho installing\n');
  writeFileSync(join(bin, 'x86-evidence'), '#!/bin/sh\nexit 0\n');
  writeFileSync(join(bin, 'heavy-local'), '#!/bin/sh\nexit 0\n');
  for (const f of ['clean-probe', 'shutdown-installer', 'x86-evidence', 'heavy-local']) chmodSync(join(bin, f), 0o755);
  writeFileSync(
    join(repo, 'offhost.config.yaml'),
    [
      'vms:',
      '  - id: s.laptop.dev-arch-box',
      '    backend: template',
      '    template: "vm run {instance} {script}"',
      '    instance: golden',
      '    kind: vm',
      '    arch: x86_64',
      '    where: laptop',
      '    lifecycle: { up: "vm new {instance}", exec: "vm run {instance} {script}", run: "vm run {instance} {script}", rm: "vm rm {instance}", reset: "vm reset {instance}" }',
      '    verdicts: vmbox',
      '  - id: s.laptop.dev-tart-clean',
      '    backend: template',
      '    template: "tart-vm.sh exec {instance} -- sh -c {script}"',
      '    instance: clean',
      '    kind: vm',
      '    arch: aarch64',
      '    where: laptop',
      '    lifecycle: { up: "tart-vm.sh up {instance} ghcr.io/cirruslabs/ubuntu:latest", exec: "tart-vm.sh exec {instance} -- sh -c {script}", down: "tart-vm.sh down {instance}", rm: "tart-vm.sh rm {instance}" }',
      '  - { id: s.laptop.dev-docker, backend: docker, instance: builder }',
      '  - { id: s.khost9.dev-plain, backend: ssh, host: khost9, kind: vm, where: remote }',
      'routes:',
      '  box: { vms: [s.laptop.dev-arch-box] }',
      '  tart: { vms: [s.laptop.dev-tart-clean] }',
      '  x86: { vms: [s.laptop.dev-tart-clean], require: { arch: x86_64 } }',
      '  onvm: { vms: [s.laptop.dev-docker], require: { where: remote } }',
      '  hw: { vms: [s.laptop.dev-docker], require: { kind: [vm, microvm] } }',
      '  plain: { vms: [s.khost9.dev-plain] }',
      'rules:',
      rule('shutdown-installer', 'shutdown-installer', 'box'),
      rule('clean-probe', 'clean-probe', 'tart'),
      rule('x86-evidence', 'x86-evidence', 'x86'),
      rule('heavy-local', 'heavy-local', 'onvm'),
      rule('plain-job', 'plain-job', 'plain'),
      '  - { id: hw-isolation, policy: R1, description: hw, decision: reroute, route: hw, message: needs hardware isolation, match: { program: [hw-job] }, examples: { match: [hw-job x] } }',
      '',
    ].join('\n'),
  );
  state = join(home, 'state');
  log = join(home, 'standin.log');
  env = {
    ...(cleanEnv() as Record<string, string>),
    HOME: home,
    PATH: `${standinPath()}:${bin}:${process.env.PATH}`,
    OFFHOST_ROLE: 'laptop',
    OFFHOST_SESSION: 'sandbox-test',
    OFFHOST_STANDIN_STATE: state,
    OFFHOST_STANDIN_LOG: log,
  };
});
afterAll(() => rmSync(home, { recursive: true, force: true }));

const run = (args: string[]) => offhost(['run', ...args], { cwd: repo, baseEnv: env });
const sandboxes = (tool: string) => {
  try {
    return Object.keys(JSON.parse(readFileSync(join(state, `${tool}.json`), 'utf8')).instances);
  } catch {
    return [];
  }
};

describe('run --fresh: a uniquely named sandbox, created, used, results copied back, removed', () => {
  it('Tart helper: up, exec, fetch, rm; the exit status is the command\'s', async () => {
    const r = await run(['--fresh', '--fetch', join(home, 'guest-out'), '--fetch-to', join(home, 'results'), '--', 'clean-probe && exit 7']);
    expect(r.code, r.stderr).toBe(7);
    const entries = readStandinLog(log).filter((e) => e.tool === 'tart-vm.sh');
    const name = entries[0]!.instance!;
    expect(name).toMatch(/^offhost-tart-clean-\d{8}-\d{6}-[a-z0-9]{1,4}$/);
    expect(entries.map((e) => (e.sub as string | undefined) ?? 'exec')).toEqual(['up', 'exec', 'exec', 'rm']);
    expect(entries.every((e) => e.instance === name)).toBe(true);
    expect(sandboxes('tart-vm')).toEqual([]);
    expect(readFileSync(join(home, 'results', name, 'guest-out', 'result.txt'), 'utf8')).toBe(`probe ran in ${repo}\n`);
    expect(r.stderr).toContain(`removed sandbox ${name}`);
  });

  it('the sandbox is removed even when the command fails to start', async () => {
    const r = await run(['--fresh', '--', 'clean-probe; no-such-program-here']);
    expect(r.code).toBe(127);
    expect(sandboxes('tart-vm')).toEqual([]);
  });

  it('a VM without lifecycle verbs cannot do --fresh (status 2, nothing run)', async () => {
    const before = readStandinLog(log).length;
    const r = await run(['--fresh', '--', 'plain-job']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--fresh needs a VM with lifecycle verbs (up/exec/rm templates), and s.khost9.dev-plain has none');
    expect(readStandinLog(log).length).toBe(before);
  });
});

describe('vmbox verdicts are outcomes of their own, read from the host', () => {
  const cases: [string, number, RegExp][] = [
    ['shutdown-installer enable; sudo systemctl poweroff', 0, /verdict \(read from the host\): clean poweroff/],
    ['shutdown-installer enable; sudo poweroff -f', 235, /dirty shutdown \(exit 235\)/],
    ['shutdown-installer enable; sudo systemctl reboot', 236, /rebooted, did not power off \(exit 236\)/],
    ['shutdown-installer; echo c > /proc/sysrq-trigger', 237, /crashed \(guest panic\) \(exit 237\)/],
    ['shutdown-installer; vmbox-wedge', 238, /hung .* \(exit 238\)/],
  ];
  for (const [line, code, msg] of cases) {
    it(`${line} -> ${code}`, async () => {
      const r = await run(['--fresh', '--', line]);
      expect(r.code, r.stderr).toBe(code);
      expect(r.stderr).toMatch(msg);
      expect(sandboxes('vm')).toEqual([]);
    });
  }
  it('a command that does not shut down keeps its own status (no verdict)', async () => {
    const r = await run(['--fresh', '--', 'shutdown-installer; exit 3']);
    expect(r.code).toBe(3);
    expect(r.stderr).not.toMatch(/verdict/);
  });
  it('readVerdict takes the last VERDICT line; sandbox names are unique', () => {
    expect(readVerdict('x\nVERDICT: dirty\nVERDICT: clean poweroff\n')).toMatchObject({ outcome: 'clean poweroff', status: 0 });
    expect(readVerdict('Connection closed by remote host\n')).toBeNull();
    expect(readVerdict('VERDICT: exploded')).toMatchObject({ status: 238 });
    const vm = { id: 's.laptop.dev-tart-clean', backend: 'template' as const };
    const now = new Date('2026-12-01T09:00:00Z');
    expect(new Set(Array.from({ length: 20 }, () => sandboxName(vm, now))).size).toBe(20);
  });
});

describe('honest isolation: refused, never downgraded', () => {
  it('an arm64 guest never stands in for x86_64 evidence (234, nothing run)', async () => {
    const before = readStandinLog(log).length;
    const r = await run(['--', 'x86-evidence']);
    expect(r.code).toBe(234);
    expect(r.stderr).toContain('it must run on x86_64, and s.laptop.dev-tart-clean is aarch64 (an arm64 guest is no x86_64 evidence)');
    expect(r.stderr).toContain('Nothing was run; no lock was taken');
    expect(readStandinLog(log).length).toBe(before);
  });
  it('a route that must be remote, pointed at a local docker container, is refused (234)', async () => {
    const r = await run(['--', 'heavy-local']);
    expect(r.code).toBe(234);
    expect(r.stderr).toContain('runs on this laptop (a local container is not "on the VM", POLICY R1)');
  });
  it('hardware isolation asked of a container is refused (234)', async () => {
    const r = await run(['--', 'hw-job']);
    expect(r.code).toBe(234);
    expect(r.stderr).toContain('it must be a vm or microvm, and s.laptop.dev-docker is a container');
  });
  it('nothing is assumed: an undeclared kind or arch does not meet a requirement', () => {
    expect(unmet({ id: 's.k.dev-x', backend: 'ssh', host: 'k' }, { kind: ['vm'], arch: ['x86_64'] })).toHaveLength(2);
    expect(unmet({ id: 's.k.dev-x', backend: 'ssh', host: 'k', kind: 'vm', arch: 'amd64' }, { kind: ['vm'], arch: ['x86_64'], where: 'remote' })).toEqual([]);
  });
});
