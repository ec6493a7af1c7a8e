// The run's session is opened before the lock is taken, so that the VM's login shell starts up (its rc
// files: about 1 s on the development machine) while the laptop reads the source and takes the lock; the
// session runs nothing of the run until the lock is held (src/run/remote.ts bootstrapScript). Against a
// real sshd on loopback whose VM user's ~/.bashrc (bash run by sshd reads it): for the run's own session (the
// bootstrap, or the whole VM script as before) it notes whether the VM's lock was already held when the
// login shell started, and if not waits until it is, so the order is seen without timing anything.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { startSshd, type Sshd } from '../helpers/sshd.js';
import { missing, titled } from '../helpers/tools.js';
import { ensureBuilt, offhost } from '../locks/lifecycle-helpers.js';
import { alive, laptop, LOOP_ACTIVE, LOOP_VM, runOn, start, until, verdict, type Laptop } from './loopback.js';
import { processesWhere } from '../helpers/processes.js';

const skip = missing('sshd') ?? missing('rsync');
const tmp = mkdtempSync(join(tmpdir(), 'offhost-early-'));
const rcLog = join(tmp, 'rc.log');
const watch = join(tmp, 'watch');
// The pids of the run sessions' shells (the login shell execs the bootstrap, which keeps its pid).
const pids = join(tmp, 'pids');
let s: Sshd | undefined;
const made: Laptop[] = [];

beforeAll(async () => {
  if (skip) return;
  ensureBuilt();
  s = await startSshd({ remoteEnv: { PATH: '/usr/local/bin:/usr/bin:/bin' } });
  // `watch` names the laptop's repository; the lock is held when its ref (or the checkout's view) has the file.
  writeFileSync(
    join(s.vmHome, '.bashrc'),
    [
      'case "$BASH_EXECUTION_STRING" in',
      "  *offhost-end-*|*'say hello'*)",
      `    repo=$(cat '${watch}' 2>/dev/null); echo $$ >> '${pids}'`,
      `    held() { git -C "$repo" cat-file -e 'refs/offhost/locks:${LOOP_ACTIVE}' 2>/dev/null || [ -e "$repo/${LOOP_ACTIVE}" ]; }`,
      '    if [ -z "$repo" ]; then :',
      `    elif held; then echo held-at-login >> '${rcLog}'`,
      `    else echo free-at-login >> '${rcLog}'; i=0; while ! held && [ $i -lt 1200 ]; do sleep 0.05; i=$((i+1)); done; held && echo then-held >> '${rcLog}'; fi;;`,
      'esac',
      '',
    ].join('\n'),
  );
});
afterAll(async () => {
  for (const l of made) l.cleanup();
  await s?.stop();
  rmSync(tmp, { recursive: true, force: true });
});

function lap(sync: 'rsync' | 'git' | 'shared'): Laptop {
  const l = laptop(s!, (vm) => (sync === 'shared' ? { sync } : { sync, guest_dir: join(vm, 'src') }));
  made.push(l);
  writeFileSync(watch, l.repo);
  rmSync(rcLog, { force: true });
  rmSync(pids, { force: true });
  return l;
}

/**
 * A `git` first on the laptop's PATH that, the first time its arguments match the sh `case` pattern,
 * touches `paused` and sleeps (tagged, so that afterAll can end it) instead of running: offhost run then
 * stands still at that step of the lock with its session open. Every other git call runs the real git.
 */
function pauseAt(l: Laptop, pattern: string): { env: Record<string, string>; paused: string } {
  const dir = join(l.base, 'pause-bin');
  mkdirSync(dir, { recursive: true });
  const paused = join(l.base, 'paused');
  const real = process.env.PATH!.split(':').map((d) => join(d, 'git')).find((f) => existsSync(f))!;
  writeFileSync(
    join(dir, 'git'),
    `#!/bin/sh\ncase "$*" in ${pattern}) [ -e '${paused}' ] || { touch '${paused}'; exec sleep 311; };; esac\nexec '${real}' "$@"\n`,
  );
  chmodSync(join(dir, 'git'), 0o755);
  return { env: { PATH: `${dir}:${l.env.PATH}` }, paused };
}
const pausedSleeps = () => processesWhere((argv) => argv[0] === 'sleep' && argv[1] === '311');
afterAll(() => {
  for (const pid of pausedSleeps()) process.kill(pid, 'SIGKILL');
});

