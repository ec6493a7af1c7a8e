// The cheap preflight's round trip is not paid twice a minute (src/vms/probe-reuse.ts): against a real sshd
// on loopback, with a recording `ssh` first on PATH, a second run on the same open master skips the probe;
// a closed master, an old reading, a floor the reading is under, or multiplexing turned off bring it back.
import { describe, expect, it } from 'vitest';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { sshdAvailable } from '../helpers/sshd.js';
import { g } from '../locks/lifecycle-helpers.js';
import { LOOP_VM, loopbackSshd, recordSsh, records, runOn, verdict, type Laptop } from './loopback.js';
import { sampling } from '../helpers/sample.js';

/** Tests that repeat what a kept test does end to end run in `npm run test:full` (test/helpers/sample.ts). */
const sample = sampling('full');

const loop = loopbackSshd();

/** A laptop whose every ssh call is written to a log before it runs. */
function recorded(vm: Record<string, unknown> = {}): { l: Laptop; calls: () => string[] } {
  const l = loop.laptop(vm);
  return { l, calls: recordSsh(l) };
}

const probes = (calls: string[]) => calls.filter((c) => c.includes('offhost-probe')).length;
const readingFile = (l: Laptop) => {
  const dir = join(l.home, '.local', 'state', 'offhost', 'probe');
  return join(dir, readdirSync(dir)[0]!);
};
function closeMaster(l: Laptop): void {
  // The options the run used are in its ssh calls; `-O exit` on the same control path ends the master.
  const cp = readFileSync(join(l.base, 'ssh-calls.log'), 'utf8').match(/ControlPath=(\S+)/)![1]!;
  const host = readFileSync(join(l.repo, 'offhost.config.yaml'), 'utf8').match(/"host":"([^"]+)"/)![1]!;
  const r = spawnSync('ssh', ['-o', `ControlPath=${cp}`, '-O', 'exit', host], { env: l.env, encoding: 'utf8' });
  expect(r.status, r.stderr).toBe(0);
}

describe.skipIf(!sshdAvailable())('the preflight probe, reused on the open connection', () => {
  it('the second run within a minute sends no probe (it asks the local master instead), and both run the command', async () => {
    const { l, calls } = recorded();
    const a = await runOn(l, ['--json', '--', 'bash -c "echo one"']);
    expect(verdict(a).outcome, a.stderr).toBe('exit');
    expect(probes(calls())).toBe(1);
    const before = calls().length;
    const b = await runOn(l, ['--json', '--', 'bash -c "echo two"']);
    expect(verdict(b).outcome, b.stderr).toBe('exit');
    expect(b.stdout).toBe('two\n');
    const second = calls().slice(before);
    expect(probes(second)).toBe(0);
    expect(second.some((c) => /-O check/.test(c))).toBe(true);
    expect(records(l).at(-1)!.outcome).toBe('exit');
  });

  sample.fullOnly('a closed master or an old reading: the probe runs again', async () => {
    const { l, calls } = recorded();
    expect((await runOn(l, ['--', 'bash -c true'])).code).toBe(0);
    closeMaster(l);
    let before = calls().length;
    expect((await runOn(l, ['--', 'bash -c true'])).code).toBe(0);
    expect(probes(calls().slice(before))).toBe(1);
    const f = readingFile(l);
    const r = JSON.parse(readFileSync(f, 'utf8')) as { at: number };
    writeFileSync(f, JSON.stringify({ ...r, at: r.at - 120_000 }));
    before = calls().length;
    expect((await runOn(l, ['--', 'bash -c true'])).code).toBe(0);
    expect(probes(calls().slice(before))).toBe(1);
  });

  it('a floor raised above the reading: the probe runs, finds the disk under it, and the run stops before any lock', async () => {
    const { l, calls } = recorded();
    expect((await runOn(l, ['--', 'bash -c true'])).code).toBe(0);
    const cfg = join(l.repo, 'offhost.config.yaml');
    writeFileSync(cfg, readFileSync(cfg, 'utf8').replace(`"id":"${LOOP_VM}"`, `"id":"${LOOP_VM}","disk_floor_mb":1000000000`));
    g(l.repo, 'commit', '-q', '-am', 'a floor no disk has');
    const before = calls().length;
    const r = await runOn(l, ['--json', '--', 'bash -c true']);
    expect(verdict(r).outcome, r.stderr).toBe('disk-full');
    expect(r.code).toBe(233);
    expect(r.stderr).toContain('no lock was taken');
    expect(probes(calls().slice(before))).toBe(1);
  });

  sample.fullOnly('OFFHOST_SSH_MULTIPLEX=0 (no shared master): every run probes', async () => {
    const { l, calls } = recorded();
    l.env.OFFHOST_SSH_MULTIPLEX = '0';
    expect((await runOn(l, ['--', 'bash -c true'])).code).toBe(0);
    expect((await runOn(l, ['--', 'bash -c true'])).code).toBe(0);
    expect(probes(calls())).toBe(2);
  });
});
