// `offhost lock` end to end: real temp repositories, the built CLI as a child process. Locks live on
// refs/offhost/locks (issue 10): these tests read the ref where they used to read the branch's commits, and
// the view at the policy's path where they read the working tree.
import { beforeAll, describe, expect, it } from 'vitest';
import { chmodSync, existsSync, writeFileSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import {
  ACTIVE,
  ARCHIVE_DIR,
  VM,
  REF,
  archives,
  cliInProcess,
  ensureBuilt,
  readFile,
  refLog,
  g,
  makeUserWork,
  offhost,
  read,
  sessionEnv,
  snapshot,
  tempRepo,
  userStoreOf,
} from './lifecycle-helpers.js';
import { sampling } from '../helpers/sample.js';

// Lock commands' decisions and writes, not the process boundary: the CLI runs in this process.
cliInProcess();

/** Tests that repeat what a kept test does end to end run in `npm run test:full` (test/helpers/sample.ts). */
const sample = sampling('full');

beforeAll(() => ensureBuilt());

const T0 = '2026-05-19T22:30:00Z';

describe('offhost lock acquire / release', () => {
  it('acquires, is a no-op for the holder, refuses another session, releases into the archive', async () => {
    const dir = tempRepo();
    const head = g(dir, 'rev-parse', 'HEAD');
    const a = await offhost(['lock', 'acquire', VM, '--reason', 'koda make build-safe, KODA-12', '--ttl', '60'], { cwd: dir, env: sessionEnv('sess-a') });
    expect(a.stderr).toBe('');
    expect(a.code).toBe(0);
    const text = read(dir, ACTIVE);
    expect(text).toMatch(/^---\nvm: s\.khost1\.dev-linux-koda\nsession: sess-a\nai: claude\nstarted: \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\n/);
    expect(text).toContain('ttl_minutes: 60');
    expect(text).toContain('explicit: true');
    // Committed to the lock ref, only that path; the branch did not move; the view shows the same text.
    expect(g(dir, 'show', '--name-only', '--format=%s', REF).trim().split('\n')).toEqual([`offhost: lock ${VM} (sess-a)`, '', ACTIVE]);
    expect(g(dir, 'rev-parse', 'HEAD')).toBe(head);
    expect(readFile(dir, ACTIVE)).toBe(text);
    expect(g(dir, 'status', '--porcelain')).toBe('');

    const again = await offhost(['lock', 'acquire', VM, '--reason', 'again'], { cwd: dir, env: sessionEnv('sess-a') });
    expect(again.code).toBe(0);
    expect(again.stdout).toContain('already held by this session');
    expect(read(dir, ACTIVE)).toMatch(/heartbeat: /); // re-acquiring refreshes
    const refreshed = read(dir, ACTIVE);

    const other = await offhost(['lock', 'acquire', VM, '--reason', 'flutter tests'], { cwd: dir, env: sessionEnv('sess-b', 'codex') });
    expect(other.code).toBe(1);
    expect(other.stderr).toContain('held by session sess-a (claude) since');
    expect(other.stderr).toContain('koda make build-safe, KODA-12');
    expect(other.stderr).toMatch(/expires in (59m|1h)/);
    expect(readFile(dir, ACTIVE)).toBe(refreshed);

    const rel = await offhost(['lock', 'release', VM], { cwd: dir, env: sessionEnv('sess-a') });
    expect(rel.code).toBe(0);
    expect(existsSync(join(dir, ACTIVE))).toBe(false);
    const arch = archives(dir);
    expect(arch).toHaveLength(1);
    expect(arch[0]).toMatch(/^lock-s\.khost1\.dev-linux-koda-\d{4}-\d\d-\d\d\.md$/);
    const archived = read(dir, `${ARCHIVE_DIR}/${arch[0]}`);
    expect(archived.startsWith(refreshed)).toBe(true);
    expect(archived).toContain('## Released');
    // Release is a move committed in one commit: the archive is on the ref, the active file is not.
    const changed = g(dir, 'show', '--no-renames', '--name-status', '--format=', REF).trim().split('\n').sort();
    expect(changed).toEqual([`A\t${ARCHIVE_DIR}/${arch[0]}`, `D\t${ACTIVE}`].sort());
    expect(g(dir, 'status', '--porcelain')).toBe('');
    expect(g(dir, 'rev-parse', 'HEAD')).toBe(head);
  });

  it('two archives of one VM on one day do not collide, and their names sort in order (among other VMs\' and days\' archives)', async () => {
    const dir = tempRepo();
    // Archives whose names sort around this day's (another VM, the day before and after): only the day's
    // own names count (a release looks up names with its stem, not the whole archive).
    for (const [vm, day] of [['s.khost2.dev-linux-koda', '2026-05-19'], [VM, '2026-05-18'], [VM, '2026-05-20']] as const) {
      expect((await offhost(['lock', 'acquire', vm, '--reason', 'other', '--now', `${day}T08:00:00Z`], { cwd: dir, env: sessionEnv('o') })).code).toBe(0);
      expect((await offhost(['lock', 'release', vm, '--now', `${day}T08:30:00Z`], { cwd: dir, env: sessionEnv('o') })).code).toBe(0);
    }
    for (let i = 0; i < 3; i++) {
      expect((await offhost(['lock', 'acquire', VM, '--reason', `round ${i}`, '--now', `2026-05-19T1${i}:00:00Z`], { cwd: dir, env: sessionEnv('s') })).code).toBe(0);
      expect((await offhost(['lock', 'release', VM, '--now', `2026-05-19T1${i}:30:00Z`], { cwd: dir, env: sessionEnv('s') })).code).toBe(0);
    }
    expect(archives(dir)).toEqual([
      'lock-s.khost1.dev-linux-koda-2026-05-18.md',
      'lock-s.khost1.dev-linux-koda-2026-05-19-0002.md',
      'lock-s.khost1.dev-linux-koda-2026-05-19-0003.md',
      'lock-s.khost1.dev-linux-koda-2026-05-19.md',
      'lock-s.khost1.dev-linux-koda-2026-05-20.md',
      'lock-s.khost2.dev-linux-koda-2026-05-19.md',
    ]);
    expect(read(dir, `${ARCHIVE_DIR}/lock-s.khost1.dev-linux-koda-2026-05-19-0003.md`)).toContain('round 2');
  });

  it('takes over an expired lock, archiving it as -expired- with a note of why', async () => {
    const dir = tempRepo();
    expect((await offhost(['lock', 'acquire', VM, '--reason', 'old run', '--ttl', '30', '--now', T0], { cwd: dir, env: sessionEnv('old') })).code).toBe(0);
    const oldText = read(dir, ACTIVE);
    // 20 minutes later: still live.
    const early = await offhost(['lock', 'acquire', VM, '--reason', 'new', '--now', '2026-05-19T22:50:00Z'], { cwd: dir, env: sessionEnv('new') });
    expect(early.code).toBe(1);
    expect(early.stderr).toContain('expires in 10m');
    // Two hours later: expired.
    const r = await offhost(['lock', 'acquire', VM, '--reason', 'new run', '--now', '2026-05-20T00:30:00Z'], { cwd: dir, env: sessionEnv('new') });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('lock-s.khost1.dev-linux-koda-expired-2026-05-20.md');
    const arch = `${ARCHIVE_DIR}/lock-s.khost1.dev-linux-koda-expired-2026-05-20.md`;
    const archived = read(dir, arch);
    expect(archived.startsWith(oldText)).toBe(true);
    expect(archived).toContain('## Archived as expired');
    expect(archived).toMatch(/session new \(claude\)/);
    expect(archived).toMatch(/30/); // the why names the ttl
    expect(read(dir, ACTIVE)).toContain('session: new');
    const changed = g(dir, 'show', '--no-renames', '--name-status', '--format=', REF).trim().split('\n').sort();
    expect(changed).toEqual([`A\t${arch}`, `M\t${ACTIVE}`].sort());
  });

  sample.fullOnly('refuses to release another session\'s live lock, and archives an expired one as -expired-', async () => {
    const dir = tempRepo();
    await offhost(['lock', 'acquire', VM, '--reason', 'x', '--ttl', '30', '--now', T0], { cwd: dir, env: sessionEnv('a') });
    const before = read(dir, ACTIVE);
    const r = await offhost(['lock', 'release', VM, '--now', '2026-05-19T22:40:00Z'], { cwd: dir, env: sessionEnv('b') });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("refusing to release another session's live lock");
    expect(read(dir, ACTIVE)).toBe(before);
    const r2 = await offhost(['lock', 'release', VM, '--now', '2026-05-20T10:00:00Z'], { cwd: dir, env: sessionEnv('b') });
    expect(r2.code).toBe(0);
    expect(archives(dir)).toEqual(['lock-s.khost1.dev-linux-koda-expired-2026-05-20.md']);
  });

  it('heartbeat: only the holder, a clock stepped back past the skew is a lost lock, committed', async () => {
    const dir = tempRepo();
    await offhost(['lock', 'acquire', VM, '--reason', 'x', '--ttl', '60', '--now', T0], { cwd: dir, env: sessionEnv('a') });
    const hb = await offhost(['lock', 'heartbeat', VM, '--now', '2026-05-19T22:50:00Z'], { cwd: dir, env: sessionEnv('a') });
    expect(hb.code).toBe(0);
    expect(read(dir, ACTIVE)).toContain('heartbeat: 2026-05-19T22:50:00Z');
    expect(refLog(dir)[0]).toBe(`offhost: heartbeat ${VM} (a)`);
    // Within the skew margin (2 min) the heartbeat never moves backwards...
    expect((await offhost(['lock', 'heartbeat', VM, '--now', '2026-05-19T22:49:00Z'], { cwd: dir, env: sessionEnv('a') })).code).toBe(0);
    expect(read(dir, ACTIVE)).toContain('heartbeat: 2026-05-19T22:50:00Z');
    // ...past it, the clock cannot be trusted: the lock is reported lost, nothing is written.
    const back = await offhost(['lock', 'heartbeat', VM, '--now', '2026-05-19T22:40:00Z'], { cwd: dir, env: sessionEnv('a') });
    expect(back.code).toBe(1);
    expect(back.stderr).toContain('skew margin');
    expect(read(dir, ACTIVE)).toContain('heartbeat: 2026-05-19T22:50:00Z');
    const other = await offhost(['lock', 'heartbeat', VM, '--now', '2026-05-19T22:55:00Z'], { cwd: dir, env: sessionEnv('b') });
    expect(other.code).toBe(1);
    expect(read(dir, ACTIVE)).toContain('heartbeat: 2026-05-19T22:50:00Z');
    // After a heartbeat, expiry counts from the heartbeat: still live at 23:45 with ttl 60.
    const late = await offhost(['lock', 'acquire', VM, '--reason', 'y', '--now', '2026-05-19T23:45:00Z'], { cwd: dir, env: sessionEnv('b') });
    expect(late.code).toBe(1);
    const absent = await offhost(['lock', 'heartbeat', 's.khost1.dev-linux-gui'], { cwd: dir, env: sessionEnv('a') });
    expect(absent.code).toBe(2);
  });

  it('needs a session, and says how to set one', async () => {
    const dir = tempRepo();
    const r = await offhost(['lock', 'acquire', VM, '--reason', 'x'], { cwd: dir });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('OFFHOST_SESSION');
    expect(r.stderr).toContain('--session');
    const bad = await offhost(['lock', 'acquire', 's.khost1.flow', '--reason', 'x'], { cwd: dir, env: sessionEnv('a') });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('production container');
    const noReason = await offhost(['lock', 'acquire', VM], { cwd: dir, env: sessionEnv('a') });
    expect(noReason.code).toBe(2);
    expect(existsSync(join(dir, ACTIVE))).toBe(false);
    const outside = await offhost(['lock', 'status'], { cwd: join(dir, '..') });
    expect(outside.code).toBe(2);
  });

  it('--session/--ai flags win over the environment', async () => {
    const dir = tempRepo();
    const r = await offhost(['lock', 'acquire', VM, '--reason', 'x', '--session', 'flag-s', '--ai', 'gemini'], { cwd: dir, env: sessionEnv('env-s') });
    expect(r.code).toBe(0);
    expect(read(dir, ACTIVE)).toMatch(/session: flag-s\nai: gemini/);
  });

  it('status and status --json', async () => {
    const dir = tempRepo();
    await offhost(['lock', 'acquire', VM, '--reason', 'koda build', '--ttl', '60', '--now', T0], { cwd: dir, env: sessionEnv('a') });
    await offhost(['lock', 'acquire', '--component', 'koda-parser', '--reason', 'refactor', '--now', T0], { cwd: dir, env: sessionEnv('a') });
    const s = await offhost(['lock', 'status', '--now', '2026-05-19T23:00:00Z'], { cwd: dir, env: sessionEnv('a') });
    expect(s.code).toBe(0);
    expect(s.stdout).toContain('s.khost1.dev-linux-koda  a (you) (claude)');
    expect(s.stdout).toContain('expires in 30m');
    const j = await offhost(['lock', 'status', '--json', '--now', '2026-05-19T23:00:00Z'], { cwd: dir });
    const parsed = JSON.parse(j.stdout) as { locks: { target: string; state: string; expires_in_seconds: number; kind: string }[] };
    expect(parsed.locks.map((l) => [l.kind, l.target, l.state])).toEqual([
      ['vm', VM, 'live'],
      ['component', 'koda-parser', 'live'],
    ]);
    expect(parsed.locks[0]!.expires_in_seconds).toBe(1800);
  });

  sample.fullOnly('gc archives every expired active lock with a note, and leaves live ones', async () => {
    const dir = tempRepo();
    await offhost(['lock', 'acquire', VM, '--reason', 'x', '--ttl', '30', '--now', T0], { cwd: dir, env: sessionEnv('a') });
    await offhost(['lock', 'acquire', 's.khost1.dev-linux-gui', '--reason', 'y', '--ttl', '30', '--now', T0], { cwd: dir, env: sessionEnv('b') });
    await offhost(['lock', 'acquire', 's.khost1.dev-linux-iso', '--reason', 'z', '--ttl', '600', '--now', T0], { cwd: dir, env: sessionEnv('c') });
    const r = await offhost(['lock', 'gc', '--now', '2026-05-20T01:00:00Z'], { cwd: dir });
    expect(r.code).toBe(0);
    expect(archives(dir)).toEqual(['lock-s.khost1.dev-linux-gui-expired-2026-05-20.md', 'lock-s.khost1.dev-linux-koda-expired-2026-05-20.md']);
    expect(existsSync(join(dir, 'meta/context/notices/vm-active/lock-s.khost1.dev-linux-iso.md'))).toBe(true);
    expect(read(dir, `${ARCHIVE_DIR}/lock-s.khost1.dev-linux-gui-expired-2026-05-20.md`)).toContain('Archived as expired');
    expect(g(dir, 'status', '--porcelain')).toBe('');
    const again = await offhost(['lock', 'gc', '--now', '2026-05-20T01:00:00Z'], { cwd: dir });
    expect(again.stdout).toContain('no expired locks');
  });

  sample.fullOnly('R7: a component lock is released only after the same session\'s VM lock', async () => {
    const dir = tempRepo();
    const env = sessionEnv('s7');
    expect((await offhost(['lock', 'acquire', '--component', 'koda-parser', '--reason', 'parser work'], { cwd: dir, env })).code).toBe(0);
    expect(existsSync(join(dir, 'meta/context/notices/active/lock-koda-parser.md'))).toBe(true);
    expect((await offhost(['lock', 'acquire', VM, '--reason', 'parser tests on the VM'], { cwd: dir, env })).code).toBe(0);
    const wrong = await offhost(['lock', 'release', '--component', 'koda-parser'], { cwd: dir, env });
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toContain('R7');
    expect(wrong.stderr).toContain(`offhost lock release ${VM}\n  offhost lock release --component koda-parser`);
    expect(existsSync(join(dir, 'meta/context/notices/active/lock-koda-parser.md'))).toBe(true);
    expect((await offhost(['lock', 'release', VM], { cwd: dir, env })).code).toBe(0);
    expect((await offhost(['lock', 'release', '--component', 'koda-parser'], { cwd: dir, env })).code).toBe(0);
    expect(existsSync(join(dir, 'meta/context/notices/active/lock-koda-parser.md'))).toBe(false);
    expect(archives(dir, 'meta/context/notices/archive')).toHaveLength(1);
  });

  sample.fullOnly('--wait polls until the holder releases', async () => {
    const dir = tempRepo();
    await offhost(['lock', 'acquire', VM, '--reason', 'x'], { cwd: dir, env: sessionEnv('a') });
    const seen = { stderr: '' };
    const waiting = offhost(['lock', 'acquire', VM, '--reason', 'y', '--wait=30', '--poll', '0.2'], { cwd: dir, env: sessionEnv('b'), progress: seen, ownProcess: true });
    // Released once it is waiting, not after a fixed time a loaded machine may outlast (the hang guard bounds it).
    while (!seen.stderr.includes('waiting')) await new Promise((r) => setTimeout(r, 50));
    expect((await offhost(['lock', 'release', VM], { cwd: dir, env: sessionEnv('a') })).code).toBe(0);
    const w = await waiting;
    expect(w.code).toBe(0);
    expect(w.stderr).toContain('waiting');
    expect(read(dir, ACTIVE)).toContain('session: b');
    // With a limit that runs out: exit 1.
    const short = await offhost(['lock', 'acquire', VM, '--reason', 'z', '--wait=0.5', '--poll', '0.1'], { cwd: dir, env: sessionEnv('c') });
    expect(short.code).toBe(1);
  });
});

describe("the user's work is never touched", () => {
  it('survives acquire, a refused acquire, heartbeat and release; HEAD never moves', async () => {
    const dir = tempRepo();
    const files = makeUserWork(dir);
    const before = snapshot(dir, files);
    const init = g(dir, 'rev-parse', 'HEAD').trim();
    expect((await offhost(['lock', 'acquire', VM, '--reason', 'x'], { cwd: dir, env: sessionEnv('a') })).code).toBe(0);
    expect(snapshot(dir, files)).toBe(before);
    expect((await offhost(['lock', 'acquire', VM, '--reason', 'y'], { cwd: dir, env: sessionEnv('b') })).code).toBe(1);
    expect(snapshot(dir, files)).toBe(before);
    expect((await offhost(['lock', 'heartbeat', VM], { cwd: dir, env: sessionEnv('a') })).code).toBe(0);
    expect(snapshot(dir, files)).toBe(before);
    // The human commits everything meanwhile: the view is ignored, no lock path lands in their commit.
    g(dir, 'add', '-A');
    g(dir, 'commit', '-q', '-m', 'user work');
    expect(g(dir, 'show', '--name-only', '--format=', 'HEAD').split('\n').filter((l) => l.startsWith('meta/'))).toEqual([]);
    expect((await offhost(['lock', 'release', VM], { cwd: dir, env: sessionEnv('a') })).code).toBe(0);
    expect(g(dir, 'log', '--format=%s', `${init}..HEAD`).trim()).toBe('user work');
    expect(g(dir, 'status', '--porcelain')).toBe('');
  });

  sample.fullOnly('with no git identity, GIT_AUTHOR_*/GIT_COMMITTER_* are honoured, else the session names the commit', async () => {
    const dir = tempRepo();
    g(dir, 'config', '--unset', 'user.email');
    g(dir, 'config', '--unset', 'user.name');
    g(dir, 'config', 'user.useConfigOnly', 'true');
    const ident = { GIT_AUTHOR_NAME: 'CI Bot', GIT_AUTHOR_EMAIL: 'ci@example.test', GIT_COMMITTER_NAME: 'CI Bot', GIT_COMMITTER_EMAIL: 'ci@example.test' };
    const r = await offhost(['lock', 'acquire', VM, '--reason', 'x'], { cwd: dir, env: { ...sessionEnv('a'), ...ident } });
    expect(r.code, r.stderr).toBe(0);
    expect(g(dir, 'log', '-1', '--format=%an <%ae>', REF).trim()).toBe('CI Bot <ci@example.test>');
    const rel = await offhost(['lock', 'release', VM], { cwd: dir, env: sessionEnv('a') });
    expect(rel.code, rel.stderr).toBe(0);
    expect(g(dir, 'log', '-1', '--format=%an', REF).trim()).toBe('offhost (a)');
  });

  sample.fullOnly("a change that cannot be written (git's way: its private index folder unusable) fails with exit 2 and changes nothing", async () => {
    const dir = tempRepo();
    const env = { ...sessionEnv('a'), OFFHOST_GIT_OBJECTS: 'git' };
    expect((await offhost(['lock', 'acquire', VM, '--reason', 'x'], { cwd: dir, env })).code).toBe(0);
    const tip = g(dir, 'rev-parse', REF);
    const view = readFile(dir, ACTIVE);
    // The private folder of the store the change is written in: the user store (docs/LOCKS.md).
    const tmp = join(userStoreOf(dir), 'offhost', 'tmp');
    rmSync(tmp, { recursive: true, force: true });
    writeFileSync(tmp, 'not a folder');
    const r = await offhost(['lock', 'release', VM], { cwd: dir, env });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('nothing was changed');
    expect(g(dir, 'rev-parse', REF)).toBe(tip);
    expect(readFile(dir, ACTIVE)).toBe(view);
    rmSync(tmp);
  });

  it("a change that cannot be written (offhost's own objects: the object folders blocked) fails with exit 2 and changes nothing", async () => {
    const dir = tempRepo();
    expect((await offhost(['lock', 'acquire', VM, '--reason', 'x'], { cwd: dir, env: sessionEnv('a') })).code).toBe(0);
    const tip = g(dir, 'rev-parse', REF);
    const view = readFile(dir, ACTIVE);
    // Root writes anywhere: a file in place of every object folder that does not exist yet blocks new objects.
    const objects = join(userStoreOf(dir), 'objects');
    const blocked: string[] = [];
    for (let i = 0; i < 256; i++) {
      const d = join(objects, i.toString(16).padStart(2, '0'));
      if (!existsSync(d)) (writeFileSync(d, 'not a folder'), blocked.push(d));
    }
    // (Not root: the folders that exist are made read-only too; root writes into them, which the 7 new objects
    // all missing every blocked prefix would need: about (the folders there / 256)^7.)
    const existing = readdirSync(objects).filter((d) => /^[0-9a-f]{2}$/.test(d) && !blocked.includes(join(objects, d)));
    for (const d of existing) chmodSync(join(objects, d), 0o555);
    const r = await offhost(['lock', 'release', VM], { cwd: dir, env: sessionEnv('a') });
    for (const d of existing) chmodSync(join(objects, d), 0o755);
    for (const d of blocked) rmSync(d);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain('nothing was changed');
    expect(g(dir, 'rev-parse', REF)).toBe(tip);
    expect(readFile(dir, ACTIVE)).toBe(view);
  });
});

describe('a busy git index', () => {
  it('a held .git/index.lock neither blocks nor slows a lock operation, and is never removed', async () => {
    const dir = tempRepo();
    const files = makeUserWork(dir);
    const before = snapshot(dir, files);
    const lock = join(dir, '.git', 'index.lock');
    writeFileSync(lock, '');
    const r = await offhost(['lock', 'acquire', VM, '--reason', 'x'], { cwd: dir, env: sessionEnv('a') });
    expect(r.code, r.stderr).toBe(0);
    expect(g(dir, 'ls-tree', '--name-only', REF, '--', ACTIVE).trim()).toBe(ACTIVE);
    expect((await offhost(['lock', 'release', VM], { cwd: dir, env: sessionEnv('a') })).code).toBe(0);
    expect(existsSync(lock)).toBe(true);
    rmSync(lock);
    expect(snapshot(dir, files)).toBe(before);
  });
});

describe('lock commit messages', () => {
  sample.fullOnly('conventional when the repository uses commitlint; locks.commit_message sets the template', async () => {
    const dir = tempRepo();
    writeFileSync(join(dir, 'commitlint.config.js'), "export default { extends: ['@commitlint/config-conventional'] };\n");
    expect((await offhost(['lock', 'acquire', VM, '--reason', 'x'], { cwd: dir, env: sessionEnv('a') })).code).toBe(0);
    expect(refLog(dir)[0]).toBe(`chore(locks): lock ${VM} (a)`);
    writeFileSync(join(dir, 'offhost.config.yaml'), 'locks:\n  commit_message: "ops: {action} of {target} by {session}"\n');
    expect((await offhost(['lock', 'release', VM], { cwd: dir, env: sessionEnv('a') })).code).toBe(0);
    expect(refLog(dir)[0]).toBe(`ops: release of ${VM} by a`);
  });
});

describe('the notices folder', () => {
  it('follows OFFHOST_NOTICES_DIR', async () => {
    const dir = tempRepo();
    mkdirSync(join(dir, 'docs'));
    const r = await offhost(['lock', 'acquire', VM, '--reason', 'x'], { cwd: join(dir, 'docs'), env: { ...sessionEnv('a'), OFFHOST_NOTICES_DIR: 'ops/notices' } });
    expect(r.code).toBe(0);
    expect(existsSync(join(dir, `ops/notices/vm-active/lock-${VM}.md`))).toBe(true);
  });
});
