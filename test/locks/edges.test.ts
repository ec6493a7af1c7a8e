// The edges of issue 10 as real processes on real repositories: branch locks (honoured, linted, migrated),
// files offhost did not write at the view's paths (hand edit, FIFO, symlink), crash leftovers, and the
// lock ref's history checked by `offhost lint --lock-ref`. Each is a clear error naming the path, in
// bounded time, changing nothing, or a recovery that `lock status` reports.
import { beforeAll, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, symlinkSync, utimesSync, writeFileSync, chmodSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { ACTIVE, REF, VM, bareWithClones, cleanEnv, cliInProcess, ensureBuilt, g, offhost, read, sessionEnv, tempRepo } from './lifecycle-helpers.js';

// Lock commands' decisions and writes, not the process boundary: the CLI runs in this process.
cliInProcess();

beforeAll(() => ensureBuilt());

const iso = (ms: number) => new Date(Math.floor(ms / 1000) * 1000).toISOString().replace(/\.000Z$/, 'Z');
const handLock = (session: string, started = iso(Date.now() - 60_000), vm = VM) =>
  `---\nvm: ${vm}\nsession: ${session}\nai: human\nstarted: ${started}\nreason: by hand, the old way\nttl_minutes: 120\n---\n`;

function commitHandLock(dir: string, text: string, path = ACTIVE): void {
  mkdirSync(join(dir, path, '..'), { recursive: true });
  writeFileSync(join(dir, path), text);
  g(dir, 'add', path);
  g(dir, 'commit', '-q', '-m', 'lock by hand');
}

describe('locks committed by hand to the branch', () => {
  it('are honoured, migrated by lock gc, and then removable from the branch without a lint error', async () => {
    const dir = tempRepo();
    const text = handLock('hand-session');
    commitHandLock(dir, text);
    const r = await offhost(['lock', 'acquire', VM, '--reason', 'x'], { cwd: dir, env: sessionEnv('agent') });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('held by session hand-session');
    expect(r.stderr).toContain('committed by hand to the checked-out branch');
    const st = await offhost(['lock', 'status'], { cwd: dir, env: sessionEnv('agent') });
    expect(st.stdout).toContain('[committed to the branch]');
    const gc = await offhost(['lock', 'gc'], { cwd: dir, env: sessionEnv('agent') });
    expect(gc.code, gc.stderr).toBe(0);
    expect(gc.stdout).toContain(`migrated HEAD:${ACTIVE}`);
    expect(read(dir, ACTIVE)).toBe(text);
    // The branch drops its copy: not a deletion of a lock, the ref holds it.
    g(dir, 'rm', '-q', ACTIVE);
    const lint = await offhost(['lint', '--staged'], { cwd: dir });
    expect(lint.code, lint.stdout).toBe(0);
    // Still held (now from the ref), whatever HEAD does.
    g(dir, 'commit', '-q', '-m', 'drop the hand lock');
    g(dir, 'checkout', '-q', 'HEAD~1');
    const again = await offhost(['lock', 'acquire', VM, '--reason', 'x'], { cwd: dir, env: sessionEnv('agent') });
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('held by session hand-session');
    expect(again.stderr).not.toContain('(committed by hand to the checked-out branch)');
    g(dir, 'checkout', '-q', 'main'); // git removes the branch's copy; the next offhost command shows the view
    expect((await offhost(['lock', 'status'], { cwd: dir })).code).toBe(0);
    expect(readFileSync(join(dir, ACTIVE), 'utf8')).toBe(text);
    expect(g(dir, 'status', '--porcelain')).toBe('');
  });

  it('an unreadable one (BOM is fine; a vm: that does not match the name is not; a symlink) fails closed naming HEAD:path', async () => {
    const bom = tempRepo();
    commitHandLock(bom, `\uFEFF${handLock('bom-session')}`);
    const b = await offhost(['lock', 'acquire', VM, '--reason', 'x'], { cwd: bom, env: sessionEnv('agent') });
    expect(b.code).toBe(1);
    expect(b.stderr).toContain('held by session bom-session');

    const wrong = tempRepo();
    commitHandLock(wrong, handLock('w', undefined, 's.khost1.dev-linux-gui'));
    const w = await offhost(['lock', 'acquire', VM, '--reason', 'x'], { cwd: wrong, env: sessionEnv('agent') });
    expect(w.code).toBe(2);
    expect(w.stderr).toContain(`HEAD:${ACTIVE}`);
    expect(w.stderr).toContain('nothing was changed');
    expect(g(wrong, 'for-each-ref', 'refs/offhost/').trim()).toBe('');

    const link = tempRepo();
    mkdirSync(join(link, 'meta/context/notices/vm-active'), { recursive: true });
    symlinkSync('/etc/hostname', join(link, ACTIVE));
    g(link, 'add', ACTIVE);
    g(link, 'commit', '-q', '-m', 'symlinked lock');
    const l = await offhost(['lock', 'acquire', VM, '--reason', 'x'], { cwd: link, env: sessionEnv('agent') });
    expect(l.code).toBe(2);
    expect(l.stderr).toContain('symbolic link');
    expect(l.stderr).toContain(ACTIVE);
  });
});

describe('files offhost did not write at the view paths', () => {
  it('a hand edit of the view: acquire/release of that VM is an error naming the path; the ref is unchanged', async () => {
    const dir = tempRepo();
    expect((await offhost(['lock', 'acquire', VM, '--reason', 'x'], { cwd: dir, env: sessionEnv('a') })).code).toBe(0);
    const tip = g(dir, 'rev-parse', REF);
    const view = join(dir, ACTIVE);
    chmodSync(view, 0o644);
    writeFileSync(view, readFileSync(view, 'utf8').replace(/reason: .*/, 'reason: edited by hand'));
    for (const args of [['lock', 'release', VM], ['lock', 'acquire', VM, '--reason', 'y']]) {
      const r = await offhost(args, { cwd: dir, env: sessionEnv('a') });
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr).toContain(ACTIVE);
      expect(r.stderr).toContain('read-only view');
    }
    expect(g(dir, 'rev-parse', REF)).toBe(tip);
    expect(readFileSync(view, 'utf8')).toContain('edited by hand');
    const st = await offhost(['lock', 'status'], { cwd: dir, env: sessionEnv('a') });
    expect(st.stdout).toContain(`view: ${ACTIVE}`);
    // Deleting it gives the view back.
    rmSync(view);
    expect((await offhost(['lock', 'release', VM], { cwd: dir, env: sessionEnv('a') })).code).toBe(0);
  });

  it('a FIFO at the lock path never hangs a command: status answers, acquire names the path', async () => {
    const dir = tempRepo();
    mkdirSync(join(dir, 'meta/context/notices/vm-active'), { recursive: true });
    execFileSync('mkfifo', [join(dir, ACTIVE)]);
    const st = await offhost(['lock', 'status'], { cwd: dir, env: sessionEnv('a') });
    expect(st.code).toBe(0);
    const a = await offhost(['lock', 'acquire', VM, '--reason', 'x'], { cwd: dir, env: sessionEnv('a') });
    expect(a.code).toBe(2);
    expect(a.stderr).toContain('is a FIFO');
    expect(a.stderr).toContain(ACTIVE);
  });
});

