// Interruption and hangs (issue 11 item 3) against a real sshd: signals reach the remote command's whole
// process group, no remote process outlives an interrupted run, the lock is archived only after the
// remote work stopped, a lost or hung connection is reported as such, --timeout, stdin closed unless
// --stdin. The "VM" is this machine, so the test checks the remote pids directly.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { missing, titled } from '../helpers/tools.js';
import { RUN_EXIT } from '../../src/errors.js';
import { alive, ancestors, LOOP_ACTIVE, onVm, records, runOn, start, until, verdict, type Laptop, loopbackSshd } from './loopback.js';
import { sampling } from '../helpers/sample.js';

/** Tests that repeat what a kept test does end to end run in `npm run test:full` (test/helpers/sample.ts). */
const sample = sampling('full');

const noSshd = missing('sshd');
const loop = loopbackSshd();
function mk(vm: Record<string, unknown> = {}): Laptop {
  const l = loop.laptop({ sync: 'shared', ...vm });
  return l;
}

/** A command that starts two background sleeps and a foreground one, recording every pid. */
function spawner(out: string, extra = ''): string {
  return onVm(`${extra}sleep 300 & echo $! >> ${out}/pids; (sleep 301; true) & echo $! >> ${out}/pids; echo $$ >> ${out}/pids; touch ${out}/started; sleep 302; echo not-reached`);
}
function pids(l: Laptop): number[] {
  return readFileSync(join(l.out, 'pids'), 'utf8').trim().split('\n').map(Number);
}

