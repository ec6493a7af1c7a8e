// `offhost run` and the question "does the repository's remote hold the locks already?" (docs/LOCKS.md
// "Which clones share a lock"). A lock command asks it at most once a minute; a run does not wait for it
// while the kept answer is under 10 minutes old: it asks again while its command runs, for the next run.
// Against a real sshd on 127.0.0.1 (the VM) and a remote reached through core.sshCommand: a stand-in ssh
// that serves a real bare repository with git-upload-pack, or one that never answers.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chmodSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startSshd, type Sshd } from '../helpers/sshd.js';
import { missing, titled } from '../helpers/tools.js';
import { processesWhere } from '../helpers/processes.js';
import { cleanEnv, ensureBuilt, g, offhost } from '../locks/lifecycle-helpers.js';
import { alive, laptop, LOOP_VM, onVm, runOn, start, until, verdict, type Laptop } from './loopback.js';

let s: Sshd;
const made: Laptop[] = [];
const noSshd = missing('sshd');
beforeAll(async () => {
  if (noSshd) return;
  ensureBuilt();
  s = await startSshd();
});
afterAll(async () => {
  for (const l of made) l.cleanup();
  await s?.stop();
});

const REMOTE_URL = 'ssh://remote.invalid/locks.git';

/** A laptop whose origin is REMOTE_URL, served from a real bare clone of its repository by a stand-in ssh. */
function withRemote(sync: 'shared' | 'rsync' = 'shared'): { l: Laptop; bare: string; serve: () => void; hang: () => string } {
  const l = laptop(s, sync === 'shared' ? { sync } : (vm) => ({ sync, guest_dir: join(vm, 'src') }));
  made.push(l);
  const bare = join(l.base, 'locks.git');
  g(l.base, 'clone', '-q', '--bare', l.repo, bare);
  g(l.repo, 'remote', 'add', 'origin', REMOTE_URL);
  const ssh = join(l.base, 'remote-ssh');
  const pidFile = join(l.base, 'remote-ssh.pid');
  // git runs `<ssh> remote.invalid "git-upload-pack '/locks.git'"`: answered from the bare repository.
  const serve = () => writeFileSync(ssh, `#!/bin/sh\nexec git-upload-pack '${bare}'\n`, { mode: 0o755 });
  // A remote that never answers (a hung network): it says its pid, then waits.
  const hang = () => {
    writeFileSync(ssh, `#!/bin/sh\necho $$ > '${pidFile}.tmp' && mv '${pidFile}.tmp' '${pidFile}'\nexec sleep 600\n`, { mode: 0o755 });
    return pidFile;
  };
  serve();
  chmodSync(ssh, 0o755);
  g(l.repo, 'config', 'core.sshCommand', ssh);
  return { l, bare, serve, hang };
}

/**
 * The folder to run from in each checkout layout of the laptop's repository (the koda folder in it): the
 * canonical checkout, a symlink to it, a worktree inside it and one beside it, a clone elsewhere (its own
 * origin and ssh command, as the canonical checkout's).
 */
function checkoutOf(l: Laptop, layout: string): string {
  const koda = (top: string) => join(top, 'engines', 'lang', 'koda');
  switch (layout) {
    case 'canonical':
      return koda(l.repo);
    case 'symlink': {
      const link = join(l.home, 'koder-link');
      symlinkSync(l.repo, link);
      return koda(link);
    }
    case 'worktree inside': {
      const wt = join(l.repo, '.claude', 'worktrees', 'task');
      g(l.repo, 'worktree', 'add', '-q', '-b', 'task', wt);
      return koda(wt);
    }
    case 'worktree beside': {
      const wt = join(l.home, 'dev', 'koder-task');
      g(l.repo, 'worktree', 'add', '-q', '-b', 'task', wt);
      return koda(wt);
    }
    default: {
      const clone = join(l.home, 'src', 'koder');
      mkdirSync(join(l.home, 'src'), { recursive: true });
      g(join(l.home, 'src'), 'clone', '-q', l.repo, 'koder');
      g(clone, 'remote', 'set-url', 'origin', REMOTE_URL);
      g(clone, 'config', 'core.sshCommand', g(l.repo, 'config', 'core.sshCommand').trim());
      return koda(clone);
    }
  }
}