describe('crash leftovers', () => {
  it('a ref lock left by a killed git is removed once stale, and lock status says so; an old mutex file is ignored', async () => {
    const dir = tempRepo();
    expect((await offhost(['lock', 'acquire', VM, '--reason', 'x'], { cwd: dir, env: sessionEnv('a') })).code).toBe(0);
    const lockFile = join(dir, '.git', `${REF}.lock`);
    writeFileSync(lockFile, '');
    const old = new Date(Date.now() - 60_000);
    utimesSync(lockFile, old, old);
    mkdirSync(join(dir, '.git', 'offhost'), { recursive: true });
    writeFileSync(join(dir, '.git', 'offhost', 'lock.mutex'), `1 ${process.pid} other-host 0\n`);
    const r = await offhost(['lock', 'heartbeat', VM], { cwd: dir, env: sessionEnv('a') });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain(`recovered: removed ${lockFile}`);
    // A private index of a dead process: removed and reported.
    const tmp = join(dir, '.git', 'offhost', 'tmp');
    mkdirSync(tmp, { recursive: true });
    const host = execFileSync('hostname', { encoding: 'utf8' }).trim().replace(/[^A-Za-z0-9.-]/g, '_');
    writeFileSync(join(tmp, `index-${host}-999999-abcdef`), '');
    const st = await offhost(['lock', 'status'], { cwd: dir, env: sessionEnv('a') });
    expect(st.stdout).toContain('recovered: removed');
    expect(st.stdout).toContain('index-');
  });
});

