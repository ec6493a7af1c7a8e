// The hook's standard input, whatever an agent connects it to: a socket pair (Node-based agents: libuv's
// stdio pipes), a pipe, a regular file; written at once, slowly, or never finished. And the executable's
// two bundles with their code caches: a stale or foreign cache only costs speed.
import { codeCaches } from '../helpers/global-setup.js';
import { beforeAll, describe, expect, it } from 'vitest';
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawn, spawnSync } from 'node:child_process';
import { type FakeHome, ROOT, fakeHome, hookEnv, requireBuild } from './hooks-helpers.js';

const CJS = join(ROOT, 'dist', 'offhost.cjs');
let h: FakeHome;
beforeAll(() => {
  requireBuild();
  h = fakeHome();
});

const event = (command: string) =>
  JSON.stringify({ session_id: 's', transcript_path: '/t', cwd: h.koda, hook_event_name: 'PreToolUse', tool_name: 'Bash', tool_input: { command }, tool_use_id: 'x' });
const reasonOf = (stdout: string): string => JSON.parse(stdout).hookSpecificOutput.permissionDecisionReason;
const q = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

/** The hook run by bash with stdin set up by `redirect` (a pipeline or a redirection). */
function viaBash(script: string, env: Record<string, string> = hookEnv(h)) {
  return spawnSync('bash', ['-c', script], { env, encoding: 'utf8', timeout: 30_000 });
}

