// The stateful stand-ins refuse what the real tools refuse, with their messages (so provisioning and
// preflight failures are exercised against something that says no).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { standinEnv } from '../helpers/standins.js';

let dir: string;
let env: Record<string, string>;
const sh = (line: string) => {
  const r = spawnSync('bash', ['-c', line], { env, encoding: 'utf8' });
  return { code: r.status, out: r.stdout, err: r.stderr };
};
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'offhost-standins-'));
  mkdirSync(join(dir, 'src'));
  env = standinEnv({ home: dir, env: { OFFHOST_STANDIN_STATE: join(dir, 'state') } });
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('stand-in incus with state', () => {
  it('launch, then refuses a second launch of the same name', () => {
    expect(sh('incus launch images:debian/13 k1').code).toBe(0);
    const r = sh('incus launch images:debian/13 k1');
    expect(r.code).toBe(1);
    expect(r.err).toBe('Error: Failed creating instance record: Add instance info to the database: This "instances" entry already exists\n');
  });
  it('refuses an instance that does not exist', () => {
    expect(sh('incus exec nope -- true').err).toBe('Error: Instance not found\n');
    expect(sh('incus delete nope').code).toBe(1);
  });
  it('refuses exec in a stopped instance and delete of a running one', () => {
    expect(sh('incus delete k1').err).toBe('Error: The instance is currently running, stop it first or pass --force\n');
    expect(sh('incus stop k1').code).toBe(0);
    expect(sh('incus exec k1 -- true').err).toBe('Error: Instance is not running\n');
    expect(sh('incus start k1').code).toBe(0);
  });
  it('refuses a device that exists and a disk whose source is missing', () => {
    expect(sh(`incus config device add k1 koder disk source=${dir}/src path=${dir}/src readonly=true`).code).toBe(0);
    expect(sh(`incus config device add k1 koder disk source=${dir}/src path=/x`).err).toBe('Error: The device already exists\n');
    expect(sh(`incus config device add k1 other disk source=${dir}/none path=/y`).err).toBe(`Error: Failed to start device "other": Missing source path "${dir}/none" for disk "other"\n`);
  });
  it('the guest sees the device at its path, read-only, and only the packages installed', () => {
    const r = sh(`incus exec k1 --cwd ${dir}/src -- sh -c 'pwd; findmnt -n -o TARGET,OPTIONS -T ${dir}/src; command -v nasm || echo no-nasm'`);
    expect(r.out).toBe(`${dir}/src\n${dir}/src ro,relatime\nno-nasm\n`);
    expect(sh('incus exec k1 -- apt-get install -y nasm').code).toBe(0);
    expect(sh('incus exec k1 -- nasm -v').out).toContain('nasm (stand-in from package nasm)');
  });
  it('snapshots: a name taken is refused, restore of an absent one too', () => {
    expect(sh('incus snapshot create k1 base').code).toBe(0);
    expect(sh('incus snapshot create k1 base').err).toMatch(/^Error: Failed creating instance snapshot record "base": .*already exists/);
    expect(sh('incus snapshot restore k1 nope').err).toBe('Error: Instance snapshot not found\n');
  });
  it('a full disk refuses apt as apt does (exit 100)', () => {
    expect(sh('incus launch images:debian/13 roomy >/dev/null && incus exec roomy -- apt-get install -y gcc make').code).toBe(0);
    const full = spawnSync('bash', ['-c', 'incus launch images:debian/13 full >/dev/null && incus exec full -- apt-get install -y gcc make'], { env: { ...env, OFFHOST_STANDIN_DISK_MB: '950' }, encoding: 'utf8' });
    expect(full.status).toBe(100);
    expect(full.stderr).toBe("E: You don't have enough free space in /var/cache/apt/archives/.\n");
  });
});

describe('stand-in limactl and tart with state', () => {
  it('limactl: shell needs a running instance; delete refuses a running one without --force', () => {
    expect(sh('limactl create --name=lv template://default').code).toBe(0);
    expect(sh('limactl shell lv -- true').err).toContain('instance "lv" is stopped, run `limactl start lv` to start the instance');
    expect(sh('limactl start lv && limactl shell lv -- echo in').out).toBe('in\n');
    expect(sh('limactl delete lv').err).toContain('expected status "Stopped", got "Running" (Hint: use --force)');
    expect(sh('limactl delete --force lv').code).toBe(0);
    expect(sh('limactl shell lv -- true').err).toContain('instance "lv" does not exist');
  });
  it('tart: exec needs a running VM; delete refuses a running one', () => {
    expect(sh('tart clone ghcr.io/cirruslabs/ubuntu:latest tv').code).toBe(0);
    expect(sh('tart exec tv true').err).toContain('Error: VM "tv" is not running');
    expect(sh('tart run tv && tart exec tv echo in').out).toBe('in\n');
    expect(sh('tart delete tv').err).toContain('is running, stop it first');
    expect(sh('tart stop tv && tart delete tv').code).toBe(0);
  });
});
