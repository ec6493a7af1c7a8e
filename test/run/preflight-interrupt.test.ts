// Ctrl-C during the preflight (issue 24): `offhost run` is interrupted (130 for SIGINT, 143 for SIGTERM),
// not "preflight failed" (232), runs nothing and leaves the VM free. Against a real sshd on 127.0.0.1 whose
// guest `df` (the preflight's disk probe) stalls while a flag file exists, as a hung NFS mount would: the
// test knows the run is inside its preflight (the stand-in says so), then signals it, with no timer to
// race. The stand-in waits by looking at the flag (not on a FIFO: a reader that came late would wait for
// ever once the test had let the others go), so every stalled probe ends once the flag is gone.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startSshd, type Sshd } from '../helpers/sshd.js';
import { missing, onPath, titled } from '../helpers/tools.js';
import { BIN, ensureBuilt, type Result } from '../locks/lifecycle-helpers.js';
import { alive, kodaDir, laptop, LOOP_ACTIVE, onVm, records, runOn, until, verdict, type Laptop } from './loopback.js';
import { g } from '../locks/lifecycle-helpers.js';

let s: Sshd;
let ctl: string;
const made: Laptop[] = [];
const noSshd = missing('sshd');
const REAL_DF = onPath('df') ?? '/bin/df';
beforeAll(async () => {
  if (noSshd) return;
  ensureBuilt();
  ctl = mkdtempSync(join(tmpdir(), 'offhost-stall-'));
  const bin = join(ctl, 'bin');
  mkdirSync(bin);
  writeFileSync(
    join(bin, 'df'),
    `#!/bin/sh\n# The guest's df: while ${ctl}/stall exists it says it started, then waits until the flag is gone.\nif [ -e '${ctl}/stall' ]; then : > '${ctl}/started'; while [ -e '${ctl}/stall' ]; do sleep 0.05; done; fi\nexec '${REAL_DF}' "$@"\n`,
  );
  chmodSync(join(bin, 'df'), 0o755);
  s = await startSshd({ remoteEnv: { PATH: `${bin}:/usr/local/bin:/usr/bin:/bin` } });
});
afterAll(async () => {
  for (const l of made) l.cleanup();
  await s?.stop();
  if (ctl) rmSync(ctl, { recursive: true, force: true });
});

/** Lets every stalled df go (each sees the flag gone within 50 ms) and stops stalling the next ones. */
async function release(): Promise<void> {
  rmSync(join(ctl, 'stall'), { force: true });
}

/** `offhost run` in its own process group, as a shell's foreground job is. */
function startGroup(l: Laptop, args: string[]): { pid: number; done: Promise<Result> } {
  const child = spawn(process.execPath, [BIN, 'run', ...args], { cwd: kodaDir(l), env: l.env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d) => (stdout += d));
  child.stderr!.on('data', (d) => (stderr += d));
  return { pid: child.pid!, done: new Promise((res) => child.on('close', (code, signal) => res({ code, signal, stdout, stderr }))) };
}