describe('standard input of every kind', () => {
  let heavy: string;
  beforeAll(() => {
    heavy = event('qemu-system-x86_64 -hda win10.qcow2');
  });

  it('a socket pair written at once (as Claude Code and Gemini CLI spawn hooks)', () => {
    const r = spawnSync(process.execPath, [CJS, 'hook', 'claude-code'], { input: heavy, env: hookEnv(h), encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
    expect(reasonOf(r.stdout)).toContain('(rule qemu-windows)');
  });

  it('a socket pair written in two parts with a pause between them', async () => {
    const child = spawn(process.execPath, [CJS, 'hook', 'claude-code'], { env: hookEnv(h) });
    let stdout = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stdin.write(heavy.slice(0, 40));
    await new Promise((r) => setTimeout(r, 150));
    child.stdin.end(heavy.slice(40));
    const status = await new Promise<number | null>((res) => child.on('exit', res));
    expect(status).toBe(0);
    expect(reasonOf(stdout)).toContain('(rule qemu-windows)');
  });

  it('a Node without process.binding (a future version) still reads the socket, as a stream', () => {
    const preload = join(h.home, 'no-binding.cjs');
    writeFileSync(preload, "process.binding = () => { throw new Error('No such module: pipe_wrap'); };\n");
    // From a copy of dist/: without process.binding the loader cannot set its V8 flags, so V8 rejects the
    // build's code cache and the loader writes a new one (the shared dist/ must stay as the build wrote it).
    const dist = mkdtempSync(join(tmpdir(), 'offhost-dist-'));
    cpSync(join(ROOT, 'dist'), dist, { recursive: true });
    const r = spawnSync(process.execPath, ['-r', preload, join(dist, 'offhost.cjs'), 'hook', 'claude-code'], { input: heavy, env: hookEnv(h), encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
    expect(reasonOf(r.stdout)).toContain('(rule qemu-windows)');
  });

  it('an fs binding whose numbers are laid out otherwise (a future Node) is not trusted: a stalled socket still meets the deadline', async () => {
    // The binding says "regular file" for every descriptor, /dev/null included: trusted, the hook would
    // block reading the socket until its writer let go (3 s here). The layout check on /dev/null (a
    // character device) fails instead, fstatSync says "socket", and the deadline refuses the event.
    const preload = join(h.home, 'odd-fs-binding.cjs');
    writeFileSync(
      preload,
      "const real = process.binding.bind(process);\n" +
        "process.binding = (name) => name === 'fs' ? { fstat: () => [0, 0o100644], stat: () => [0, 0o100644] } : real(name);\n",
    );
    const dist = mkdtempSync(join(tmpdir(), 'offhost-dist-'));
    cpSync(join(ROOT, 'dist'), dist, { recursive: true });
    const child = spawn(process.execPath, ['-r', preload, join(dist, 'offhost.cjs'), 'hook', 'claude-code'], { env: hookEnv(h, { OFFHOST_HOOK_STDIN_MS: '300' }) });
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    child.stdin.write(heavy.slice(0, 40));
    // The rest comes only long after the deadline: the hook must have ended on its own before that.
    let released = false;
    const release = setTimeout(() => ((released = true), child.stdin.end(heavy.slice(40))), 30_000);
    const status = await new Promise<number | null>((res) => child.on('exit', res));
    clearTimeout(release);
    child.stdin.destroy();
    expect(status).toBe(2);
    expect(stderr).toContain('did not end within 300ms');
    expect(released).toBe(false);
  });

  it('a pipe, at once and in two parts', () => {
    const file = join(h.home, 'event.json');
    writeFileSync(file, heavy);
    const once = viaBash(`cat ${q(file)} | ${q(process.execPath)} ${q(CJS)} hook claude-code`);
    expect(reasonOf(once.stdout)).toContain('(rule qemu-windows)');
    const slow = viaBash(`{ head -c 40 ${q(file)}; sleep 0.15; tail -c +41 ${q(file)}; } | ${q(process.execPath)} ${q(CJS)} hook claude-code`);
    expect(slow.status, slow.stderr).toBe(0);
    expect(reasonOf(slow.stdout)).toContain('(rule qemu-windows)');
  });

  it('a regular file', () => {
    const file = join(h.home, 'event-file.json');
    writeFileSync(file, heavy);
    const r = viaBash(`${q(process.execPath)} ${q(CJS)} hook claude-code < ${q(file)}`);
    expect(reasonOf(r.stdout)).toContain('(rule qemu-windows)');
  });

  it('an event of 70 KB with multi-byte characters, at once and in uneven parts, over a socket and a pipe: read whole', async () => {
    // Past the 16 KiB first buffer and two doublings; a byte out of place would make the JSON unreadable
    // (a refusal naming the input), so the qemu rule's denial shows the whole event was read as sent.
    const big = event(`echo '${'é😀'.repeat(12_000)}' > /dev/null; qemu-system-x86_64 -hda win10.qcow2`);
    expect(Buffer.byteLength(big)).toBeGreaterThan(64 * 1024);
    const once = spawnSync(process.execPath, [CJS, 'hook', 'claude-code'], { input: big, env: hookEnv(h), encoding: 'utf8' });
    expect(reasonOf(once.stdout)).toContain('(rule qemu-windows)');
    const child = spawn(process.execPath, [CJS, 'hook', 'claude-code'], { env: hookEnv(h) });
    let stdout = '';
    child.stdout.on('data', (d) => (stdout += d));
    const bytes = Buffer.from(big);
    for (let at = 0; at < bytes.length; at += 7_777) {
      child.stdin.write(bytes.subarray(at, at + 7_777));
      await new Promise((r) => setTimeout(r, 5));
    }
    child.stdin.end();
    expect(await new Promise<number | null>((res) => child.on('exit', res))).toBe(0);
    expect(reasonOf(stdout)).toContain('(rule qemu-windows)');
    const file = join(h.home, 'big-event.json');
    writeFileSync(file, big);
    const piped = viaBash(`cat ${q(file)} | ${q(process.execPath)} ${q(CJS)} hook claude-code`);
    expect(reasonOf(piped.stdout)).toContain('(rule qemu-windows)');
  });

  it('an input over 64 MiB is refused without buffering it all (the agent gets a refusal, not a crash)', () => {
    const huge = Buffer.alloc(65 * 1024 * 1024, 0x20);
    const r = spawnSync(process.execPath, [CJS, 'hook', 'claude-code'], { input: huge, env: hookEnv(h), encoding: 'utf8', maxBuffer: 1024 * 1024 });
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('larger than 64 MiB');
  });

  it('an empty input is refused, not taken for an allowed command', () => {
    const r = spawnSync(process.execPath, [CJS, 'hook', 'claude-code'], { input: '', env: hookEnv(h), encoding: 'utf8' });
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/offhost/);
  });

  it('a pipe that is never finished is refused at the deadline, without waiting for the writer', () => {
    const hook = `${q(process.execPath)} ${q(CJS)} hook claude-code`;
    const pid = join(h.home, 'writer.pid');
    const done = join(h.home, 'writer.done');
    // The writer pauses 30 s in the middle of its event (its sleep's pid written first, so it can be ended
    // afterwards); the hook must answer while the writer is still paused.
    const r = viaBash(
      `{ sleep 30 & echo $! > ${q(pid)}; printf '{"session_id":'; wait; touch ${q(done)}; } | ` +
        `{ ${hook}; st=$?; [ -e ${q(done)} ] && w=finished || w=paused; echo "status=$st writer=$w" >&2; while [ ! -s ${q(pid)} ]; do sleep 0.05; done; kill $(cat ${q(pid)}); }`,
      hookEnv(h, { OFFHOST_HOOK_STDIN_MS: '300' }),
    );
    expect(r.stderr).toContain('did not end within 300ms');
    expect(r.stderr).toMatch(/status=2 writer=paused/);
  });
});

describe('the executable runs the hot paths from the hot bundle and its code cache', () => {
  it('uses the code caches the build wrote, as they are (same V8 flags at build and run time: no rewrite)', () => {
    const dist = mkdtempSync(join(tmpdir(), 'offhost-dist-'));
    cpSync(join(ROOT, 'dist'), dist, { recursive: true });
    const caches = codeCaches(dist);
    // One per door, and one per program family loaded from its own file.
    expect(caches).toEqual(expect.arrayContaining(['hot.cjs.cache', 'hook.cjs.cache', 'cold.cjs.cache', join('programs', 'git.cjs.cache'), join('programs', 'wrappers.cjs.cache')]));
    const before = caches.map((f) => readFileSync(join(dist, f)));
    const bin = join(dist, 'offhost.cjs');
    spawnSync(process.execPath, [bin, 'hook', 'claude-code'], { input: event('git status && sudo ls'), env: hookEnv(h), encoding: 'utf8' });
    spawnSync(process.execPath, [bin, 'check', 'git status && timeout 5 make -n'], { env: hookEnv(h), encoding: 'utf8' });
    expect(spawnSync(process.execPath, [bin, 'lock', '--help'], { env: hookEnv(h), encoding: 'utf8' }).status).toBe(0);
    const after = caches.map((f) => readFileSync(join(dist, f)));
    caches.forEach((f, i) => expect(after[i]!.equals(before[i]!), f).toBe(true));
  });

  it('a program family whose file is missing: the lines that name it are refused, naming the file; the others are judged', () => {
    const dist = mkdtempSync(join(tmpdir(), 'offhost-dist-'));
    cpSync(join(ROOT, 'dist'), dist, { recursive: true });
    rmSync(join(dist, 'programs', 'wrappers.cjs'));
    const bin = join(dist, 'offhost.cjs');
    const hook = spawnSync(process.execPath, [bin, 'hook', 'claude-code'], { input: event('sudo ls'), env: hookEnv(h), encoding: 'utf8' });
    expect(hook.status, hook.stderr).toBe(0);
    expect(JSON.parse(hook.stdout).hookSpecificOutput.permissionDecision).toBe('deny');
    expect(reasonOf(hook.stdout)).toContain(join(dist, 'programs', 'wrappers.cjs'));
    const check = spawnSync(process.execPath, [bin, 'check', 'timeout 5 ls'], { env: hookEnv(h), encoding: 'utf8' });
    expect(check.status).toBe(1);
    expect(check.stdout).toContain('wrappers.cjs');
    const shell = spawnSync(process.execPath, [bin, 'shell', '-c', 'sudo true'], { env: hookEnv(h), encoding: 'utf8' });
    expect(shell.status).not.toBe(0);
    expect(shell.stderr).toContain('wrappers.cjs');
    const other = spawnSync(process.execPath, [bin, 'check', 'git status'], { env: hookEnv(h), encoding: 'utf8' });
    expect(other.status, other.stderr).toBe(0);
  });

  it('writes a fresh cache for a bundle whose cache V8 rejects, and answers the same meanwhile', () => {
    const dist = mkdtempSync(join(tmpdir(), 'offhost-dist-'));
    cpSync(join(ROOT, 'dist'), dist, { recursive: true });
    const used = ['hot.cjs.cache', 'hook.cjs.cache', 'cold.cjs.cache', join('programs', 'heavy.cjs.cache'), join('programs', 'git.cjs.cache')];
    for (const f of used) writeFileSync(join(dist, f), Buffer.from('not a V8 code cache'));
    const bin = join(dist, 'offhost.cjs');
    const hook = spawnSync(process.execPath, [bin, 'hook', 'claude-code'], { input: event('qemu-system-x86_64 -hda win10.qcow2'), env: hookEnv(h), encoding: 'utf8' });
    expect(reasonOf(hook.stdout)).toContain('(rule qemu-windows)');
    const check = spawnSync(process.execPath, [bin, 'check', 'git status'], { env: hookEnv(h), encoding: 'utf8' });
    expect(check.status, check.stderr).toBe(0);
    // A cold command (dist/cold.cjs, loaded through the loader with a cache of its own).
    const lock = spawnSync(process.execPath, [bin, 'lock', '--help'], { env: hookEnv(h), encoding: 'utf8' });
    expect(lock.status, lock.stderr).toBe(0);
    expect(lock.stdout).toContain('Usage: offhost lock');
    for (const f of used) expect(statSync(join(dist, f)).size, f).toBeGreaterThan(4_000);
    // The hot bundle holds the hot commands alone: a cold one (lock) is reached only through dist/cold.cjs.
    expect(readFileSync(join(dist, 'hot.cjs'), 'utf8')).not.toContain('acquire <vm>|--component');
    expect(readFileSync(join(dist, 'cold.cjs'), 'utf8')).toContain('acquire <vm>|--component');
  });

  it('a cache write also removes the half-written caches of writers killed over a minute ago, and keeps a recent one', () => {
    const dist = mkdtempSync(join(tmpdir(), 'offhost-dist-'));
    cpSync(join(ROOT, 'dist'), dist, { recursive: true });
    const stale = [join(dist, 'hook.cjs.cache.999991.tmp'), join(dist, 'programs', 'git.cjs.cache.999992.tmp')];
    const recent = join(dist, 'hot.cjs.cache.999993.tmp');
    for (const f of [...stale, recent]) writeFileSync(f, 'half');
    const old = new Date(Date.now() - 5 * 60_000);
    for (const f of stale) utimesSync(f, old, old);
    // Nothing to write (the build's caches are good): nothing is pruned either, the start stays lean.
    const first = spawnSync(process.execPath, [join(dist, 'offhost.cjs'), 'hook', 'claude-code'], { input: event('git status'), env: hookEnv(h), encoding: 'utf8' });
    expect(first.status, first.stderr).toBe(0);
    for (const f of [...stale, recent]) expect(existsSync(f), f).toBe(true);
    // A rejected cache is rewritten, and the writer sweeps the folders it wrote to.
    writeFileSync(join(dist, 'hook.cjs.cache'), 'not a V8 code cache');
    writeFileSync(join(dist, 'programs', 'git.cjs.cache'), 'not a V8 code cache');
    const second = spawnSync(process.execPath, [join(dist, 'offhost.cjs'), 'hook', 'claude-code'], { input: event('git status'), env: hookEnv(h), encoding: 'utf8' });
    expect(second.status, second.stderr).toBe(0);
    for (const f of stale) expect(existsSync(f), f).toBe(false);
    expect(existsSync(recent)).toBe(true);
    expect(readdirSync(dist).filter((n) => n.endsWith('.tmp'))).toEqual(['hot.cjs.cache.999993.tmp']);
  });
});
