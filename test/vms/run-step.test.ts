// The run's VM preflight step for one VM, against the stateful stand-ins: outcomes by name and status.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { standinEnv } from '../helpers/standins.js';
import { vmRunPreflight } from '../../src/vms/run-step.js';
import type { VmSpec } from '../../src/routes/types.js';

let dir: string;
let env: Record<string, string>;
let vm: VmSpec;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'offhost-runstep-'));
  mkdirSync(join(dir, 'src'));
  env = standinEnv({ home: dir, env: { OFFHOST_STANDIN_STATE: join(dir, 'state') } });
  vm = { id: 's.khost1.dev-linux-koda', backend: 'incus', host: 'khost1', instance: 'dev-linux-koda', mount: { source: join(dir, 'src'), path: join(dir, 'src'), readonly: true }, disk_floor_mb: 100 };
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('vmRunPreflight', () => {
  it('vm-not-found (243) before the instance exists', async () => {
    expect(await vmRunPreflight(vm, env)).toMatchObject({ outcome: 'vm-not-found', status: 243 });
  });
  it('preflight-failed (232) without the mount; null once it is there', async () => {
    const { spawnSync } = await import('node:child_process');
    spawnSync('incus', ['launch', 'images:debian/13', 'dev-linux-koda'], { env });
    const stop = await vmRunPreflight(vm, env);
    expect(stop).toMatchObject({ outcome: 'preflight-failed', status: 232 });
    expect(stop!.message).toContain('not the command\'s result');
    spawnSync('incus', ['config', 'device', 'add', 'dev-linux-koda', 'koder', 'disk', `source=${dir}/src`, `path=${dir}/src`, 'readonly=true'], { env });
    expect(await vmRunPreflight(vm, env)).toBeNull();
  });
  it('disk-full (233) under the floor', async () => {
    const full = { ...vm, disk_floor_mb: 1_000_000 };
    expect(await vmRunPreflight(full, env)).toMatchObject({ outcome: 'disk-full', status: 233 });
  });
});