describe('an unreachable remote', () => {
  it('status answers from this clone, saying so; a change is exit 2 naming the remote, nothing changed', async () => {
    const { clones } = bareWithClones(1);
    const c = clones[0]!;
    expect((await offhost(['lock', 'acquire', VM, '--reason', 'x', '--push'], { cwd: c, env: sessionEnv('a') })).code).toBe(0);
    const tip = g(c, 'rev-parse', REF);
    g(c, 'remote', 'set-url', 'origin', join(c, '..', 'gone.git'));
    const st = await offhost(['lock', 'status', '--push'], { cwd: c, env: sessionEnv('a') });
    expect(st.code, st.stderr).toBe(0);
    expect(st.stdout).toContain('could not be read');
    expect(st.stdout).toContain(VM);
    const rel = await offhost(['lock', 'release', VM, '--push'], { cwd: c, env: sessionEnv('a') });
    expect(rel.code).toBe(2);
    expect(rel.stderr).toContain('origin');
    expect(rel.stderr).toContain('nothing was changed');
    expect(g(c, 'rev-parse', REF)).toBe(tip);
  });
});

describe('offhost lint --lock-ref', () => {
  it("checks every commit of the lock ref's history; a steal pushed by hand is an error", async () => {
    const dir = tempRepo();
    expect((await offhost(['lock', 'acquire', VM, '--reason', 'x'], { cwd: dir, env: sessionEnv('a') })).code).toBe(0);
    expect((await offhost(['lock', 'heartbeat', VM], { cwd: dir, env: sessionEnv('a') })).code).toBe(0);
    const clean = await offhost(['lint', '--lock-ref'], { cwd: dir });
    expect(clean.code, clean.stdout).toBe(0);
    const before = g(dir, 'rev-parse', REF).trim();
    // Someone replaces the live lock with their own on the ref, by hand.
    const env = { ...cleanEnv(), GIT_INDEX_FILE: join(dir, '.git', 'steal-index') };
    execFileSync('git', ['read-tree', before], { cwd: dir, env });
    const blob = execFileSync('git', ['hash-object', '-w', '--stdin'], { cwd: dir, env, input: handLock('thief') }).toString().trim();
    execFileSync('git', ['update-index', '--cacheinfo', `100644,${blob},${ACTIVE}`], { cwd: dir, env });
    const tree = execFileSync('git', ['write-tree'], { cwd: dir, env }).toString().trim();
    const c = execFileSync('git', ['commit-tree', tree, '-p', before, '-m', 'steal'], { cwd: dir, env }).toString().trim();
    g(dir, 'update-ref', REF, c, before);
    const r = await offhost(['lint', '--lock-ref', '--since', before], { cwd: dir });
    expect(r.code).toBe(1);
    expect(r.stdout).toContain('lock-stolen');
    // offhost ci checks it too when asked (a job run on a push of the lock ref).
    const ci = await offhost(['ci', '--base', 'HEAD', '--no-scan', '--no-summary', '--lock-ref', '--lock-ref-since', before], { cwd: dir });
    expect(ci.code).toBe(1);
    expect(ci.stdout).toContain('refs/offhost/locks: commit');
    expect(ci.stdout).toContain('lock-stolen');
    const ciClean = await offhost(['ci', '--base', 'HEAD', '--no-scan', '--no-summary', '--lock-ref', '--lock-ref-since', c], { cwd: dir });
    expect(ciClean.code, ciClean.stdout).toBe(0);
  });
});
