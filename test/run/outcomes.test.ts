// offhost run's own outcomes (docs/RUN.md's table) not produced elsewhere, against a real sshd: host-key
// pinning (also behind incus), VM not found, lock lost, the hold (a second run of one session, two
// agents without a session variable), the record and `offhost runs`, --fetch, config and internal errors.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startSshd, type Sshd } from '../helpers/sshd.js';
import { missing, titled } from '../helpers/tools.js';
import { standinPath, writeIncusState } from '../helpers/standins.js';
import { execFileSync } from 'node:child_process';
import { ARCHIVE_DIR, BIN, REF, archives, cleanEnv, ensureBuilt, g, offhost, read } from '../locks/lifecycle-helpers.js';
import { ended } from '../helpers/processes.js';
import { EXIT, RUN_EXIT } from '../../src/errors.js';
import { stateDir } from '../../src/run/record.js';
import { kodaDir, laptop, LOOP_ACTIVE, onVm, records, runOn, start, until, verdict, type Laptop } from './loopback.js';
import { sampling } from '../helpers/sample.js';

/** Tests that repeat what a kept test does end to end run in `npm run test:full` (test/helpers/sample.ts). */
const sample = sampling('full');

let s: Sshd;
let other: Sshd;
function gEnv(cwd: string, env: Record<string, string>, ...args: string[]): string {
  return execFileSync('git', args, { cwd, encoding: 'utf8', env: { ...cleanEnv(), ...env } });
}
const made: Laptop[] = [];
let incusState = '';
const noSshd = missing('sshd');
const noRsync = missing('sshd', 'rsync');
beforeAll(async () => {
  if (noSshd) return;
  ensureBuilt();
  const base = join(process.env.TMPDIR ?? '/tmp', `offhost-incus-${process.pid}.json`);
  incusState = base;
  writeIncusState(incusState, { 'dev-linux-loop': 'RUNNING', 'dev-linux-stopped': 'STOPPED' });
  s = await startSshd({ remoteEnv: { PATH: `${standinPath()}:/usr/local/bin:/usr/bin:/bin`, OFFHOST_STANDIN_INCUS_STATE: incusState } });
  other = await startSshd({ alias: 'offhost-other-vm' });
});
afterAll(async () => {
  if (!process.env.KEEP) for (const l of made) l.cleanup();
  await s?.stop();
  await other?.stop();
});
function mk(vm: Record<string, unknown> | ((v: string) => Record<string, unknown>) = {}, opts?: Parameters<typeof laptop>[2]): Laptop {
  const l = laptop(s, typeof vm === 'function' ? vm : { sync: 'shared', ...vm }, opts);
  made.push(l);
  return l;
}