describe.skipIf(noSshd)(titled('offhost run: signals, lost connections, timeouts, stdin', noSshd), () => {
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    it(`${sig}: reaches the remote process group; nothing of it outlives the run; the lock is archived after`, async () => {
      const l = mk();
      const run = start(l, ['--json', '--', spawner(l.out)]);
      await until(() => existsSync(join(l.out, 'started')));
      const remote = pids(l);
      expect(remote.every(alive)).toBe(true);
      run.child.kill(sig);
      const r = await run.done;
      expect(remote.filter(alive), r.stderr).toEqual([]);
      const v = verdict(r);
      expect(v.outcome).toBe('interrupted');
      // bash -c, killed by the signal on the VM, reports 128+n: passed through as it is.
      expect(r.code).toBe({ SIGINT: 130, SIGTERM: 143, SIGHUP: 129 }[sig]);
      expect(v.status).toBe(r.code);
      expect(r.stdout).not.toContain('not-reached');
      expect(existsSync(join(l.repo, LOOP_ACTIVE))).toBe(false);
      expect(records(l).at(-1)!.outcome).toBe('interrupted');
    });
  }

  sample.fullOnly('the lock is archived only after the remote command has finished its own clean-up', async () => {
    const l = mk();
    // On TERM the command takes a second to clean up, then writes a file: it must exist when offhost exits.
    const cmd = `trap 'sleep 1; echo cleaned > ${l.out}/cleaned; exit 7' TERM; touch ${l.out}/started; sleep 300 & wait`;
    const run = start(l, ['--', onVm(cmd)]);
    await until(() => existsSync(join(l.out, 'started')));
    run.child.kill('SIGTERM');
    const r = await run.done;
    expect(readFileSync(join(l.out, 'cleaned'), 'utf8')).toBe('cleaned\n');
    expect(r.code, r.stderr).toBe(7);
    expect(existsSync(join(l.repo, LOOP_ACTIVE))).toBe(false);
  });

  sample.fullOnly('a command that ignores TERM is killed after the grace period', async () => {
    const l = mk();
    const run = start(l, ['--grace', '1', '--json', '--', spawner(l.out, "trap '' TERM INT HUP; ")]);
    await until(() => existsSync(join(l.out, 'started')));
    run.child.kill('SIGTERM');
    const r = await run.done;
    expect(pids(l).filter(alive)).toEqual([]);
    expect(verdict(r).outcome).toBe('interrupted');
    expect(r.code).toBe(137); // bash killed by KILL on the VM
  });

  it('leftovers of the command are stopped when it ends (the VM is held only while work runs)', async () => {
    const l = mk();
    const r = await runOn(l, ['--', onVm(`sleep 300 & echo $! > ${l.out}/pids; exit 3`)]);
    expect(r.code, r.stderr).toBe(3);
    expect(pids(l).filter(alive)).toEqual([]);
  });

  it('a dropped connection: connection-lost (244); the remote group is stopped; the lock is archived after checking', async () => {
    const l = mk();
    const run = start(l, ['--json', '--', spawner(l.out)]);
    await until(() => existsSync(join(l.out, 'started')));
    const remote = pids(l);
    const session = ancestors(remote[2]!).find((a) => a.comm.startsWith('sshd'))!;
    expect(session, JSON.stringify(ancestors(remote[2]!))).toBeDefined();
    process.kill(session.pid, 'SIGKILL');
    const r = await run.done;
    expect(r.code, r.stderr).toBe(RUN_EXIT.connectionLost);
    const v = verdict(r);
    expect(v.outcome).toBe('connection-lost');
    expect(v.detail).toContain('not running on the VM');
    await until(() => remote.filter(alive).length === 0);
    expect(existsSync(join(l.repo, LOOP_ACTIVE))).toBe(false);
  });

  it('a hung connection is given up on by keepalives (connection-lost); the work is stopped from a new session', async () => {
    const l = mk({ keepalive_seconds: 1 });
    const run = start(l, ['--json', '--', spawner(l.out)]);
    await until(() => existsSync(join(l.out, 'started')));
    const remote = pids(l);
    const session = ancestors(remote[2]!).find((a) => a.comm.startsWith('sshd'))!;
    process.kill(session.pid, 'SIGSTOP'); // the server side stops answering; TCP stays up
    try {
      const r = await run.done;
      expect(r.code, r.stderr).toBe(RUN_EXIT.connectionLost);
      const v = verdict(r);
      expect(v.outcome).toBe('connection-lost');
      expect(v.detail).toContain('was lost while the command ran');
      expect(remote.filter(alive)).toEqual([]);
      expect(existsSync(join(l.repo, LOOP_ACTIVE)), r.stderr).toBe(false);
    } finally {
      process.kill(session.pid, 'SIGCONT');
    }
  });

  it('--timeout: stops the command (timeout, 250), nothing left running', async () => {
    const l = mk();
    const r = await runOn(l, ['--timeout', '1', '--json', '--', spawner(l.out)]);
    expect(r.code, r.stderr).toBe(RUN_EXIT.timeout);
    expect(verdict(r).outcome).toBe('timeout');
    expect(verdict(r).status).toBe(143);
    expect(pids(l).filter(alive)).toEqual([]);
  });

  it('stdin is closed unless --stdin; with --stdin it reaches the command', async () => {
    const l = mk();
    const closed = await runOn(l, ['--', onVm('cat; echo "[end]"')], { input: 'typed on the laptop\n' });
    expect(closed.code, closed.stderr).toBe(0);
    expect(closed.stdout).toBe('[end]\n');
    const open = await runOn(l, ['--stdin', '--', onVm('cat; echo "[end]"')], { input: 'typed on the laptop\n' });
    expect(open.code, open.stderr).toBe(0);
    expect(open.stdout).toBe('typed on the laptop\n[end]\n');
  });

  sample.fullOnly('--stdin: a signal still reaches the group (from a new session)', async () => {
    const l = mk();
    const run = start(l, ['--stdin', '--', spawner(l.out)]);
    await until(() => existsSync(join(l.out, 'started')));
    run.child.kill('SIGINT');
    const r = await run.done;
    expect(r.code, r.stderr).toBe(130);
    expect(pids(l).filter(alive)).toEqual([]);
  });
});
