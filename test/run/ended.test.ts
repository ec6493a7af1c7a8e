// However a run ends, the VM comes free as soon as its command has (issue 24), against a real sshd on
// loopback: `offhost run` killed with SIGKILL mid-command (no handler, no release) leaves a claim whose
// process is gone; the next offhost command on this host makes sure the job is gone on the VM, archives
// the lock with the reason, and another session gets the VM at once (not after the 2-hour ttl). What the
// command leaves outside its process group (setsid) is the run too: stopped at its end, and recorded.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { sshdAvailable } from '../helpers/sshd.js';
import { BIN, g } from '../locks/lifecycle-helpers.js';
import { LOOP_ACTIVE, onVm, records, runOn, start, until, verdict, type Laptop, loopbackSshd } from './loopback.js';
import { spawnSync } from 'node:child_process';
import { processesWhere, sameArgv } from '../helpers/processes.js';

const loop = loopbackSshd();

/** Pids of processes (of any parent) whose command line is exactly `argv`: the test's own scanner. */
const pidsRunning = (argv: string[]): number[] => processesWhere(sameArgv(argv));

const lockOnRef = (l: Laptop) => spawnSync('git', ['-C', l.repo, 'show', `refs/offhost/locks:${LOOP_ACTIVE}`], { encoding: 'utf8' });

describe('the scanner used below', () => {
  it('finds a process by its exact argv, not one whose argv merely contains it', async () => {
    const { spawn } = await import('node:child_process');
    const a = spawn('sleep', ['77.25']);
    const b = spawn('sleep', ['77.250']);
    try {
      await until(() => pidsRunning(['sleep', '77.25']).length > 0, 5000);
      expect(pidsRunning(['sleep', '77.25'])).toEqual([a.pid]);
    } finally {
      a.kill('SIGKILL');
      b.kill('SIGKILL');
    }
    await until(() => pidsRunning(['sleep', '77.25']).length === 0, 5000);
  });
});

describe.skipIf(!sshdAvailable())('a run that ends without releasing frees its VM at once', () => {
  it('SIGKILL mid-command: its job on the VM stops, the next offhost command archives the lock with the reason, another session gets the VM', async () => {
    const l = loop.laptop({}, { session: 'killed-session' });
    const marker = join(l.out, 'started');
    const run = start(l, ['--', onVm(`touch ${marker}; exec sleep 93.5`)], { input: undefined });
    await until(() => existsSync(marker), 60_000);
    await until(() => pidsRunning(['sleep', '93.5']).length === 1, 10_000);
    const claimText = lockOnRef(l).stdout;
    expect(claimText).toMatch(/pid: \d+/);
    expect(claimText).toMatch(/start: "?\d+"?/);
    expect(claimText).toMatch(/boot: [0-9a-f-]{36}/);
    expect(claimText).toMatch(/job: [0-9a-f]{16}/);
    run.child.kill('SIGKILL');
    await run.done;

    // Another session, at once (no --wait): the VM is free, the old lock archived with why.
    const other = await runOn(l, ['--json', '--session', 'other-session', '--', onVm('echo second run')]);
    expect(verdict(other).outcome, other.stderr).toBe('exit');
    expect(other.stdout).toBe('second run\n');
    expect(other.stderr).toMatch(/has ended \(its process \d+ on .* no longer runs\)/);
    expect(other.stderr).toMatch(/freed s\.khost1\.dev-linux-loop \(held by session killed-session\)/);
    // The killed run's command is gone on the VM (the watcher saw the end of input; the reaper checked).
    await until(() => pidsRunning(['sleep', '93.5']).length === 0, 20_000);
    const archive = g(l.repo, 'ls-tree', '-r', '--name-only', 'refs/offhost/locks').split('\n').filter((p) => p.includes('vm-active-archive/') && p.includes('expired'));
    expect(archive.length).toBe(1);
    const text = g(l.repo, 'show', `refs/offhost/locks:${archive[0]}`);
    expect(text).toMatch(/session: killed-session/);
    expect(text).toMatch(/the run holding it has ended without releasing it: claim run-[0-9a-f]+ .* its process \d+ on \S+ no longer runs/);
    // The killed run's record says it never finished (nothing rewrote it as a success).
    const killed = records(l).find((r) => r.session === 'killed-session')!;
    expect(killed.outcome).toBe('running');
  }, 180_000);

  it('a claim whose process is gone, seen by `offhost lock status`, is freed and said so', async () => {
    const l = loop.laptop({}, { session: 'killed-2' });
    const marker = join(l.out, 'started2');
    const run = start(l, ['--', onVm(`touch ${marker}; exec sleep 94.5`)], { input: undefined });
    await until(() => existsSync(marker), 60_000);
    run.child.kill('SIGKILL');
    await run.done;
    const st = spawnSync(process.execPath, [BIN, 'lock', 'status'], { cwd: l.repo, env: l.env, encoding: 'utf8' });
    expect(st.stderr).toMatch(/freed s\.khost1\.dev-linux-loop \(held by session killed-2\): the run holding it has ended/);
    expect(lockOnRef(l).status).not.toBe(0); // no active lock left on the ref
    await until(() => pidsRunning(['sleep', '94.5']).length === 0, 20_000);
  }, 180_000);

  it('what the command leaves outside its process group (setsid) is stopped at its end, and the record says so', async () => {
    const l = loop.laptop({});
    // The pid file is written after setsid(2): the daemon has left the group before the command ends.
    const pf = join(l.out, 'daemon.pid');
    const r = await runOn(l, ['--json', '--', onVm(`setsid sh -c 'echo $$ > ${pf}; exec sleep 95.5' </dev/null >/dev/null 2>&1 & while [ ! -s ${pf} ]; do sleep 0.05; done; echo left one`)]);
    expect(verdict(r).outcome, r.stderr).toBe('exit');
    expect(r.stdout).toBe('left one\n');
    expect(r.stderr).toMatch(/left processes on the VM outside its process group; stopped at its end: \d+:(sleep|sh)/);
    expect(pidsRunning(['sleep', '95.5'])).toEqual([]);
    const rec = records(l).at(-1)!;
    expect(rec.leftBehind).toMatchObject({ action: 'stopped', unstopped: [] });
    expect(rec.leftBehind!.processes.join(',')).toBe(`${readFileSync(pf, 'utf8').trim()}:sleep`);
    expect(lockOnRef(l).status).not.toBe(0); // released
  }, 180_000);
});
