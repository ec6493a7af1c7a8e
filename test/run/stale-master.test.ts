// A shared ssh master whose connection died unseen (a laptop that slept, a network that changed) must not
// hang or fail the next run (src/vms/preflight.ts STALE_MASTER_MS): against a real sshd on loopback, the
// server's processes for the master's connection are stopped (SIGSTOP: the TCP connection stays, nothing
// answers on it, as with a peer that went away), and the next run's probe on that master is given up, the
// master told to take no new clients, and the run goes on over a connection of its own.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { descendants, sshdAvailable, startSshd, type Sshd } from '../helpers/sshd.js';
import { ensureBuilt } from '../locks/lifecycle-helpers.js';
import { alive, laptop, LOOP_ACTIVE, onVm, records, runOn, start, until, verdict, type Laptop } from './loopback.js';

let s: Sshd | undefined;
let control = '';
const made: Laptop[] = [];
beforeAll(async () => {
  ensureBuilt();
  // A control folder of this file's own, short (a socket's path is limited to about 104 bytes).
  control = mkdtempSync('/tmp/ohm-');
  if (sshdAvailable()) s = await startSshd();
});
afterAll(async () => {
  await s?.stop();
  for (const l of made) l.cleanup();
  rmSync(control, { recursive: true, force: true });
});

/** A process's command line (empty once it is gone). */
function cmdline(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ');
  } catch {
    return '';
  }
}

const sockets = () => readdirSync(join(control, `offhost-ssh-${process.getuid!()}`));
/** Ages the kept disk reading past its minute, so that the next run probes (on the open master). */
function ageReading(l: Laptop): void {
  const dir = join(l.home, '.local', 'state', 'offhost', 'probe');
  for (const f of readdirSync(dir)) {
    const r = JSON.parse(readFileSync(join(dir, f), 'utf8')) as { at: number };
    writeFileSync(join(dir, f), JSON.stringify({ ...r, at: r.at - 120_000 }));
  }
}

describe.skipIf(!sshdAvailable() || process.platform !== 'linux')('a shared master whose connection stopped answering', () => {
  it('the next run gives up its probe on that master, opens a connection of its own, says so, and runs the command', async () => {
    const l = laptop(s!, {}, { env: { OFFHOST_SSH_CONTROL_DIR: control } });
    made.push(l);
    const first = await runOn(l, ['--', onVm('echo one')]);
    expect(first.code, first.stderr).toBe(0);
    const [sock] = sockets();
    expect(sock, 'the first run left its master open').toBeDefined();
    const socket = join(control, `offhost-ssh-${process.getuid!()}`, sock!);
    const ask = (timeout: number) => spawnSync('ssh', ['-o', `ControlPath=${socket}`, '-o', 'ControlMaster=no', s!.alias, '--', 'echo through-master'], { env: l.env, encoding: 'utf8', timeout });
    expect(ask(60_000).stdout).toBe('through-master\n');

    // The server's side of that connection stops answering; the master process on the laptop lives on.
    const serving = s!.connections();
    expect(serving.length).toBeGreaterThan(0);
    for (const p of serving) process.kill(p, 'SIGSTOP');
    try {
      // The stand-in for a dead peer is one: a channel on that master gets no answer (killed after 3 s).
      const hung = ask(3_000);
      expect(hung.stdout).toBe('');
      expect(hung.signal).toBe('SIGTERM');
      expect(spawnSync('ssh', ['-o', `ControlPath=${socket}`, '-O', 'check', s!.alias], { env: l.env }).status, 'the master process still answers locally').toBe(0);

      ageReading(l);
      const second = await runOn(l, ['--json', '--', onVm('echo two')]);
      expect(second.code, second.stderr).toBe(0);
      expect(second.stdout).toBe('two\n');
      expect(second.stderr).toMatch(/the open ssh connection to offhost-test-vm did not answer \(no answer within 10 s\): a new one was opened/);
      expect(records(l).at(-1)!.outcome).toBe('exit');
      // The new master is the one at the socket's path now, and it carries.
      expect(ask(60_000).stdout).toBe('through-master\n');
    } finally {
      for (const p of serving) {
        try {
          process.kill(p, 'SIGCONT');
        } catch {
          /* ended */
        }
      }
    }
  });
});

