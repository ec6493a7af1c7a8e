// renderJob / renderLine / renderArgv: argv shapes, refusals, and the Koda route end to end through
// the stand-ins (with a path mapping, as the guard will use it).
import { mkdirSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/errors.js';
import { BACKENDS, BUILTIN_VMS, mapPath, renderArgv, renderJob, renderLine, type Job, type VmSpec } from '../../src/routes/index.js';
import { makeWorld, runOnLaptop, type World } from './harness.js';

const KODA = BUILTIN_VMS['s.khost1.dev-linux-koda']!;
const JOB: Job = { argv: ['make', 'build-safe'], cwd: '/home/koder/dev/koder/engines/lang/koda', env: {} };

describe('renderArgv (what a caller spawns without a shell)', () => {
  it('incus behind ssh: ssh host -- remote words quoted once', () => {
    expect(renderArgv(KODA, { ...JOB, argv: ['bash', '-c', 'make build-safe'] })).toEqual([
      'ssh', 'khost1', '--', 'incus', 'exec', 'dev-linux-koda', '--cwd', '/home/koder/dev/koder/engines/lang/koda', '--', 'bash', '-c', "'make build-safe'",
    ]);
  });
  it('incus locally: no quoting at all (no shell re-splits)', () => {
    expect(renderArgv({ id: 'x', backend: 'incus', instance: 'i' }, { argv: ['a b', ''], cwd: '/x y', env: { K: 'v w' } })).toEqual([
      'incus', 'exec', 'i', '--cwd', '/x y', '--env', 'K=v w', '--', 'a b', '',
    ]);
  });
  it('incus --user takes a numeric uid', () => {
    expect(renderArgv({ id: 'x', backend: 'incus', instance: 'i', user: '1000' }, JOB)).toContain('--user');
    expect(() => renderArgv({ id: 'x', backend: 'incus', instance: 'i', user: 'koder' }, JOB)).toThrow(/numeric uid/);
  });
  it('docker: no `--` after the container (docker would run a program named --)', () => {
    expect(renderArgv({ id: 'x', backend: 'docker', instance: 'c', user: 'node' }, { argv: ['-x'], cwd: '/w', env: {} })).toEqual([
      'docker', 'exec', '-u', 'node', '-w', '/w', 'c', '-x',
    ]);
  });
});

describe('layers and tools', () => {
  it.each([
    [{ id: 'x', backend: 'incus', instance: 'i' }, 0, ['incus']],
    [{ id: 'x', backend: 'incus', instance: 'i', host: 'h' }, 1, ['ssh']],
    [{ id: 'x', backend: 'docker', instance: 'i' }, 0, ['docker']],
    [{ id: 'x', backend: 'docker', instance: 'i', host: 'h' }, 1, ['ssh']],
    [{ id: 'x', backend: 'ssh', host: 'h' }, 1, ['ssh']],
    [{ id: 'x', backend: 'lima', instance: 'i' }, 0, ['limactl', 'ssh']],
    [{ id: 'x', backend: 'multipass', instance: 'i' }, 0, ['multipass']],
    [{ id: 'x', backend: 'tart', instance: 'i' }, 1, ['tart']],
    [{ id: 'x', backend: 'template', template: 'vm run {instance} {script}' }, 1, ['vm']],
  ] as [VmSpec, number, string[]][])('%o: %d layer(s), tools %o', (vm, layers, tools) => {
    expect(BACKENDS[vm.backend].layersFor(vm)).toBe(layers);
    expect(BACKENDS[vm.backend].tools(vm)).toEqual(tools);
    expect(BACKENDS[vm.backend].name).toBe(vm.backend);
  });
});

describe('refusals (ConfigError, nothing rendered)', () => {
  it.each([
    ['empty argv', { ...JOB, argv: [] }],
    ['NUL in argv', { ...JOB, argv: ['a\0b'] }],
    ['relative cwd', { ...JOB, cwd: 'engines/lang/koda' }],
    ['empty cwd', { ...JOB, cwd: '' }],
    ['env name with a dash', { ...JOB, env: { 'A-B': '1' } }],
    ['env name starting with a digit', { ...JOB, env: { '1A': '1' } }],
    ['NUL in an env value', { ...JOB, env: { A: 'x\0' } }],
    ['lone surrogate in argv', { ...JOB, argv: ['make', 'a\uD800b'] }],
    ['lone surrogate in an env value', { ...JOB, env: { A: '\uDC00' } }],
  ] as [string, Job][])('%s', (_name, job) => {
    expect(() => renderJob(KODA, job)).toThrow(ConfigError);
  });

  it.each([
    ['incus without instance', { id: 'x', backend: 'incus' }, /needs `instance`/],
    ['ssh without host', { id: 'x', backend: 'ssh' }, /needs `instance`.*ssh destination/],
    ['host that ssh would read as an option', { id: 'x', backend: 'ssh', host: '-oProxyCommand=sh' }, /must not start with '-'/],
    ['instance that incus would read as a flag', { id: 'x', backend: 'incus', instance: '--force' }, /must not start with '-'/],
    ['incus host that ssh would read as an option', { id: 'x', backend: 'incus', instance: 'i', host: '-F/tmp/x' }, /must not start with '-'/],
    ['user for lima', { id: 'x', backend: 'lima', instance: 'i', user: 'root' }, /cannot run as another user/],
    ['user for multipass', { id: 'x', backend: 'multipass', instance: 'i', user: 'root' }, /cannot run as another user/],
    ['user for tart', { id: 'x', backend: 'tart', instance: 'i', user: 'admin' }, /cannot run as another user/],
    ['unknown backend', { id: 'x', backend: 'vagrant' as VmSpec['backend'], instance: 'i' }, /unknown backend "vagrant"/],
  ] as [string, VmSpec, RegExp][])('%s', (_name, vm, message) => {
    expect(() => renderJob(vm, JOB)).toThrow(ConfigError);
    expect(() => renderJob(vm, JOB)).toThrow(message);
  });
});

describe('the Koda route end to end through the stand-ins', () => {
  let world: World;
  beforeAll(() => {
    world = makeWorld();
  });
  afterAll(() => world.cleanup());

  it('renderLine runs the line with bash on the VM, in the mapped directory, with env, and passes the status', () => {
    const laptopDir = '/home/koder/dev/koder/engines/lang/koda';
    const vmRepo = join(world.root, 'vm-side', 'koder');
    mkdirSync(join(vmRepo, 'engines', 'lang', 'koda'), { recursive: true });
    const cwd = mapPath(laptopDir, [{ from: '/home/koder/dev/koder', to: vmRepo }]);
    expect(cwd).toBe(join(vmRepo, 'engines', 'lang', 'koda'));
    const line = renderLine(KODA, 'printf "%s|%s|%s" "$PWD" "$MAKEFLAGS" "$0"; exit 42', cwd, { MAKEFLAGS: '-j 4 "x"' });
    const r = runOnLaptop(world, line);
    expect(r.stdout.toString()).toBe(`${realpathSync(cwd)}|-j 4 "x"|bash`);
    expect(r.status).toBe(42);
    expect(r.log.map((e) => [e.tool, e.instance])).toEqual([
      ['ssh', 'khost1'],
      ['incus', 'dev-linux-koda'],
    ]);
    expect(r.log[1]!.argv).toEqual(['bash', '-c', 'printf "%s|%s|%s" "$PWD" "$MAKEFLAGS" "$0"; exit 42']);
    expect(r.log[1]!.cwd).toBe(cwd);
  });

  it('a missing directory on the VM fails there, not on the laptop', () => {
    const r = runOnLaptop(world, renderLine(KODA, 'echo ran', join(world.root, 'does-not-exist')));
    expect(r.status).not.toBe(0);
    expect(r.stdout.toString()).toBe('');
    expect(r.stderr).toContain('does-not-exist');
  });

  it('a wrong instance fails with the backend error', () => {
    const r = runOnLaptop(world, renderLine(KODA, 'echo ran', world.home), { OFFHOST_STANDIN_INSTANCES: 'dev-linux-gui' });
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('Instance not found: dev-linux-koda');
  });
});
