// The tools' quoting quirks our renderings steer around, checked against the stand-ins (which copy
// the real tools' behaviour): limactl's env-looking leading words and the guest login shell's keywords,
// multipass's unquoted `sudo` path, docker's end of options, ssh's option parsing after the host.
import { chmodSync, copyFileSync, mkdirSync, realpathSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { renderJob, type Job, type VmSpec } from '../../src/routes/index.js';
import { standinPath } from '../helpers/standins.js';
import { makeWorld, runOnLaptop, type World } from './harness.js';

let world: World;
let qbin: string;
let path: string;
beforeAll(() => {
  world = makeWorld();
  qbin = join(world.root, 'qbin');
  mkdirSync(qbin);
  // programs named like shell syntax or wrappers, all dumping their argv
  for (const name of ['if', 'time', 'a=b', '-dash']) copyFileSync(world.dumpers.plain, join(qbin, name));
  writeFileSync(join(qbin, 'sudo'), '#!/bin/sh\nexec "$@"\n');
  for (const name of ['if', 'time', 'a=b', '-dash', 'sudo']) chmodSync(join(qbin, name), 0o755);
  path = [standinPath(), qbin, join(world.root, 'bin'), '/usr/bin', '/bin'].join(':');
});
afterAll(() => world.cleanup());

const VMS: VmSpec[] = [
  { id: 'x', backend: 'incus', instance: 'i' },
  { id: 'x', backend: 'incus', instance: 'i', host: 'h' },
  { id: 'x', backend: 'ssh', host: 'h' },
  { id: 'x', backend: 'docker', instance: 'c' },
  { id: 'x', backend: 'lima', instance: 'l' },
  { id: 'x', backend: 'multipass', instance: 'm' },
  { id: 'x', backend: 'tart', instance: 't' },
  { id: 'x', backend: 'template', instance: 'b', template: 'vm run {instance} {script}' },
];

function check(vm: VmSpec, job: Job, expectArgs: string[]) {
  const line = renderJob(vm, job);
  const r = runOnLaptop(world, line, { PATH: path });
  const ctx = `${line}\n${r.stderr}`;
  expect(r.dump, ctx).not.toBeNull();
  expect(r.dump!.args, ctx).toEqual(expectArgs);
  expect(r.dump!.cwd, ctx).toBe(realpathSync(job.cwd));
  expect(r.status, ctx).toBe(Number(job.env.OFFHOST_T_EXIT ?? 0));
}

describe.each(VMS.map((vm) => [vm.backend + (vm.host ? '+host' : ''), vm] as const))('%s', (_name, vm) => {
  it('argv[0] named like a keyword (if, time) runs that program, not shell syntax', () => {
    const dir = world.makeDir(['k']);
    check(vm, { argv: ['if', 'then', 'fi'], cwd: dir, env: {} }, ['then', 'fi']);
    check(vm, { argv: ['time', 'x'], cwd: dir, env: { OFFHOST_T_EXIT: '3' } }, ['x']);
  });

  it("argv[0] with '=' is a program, not an assignment (limactl, env(1) and sh would take it for one)", () => {
    const dir = world.makeDir(['e']);
    check(vm, { argv: ['a=b', 'c=d', '-x'], cwd: dir, env: {} }, ['c=d', '-x']);
    check(vm, { argv: ['a=b', 'c=d'], cwd: dir, env: { K: 'v=w', OFFHOST_T_EXIT: '5' } }, ['c=d']);
  });

  it("argv[0] starting with '-' is a program, not an option of exec/env/the tool", () => {
    const dir = world.makeDir(['-d']);
    check(vm, { argv: ['-dash', '--', '-n'], cwd: dir, env: {} }, ['--', '-n']);
  });

  it('sudo as argv[0] keeps its arguments intact (multipass joins them unquoted on its own sudo path)', () => {
    const dir = world.makeDir(['s p']);
    check(vm, { argv: ['sudo', world.dumpers.plain, 'a  b', "c'd", ''], cwd: dir, env: {} }, ['a  b', "c'd", '']);
  });
});