describe.skipIf(skip !== null)(titled('the run\'s session is opened before the lock, and runs nothing until it is held', skip), () => {
  for (const sync of ['rsync', 'git'] as const) {
    it(`sync ${sync}: the VM's login shell starts before the lock is taken; the command runs after, under it`, async () => {
      const l = lap(sync);
      const r = await runOn(l, ['--json', '--', 'bash -c "echo ran here"']);
      expect(verdict(r).outcome, r.stderr).toBe('exit');
      expect(r.stdout).toBe('ran here\n');
      // The run's one session: its login shell found the VM free, and the run went on once the lock was held.
      expect(readFileSync(rcLog, 'utf8')).toBe('free-at-login\nthen-held\n');
    });
  }

  it('a run refused as held ends the session it opened: nothing of it ran on the VM, nothing of it is left there', async () => {
    const l = lap('rsync');
    const other = await offhost(['lock', 'acquire', LOOP_VM, '--reason', 'someone else'], { cwd: l.repo, baseEnv: { ...l.env, OFFHOST_SESSION: 'other' } });
    expect(other.code, other.stderr).toBe(0);
    const marker = join(l.base, 'ran');
    const r = await runOn(l, ['--json', '--', `bash -c "touch ${marker}"`]);
    expect(verdict(r).outcome, r.stderr).toBe('held');
    // The bootstrap on the "VM" (this machine) ends once its input has: none is left waiting for a script.
    const left = () => (existsSync(pids) ? readFileSync(pids, 'utf8').split('\n').filter(Boolean).map(Number) : []).filter(alive);
    await until(() => left().length === 0);
    expect(existsSync(marker)).toBe(false);
    expect(readFileSync(join(l.repo, LOOP_ACTIVE), 'utf8')).toContain('session: other');
  });

  // The OOM killer or a closed terminal ends offhost (SIGKILL, nothing of it runs after) while its session
  // is open and waits for its script: before the lock is committed, and once it is but before the script
  // is sent. The session's input ends with offhost, so the VM runs nothing and keeps nothing waiting; the
  // next run from this host finds the VM free (a claim whose process is gone frees it: src/locks/holder-process.ts).
  for (const [when, pattern, locked] of [
    // The lock's commit (the source read before it runs no commit-tree in rsync mode).
    ['before the lock is committed', "'commit-tree '*", false],
    // The lock's view of the checkout, read once the lock ref has moved (the source read's ls-files has --others).
    ['with the lock taken, before the script is sent', "'ls-files -z --cached -- '*", true],
  ] as const) {
    it(`offhost killed ${when}: nothing of it ran on the VM, nothing is left waiting there, the next run gets the VM`, async () => {
      const l = lap('rsync');
      // No waiting in the VM's rc file for this one (it waits for the lock only when `watch` names a repository).
      writeFileSync(watch, '');
      const marker = join(l.base, 'ran');
      const pause = pauseAt(l, pattern);
      const run = start(l, ['--json', '--', `bash -c "touch ${marker}"`], { env: pause.env });
      const bootstraps = () => (existsSync(pids) ? readFileSync(pids, 'utf8').split('\n').filter(Boolean).map(Number) : []);
      // Standing still at that step, its session's login already on the VM.
      await until(() => existsSync(pause.paused) && bootstraps().length > 0);
      // The pause is where it is said to be: the lock ref holds the VM's lock file only in the second case.
      expect(spawnSync('git', ['cat-file', '-e', `refs/offhost/locks:${LOOP_ACTIVE}`], { cwd: l.repo, env: l.env }).status === 0).toBe(locked);
      run.child.kill('SIGKILL');
      await run.done;
      for (const pid of pausedSleeps()) process.kill(pid, 'SIGKILL');
      await until(() => bootstraps().filter(alive).length === 0);
      expect(existsSync(marker)).toBe(false);
      // The next run: the VM is free (or freed now), and the command runs there.
      const next = await runOn(l, ['--json', '--', `bash -c "touch ${marker}"`]);
      expect(verdict(next).outcome, next.stderr).toBe('exit');
      expect(existsSync(marker)).toBe(true);
      expect(existsSync(join(l.repo, LOOP_ACTIVE))).toBe(false);
    });
  }
});
