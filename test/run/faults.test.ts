// A failure at each step of `offhost run` returns a documented status and leaves the VM free (issue 24),
// against a real sshd on loopback: OFFHOST_TEST_FAULT=STEP makes that step fail as a bug would (src/run/
// pipeline.ts), `async` as an error event nobody listens to (the rsync `write EPIPE` that crashed runs);
// and a real rsync failure that breaks its input pipe (EPIPE) is sync-failed (246), not a crash.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { sshdAvailable } from '../helpers/sshd.js';
import { BIN, g } from '../locks/lifecycle-helpers.js';
import { LOOP_ACTIVE, kodaDir, onVm, runOn, until, verdict, type Laptop, loopbackSshd } from './loopback.js';
import { FAULT_STEPS } from '../../src/run/pipeline.js';
import { sampling } from '../helpers/sample.js';
import { processesWhere, sameArgv } from '../helpers/processes.js';

/** The default run injects a fault at every third step and at the release; `npm run test:full` at every step (test/helpers/sample.ts). */
const sample = sampling('full');

const loop = loopbackSshd();

const active = (l: Laptop) => spawnSync('git', ['-C', l.repo, 'cat-file', '-e', `refs/offhost/locks:${LOOP_ACTIVE}`]).status === 0;

const sleeping = (arg: string): boolean => processesWhere(sameArgv(['sleep', arg])).length > 0;

const REAL_RSYNC = ['/usr/bin/rsync', '/usr/local/bin/rsync', '/bin/rsync'].find((p) => existsSync(p)) ?? 'rsync';