/** The kept answer of the laptop's user store (offhost-remote-probe.json), made `ms` older; its new time. */
function ageAnswer(l: Laptop, ms: number): { file: string; at: number } {
  const root = join(l.home, '.local', 'state', 'offhost', 'lock-stores');
  const files = readdirSync(root).map((n) => join(root, n, 'offhost-remote-probe.json')).filter((f) => existsSync(f));
  expect(files).toHaveLength(1);
  const k = JSON.parse(readFileSync(files[0]!, 'utf8')) as { url: string; at: number; note: string | null };
  expect(k).toMatchObject({ url: REMOTE_URL, note: null });
  const at = k.at - ms;
  writeFileSync(files[0]!, JSON.stringify({ ...k, at }));
  return { file: files[0]!, at };
}

describe.skipIf(noSshd)(titled('offhost run: the question about the remote, past its minute', noSshd), () => {
  it('a run does not wait for a remote that never answers: it asks while its command runs, and the question ends with the run', async () => {
    const { l, hang } = withRemote();
    // The first run asks the remote (it holds no locks): the answer is kept.
    const first = await runOn(l, ['--json', '--', onVm('true')]);
    expect(first.code, first.stderr).toBe(0);
    const kept = ageAnswer(l, 5 * 60_000);
    const pidFile = hang();
    // The command waits until the remote has been asked (the stand-in started), so the question is running
    // when the run ends; a run that waited for the answer before its lock would never get there (the remote
    // never answers, and the question's own limit is 60 s).
    const r = await runOn(l, ['--json', '--', onVm(`while [ ! -e '${pidFile}' ]; do sleep 0.05; done; touch '${l.out}/ran'`)]);
    expect(r.code, r.stderr).toBe(0);
    expect(verdict(r).outcome).toBe('exit'); // the command's own status
    expect(existsSync(join(l.out, 'ran'))).toBe(true);
    expect(r.stderr).not.toContain('could not ask the remote');
    // The question (git ls-remote and the ssh it started) ended with the run; its answer was not kept.
    const pid = Number(readFileSync(pidFile, 'utf8').trim());
    await until(() => !alive(pid), 10_000); // hang guard: it is ended before offhost exits
    expect(JSON.parse(readFileSync(kept.file, 'utf8')).at).toBe(kept.at);
  }, 60_000);

  const noRsync = missing('rsync');
  for (const layout of ['symlink', 'worktree inside', 'worktree beside', 'clone elsewhere']) {
    it.skipIf(noRsync)(titled(`from a ${layout}: the run uses the answer this machine kept and does not wait for a remote that never answers`, noRsync), async () => {
      const { l, hang } = withRemote('rsync');
      const cwd = checkoutOf(l, layout);
      const first = await runOn(l, ['--json', '--', onVm('true')], { cwd });
      expect(first.code, first.stderr).toBe(0);
      const kept = ageAnswer(l, 5 * 60_000);
      const pidFile = hang();
      const r = await runOn(l, ['--json', '--', onVm(`while [ ! -e '${pidFile}' ]; do sleep 0.05; done; touch '${l.out}/ran'`)], { cwd });
      expect(r.code, r.stderr).toBe(0);
      expect(existsSync(join(l.out, 'ran'))).toBe(true);
      const pid = Number(readFileSync(pidFile, 'utf8').trim());
      await until(() => !alive(pid), 10_000);
      expect(JSON.parse(readFileSync(kept.file, 'utf8')).at).toBe(kept.at);
    }, 60_000);
  }

  it('killed with SIGKILL while its question hangs (the OOM killer), a run leaves no question running (it ends within a second or two), and the VM is free for the next run', async () => {
    const { l, hang } = withRemote();
    const first = await runOn(l, ['--json', '--', onVm('true')]);
    expect(first.code, first.stderr).toBe(0);
    ageAnswer(l, 5 * 60_000);
    const pidFile = hang();
    const hold = join(l.base, 'hold');
    writeFileSync(hold, '');
    // The command waits until the remote is being asked, says so, then holds until the test lets it go.
    const run = start(l, ['--json', '--', onVm(`while [ ! -e '${pidFile}' ]; do sleep 0.05; done; touch '${l.out}/asked'; while [ -e '${hold}' ]; do sleep 0.05; done`)]);
    let pid = 0;
    try {
      await until(() => existsSync(join(l.out, 'asked')));
      pid = Number(readFileSync(pidFile, 'utf8').trim());
      expect(alive(pid)).toBe(true);
      // The release's git (update-ref --stdin, started once the lock was held) is waiting on its stdin.
      const writers = () => processesWhere((argv) => argv.includes('update-ref') && argv.includes('--stdin'), `HOME=${l.home}`);
      expect(writers().length).toBeGreaterThan(0);
      // No exit handler runs on SIGKILL: the question's own watchdog ends it (hang guard only: the stand-in
      // remote would wait 600 s, the question's limit is 60 s); the writers end at EOF on their stdin.
      run.child.kill('SIGKILL');
      await run.done;
      await until(() => !alive(pid), 10_000);
      await until(() => writers().length === 0, 10_000);
    } finally {
      rmSync(hold, { force: true });
      if (pid && alive(pid)) process.kill(pid, 'SIGKILL');
    }
    // And the VM is free again: another session's run takes it at once (no --wait) and runs.
    const next = await runOn(l, ['--json', '--', onVm(`touch '${l.out}/next'`)], { env: { OFFHOST_SESSION: 'another-session' } });
    expect(next.code, next.stderr).toBe(0);
    expect(existsSync(join(l.out, 'next'))).toBe(true);
  }, 60_000);

  it('what the remote said while a run ran is for the next run: another machine shares its locks there, and the next run sees its hold', async () => {
    const { l, bare } = withRemote();
    const first = await runOn(l, ['--json', '--', onVm('true')]);
    expect(first.code, first.stderr).toBe(0);
    // Another machine (its own HOME) starts sharing this repository's locks through the remote, and holds the VM.
    const other = join(l.base, 'other-machine');
    mkdirSync(join(other, 'home'), { recursive: true });
    g(other, 'clone', '-q', bare, 'koder');
    const a = await offhost(['lock', 'acquire', LOOP_VM, '--reason', 'their build', '--push'], {
      cwd: join(other, 'koder'),
      env: { ...(cleanEnv() as Record<string, string>), HOME: join(other, 'home'), OFFHOST_SESSION: 'machine-a', OFFHOST_AI: 'claude', GIT_AUTHOR_NAME: 'a', GIT_AUTHOR_EMAIL: 'a@x', GIT_COMMITTER_NAME: 'a', GIT_COMMITTER_EMAIL: 'a@x' },
    });
    expect(a.code, a.stderr).toBe(0);
    const kept = ageAnswer(l, 5 * 60_000);
    // Five minutes after this laptop last asked, its run goes on with the kept answer (this machine's store),
    // and learns the news while its command runs (the command waits for that, here).
    const r = await runOn(l, ['--json', '--', onVm(`while [ -e '${kept.file}' ]; do sleep 0.05; done; touch '${l.out}/ran'`)]);
    expect(r.code, r.stderr).toBe(0);
    expect(existsSync(join(l.out, 'ran'))).toBe(true);
    expect(r.stderr).toContain('the remote origin holds refs/offhost/locks (asked while this command ran)');
    // The next run asks the remote before its lock, goes through it, and finds the other machine's hold.
    const next = await runOn(l, ['--json', '--', onVm(`touch '${l.out}/next'`)]);
    expect(verdict(next).outcome, next.stderr).toBe('held');
    expect(next.stderr).toContain('machine-a');
    expect(existsSync(join(l.out, 'next'))).toBe(false);
  }, 60_000);
});