describe.skipIf(noSshd)(titled('host keys (pinned)', noSshd), () => {
  it('the right pin: runs; a wrong pin: host-key-mismatch (248), nothing run', async () => {
    const l = mk({ host_key: s.hostKeyFingerprint });
    const ok = await runOn(l, ['--', onVm(`touch ${l.out}/ran`)]);
    expect(ok.code, ok.stderr).toBe(0);
    expect(existsSync(join(l.out, 'ran'))).toBe(true);
    // The pinned known_hosts holds exactly the server's key, under offhost's alias.
    const pinned = readFileSync(join(l.home, '.local/state/offhost/known_hosts', 's.khost1.dev-linux-loop'), 'utf8');
    expect(pinned).toBe(`offhost-s.khost1.dev-linux-loop ${s.hostKey.split(' ').slice(0, 2).join(' ')}\n`);

    const bad = mk({ host_key: other.hostKeyFingerprint });
    const r = await runOn(bad, ['--json', '--', onVm(`touch ${bad.out}/ran`)]);
    expect(r.code, r.stderr).toBe(RUN_EXIT.hostKeyMismatch);
    expect(verdict(r).outcome).toBe('host-key-mismatch');
    expect(verdict(r).detail).toContain(other.hostKeyFingerprint);
    expect(verdict(r).detail).toContain(s.hostKeyFingerprint);
    expect(existsSync(join(bad.out, 'ran'))).toBe(false);
  });

  sample.fullOnly('a pinned key line, and a server that changes its key after the pin was cached: refused by ssh itself', async () => {
    const keyLine = s.hostKey.split(' ').slice(0, 2).join(' ');
    const l = mk({ host_key: keyLine });
    expect((await runOn(l, ['--', onVm('true')])).code).toBe(0);
    // Another server behind the same alias and port now (a rebuilt VM, or a man in the middle).
    const l2 = mk({ host_key: keyLine, host: other.alias });
    const cfg = readFileSync(other.sshConfig, 'utf8');
    const r = await runOn(l2, ['--json', '--', onVm(`touch ${l2.out}/ran`)], { env: other.env(l2.env) });
    void cfg;
    expect(r.code, r.stderr).toBe(RUN_EXIT.hostKeyMismatch);
    expect(existsSync(join(l2.out, 'ran'))).toBe(false);
  });

  it('behind incus: the ssh to the VM host is pinned too; an unknown instance is vm-not-found (243), a stopped one preflight-failed (232)', async () => {
    const l = mk({ backend: 'incus', instance: 'dev-linux-loop', host_key: s.hostKeyFingerprint });
    const ok = await runOn(l, ['--json', '--', onVm(`echo in-incus; touch ${l.out}/ran`)]);
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stdout).toBe('in-incus\n');
    const bad = mk({ backend: 'incus', instance: 'dev-linux-loop', host_key: other.hostKeyFingerprint });
    expect((await runOn(bad, ['--', onVm('true')])).code).toBe(RUN_EXIT.hostKeyMismatch);
    // Caught by the VM preflight (src/vms/gate.ts) before any lock: a missing instance is vm-not-found,
    // a stopped one a failed preflight (232).
    for (const [instance, outcome, exit] of [['dev-linux-nope', 'vm-not-found', RUN_EXIT.vmNotFound], ['dev-linux-stopped', 'preflight-failed', EXIT.preflightFailed]] as const) {
      const gone = mk({ backend: 'incus', instance });
      const r = await runOn(gone, ['--json', '--', onVm(`touch ${gone.out}/ran`)]);
      expect(r.code, r.stderr).toBe(exit);
      expect(verdict(r).outcome).toBe(outcome);
      expect(verdict(r).detail).toMatch(/Instance not found|Instance is not running|does not exist on|is stopped|not running/i);
      expect(existsSync(join(gone.out, 'ran'))).toBe(false);
      expect(existsSync(join(gone.repo, LOOP_ACTIVE))).toBe(false);
    }
  });

  sample.fullOnly('an ssh host that does not answer: the VM preflight stops the run (preflight-failed, 232)', async () => {
    const l = mk({ host: 'offhost-nowhere.invalid' });
    const r = await runOn(l, ['--json', '--', onVm('true')]);
    expect(r.code, r.stderr).toBe(EXIT.preflightFailed);
    expect(verdict(r).outcome).toBe('preflight-failed');
    expect(r.stderr).toMatch(/Could not resolve hostname offhost-nowhere\.invalid/);
    expect(existsSync(join(l.repo, LOOP_ACTIVE))).toBe(false);
  });
});

