// The holder-process probe (src/locks/holder-process.ts): the Linux one for real (/proc, real child
// processes that end), the macOS one through an injected `ps`/`sysctl` (it cannot run here), and the
// claim-liveness rule built on them, including a reused pid, a reboot and a zombie built to fool it.
import { describe, expect, it } from 'vitest';
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { holderGone, holderIdentity, killZeroProbe, linuxProbe, macosProbe, type ProcessProbe } from '../../src/locks/holder-process.js';
import { deadClaim } from '../../src/locks/claims.js';
import type { Claim, LockRecord } from '../../src/locks/lock-types.js';

const onLinux = process.platform === 'linux';

async function exitedChildPid(): Promise<number> {
  const c = spawn('true');
  await new Promise((r) => c.on('close', r));
  return c.pid!;
}

describe.skipIf(!onLinux)('linuxProbe (real /proc)', () => {
  it("reads this process's start time (field 22 of /proc/PID/stat) and the boot id", () => {
    const stat = readFileSync(`/proc/${process.pid}/stat`, 'utf8');
    expect(linuxProbe.startTime(process.pid)).toBe(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]);
    expect(linuxProbe.bootId()).toBe(readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim());
  });
  it('a process that has ended has no start time; one whose name holds ") 1 2" is still read right', async () => {
    expect(linuxProbe.startTime(await exitedChildPid())).toBeNull();
    // A command name made to fool a naive split of /proc/PID/stat on the first ')'.
    const tricky = spawn('bash', ['-c', 'exec -a "x) Z 1 2 3" sleep 30']);
    try {
      await new Promise((r) => setTimeout(r, 300));
      const st = linuxProbe.startTime(tricky.pid!);
      expect(st).toMatch(/^\d+$/);
      expect(holderGone({ pid: tricky.pid!, start: st! })).toBeNull();
    } finally {
      tricky.kill('SIGKILL');
    }
  });
  it('a zombie (ended, not yet reaped) counts as gone', async () => {
    // bash execs sleep 0.1 as a child it never waits for while it sleeps itself: the child becomes a zombie.
    const parent = spawn('bash', ['-c', 'sleep 0.1 & exec sleep 30']);
    try {
      await new Promise((r) => setTimeout(r, 800));
      const kids = spawnSync('bash', ['-c', `cat /proc/${parent.pid}/task/*/children`], { encoding: 'utf8' }).stdout.trim().split(/\s+/).filter(Boolean).map(Number);
      expect(kids.length).toBe(1);
      const state = readFileSync(`/proc/${kids[0]}/stat`, 'utf8');
      expect(state.slice(state.lastIndexOf(')') + 2)[0]).toBe('Z');
      expect(linuxProbe.startTime(kids[0]!)).toBeNull();
    } finally {
      parent.kill('SIGKILL');
    }
  });
});

describe('holderGone: what proves a claim’s process gone', () => {
  const fixed = (start: string | null | undefined, boot: string | null): ProcessProbe => ({ name: 'fixed', startTime: () => start, bootId: () => boot });
  it('live: same pid, same start time, same boot', () => {
    expect(holderGone({ pid: 42, start: '100', boot: 'b1' }, 'h', fixed('100', 'b1'))).toBeNull();
  });
  it('gone: no such pid; a reused pid (another start time); another boot', () => {
    expect(holderGone({ pid: 42, start: '100', boot: 'b1' }, 'h', fixed(null, 'b1'))).toMatch(/process 42 on h no longer runs/);
    expect(holderGone({ pid: 42, start: '100', boot: 'b1' }, 'h', fixed('555', 'b1'))).toMatch(/pid 42 on h is another process now/);
    expect(holderGone({ pid: 42, start: '100', boot: 'b1' }, 'h', fixed('100', 'b2'))).toMatch(/h has rebooted since/);
    expect(holderGone({ pid: 0 }, 'h', fixed('1', 'b'))).toMatch(/not a process id/);
  });
  it('cannot tell (undefined) is never "gone"; an old claim without start/boot is judged by the pid alone', () => {
    expect(holderGone({ pid: 42, start: '100', boot: 'b1' }, 'h', fixed(undefined, null))).toBeNull();
    expect(holderGone({ pid: 42 }, 'h', fixed('999', 'b9'))).toBeNull();
  });
  it.skipIf(!onLinux)('for real: a claim made by a child records its identity, and is gone once the child is', async () => {
    const c = spawn('sleep', ['30']);
    await new Promise((r) => setTimeout(r, 100));
    const id = holderIdentity(c.pid!);
    expect(id.start).toMatch(/^\d+$/);
    expect(id.boot).toMatch(/^[0-9a-f-]{36}$/);
    expect(holderGone({ pid: c.pid!, ...id })).toBeNull();
    c.kill('SIGKILL');
    await new Promise((r) => c.on('close', r));
    expect(holderGone({ pid: c.pid!, ...id })).toMatch(/no longer runs/);
    expect(killZeroProbe.startTime(c.pid!)).toBeNull();
  });
});

describe('macosProbe (ps and sysctl injected: this is not macOS)', () => {
  it('reads ps -o lstart= and kern.boottime; ps exiting 1 (no such process) is gone; no ps at all is "cannot tell"', () => {
    const calls: string[] = [];
    const run = (file: string, args: string[]) => {
      calls.push([file, ...args].join(' '));
      if (file === 'sysctl') return '{ sec = 1764612345, usec = 123 } Mon Dec  1 10:05:45 2026\n';
      if (args.at(-1) === '7') return 'Mon Dec  1 10:06:00 2026\n';
      throw Object.assign(new Error('ps: no process'), { status: 1 });
    };
    const p = macosProbe(run);
    expect(p.startTime(7)).toBe('Mon Dec  1 10:06:00 2026');
    expect(p.startTime(8)).toBeNull();
    expect(p.bootId()).toBe('1764612345');
    expect(calls).toContain('ps -o lstart= -p 7');
    expect(calls).toContain('sysctl -n kern.boottime');
    const noPs = macosProbe(() => {
      throw Object.assign(new Error('spawn ps ENOENT'), { code: 'ENOENT' });
    });
    expect(noPs.startTime(7)).toBeUndefined();
    expect(noPs.bootId()).toBeNull();
  });
});

describe('deadClaim with a remote job', () => {
  const rec = { ttlMinutes: 60 } as LockRecord;
  const host = 'this-host';
  it.skipIf(!onLinux)('a same-host claim whose process is gone but whose VM job is not confirmed gone still holds (until its heartbeat ages out)', async () => {
    const pid = await exitedChildPid();
    const now = new Date();
    const claim: Claim = { id: 'run-x', pid, host, command: 'make', started: now, job: 'abc' };
    expect(deadClaim(claim, rec, now, host, 60)).toBeNull();
    expect(deadClaim({ ...claim, job: undefined } as Claim, rec, now, host, 60)).toMatch(/no longer runs/);
    const later = new Date(now.getTime() + 62 * 60_000);
    expect(deadClaim(claim, rec, later, host, 60)).toMatch(/no longer runs, and no heartbeat since/);
  });
});