describe.skipIf(!sshdAvailable() || process.platform !== 'linux')('stopped while it waits on a dead master', () => {
  it('SIGINT during the wait: interrupted (130), nothing ran, no lock taken, no probe of its own left; the next run works', async () => {
    const l = laptop(s!, {}, { env: { OFFHOST_SSH_CONTROL_DIR: control } });
    made.push(l);
    expect((await runOn(l, ['--', onVm('echo one')])).code).toBe(0);
    const serving = s!.connections();
    for (const p of serving) process.kill(p, 'SIGSTOP');
    let probes: number[] = [];
    try {
      ageReading(l);
      const run = start(l, ['--json', '--', onVm(`touch ${l.out}/ran`)]);
      // The run's probe is waiting on the dead master: an ssh whose parent chain is this run.
      const mine = () => descendants(run.child.pid!).filter((p) => /(^|\/)ssh .*offhost-probe/.test(cmdline(p)));
      await until(() => mine().length > 0);
      probes = mine();
      run.child.kill('SIGINT');
      const r = await run.done;
      expect(r.code, r.stderr).toBe(130);
      expect(verdict(r).outcome).toBe('interrupted');
      expect(existsSync(join(l.out, 'ran'))).toBe(false);
      expect(existsSync(join(l.repo, LOOP_ACTIVE))).toBe(false);
      await until(() => probes.every((p) => !alive(p)));
    } finally {
      for (const p of serving) {
        try {
          process.kill(p, 'SIGCONT');
        } catch {
          /* ended */
        }
      }
    }
    // Once the server answers again, the next run (another session) takes the VM and runs.
    const next = await runOn(l, ['--', onVm(`touch ${l.out}/next`)], { env: { OFFHOST_SESSION: 'another-session' } });
    expect(next.code, next.stderr).toBe(0);
    expect(existsSync(join(l.out, 'next'))).toBe(true);
  });
});

describe.skipIf(!sshdAvailable() || process.platform !== 'linux')("the control folder's length", () => {
  /** A folder X such that X/offhost-ssh-<uid> is `n` bytes long. */
  function folderOfLength(n: number): string {
    const tail = `/offhost-ssh-${process.getuid!()}`.length;
    const x = `${control}/${'p'.repeat(n - tail - control.length - 1)}`;
    expect(`${x}/offhost-ssh-${process.getuid!()}`.length).toBe(n);
    return x;
  }

  it('at 36 bytes the run multiplexes; at 41, where ssh itself cannot bind the socket, it runs without a master', async () => {
    const ok = folderOfLength(36);
    const l = laptop(s!, {}, { env: { OFFHOST_SSH_CONTROL_DIR: ok } });
    made.push(l);
    const a = await runOn(l, ['--', onVm('echo short')]);
    expect(a.code, a.stderr).toBe(0);
    expect(readdirSync(join(ok, `offhost-ssh-${process.getuid!()}`))).toHaveLength(1);

    const long = folderOfLength(41);
    // What ssh does with a master at that length (the case the check is for): it refuses to start.
    const sock = `${long}/offhost-ssh-${process.getuid!()}/${'c'.repeat(40)}-${'t'.repeat(8)}`;
    mkdirSync(dirname(sock), { recursive: true, mode: 0o700 });
    const direct = spawnSync('ssh', ['-o', 'ControlMaster=auto', '-o', `ControlPath=${sock}`, '-o', 'ControlPersist=5', s!.alias, 'true'], { env: l.env, encoding: 'utf8' });
    expect(direct.status).toBe(255);
    expect(direct.stderr).toMatch(/too long for Unix domain socket/);
    const m = laptop(s!, {}, { env: { OFFHOST_SSH_CONTROL_DIR: long } });
    made.push(m);
    const b = await runOn(m, ['--', onVm('echo long')]);
    expect(b.code, b.stderr).toBe(0);
    expect(b.stdout).toBe('long\n');
    expect(readdirSync(dirname(sock))).toEqual([]);
    // Said, not silent: every connection of such a run pays its own handshake.
    expect(b.stderr).toContain(`ssh connections are not shared (each pays its own handshake): ${dirname(sock)} is 41 bytes, too long for ssh's control sockets in it (at most 36)`);
    expect(a.stderr).not.toContain('not shared');
  });

  it('a control folder others can enter is not used, and the run says so', async () => {
    const open = join(control, 'open');
    mkdirSync(join(open, `offhost-ssh-${process.getuid!()}`), { recursive: true, mode: 0o755 });
    const l = laptop(s!, {}, { env: { OFFHOST_SSH_CONTROL_DIR: open } });
    made.push(l);
    const r = await runOn(l, ['--', onVm('echo open')]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe('open\n');
    expect(r.stderr).toMatch(/ssh connections are not shared .*offhost-ssh-\d+ is not a folder of this user's alone \(mode 0700\)/);
    expect(readdirSync(join(open, `offhost-ssh-${process.getuid!()}`))).toEqual([]);
  });
});