describe.skipIf(noSshd)(titled('offhost run: a signal during the preflight', noSshd), () => {
  const cases = [
    // Ctrl-C: the terminal signals the whole foreground group, the preflight's ssh with offhost.
    { name: 'SIGINT to the process group (Ctrl-C): the probe dies with it', sig: 'SIGINT', signo: 2, exit: 130, group: true },
    { name: 'SIGTERM to the process group', sig: 'SIGTERM', signo: 15, exit: 143, group: true },
    // A signal to offhost alone (an agent stopping its tool call): acted on at once, the stalled probe ended
    // by offhost (the guest's df is still stalled when offhost has exited: it is let go only afterwards).
    { name: 'SIGTERM to offhost alone: the stalled probe is ended at once, and nothing runs', sig: 'SIGTERM', signo: 15, exit: 143, group: false },
    { name: 'SIGINT to offhost alone', sig: 'SIGINT', signo: 2, exit: 130, group: false },
  ] as const;
  for (const c of cases) {
    it(`${c.name}: interrupted (${c.exit}), not preflight-failed; nothing ran; the VM is free`, async () => {
      const l = laptop(s, { sync: 'shared' });
      made.push(l);
      rmSync(join(ctl, 'started'), { force: true });
      writeFileSync(join(ctl, 'stall'), '');
      try {
        const run = startGroup(l, ['--json', '--', onVm(`touch ${l.out}/ran`)]);
        await until(() => existsSync(join(ctl, 'started')));
        process.kill(c.group ? -run.pid : run.pid, c.sig);
        const r = await run.done;
        // Whichever way it was signalled, offhost ended while the guest's probe was still stalled.
        expect(existsSync(join(ctl, 'stall'))).toBe(true);
        expect(r.code, r.stderr).toBe(c.exit);
        const v = verdict(r);
        expect(v.outcome).toBe('interrupted');
        expect(v.exit).toBe(c.exit);
        expect(v.detail).toContain('during the VM preflight');
        expect(r.stderr).not.toContain('preflight-failed');
        expect(r.stderr).not.toContain('preflight failed');
        expect(existsSync(join(l.out, 'ran'))).toBe(false);
        expect(records(l)).toEqual([]); // no run was started
      } finally {
        // The guest's probe is still stalled (nothing stops it there): let it end.
        await release();
      }
      // The VM is free: another session's run takes it at once (no --wait) and runs.
      expect(existsSync(join(l.repo, LOOP_ACTIVE))).toBe(false);
      const next = await runOn(l, ['--json', '--', onVm(`touch ${l.out}/next`)], { env: { OFFHOST_SESSION: 'another-session' } });
      expect(next.code, next.stderr).toBe(0);
      expect(readFileSync(join(l.out, 'next'), 'utf8')).toBe('');
    });
  }
});

describe.skipIf(noSshd)(titled('offhost run: stopped during the preflight while its lock store asks the remote', noSshd), () => {
  // The run opens its lock store while the VM is checked; that open may ask the repository's remote whether
  // it holds the locks (`git ls-remote`, up to 60 s against an unreachable host). A run stopped in its
  // preflight must not wait for that answer, nor leave the question running: here the remote's ssh never
  // answers (it says its pid, then sleeps), the guest's df stalls, and offhost alone gets SIGINT.
  it('exits at once, interrupted (130), with the remote question ended and nothing run', async () => {
    const l = laptop(s, { sync: 'shared' });
    made.push(l);
    const pidFile = join(l.base, 'remote-ssh.pid');
    const slowSsh = join(l.base, 'slow-ssh');
    writeFileSync(slowSsh, `#!/bin/sh\necho $$ > '${pidFile}'\nexec sleep 600\n`);
    chmodSync(slowSsh, 0o755);
    g(l.repo, 'remote', 'add', 'origin', 'ssh://remote.invalid/locks.git');
    g(l.repo, 'config', 'core.sshCommand', slowSsh);
    rmSync(join(ctl, 'started'), { force: true });
    writeFileSync(join(ctl, 'stall'), '');
    let pid = 0;
    try {
      const run = startGroup(l, ['--json', '--', onVm(`touch ${l.out}/ran`)]);
      await until(() => existsSync(join(ctl, 'started')) && existsSync(pidFile) && readFileSync(pidFile, 'utf8').trim() !== '');
      pid = Number(readFileSync(pidFile, 'utf8').trim());
      expect(alive(pid)).toBe(true);
      process.kill(run.pid, 'SIGINT');
      // Hang guard only: waiting for the question would take the probe's 60 s timeout.
      const r = await run.done;
      expect(r.code, r.stderr).toBe(130);
      expect(verdict(r).outcome).toBe('interrupted');
      expect(existsSync(join(l.out, 'ran'))).toBe(false);
      expect(records(l)).toEqual([]);
      // The remote question (git ls-remote and the ssh it started) ended with offhost.
      await until(() => !alive(pid));
      expect(existsSync(join(l.repo, LOOP_ACTIVE))).toBe(false);
    } finally {
      if (pid && alive(pid)) process.kill(pid, 'SIGKILL');
      await release();
    }
  }, 45_000);
});