describe.skipIf(!sshdAvailable())('a failure at each step', () => {
  it('every step named by the hook exists in the pipeline (the list the test walks)', () => {
    expect([...FAULT_STEPS]).toEqual(['classify', 'preflight', 'source', 'hold', 'sync', 'execute', 'async', 'record', 'release']);
    const src = readFileSync(join(__dirname, '../../src/run/pipeline.ts'), 'utf8');
    for (const step of FAULT_STEPS) expect(src, step).toContain(`fault(io, '${step}')`);
  });

  it.each(sample.pick(FAULT_STEPS.filter((x) => x !== 'async'), 3, { always: (x) => x === 'release' }))('%s: internal-error (252) with the reason; the VM is free afterwards', async (step) => {
    const l = loop.laptop({}, { session: `fault-${step}` });
    const marker = join(l.out, 'ran');
    const r = await runOn(l, ['--json', '--', onVm(`touch ${marker}`)], { env: { OFFHOST_TEST_FAULT: step } });
    expect(r.code, r.stderr).toBe(252);
    const v = verdict(r);
    expect(v.outcome).toBe('internal-error');
    expect(r.stderr).toMatch(new RegExp(`injected fault at step ${step}`));
    // The command ran only when the fault came after it.
    expect(existsSync(marker)).toBe(step === 'record' || step === 'release');
    if (step === 'release') {
      // The release itself failed: the lock is still there while nobody looks; the next offhost command
      // on this host sees that the claim's process is gone and frees it.
      expect(active(l)).toBe(true);
      const st = spawnSync(process.execPath, [BIN, 'lock', 'status'], { cwd: l.repo, env: l.env, encoding: 'utf8' });
      expect(st.stderr).toMatch(/freed s\.khost1\.dev-linux-loop \(held by session fault-release\)/);
    }
    expect(active(l)).toBe(false);
    // And another session gets the VM at once.
    const next = await runOn(l, ['--json', '--session', `after-${step}`, '--', onVm('true')]);
    expect(verdict(next).outcome, next.stderr).toBe('exit');
  }, 180_000);

  it('async (an error event nobody listens to, mid-command): 252 at once, the job on the VM stops, the VM is freed', async () => {
    const l = loop.laptop({}, { session: 'fault-async' });
    const r = await runOn(l, ['--json', '--', onVm('exec sleep 97.5')], { env: { OFFHOST_TEST_FAULT: 'async' } });
    expect(r.code, r.stderr).toBe(252);
    expect(verdict(r).outcome).toBe('internal-error');
    expect(verdict(r).detail).toMatch(/failed unexpectedly .*nobody listens to/);
    await until(() => !sleeping('97.5'), 30_000);
    const next = await runOn(l, ['--json', '--session', 'after-async', '--', onVm('echo free')]);
    expect(verdict(next).outcome, next.stderr).toBe('exit');
    expect(next.stdout).toBe('free\n');
  }, 180_000);

  it('rsync failing before it reads its file list (write EPIPE): sync-failed (246), nothing ran, the lock released', async () => {
    const l = loop.laptop((vm) => ({ sync: 'rsync', guest_dir: join(vm, 'src') }));
    // A file list far larger than a pipe's buffer, so writing it to an rsync that has gone fails.
    const many = join(kodaDir(l), 'many');
    mkdirSync(many);
    for (let i = 0; i < 4000; i++) writeFileSync(join(many, `file-with-a-long-name-${String(i).padStart(5, '0')}.txt`), `${i}\n`);
    g(l.repo, 'add', '.');
    g(l.repo, 'commit', '-qm', 'many files');
    // An rsync that fails at once without reading its input (as a real one does on a bad host), once offhost's
    // probe of its options (`--version`, a local dry run: src/routes/rsync-probe.ts) has passed: the probe is
    // answered by the real rsync.
    const bin = join(l.base, 'bin');
    mkdirSync(bin);
    writeFileSync(join(bin, 'rsync'), `#!/bin/sh\ncase "$1" in --version|-n) exec ${REAL_RSYNC} "$@" ;; esac\necho "rsync: connection unexpectedly closed (stand-in)" >&2\nexit 12\n`);
    chmodSync(join(bin, 'rsync'), 0o755);
    const marker = join(l.out, 'ran');
    for (let i = 0; i < 3; i++) {
      const r = await runOn(l, ['--json', '--', onVm(`touch ${marker}`)], { env: { PATH: `${bin}:${l.env.PATH}` } });
      expect(r.code, r.stderr).toBe(246);
      expect(verdict(r).outcome).toBe('sync-failed');
      expect(r.stderr).not.toMatch(/EPIPE|Unhandled/);
      expect(existsSync(marker)).toBe(false);
      expect(active(l)).toBe(false);
    }
  }, 300_000);

  it('a source that cannot be read, found while the lock was being taken beside it: the lock goes back at once, with the reason', async () => {
    const l = loop.laptop({}, { session: 'unreadable-source' });
    // A name the VM's coreutils would print escaped: the laptop refuses to verify it (src/routes/source.ts).
    writeFileSync(join(l.repo, 'back\\slash.txt'), 'x\n');
    const marker = join(l.out, 'ran-unreadable');
    const r = await runOn(l, ['--json', '--', onVm(`touch ${marker}`)]);
    expect(verdict(r).outcome, r.stderr).toBe('config-error');
    expect(verdict(r).detail).toMatch(/backslash/);
    expect(existsSync(marker)).toBe(false);
    // Free without any later command's help (no claim left to find), and the archive says why it ended.
    expect(active(l)).toBe(false);
    const history = spawnSync('git', ['-C', l.repo, 'log', '-p', 'refs/offhost/locks'], { encoding: 'utf8' }).stdout;
    expect(history).toMatch(/stopped before anything ran on the VM: the source could not be read \(.*backslash/);
  }, 300_000);

  it('a backend that passes no input on (ssh -n): config-error naming the backend, nothing ran, the lock released', async () => {
    const l = loop.laptop((vm) => ({ sync: 'shared', guest_dir: vm }));
    const bin = join(l.base, 'bin-no-stdin');
    mkdirSync(bin);
    const ssh = spawnSync('sh', ['-c', 'command -v ssh'], { encoding: 'utf8', env: l.env }).stdout.trim();
    writeFileSync(join(bin, 'ssh'), `#!/bin/sh\nexec ${ssh} "$@" </dev/null\n`);
    chmodSync(join(bin, 'ssh'), 0o755);
    const marker = join(l.out, 'ran-no-stdin');
    const r = await runOn(l, ['--json', '--', onVm(`touch ${marker}`)], { env: { PATH: `${bin}:${l.env.PATH}` } });
    expect(verdict(r).outcome, r.stderr).toBe('config-error');
    expect(r.stderr).toContain("did not pass offhost's input on to the VM");
    expect(existsSync(marker)).toBe(false);
    expect(active(l)).toBe(false);
  }, 300_000);
});
