// Which clones share a lock (docs/LOCKS.md "Which clones share a lock"): the mode belongs to the
// repository, not to the call. Real clones on one machine (one HOME: one user store), a real bare remote,
// the built CLI as concurrent processes; every mix of --push, plain and --no-push calls.
import { beforeAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { ACTIVE, REF, VM, bareWithClones, cleanEnv, configure, cliInProcess, ensureBuilt, g, offhost, sessionEnv, tempRepo } from './lifecycle-helpers.js';
import { sampling } from '../helpers/sample.js';

// Lock commands' decisions and writes, not the process boundary: the CLI runs in this process.
cliInProcess();

/** Tests that repeat what a kept test does end to end run in `npm run test:full` (test/helpers/sample.ts). */
const sample = sampling('full');

beforeAll(() => ensureBuilt());

const HOME = cleanEnv().HOME!;

/** The user stores under this file's HOME (one per repository identity). */
function userStores(): string[] {
  const dir = join(HOME, '.local/state/offhost/lock-stores');
  try {
    return readdirSync(dir).filter((n) => n.endsWith('.git')).map((n) => join(dir, n));
  } catch {
    return [];
  }
}

/** The session named by the active lock of VM on `ref` in the repository `dir` (a clone, a bare remote, a user store), or null. */
function holderIn(dir: string, ref = REF): string | null {
  const r = spawnSync('git', ['show', `${ref}:${ACTIVE}`], { cwd: dir, encoding: 'utf8', env: cleanEnv() });
  if (r.status !== 0) return null;
  return /^session: (\S+)$/m.exec(r.stdout)?.[1] ?? null;
}

/** The user store of each clone among `dirs` (by the store-id offhost cached in its git directory). */
function storesOf(dirs: string[]): string[] {
  const out = new Set<string>();
  for (const d of dirs) {
    try {
      const id = readFileSync(join(d, '.git', 'offhost', 'store-id'), 'utf8').trim();
      for (const s of userStores()) if (s.endsWith(`${id}.git`)) out.add(s);
    } catch {
      /* a bare remote, or a clone that never ran a lock command */
    }
  }
  return [...out];
}

/** Every holder of VM that any store of these repositories shows (remote, their user store, each clone's copy). */
function holders(dirs: string[]): Set<string> {
  const out = new Set<string>();
  for (const d of [...dirs, ...storesOf(dirs)]) {
    const h = holderIn(d);
    if (h) out.add(h);
  }
  return out;
}

describe('clones of one repository on one machine, no --push', () => {
  it('the second clone (cloned from the first, as ~/src/koder from ~/dev/koder) sees the first clone\'s lock', async () => {
    const first = tempRepo('koder');
    const second = join(dirname(first), 'src-koder');
    g(dirname(first), 'clone', '-q', first, second);
    configure(second);
    const a = await offhost(['lock', 'acquire', VM, '--reason', 'first clone'], { cwd: first, env: sessionEnv('first') });
    expect(a.code, a.stderr).toBe(0);
    const b = await offhost(['lock', 'acquire', VM, '--reason', 'second clone'], { cwd: second, env: sessionEnv('second') });
    expect(b.code, b.stderr).toBe(1);
    expect(b.stderr).toContain('held by session first');
    // A worktree of the first sees it too; status says which clones share the locks.
    const wt = join(dirname(first), 'wt');
    g(first, 'worktree', 'add', '-q', wt);
    const c = await offhost(['lock', 'acquire', VM, '--reason', 'worktree'], { cwd: wt, env: sessionEnv('third') });
    expect(c.code).toBe(1);
    const st = await offhost(['lock', 'status', '--json'], { cwd: second });
    const j = JSON.parse(st.stdout) as { sharing: { mode: string; shared: boolean; covers: string }; locks: { session: string }[] };
    expect(j.sharing.mode).toBe('user');
    expect(j.sharing.shared).toBe(false);
    expect(j.sharing.covers).toContain('not with other machines');
    expect(j.locks.map((l) => l.session)).toEqual(['first']);
    // Released in the first clone: free in the second.
    expect((await offhost(['lock', 'release', VM], { cwd: first, env: sessionEnv('first') })).code).toBe(0);
    expect((await offhost(['lock', 'acquire', VM, '--reason', 'now mine'], { cwd: second, env: sessionEnv('second') })).code).toBe(0);
    expect((await offhost(['lock', 'release', VM], { cwd: second, env: sessionEnv('second') })).code).toBe(0);
  }, 300_000);

  it('two clones of a bare remote race without --push: exactly one holder', async () => {
    const { bare, clones } = bareWithClones(3);
    const results = await Promise.all(clones.map((c, i) => offhost(['lock', 'acquire', VM, '--reason', `clone ${i}`], { cwd: c, env: sessionEnv(`plain-${i}`), ownProcess: true })));
    expect(results.filter((r) => r.code === 0), results.map((r) => r.stderr).join('\n')).toHaveLength(1);
    expect(results.filter((r) => r.code === 1)).toHaveLength(2);
    expect(holders([bare, ...clones]).size).toBe(1);
  }, 300_000);

  sample.fullOnly('a clone without a commit keeps its own locks and says so', async () => {
    const dir = join(dirname(tempRepo('x')), 'empty');
    mkdirSync(dir);
    g(dir, 'init', '-q', '-b', 'main');
    const st = await offhost(['lock', 'status'], { cwd: dir });
    expect(st.code, st.stderr).toBe(0);
    expect(st.stdout).toContain("this clone's own");
  }, 300_000);
});

/**
 * A bare remote with two clones; the second stands for another machine (its own HOME), whose first lock
 * command asked the remote (it held nothing) and kept that answer.
 */
async function machineBAsked(): Promise<{ bare: string; clones: string[]; b: Record<string, string> }> {
  const { bare, clones } = bareWithClones(2);
  const otherHome = join(dirname(bare), 'other-home');
  mkdirSync(otherHome);
  const b = { ...sessionEnv('machine-b'), HOME: otherHome };
  const first = await offhost(['lock', 'acquire', VM, '--reason', 'b'], { cwd: clones[1]!, env: b });
  expect(first.code, first.stderr).toBe(0);
  expect((await offhost(['lock', 'release', VM], { cwd: clones[1]!, env: b })).code).toBe(0);
  return { bare, clones, b };
}

describe('the mode belongs to the repository: mixed --push and plain calls', () => {
  sample.fullOnly('plain then --push, and --push then plain, in one clone: the second is refused (held)', async () => {
    for (const order of [['plain', 'push'], ['push', 'plain']] as const) {
      const { bare, clones } = bareWithClones(1);
      const c = clones[0]!;
      const flag = (k: string) => (k === 'push' ? ['--push'] : []);
      const a = await offhost(['lock', 'acquire', VM, '--reason', 'a', ...flag(order[0])], { cwd: c, env: sessionEnv('agent-a') });
      expect(a.code, a.stderr).toBe(0);
      const b = await offhost(['lock', 'acquire', VM, '--reason', 'b', ...flag(order[1])], { cwd: c, env: sessionEnv('agent-b') });
      expect(b.code, `${order.join(' then ')}: ${b.stderr}`).toBe(1);
      expect(b.stderr).toContain('held by session agent-a');
      expect(holders([bare, c])).toEqual(new Set(['agent-a']));
      // After any --push the repository's locks are on the remote, for plain calls too.
      expect(holderIn(bare)).toBe('agent-a');
      const noPush = await offhost(['lock', 'acquire', VM, '--reason', 'c', '--no-push'], { cwd: c, env: sessionEnv('agent-c') });
      expect(noPush.code).toBe(2);
      expect(noPush.stderr).toMatch(/shared (through|there)/);
      // agent-a heartbeats and releases with plain calls: they go to the remote.
      expect((await offhost(['lock', 'heartbeat', VM], { cwd: c, env: sessionEnv('agent-a') })).code).toBe(0);
      expect((await offhost(['lock', 'release', VM], { cwd: c, env: sessionEnv('agent-a') })).code).toBe(0);
      expect(holderIn(bare)).toBeNull();
    }
  }, 300_000);

  sample.fullOnly('a second clone on another "machine" (its own HOME) goes through the remote once the remote holds the ref', async () => {
    const { bare, clones } = bareWithClones(2);
    expect((await offhost(['lock', 'acquire', VM, '--reason', 'a', '--push'], { cwd: clones[0]!, env: sessionEnv('machine-a') })).code).toBe(0);
    const otherHome = join(dirname(bare), 'other-home');
    mkdirSync(otherHome);
    const b = await offhost(['lock', 'acquire', VM, '--reason', 'b'], { cwd: clones[1]!, env: { ...sessionEnv('machine-b'), HOME: otherHome } });
    expect(b.code, b.stderr).toBe(1);
    expect(b.stderr).toContain('held by session machine-a');
    const noPush = await offhost(['lock', 'acquire', VM, '--reason', 'b', '--no-push'], { cwd: clones[1]!, env: { ...sessionEnv('machine-c'), HOME: otherHome } });
    expect(noPush.code).toBe(2);
  }, 300_000);

  it('another machine asks the remote at most once a minute: its answer "holds none" stands for 60 s, then it goes through the remote', async () => {
    // Machine b's first call asks the remote (it holds nothing): its locks stay in b's user store.
    const { bare, clones, b } = await machineBAsked();
    const at = (s: number) => new Date(Date.now() + s * 1000).toISOString().replace(/\.\d+Z$/, 'Z');
    expect(holderIn(bare)).toBeNull();
    // Machine a shares its locks through the remote and holds the VM there.
    expect((await offhost(['lock', 'acquire', VM, '--reason', 'a', '--push'], { cwd: clones[0]!, env: sessionEnv('machine-a') })).code).toBe(0);
    expect(holderIn(bare)).toBe('machine-a');
    // Within the minute b uses its answer (no ls-remote): the window docs/LOCKS.md states.
    const within = await offhost(['lock', 'acquire', VM, '--reason', 'b', '--now', at(30)], { cwd: clones[1]!, env: b });
    expect(within.code, within.stderr).toBe(0);
    expect((await offhost(['lock', 'release', VM, '--now', at(31)], { cwd: clones[1]!, env: b })).code).toBe(0);
    // After it, b asks again, finds the remote's locks and goes through them: a's hold is seen.
    const after = await offhost(['lock', 'acquire', VM, '--reason', 'b', '--now', at(75)], { cwd: clones[1]!, env: b });
    expect(after.code, after.stderr).toBe(1);
    expect(after.stderr).toContain('held by session machine-a');
  }, 300_000);

  it("offhost run's setting: an answer under 10 minutes old stands while the remote is asked again in the background; the next call sees what it said", async () => {
    const { openLockStore } = await import('../../src/locks/store.js');
    const { keptProbe } = await import('../../src/locks/hub.js');
    // b asks the remote once (it holds nothing): the answer is kept.
    const { bare, clones, b } = await machineBAsked();
    const later = (s: number) => ({ now: () => new Date(Date.now() + s * 1000) });
    const at = (s: number) => new Date(Date.now() + s * 1000).toISOString().replace(/\.\d+Z$/, 'Z');
    const lines: string[] = [];
    const open = (s: number, staleMs?: number) =>
      openLockStore({ repoDir: clones[1]!, env: { ...cleanEnv(), ...b }, clock: later(s), log: (l) => lines.push(l), share: { remoteName: 'origin', configPush: false, probeRemote: true, probeKeepMs: 60_000, ...(staleMs ? { probeStaleMs: staleMs } : {}) } });
    // Five minutes on, nothing changed on the remote: the answer stands, and asking again keeps it afresh.
    const quiet = await open(300, 600_000);
    expect(quiet.sharing).toEqual([]);
    const userStore = quiet.opts.hub!.userStore!;
    expect(keptProbe(userStore, bare, 60_000, Date.now() + 300_000)).toBeNull(); // past its minute
    await quiet.refreshRemoteProbe();
    expect(keptProbe(userStore, bare, 60_000, Date.now() + 300_000)?.note).toBeNull(); // asked again just now
    // Machine a shares its locks through the remote and holds the VM there.
    expect((await offhost(['lock', 'acquire', VM, '--reason', 'a', '--push'], { cwd: clones[0]!, env: sessionEnv('machine-a') })).code).toBe(0);
    // Four minutes later still (under ten since that answer), the run's store uses it: this machine's store.
    const stale = await open(540, 600_000);
    expect(stale.sharing).toEqual([]);
    expect(stale.opts.hub!.wantRemote).toBe(false);
    // ... and the question it asks in the background finds the remote's locks: said, and the answer dropped.
    await stale.refreshRemoteProbe();
    expect(lines.join('\n')).toContain(`the remote origin holds refs/offhost/locks (asked while this command ran)`);
    expect(keptProbe(userStore, bare, 600_000, Date.now() + 540_000)).toBeNull();
    // So the next call, a plain lock command, asks and goes through the remote: a's hold is seen.
    const next = await offhost(['lock', 'acquire', VM, '--reason', 'b', '--now', at(545)], { cwd: clones[1]!, env: b });
    expect(next.code, next.stderr).toBe(1);
    expect(next.stderr).toContain('held by session machine-a');
  }, 300_000);

  it('an answer past its minute is not used by lock commands, nor by offhost run once it is 10 minutes old: the remote is asked first', async () => {
    const { openLockStore } = await import('../../src/locks/store.js');
    const { clones, b } = await machineBAsked();
    expect((await offhost(['lock', 'acquire', VM, '--reason', 'a', '--push'], { cwd: clones[0]!, env: sessionEnv('machine-a') })).code).toBe(0);
    const open = (s: number, staleMs?: number) =>
      openLockStore({ repoDir: clones[1]!, env: { ...cleanEnv(), ...b }, clock: { now: () => new Date(Date.now() + s * 1000) }, share: { remoteName: 'origin', configPush: false, probeRemote: true, probeKeepMs: 60_000, ...(staleMs ? { probeStaleMs: staleMs } : {}) } });
    const joined = /the remote origin holds refs\/offhost\/locks: this repository's locks are shared there/;
    // Within the minute both use the answer; past it a lock command asks; past ten minutes the run asks too.
    expect((await open(30)).sharing.join('\n')).not.toMatch(joined);
    expect((await open(30, 600_000)).sharing.join('\n')).not.toMatch(joined);
    expect((await open(90)).sharing.join('\n')).toMatch(joined);
    const late = await open(601, 600_000);
    expect(late.sharing.join('\n')).toMatch(joined);
    expect(late.opts.hub!.wantRemote).toBe(true);
    expect(late.staleRefresh).toBeNull(); // asked already: nothing to ask in the background
  }, 300_000);

  it('an answer kept for another URL, a clock that went back, or an unreadable file is not used', async () => {
    const { keptProbe, keepProbe } = await import('../../src/locks/hub.js');
    const dir = dirname(tempRepo('probe'));
    keepProbe(dir, 'git@host:a.git', 1_000_000, null);
    expect(keptProbe(dir, 'git@host:a.git', 60_000, 1_030_000)).toEqual({ note: null, ageMs: 30_000 });
    expect(keptProbe(dir, 'git@host:a.git', 60_000, 1_060_000)).toBeNull();
    expect(keptProbe(dir, 'git@host:b.git', 60_000, 1_030_000)).toBeNull();
    expect(keptProbe(dir, 'git@host:a.git', 60_000, 999_000)).toBeNull();
    keepProbe(dir, 'git@host:a.git', 1_000_000, 'could not ask the remote origin');
    expect(keptProbe(dir, 'git@host:a.git', 60_000, 1_012_000)).toEqual({ note: 'could not ask the remote origin (asked 12 s ago)', ageMs: 12_000 });
    // A note edited by hand is not said as it is: control characters (a terminal's escapes) are blanked out,
    // and a sentence that is not offhost's is not said at all.
    writeFileSync(join(dir, 'offhost-remote-probe.json'), JSON.stringify({ url: 'git@host:a.git', at: 1_000_000, note: 'could not ask the remote origin \u001b]0;owned\u0007 x' }));
    expect(keptProbe(dir, 'git@host:a.git', 60_000, 1_001_000)?.note).toBe('could not ask the remote origin  ]0;owned  x (asked 1 s ago)');
    writeFileSync(join(dir, 'offhost-remote-probe.json'), JSON.stringify({ url: 'git@host:a.git', at: 1_000_000, note: 'anything else' }));
    expect(keptProbe(dir, 'git@host:a.git', 60_000, 1_001_000)).toEqual({ note: null, ageMs: 1_000 });
    writeFileSync(join(dir, 'offhost-remote-probe.json'), '{"url": "git@host:a.git", "at": "soon"');
    expect(keptProbe(dir, 'git@host:a.git', 60_000, 1_012_000)).toBeNull();
  });

  sample.fullOnly('races of every mix (plain, --push, --no-push) across two clones: never two holders', async () => {
    const mixes: string[][] = [
      ['plain', 'push'],
      ['push', 'plain'],
      ['plain', 'plain', 'push', 'push'],
      ['nopush', 'push', 'plain'],
      ['push', 'nopush', 'plain', 'nopush', 'push', 'plain'],
    ];
    for (const mix of mixes) {
      const { bare, clones } = bareWithClones(2);
      const flag = (k: string) => (k === 'push' ? ['--push'] : k === 'nopush' ? ['--no-push'] : []);
      const results = await Promise.all(
        mix.map((k, i) => offhost(['lock', 'acquire', VM, '--reason', `${k} ${i}`, ...flag(k)], { cwd: clones[i % 2]!, env: sessionEnv(`racer-${i}-${k}`), ownProcess: true })),
      );
      const detail = `${mix.join(',')}:\n${results.map((r, i) => `${i} ${mix[i]} ${r.code} ${r.stderr}`).join('\n')}`;
      const winners = results.flatMap((r, i) => (r.code === 0 ? [i] : []));
      expect(winners, detail).toHaveLength(1);
      // The losers were told who holds it (1) or, for --no-push once the locks are shared, refused (2).
      for (const [i, r] of results.entries()) if (i !== winners[0]) expect([1, 2], detail).toContain(r.code);
      const winner = `racer-${winners[0]}-${mix[winners[0]!]}`;
      // Every store anyone reads names the winner and no one else.
      expect(holders([bare, ...clones]), detail).toEqual(new Set([winner]));
      // And the next call, of any kind, from either clone, sees the winner.
      for (const [i, k] of ['plain', 'push'].entries()) {
        const r = await offhost(['lock', 'acquire', VM, '--reason', 'late', ...flag(k)], { cwd: clones[i]!, env: sessionEnv(`late-${k}`) });
        expect(r.code, `${detail}\nlate ${k}: ${r.stderr}`).toBe(1);
      }
    }
  }, 900_000);
});