describe.skipIf(noSshd)(titled('the hold', noSshd), () => {
  it('a second run of the same session on the same VM is refused (held, 241), or waits with --wait; never rides along', async () => {
    const l = mk();
    const first = start(l, ['--', onVm(`touch ${l.out}/first; while [ ! -e ${l.out}/release ]; do sleep 0.1; done; date +%s%N > ${l.out}/first-end`)]);
    await until(() => existsSync(join(l.out, 'first')));
    const second = await runOn(l, ['--json', '--', onVm(`touch ${l.out}/second`)]);
    expect(second.code, second.stderr).toBe(RUN_EXIT.held);
    expect(verdict(second).detail).toContain('another run of this session');
    expect(existsSync(join(l.out, 'second'))).toBe(false);
    const waiting = start(l, ['--wait', '--poll', '0.2', '--', onVm(`date +%s%N > ${l.out}/second-start; touch ${l.out}/second`)]);
    await until(() => waiting.stderr().includes('waiting'));
    expect(existsSync(join(l.out, 'second'))).toBe(false);
    writeFileSync(join(l.out, 'release'), '');
    const r1 = await first.done;
    expect(r1.code, r1.stderr).toBe(0);
    const r2 = await waiting.done;
    expect(r2.code, r2.stderr).toBe(0);
    // It started on the VM only after the first run had ended there.
    expect(BigInt(readFileSync(join(l.out, 'second-start'), 'utf8').trim()) > BigInt(readFileSync(join(l.out, 'first-end'), 'utf8').trim())).toBe(true);
    expect(existsSync(join(l.out, 'second'))).toBe(true);
  });

  sample.fullOnly('two agents without a session variable are two sessions: the second is refused while the first runs', async () => {
    const l = mk();
    const env = { ...l.env } as Record<string, string | undefined>;
    delete env.OFFHOST_SESSION;
    const shell = join(l.base, 'offhost-shell');
    writeFileSync(shell, `#!/bin/sh\nexec '${process.execPath}' '${BIN}' shell "$@"\n`);
    chmodSync(shell, 0o755);
    // An agent: a process that runs its commands with $SHELL -c (each agent is its own process tree).
    const agent = (line: string) =>
      new Promise<{ code: number | null; stderr: string }>((res) => {
        const c = spawn(process.execPath, ['-e', `const r=require('node:child_process').spawnSync(process.env.SHELL,['-c',process.argv[1]],{stdio:['ignore','inherit','inherit']});process.exit(r.status??99)`, line], {
          cwd: kodaDir(l),
          env: { ...env, SHELL: shell, OFFHOST_REAL_SHELL: '/bin/bash', OFFHOST_BIN: BIN, OFFHOST_NODE: process.execPath },
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        let stderr = '';
        c.stderr.on('data', (d) => (stderr += d));
        c.on('close', (code) => res({ code, stderr }));
      });
    const a = agent(onVm(`touch ${l.out}/a; while [ ! -e ${l.out}/release ]; do sleep 0.1; done`));
    await until(() => existsSync(join(l.out, 'a')));
    const lock = readFileSync(join(l.repo, LOOP_ACTIVE), 'utf8');
    expect(lock).toMatch(/^session: shell-[A-Za-z0-9._-]+-\d+(-\d+)?$/m);
    const b = await agent(onVm(`touch ${l.out}/b`));
    expect(b.code, b.stderr).toBe(RUN_EXIT.held);
    expect(b.stderr).toContain('held by session shell-');
    expect(existsSync(join(l.out, 'b'))).toBe(false);
    writeFileSync(join(l.out, 'release'), '');
    expect((await a).code).toBe(0);
  });

  it('its lock and release move the lock ref through gits started ahead (no git started for either move), and none is left', async () => {
    const l = mk();
    // A git first on PATH that logs each start (pid, arguments) and execs the real one.
    const wrap = join(l.base, 'gitlog');
    mkdirSync(wrap, { recursive: true });
    const log = join(wrap, 'log');
    writeFileSync(log, '');
    writeFileSync(join(wrap, 'git'), `#!/bin/sh\nprintf '%s %s\\n' "$$" "$*" >> '${log}'\nexec '${execFileSync('sh', ['-c', 'command -v git'], { encoding: 'utf8' }).trim()}' "$@"\n`);
    chmodSync(join(wrap, 'git'), 0o755);
    const r = await runOn(l, ['--', onVm(`touch ${l.out}/ran`)], { env: { PATH: `${wrap}:${l.env.PATH}` } });
    expect(r.code, r.stderr).toBe(0);
    expect(existsSync(join(l.out, 'ran'))).toBe(true);
    const started = readFileSync(log, 'utf8').split('\n').filter(Boolean);
    const moves = started.filter((c) => / update-ref /.test(` ${c.slice(c.indexOf(' ') + 1)}`));
    expect(moves.filter((c) => !c.includes('--stdin')), started.join('\n')).toEqual([]);
    expect(moves.map((c) => c.slice(c.indexOf(' ') + 1)).sort()).toEqual(['update-ref --stdin -m offhost: follow the hub', 'update-ref --stdin -m offhost: lock', 'update-ref --stdin -m offhost: release']);
    // The moves were made: the store's history has the lock and its release, this clone's copy follows it.
    const store = join(l.home, '.local', 'state', 'offhost', 'lock-stores', `${readFileSync(join(l.repo, '.git', 'offhost', 'store-id'), 'utf8').trim()}.git`);
    expect(g(store, 'log', '-2', '--format=%s', REF).split('\n').slice(0, 2).map((x) => x.split(' ')[1])).toEqual(['release', 'lock']);
    expect(g(l.repo, 'rev-parse', REF).trim()).toBe(g(store, 'rev-parse', REF).trim());
    expect(archives(l.repo).length).toBeGreaterThan(0);
    // None of those gits outlives the run.
    for (const pid of moves.map((c) => Number(c.slice(0, c.indexOf(' '))))) await until(() => ended(pid));
  });

  it('a run whose lock is lost stops the remote work and exits lock-lost (249); the other holder keeps the lock', async () => {
    const l = mk();
    const run = start(l, ['--ttl', '1', '--heartbeat', '0.5', '--json', '--', onVm(`touch ${l.out}/started; sleep 30; touch ${l.out}/finished`)]);
    await until(() => existsSync(join(l.out, 'started')));
    // Another session takes the lock over on the lock ref (as one on another machine that judged it
    // orphaned would, and pushed).
    const ref = 'refs/offhost/locks';
    // The lock lives in the user store every clone of the repository goes through (docs/LOCKS.md), so the
    // takeover is written there.
    const store = join(stateDir(l.env), 'lock-stores', `${readFileSync(join(l.repo, '.git', 'offhost', 'store-id'), 'utf8').trim()}.git`);
    for (let attempt = 0; attempt < 20; attempt++) {
      const tip = g(store, 'rev-parse', ref).trim();
      const text = g(store, 'show', `${tip}:${LOOP_ACTIVE}`).replace(/^session: .*$/m, 'session: thief').replace(/^claims:\n(  .*\n)*/m, '');
      const tmp = join(l.base, 'takeover');
      writeFileSync(tmp, text);
      const blob = g(store, 'hash-object', '-w', tmp).trim();
      const index = join(l.base, 'takeover.index');
      const env = { GIT_INDEX_FILE: index };
      gEnv(store, env, 'read-tree', tip);
      gEnv(store, env, 'update-index', '--cacheinfo', `100644,${blob},${LOOP_ACTIVE}`);
      const tree = gEnv(store, env, 'write-tree').trim();
      const who = { GIT_AUTHOR_NAME: 'thief', GIT_AUTHOR_EMAIL: 'thief@example.invalid', GIT_COMMITTER_NAME: 'thief', GIT_COMMITTER_EMAIL: 'thief@example.invalid' };
      const commit = gEnv(store, who, 'commit-tree', tree, '-p', tip, '-m', 'takeover by thief').trim();
      try {
        g(store, 'update-ref', ref, commit, tip);
        break;
      } catch {
        /* a heartbeat moved the ref in between: again, on the new tip */
      }
    }
    const r = await run.done;
    expect(r.code, r.stderr).toBe(RUN_EXIT.lockLost);
    expect(verdict(r).outcome).toBe('lock-lost');
    expect(existsSync(join(l.out, 'finished'))).toBe(false);
    expect(g(store, 'show', `${ref}:${LOOP_ACTIVE}`)).toContain('session: thief');
  });
});

describe.skipIf(noRsync)(titled('evidence', noRsync), () => {
  it('the record, the lock body while running, the log, offhost runs, --fetch', async () => {
    const l = mk((vm) => ({ sync: 'rsync', guest_dir: join(vm, 'src') }));
    writeFileSync(join(kodaDir(l), 'version.txt'), 'v2\n');
    const line = onVm(`cat ${join(l.repo, LOOP_ACTIVE)} > ${l.out}/lock-during.md; echo to-stdout; echo to-stderr >&2; mkdir -p out; echo artefact > out/result.txt; exit 4`);
    const r = await runOn(l, ['--json', '--fetch', 'out/result.txt', '--', line]);
    expect(r.code, r.stderr).toBe(4);
    const v = verdict(r);
    expect(v).toMatchObject({ outcome: 'exit', exit: 4, status: 4 });
    // The lock body carried the exact command while it ran.
    expect(readFileSync(join(l.out, 'lock-during.md'), 'utf8')).toContain(line);
    const rec = records(l).at(-1)!;
    expect(rec.id).toBe(v.run);
    expect(rec).toMatchObject({ outcome: 'exit', status: 4, exit: 4, session: 'loop-session', ai: 'claude' });
    expect(rec.command.line).toBe(line);
    expect(rec.command.cwd).toBe(join(l.vm, 'src/koder/main/engines/lang/koda'));
    expect(rec.source!.dirty).toBe('1 modified');
    expect(rec.vm!.osRelease!.ID).toBeTruthy();
    expect(rec.started < rec.ended!).toBe(true);
    expect(readFileSync(rec.log, 'utf8')).toContain('to-stdout\n');
    expect(readFileSync(rec.log, 'utf8')).toContain('to-stderr\n');
    expect(rec.fetched).toEqual([join(l.home, '.local/state/offhost/runs', rec.id, 'fetched', 'out/result.txt')]);
    expect(readFileSync(rec.fetched![0]!, 'utf8')).toBe('artefact\n');

    // The archive of the lock carries the record.
    const arch = archives(l.repo);
    expect(read(l.repo, `${ARCHIVE_DIR}/${arch.at(-1)!}`)).toContain(`Run ${rec.id}: exit (command status 4)`);

    const list = await offhost(['runs'], { cwd: l.repo, baseEnv: l.env });
    expect(list.code).toBe(0);
    expect(list.stdout).toContain(rec.id);
    const show = await offhost(['runs', 'show', rec.id], { cwd: l.repo, baseEnv: l.env });
    expect(show.stdout).toContain(`fingerprint ${rec.source!.fingerprint}`);
    expect(show.stdout).toContain(rec.vm!.uname!);
    const missing = await offhost(['runs', 'show', '20000101T000000Z-abcdef'], { cwd: l.repo, baseEnv: l.env });
    expect(missing.code).toBe(2);
  });

  sample.fullOnly('a bad configuration is config-error (247); offhost failing itself is internal-error (252)', async () => {
    const l = mk({ sync: 'bogus' });
    const r = await runOn(l, ['--json', '--', onVm('true')]);
    expect(r.code, r.stderr).toBe(RUN_EXIT.configError);
    expect(verdict(r).outcome).toBe('config-error');
    const ok = mk();
    const blocked = join(ok.base, 'not-a-dir');
    writeFileSync(blocked, '');
    const r2 = await runOn(ok, ['--json', '--', onVm(`touch ${ok.out}/ran`)], { env: { OFFHOST_STATE_DIR: join(blocked, 'state') } });
    expect(r2.code, r2.stderr).toBe(RUN_EXIT.internal);
    expect(verdict(r2).outcome).toBe('internal-error');
    expect(existsSync(join(ok.out, 'ran'))).toBe(false);
    mkdirSync(join(ok.base, 'unused'), { recursive: true });
  });
});
