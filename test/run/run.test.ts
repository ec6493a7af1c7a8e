// `offhost run` end to end: a real monorepo in a temp HOME, the built CLI as a child process, and the
// VM stand-ins (ssh, incus) first on PATH, which run the command "on the VM" (here) and log it.
import { beforeAll, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { standinPath, readStandinLog } from '../helpers/standins.js';
import { RUN_EXIT } from '../../src/errors.js';
import { BIN, ACTIVE, ARCHIVE_DIR, VM, archives, cleanEnv, configure, ensureBuilt, g, offhost, read, refLog, type Result } from '../locks/lifecycle-helpers.js';
import { WAIT_MS } from '../helpers/hang-guard.js';
import { sampling } from '../helpers/sample.js';

/** Tests that repeat what a kept test does end to end run in `npm run test:full` (test/helpers/sample.ts). */
const sample = sampling('full');

beforeAll(() => ensureBuilt());

interface Mono {
  home: string;
  repo: string;
  koda: string;
  out: string;
  log: string;
  env: Record<string, string>;
}

/**
 * HOME/dev/koder (the monorepo, a git repository) with engines/lang/koda/Makefile whose `build-safe`
 * copies the active lock file to OUT/during.md (proof the lock was held while it ran), sleeps OUT/sleep
 * seconds and exits with OUT/code.
 */
function monorepo(session = 'run-session'): Mono {
  const home = mkdtempSync(join(tmpdir(), 'offhost-run-home-'));
  const repo = join(home, 'dev', 'koder');
  const koda = join(repo, 'engines', 'lang', 'koda');
  const out = join(home, 'out');
  mkdirSync(koda, { recursive: true });
  mkdirSync(out);
  g(repo, 'init', '-q', '-b', 'main');
  configure(repo);
  const lock = join(repo, ACTIVE);
  writeFileSync(
    join(koda, 'Makefile'),
    [
      'build-safe:',
      `\t@echo "building in $$(pwd)"`,
      `\t@cat '${lock}' > '${out}/during.md' 2>/dev/null || echo none > '${out}/during.md'`,
      `\t@touch '${out}/started'`,
      `\t@sleep $$(cat '${out}/sleep' 2>/dev/null || echo 0)`,
      `\t@exit $$(cat '${out}/code' 2>/dev/null || echo 0)`,
      '',
    ].join('\n'),
  );
  writeFileSync(join(repo, 'README.md'), 'monorepo\n');
  g(repo, 'add', '.');
  g(repo, 'commit', '-q', '-m', 'init');
  const log = join(out, 'standin.log');
  const env = {
    ...(cleanEnv() as Record<string, string>),
    HOME: home,
    PATH: `${standinPath()}:${process.env.PATH}`,
    OFFHOST_ROLE: 'laptop',
    OFFHOST_SESSION: session,
    OFFHOST_AI: 'claude',
    OFFHOST_STANDIN_LOG: log,
  };
  return { home, repo, koda, out, log, env };
}

function runIn(m: Mono, args: string[], env: Record<string, string> = {}) {
  return offhost(['run', ...args], { cwd: m.koda, baseEnv: { ...m.env, ...env } });
}

function spawnRun(m: Mono, args: string[]) {
  const child = spawn(process.execPath, [BIN, 'run', ...args], { cwd: m.koda, env: m.env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  // 'exit', not 'close': the stand-in VM's own children (sleep) may outlive it holding the pipes.
  const done = new Promise<Result>((res) => child.on('exit', (code, signal) => setTimeout(() => res({ code, signal, stdout, stderr }), 50)));
  return { child, done, stderrSoFar: () => stderr };
}

async function until(cond: () => boolean, ms = WAIT_MS): Promise<void> {
  const start = Date.now();
  while (!cond()) {
    if (Date.now() - start > ms) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Subjects of the lock ref's commits (locks live on refs/offhost/locks, issue 10), newest first. */
function subjects(repo: string): string[] {
  return refLog(repo);
}

describe('offhost run, reroute', () => {
  it('runs the command on the VM under the lock, archives the lock after, passes the exit status', async () => {
    const m = monorepo();
    const r = await runIn(m, ['--', 'make build-safe']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`building in ${m.koda}`);
    // It went through ssh -> incus exec on the route's VM, in the same path (R6).
    const log = readStandinLog(m.log);
    expect(log.map((e) => e.tool)).toEqual(['ssh', 'incus']);
    expect(log[0]!.host).toBe('khost1');
    expect(log[1]!.instance).toBe('dev-linux-koda');
    // incus ran the session's bootstrap (sh -c), which ran offhost's VM script it was sent on stdin (so the
    // line is not in the argv), which ran the exact line in the same path (stdout above).
    expect(log[1]!.argv.slice(0, 2)).toEqual(['sh', '-c']);
    expect(log[1]!.argv[2]).toContain(': offhost-end-');
    expect(log[1]!.argv[2]).not.toContain('make build-safe');
    // The lock was held (by this session) while the command ran ...
    const during = readFileSync(join(m.out, 'during.md'), 'utf8');
    expect(during).toContain(`vm: ${VM}`);
    expect(during).toContain('session: run-session');
    // ... and archived afterwards, never deleted.
    expect(existsSync(join(m.repo, ACTIVE))).toBe(false);
    const arch = archives(m.repo);
    expect(arch).toHaveLength(1);
    expect(read(m.repo, `${ARCHIVE_DIR}/${arch[0]!}`)).toContain('## Released');
    expect(subjects(m.repo).slice(0, 2)).toEqual([`offhost: release ${VM} (run-session)`, `offhost: lock ${VM} (run-session)`]);
    expect(g(m.repo, 'status', '--porcelain')).toBe('');

    // Several words after -- are an argv, passed word for word (issue 24): `bash -c 'make build-safe; exit 7'`
    // is bash given that one script, not the words re-joined and split again.
    const failed = await runIn(m, ['--', 'bash', '-c', 'make build-safe; exit 7']);
    expect(failed.code).toBe(7);
    // make's own status (2 when a recipe fails) passes through too.
    // --debug (this run): a trace of the steps, each with its time since the process started, in the order
    // they happened; the run itself is unchanged.
    writeFileSync(join(m.out, 'code'), '5');
    const traced = await runIn(m, ['--debug', '--', 'make build-safe']);
    expect(traced.code).toBe(2);
    expect(existsSync(join(m.repo, ACTIVE))).toBe(false);
    expect(archives(m.repo)).toHaveLength(3);
    const steps = traced.stderr.split('\n').filter((l) => l.startsWith('offhost debug:')).map((l) => /^offhost debug: +(\d+) ms {2}(.*)$/.exec(l));
    expect(steps.every((x) => x !== null), traced.stderr).toBe(true);
    const times = steps.map((x) => Number(x![1]));
    expect(times).toEqual([...times].sort((a, b) => a - b));
    const said = steps.map((x) => x![2]!);
    const at = (text: string) => said.findIndex((l) => l.startsWith(text));
    const order = ['started', 'verdict: reroute (koda-make)', 'preflight done: usable s.khost1.dev-linux-koda', 'source read: ', 'lock taken: s.khost1.dev-linux-koda', 'the VM verified the copy: the command starts', 'the command ended on the VM', 'record written; releasing', 'released'];
    expect(order.map(at).every((i) => i >= 0), said.join('\n')).toBe(true);
    expect(order.map(at)).toEqual([...order.map(at)].sort((a, b) => a - b));
    expect(said[at('source read: ')]).toMatch(/^source read: \d+ files in .*, clean, fingerprint [0-9a-f]{12}$/);
  });

  it('SIGTERM mid-run: passed to the command on the VM, its status comes back, the lock is archived after', async () => {
    const m = monorepo();
    writeFileSync(join(m.out, 'sleep'), '8');
    const { child, done } = spawnRun(m, ['--', 'make build-safe']);
    await until(() => existsSync(join(m.out, 'started')));
    expect(existsSync(join(m.repo, ACTIVE))).toBe(true);
    child.kill('SIGTERM');
    const r = await done;
    // make, terminated, says 2 (its recipe failed) or dies of the signal (143): whichever it says passes through.
    expect([2, 143], r.stderr).toContain(r.code);
    expect(r.stderr).toMatch(/offhost run: interrupted: SIGTERM passed to the command on the VM; it stopped with status (2|143)/);
    expect(existsSync(join(m.repo, ACTIVE))).toBe(false);
    expect(archives(m.repo)).toHaveLength(1);
    expect(subjects(m.repo)[0]).toBe(`offhost: release ${VM} (run-session)`);
  });

  sample.fullOnly('SIGINT mid-run: passed to the command on the VM, its status back, lock archived', async () => {
    const m = monorepo();
    writeFileSync(join(m.out, 'sleep'), '8');
    const { child, done } = spawnRun(m, ['--', 'make build-safe']);
    await until(() => existsSync(join(m.out, 'started')));
    child.kill('SIGINT');
    const r = await done;
    expect([2, 130], r.stderr).toContain(r.code);
    expect(r.stderr).toMatch(/offhost run: interrupted: SIGINT passed to the command on the VM/);
    expect(existsSync(join(m.repo, ACTIVE))).toBe(false);
    expect(archives(m.repo)).toHaveLength(1);
  });

  it('refreshes the heartbeat while the command runs', async () => {
    const m = monorepo();
    writeFileSync(join(m.out, 'sleep'), '3');
    const r = await runIn(m, ['--ttl', '1', '--heartbeat', '0.5', '--', 'make build-safe']);
    expect(r.code, r.stderr).toBe(0);
    const beats = subjects(m.repo).filter((s) => s.startsWith('offhost: heartbeat'));
    expect(beats.length).toBeGreaterThanOrEqual(2);
    const arch = read(m.repo, `${ARCHIVE_DIR}/${archives(m.repo)[0]!}`);
    expect(arch).toMatch(/^heartbeat: \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/m);
    expect(arch).toContain('ttl_minutes: 1');
    // An interval that is not under ttl/3 is refused before anything happens.
    const bad = await runIn(m, ['--ttl', '1', '--heartbeat', '20', '--', 'make build-safe']);
    expect(bad.code).toBe(RUN_EXIT.configError);
    expect(bad.stderr).toContain('ttl_minutes/3');
  });

  it('another session holds the VM: held (241) naming it, nothing runs', async () => {
    const m = monorepo();
    const held = await offhost(['lock', 'acquire', VM, '--reason', 'flutter soak, FL-3'], { cwd: m.repo, baseEnv: { ...m.env, OFFHOST_SESSION: 'other' } });
    expect(held.code).toBe(0);
    const r = await runIn(m, ['--', 'make build-safe']);
    expect(r.code).toBe(RUN_EXIT.held);
    expect(r.stderr).toContain('held by session other');
    expect(r.stderr).toContain('flutter soak, FL-3');
    // The run's session is opened before the lock (its login shell starts while the laptop reads the source
    // and takes the lock), and ended unused: at most its bootstrap reached the VM, got no script, ran nothing.
    const log = readStandinLog(m.log);
    for (const e of log.filter((x) => x.tool === 'incus')) expect(e.argv[2]).toContain(': offhost-end-');
    expect(JSON.stringify(log)).not.toContain('make build-safe');
    expect(existsSync(join(m.out, 'started'))).toBe(false);
    expect(readFileSync(join(m.repo, ACTIVE), 'utf8')).toContain('session: other');
  });

  it('--wait: runs once the holder releases; a SIGTERM while waiting ends the wait without taking the lock', async () => {
    const m = monorepo();
    const other = { ...m.env, OFFHOST_SESSION: 'other' };
    expect((await offhost(['lock', 'acquire', VM, '--reason', 'busy'], { cwd: m.repo, baseEnv: other })).code).toBe(0);
    const w = spawnRun(m, ['--wait', '--poll', '0.2', '--', 'make build-safe']);
    // Released once the run is waiting for it, not after a fixed time (a loaded machine may not have got there).
    await until(() => w.stderrSoFar().includes('waiting'));
    await new Promise((r) => setTimeout(r, 1000));
    expect(existsSync(join(m.out, 'started'))).toBe(false);
    expect((await offhost(['lock', 'release', VM], { cwd: m.repo, baseEnv: other })).code).toBe(0);
    const r = await w.done;
    expect(r.code, r.stderr).toBe(0);
    expect(existsSync(join(m.out, 'started'))).toBe(true);
    expect(r.stderr).toContain('waiting');

    expect((await offhost(['lock', 'acquire', VM, '--reason', 'busy again'], { cwd: m.repo, baseEnv: other })).code).toBe(0);
    const before = g(m.repo, 'rev-parse', 'HEAD');
    const w2 = spawnRun(m, ['--wait', '--poll', '0.2', '--', 'make build-safe']);
    // SIGTERM once it is waiting (its handler is in place then), not after a fixed time a loaded machine may outlast.
    await until(() => w2.stderrSoFar().includes('waiting'));
    w2.child.kill('SIGTERM');
    const r2 = await w2.done;
    expect(r2.code).toBe(143);
    expect(g(m.repo, 'rev-parse', 'HEAD')).toBe(before);
    expect(readFileSync(join(m.repo, ACTIVE), 'utf8')).toContain('session: other');
  });

  sample.fullOnly('from a directory in no repository: the lock goes to the configured monorepo root', async () => {
    const m = monorepo();
    const r = await offhost(['run', '--', `make -C ${m.koda} build-safe`], { cwd: m.out, baseEnv: m.env });
    expect(r.code, r.stderr).toBe(0);
    expect(readFileSync(join(m.out, 'during.md'), 'utf8')).toContain('session: run-session');
    expect(archives(m.repo)).toHaveLength(1);
  });

  sample.fullOnly('this session already holds the VM: runs, and leaves the lock in place', async () => {
    const m = monorepo();
    expect((await offhost(['lock', 'acquire', VM, '--reason', 'a long session'], { cwd: m.repo, baseEnv: m.env })).code).toBe(0);
    const r = await runIn(m, ['--', 'make build-safe']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain('already holds');
    expect(existsSync(join(m.repo, ACTIVE))).toBe(true);
    expect(archives(m.repo)).toEqual([]);
  });

  it('missing backend tool: setup hint, tool-missing (242), no lock, nothing runs', async () => {
    const m = monorepo();
    const empty = mkdtempSync(join(tmpdir(), 'offhost-empty-path-'));
    const r = await runIn(m, ['--', 'make build-safe'], { PATH: empty });
    expect(r.code).toBe(RUN_EXIT.toolMissing);
    expect(r.stderr).toContain('ssh');
    expect(r.stderr).toContain('Nothing was run');
    expect(existsSync(join(m.out, 'started'))).toBe(false);
    expect(subjects(m.repo)).toEqual([]); // no lock change at all
  });

  sample.fullOnly('no session: a session of its own (one per process tree), never a shared name', async () => {
    const m = monorepo();
    const env = { ...m.env };
    delete (env as Record<string, string | undefined>).OFFHOST_SESSION;
    const r = await offhost(['run', '--', 'make build-safe'], { cwd: m.koda, baseEnv: env });
    expect(r.code, r.stderr).toBe(0);
    // The test process is the parent: the session names it (user, pid, start time).
    expect(readFileSync(join(m.out, 'during.md'), 'utf8')).toMatch(new RegExp(`^session: run-[A-Za-z0-9._-]+-${process.pid}(-\\d+)?$`, 'm'));
  });

  it('a pool: takes the first free VM and runs there', async () => {
    const m = monorepo();
    writeFileSync(
      join(m.repo, 'offhost.config.yaml'),
      [
        'vms:',
        '  - { id: s.khost1.dev-linux-koda-1, backend: incus, host: khost1, instance: dev-linux-koda-1 }',
        '  - { id: s.khost1.dev-linux-koda-2, backend: incus, host: khost1, instance: dev-linux-koda-2 }',
        'routes:',
        '  koda:',
        '    vms: [s.khost1.dev-linux-koda-1, s.khost1.dev-linux-koda-2]',
        '',
      ].join('\n'),
    );
    g(m.repo, 'add', 'offhost.config.yaml');
    g(m.repo, 'commit', '-q', '-m', 'pool');
    const other = { ...m.env, OFFHOST_SESSION: 'other' };
    const a = await offhost(['lock', 'acquire', 'koda', '--reason', 'pool member one'], { cwd: m.repo, baseEnv: other });
    expect(a.code, a.stderr).toBe(0);
    expect(a.stdout).toContain('s.khost1.dev-linux-koda-1');
    const r = await runIn(m, ['--', 'make build-safe']);
    expect(r.code, r.stderr).toBe(0);
    const log = readStandinLog(m.log);
    expect(log[1]!.instance).toBe('dev-linux-koda-2');
    expect(readFileSync(join(m.out, 'during.md'), 'utf8')).toBe('none\n'); // the Makefile looks at the -koda lock path
    expect(archives(m.repo)).toEqual(['lock-s.khost1.dev-linux-koda-2-' + new Date().toISOString().slice(0, 10) + '.md']);
    // Both taken: exit 1.
    // (The same session asking for the pool again gets the VM it holds: a no-op.)
    expect((await offhost(['lock', 'acquire', 'koda', '--reason', 'again'], { cwd: m.repo, baseEnv: other })).stdout).toContain('s.khost1.dev-linux-koda-1 is already held by this session');
    expect((await offhost(['lock', 'acquire', 'koda', '--reason', 'two'], { cwd: m.repo, baseEnv: { ...m.env, OFFHOST_SESSION: 'third' } })).code).toBe(0);
    const both = await runIn(m, ['--', 'make build-safe']);
    expect(both.code).toBe(RUN_EXIT.held);
    expect(both.stderr).toMatch(/held by session (other|third)/);
  });
});

describe('offhost run, allow and deny', () => {
  it('allow: runs here with bash and passes the exit status', async () => {
    const m = monorepo();
    const r = await runIn(m, ['--', `echo hello > '${m.out}/here.txt'; exit 3`]);
    expect(r.code).toBe(3);
    expect(readFileSync(join(m.out, 'here.txt'), 'utf8')).toBe('hello\n');
    expect(readStandinLog(m.log)).toEqual([]);
    expect(subjects(m.repo)).toEqual([]); // no lock change at all
  });

  it('deny: prints the reason, denied (240), runs nothing', async () => {
    const m = monorepo();
    const r = await runIn(m, ['--', 'qemu-system-x86_64 -hda win10.qcow2']);
    expect(r.code).toBe(RUN_EXIT.denied);
    expect(r.stderr).toMatch(/offhost run: denied: .*\(exit 240\)\n$/);
    expect(r.stderr).toContain('qemu-windows');
    expect(r.stderr).toContain('s.khost1.dev-win10');
    expect(subjects(m.repo)).toEqual([]); // no lock change at all
  });

  it('role ci: nothing reroutes, the command runs here', async () => {
    const m = monorepo();
    const r = await runIn(m, ['--', 'make build-safe'], { OFFHOST_ROLE: 'ci', CI: 'true' });
    expect(r.code, r.stderr).toBe(0);
    expect(readStandinLog(m.log)).toEqual([]);
    expect(subjects(m.repo)).toEqual([]); // no lock change at all
  });
});
