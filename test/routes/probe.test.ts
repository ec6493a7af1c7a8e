// probeBackend: tools looked up on env.PATH (fs checks only), exact setup guidance when missing.
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BUILTIN_VMS, findOnPath, probeBackend, type VmSpec } from '../../src/routes/index.js';
import { standinPath } from '../helpers/standins.js';

let root: string;
let empty: string;
let withTools: string;
function tool(dir: string, name: string, mode = 0o755): void {
  writeFileSync(join(dir, name), '#!/bin/sh\nexit 0\n');
  chmodSync(join(dir, name), mode);
}
beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'offhost-probe-'));
  empty = join(root, 'empty');
  withTools = join(root, 'tools');
  mkdirSync(empty);
  mkdirSync(withTools);
  for (const t of ['ssh', 'incus', 'docker', 'limactl', 'multipass', 'tart', 'vm']) tool(withTools, t);
  tool(withTools, 'notexec', 0o644);
  mkdirSync(join(withTools, 'dirtool'));
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

const KODA = BUILTIN_VMS['s.khost1.dev-linux-koda']!;
const only = (...names: string[]) => {
  const d = mkdtempSync(join(root, 'only-'));
  for (const n of names) tool(d, n);
  return { PATH: d };
};

describe('findOnPath', () => {
  it('finds executables, skips non-executables, directories, empty and relative PATH entries', () => {
    expect(findOnPath('ssh', { PATH: `${empty}:${withTools}` })).toBe(join(withTools, 'ssh'));
    expect(findOnPath('notexec', { PATH: withTools })).toBeNull();
    expect(findOnPath('dirtool', { PATH: withTools })).toBeNull();
    expect(findOnPath('ssh', { PATH: `::.:tools` })).toBeNull();
    expect(findOnPath('ssh', {})).toBeNull();
    expect(findOnPath(join(withTools, 'vm'), { PATH: '' })).toBe(join(withTools, 'vm'));
    expect(findOnPath(join(withTools, 'nope'), { PATH: '' })).toBeNull();
  });
});

describe('probeBackend', () => {
  it('null when the tools are present (the stand-ins count as present)', () => {
    expect(probeBackend(KODA, { PATH: withTools })).toBeNull();
    expect(probeBackend(KODA, { PATH: standinPath() })).toBeNull();
  });

  it('incus behind ssh needs only ssh locally', () => {
    expect(probeBackend(KODA, only('ssh'))).toBeNull();
    const hint = probeBackend(KODA, only('incus'));
    expect(hint?.tool).toBe('ssh');
    expect(hint?.message).toContain('incus runs on khost1 behind ssh');
    expect(hint?.message).toContain('sudo apt install openssh-client');
    expect(hint?.message).toContain('ssh khost1 true');
    expect(hint?.message).toContain('~/.ssh/config');
    expect(hint?.message).toContain('ssh khost1 -- incus list');
  });

  it('local incus needs incus, and the hint offers the ssh host instead', () => {
    const vm: VmSpec = { id: 's.khost1.dev-linux-koda', backend: 'incus', instance: 'dev-linux-koda' };
    expect(probeBackend(vm, only('incus'))).toBeNull();
    const hint = probeBackend(vm, only('ssh'));
    expect(hint?.tool).toBe('incus');
    expect(hint?.message).toContain('sudo apt install incus');
    expect(hint?.message).toContain('incus-admin');
    expect(hint?.message).toContain('host: khost1');
  });

  it.each([
    [{ id: 'x', backend: 'ssh', host: 'khost1' }, 'ssh', 'openssh-client'],
    [{ id: 'x', backend: 'docker', instance: 'c' }, 'docker', 'docs.docker.com/engine/install'],
    [{ id: 'x', backend: 'lima', instance: 'landlock-vm' }, 'limactl', 'brew install lima'],
    [{ id: 'x', backend: 'multipass', instance: 'p' }, 'multipass', 'snap install multipass'],
    [{ id: 'x', backend: 'tart', instance: 't' }, 'tart', 'brew install cirruslabs/cli/tart'],
    [{ id: 'x', backend: 'template', template: 'vm run {instance} {script}', instance: 'b' }, 'vm', 'not on PATH'],
  ] as [VmSpec, string, string][])('%o with an empty PATH names %s and how to set it up', (vm, toolName, text) => {
    const hint = probeBackend(vm, { PATH: empty });
    expect(hint).not.toBeNull();
    expect(hint!.tool).toBe(toolName);
    expect(hint!.message).toContain(text);
    expect(hint!.message).toContain(`route ${vm.id}`);
  });

  it('docker behind ssh needs only ssh', () => {
    expect(probeBackend({ id: 'x', backend: 'docker', host: 'h', instance: 'c' }, only('ssh'))).toBeNull();
    expect(probeBackend({ id: 'x', backend: 'docker', host: 'h', instance: 'c' }, only('docker'))?.tool).toBe('ssh');
  });

  it('lima needs limactl and ssh (limactl reaches the guest with the system ssh)', () => {
    const vm: VmSpec = { id: 'x', backend: 'lima', instance: 'default' };
    expect(probeBackend(vm, only('limactl', 'ssh'))).toBeNull();
    expect(probeBackend(vm, only('limactl'))?.tool).toBe('ssh');
    expect(probeBackend(vm, only('ssh'))?.tool).toBe('limactl');
  });

  it('template: an absolute program is checked as a file; a relative one cannot be judged and passes', () => {
    expect(probeBackend({ id: 'x', backend: 'template', template: `${join(withTools, 'vm')} run {instance} {script}` }, { PATH: empty })).toBeNull();
    expect(probeBackend({ id: 'x', backend: 'template', template: `${join(empty, 'vm')} run {script}` }, { PATH: empty })?.tool).toBe(join(empty, 'vm'));
    expect(probeBackend({ id: 'x', backend: 'template', template: 'tests/vm/tart-vm.sh exec {instance} -- sh -c {script}' }, { PATH: empty })).toBeNull();
  });

  it('does not spawn anything (works with a PATH whose tools would fail if run)', () => {
    const d = mkdtempSync(join(root, 'boom-'));
    writeFileSync(join(d, 'ssh'), '#!/bin/sh\necho spawned >&2\nexit 99\n');
    chmodSync(join(d, 'ssh'), 0o755);
    expect(probeBackend(KODA, { PATH: d })).toBeNull();
  });
});
