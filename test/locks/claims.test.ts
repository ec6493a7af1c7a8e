// The store API that `offhost run` builds on, in-process on real temp repositories: claims, explicit holds,
// lost locks, dead claims, clock steps.
import { describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { hostname } from 'node:os';
import { openLockStore, acquire, heartbeat, release, status, isLockLost, type LockStore } from '../../src/locks/index.js';
import { VM, archives, cleanEnv, read, tempRepo } from './lifecycle-helpers.js';

const ACTIVE = `meta/context/notices/vm-active/lock-${VM}.md`;

function clockAt(iso: string) {
  let t = Date.parse(iso);
  return { now: () => new Date(t), set: (s: string) => void (t = Date.parse(s)), add: (ms: number) => void (t += ms) };
}

async function storeIn(dir: string, clock: { now(): Date }): Promise<LockStore> {
  return openLockStore({ repoDir: dir, clock, env: cleanEnv() });
}

const who = { session: 'sess-a', ai: 'claude', reason: 'koda build, K-1' };

describe('claims', () => {
  it('a run claims, a second run is refused (never rides along), the last claim archives an implicit lock', async () => {
    const dir = tempRepo();
    const clock = clockAt('2026-05-19T10:00:00Z');
    const s = await storeIn(dir, clock);
    const one = await acquire(s, { vm: VM, ...who, claim: { command: 'make build-safe' } });
    expect(one.status).toBe('acquired');
    const claim = one.status === 'acquired' ? one.claim! : '';
    expect(read(dir, ACTIVE)).toContain(`id: ${claim}`);
    expect(read(dir, ACTIVE)).not.toContain('explicit: true');
    const two = await acquire(s, { vm: VM, ...who, claim: { command: 'make test' } });
    expect(two.status).toBe('busy');
    // Another session is simply held off.
    expect((await acquire(s, { vm: VM, session: 'other', ai: 'codex', reason: 'r' })).status).toBe('held');
    clock.add(60_000);
    const hb = await heartbeat(s, { vm: VM, session: who.session, claim });
    expect(hb.heartbeat.toISOString()).toBe('2026-05-19T10:01:00.000Z');
    const rel = await release(s, { vm: VM, session: who.session, claim, record: '## Run\n\nexit 0, 12 s\n' });
    expect(rel.status).toBe('released');
    const arch = archives(dir);
    expect(arch).toHaveLength(1);
    const text = read(dir, `meta/context/notices/vm-active-archive/${arch[0]}`);
    expect(text).toContain('exit 0, 12 s');
    expect(text).toContain('offhost run');
    expect(text).not.toContain('claims:');
  });

  it('an explicit hold outlives its runs; lock release is refused while a run holds it', async () => {
    const dir = tempRepo();
    const s = await storeIn(dir, clockAt('2026-05-19T10:00:00Z'));
    expect((await acquire(s, { vm: VM, ...who })).status).toBe('acquired');
    const run = await acquire(s, { vm: VM, ...who, claim: { command: 'make build-safe' } });
    expect(run.status).toBe('mine');
    const claim = run.status === 'mine' ? run.claim! : '';
    expect((await release(s, { vm: VM, session: who.session })).status).toBe('busy');
    const end = await release(s, { vm: VM, session: who.session, claim, record: 'run ended' });
    expect(end).toMatchObject({ status: 'kept', why: 'explicit' });
    expect(read(dir, ACTIVE)).toContain('run ended');
    expect((await release(s, { vm: VM, session: who.session })).status).toBe('released');
  });

  it("a dead run's claim (same host) is recovered and reported", async () => {
    const dir = tempRepo();
    const s = await storeIn(dir, clockAt('2026-05-19T10:00:00Z'));
    const child = spawn('sleep', ['0']);
    const pid = child.pid!;
    await new Promise((r) => child.on('exit', r));
    expect((await acquire(s, { vm: VM, ...who, claim: { command: 'make build-safe', pid, host: hostname() } })).status).toBe('acquired');
    const st = await status(s);
    expect(st.locks[0]!.deadClaims?.[0]).toContain(`process ${pid}`);
    const again = await acquire(s, { vm: VM, ...who, claim: { command: 'make test' } });
    expect(again.status).toBe('mine');
    expect(s.recovered.join('\n')).toContain(`process ${pid}`);
    expect(read(dir, ACTIVE)).not.toContain(`pid: ${pid}`);
  });
});

describe('losing the lock is an event', () => {
  it('taken over after expiry: the old holder heartbeat throws LockLostError(taken)', async () => {
    const dir = tempRepo();
    const clock = clockAt('2026-05-19T10:00:00Z');
    const s = await storeIn(dir, clock);
    const a = await acquire(s, { vm: VM, ...who, ttlMinutes: 30, claim: { command: 'x' } });
    const claim = a.status === 'acquired' ? a.claim! : '';
    clock.set('2026-05-19T11:00:00Z');
    expect((await acquire(s, { vm: VM, session: 'sess-b', ai: 'codex', reason: 'mine now' })).status).toBe('acquired');
    const err = await heartbeat(s, { vm: VM, session: who.session, claim }).catch((e: unknown) => e);
    expect(isLockLost(err)).toBe(true);
    expect((err as { reason: string }).reason).toBe('taken');
  });

  it('own expired lock: heartbeat fails (expired); re-acquire archives it and starts a new hold', async () => {
    const dir = tempRepo();
    const clock = clockAt('2026-05-19T10:00:00Z');
    const s = await storeIn(dir, clock);
    await acquire(s, { vm: VM, ...who, ttlMinutes: 30 });
    clock.set('2026-05-19T11:00:00Z');
    const err = await heartbeat(s, { vm: VM, session: who.session }).catch((e: unknown) => e);
    expect((err as { reason?: string }).reason).toBe('expired');
    const r = await acquire(s, { vm: VM, ...who, ttlMinutes: 30 });
    expect(r.status).toBe('acquired');
    expect(r.status === 'acquired' && r.archived).toContain('-expired-');
    expect(read(dir, ACTIVE)).toContain('started: 2026-05-19T11:00:00Z');
  });

  it('a clock stepped forward past ttl+skew or back past the skew: LockLostError, nothing written', async () => {
    const dir = tempRepo();
    const clock = clockAt('2026-05-19T10:00:00Z');
    const s = await storeIn(dir, clock);
    await acquire(s, { vm: VM, ...who, ttlMinutes: 30 });
    clock.set('2026-05-19T10:10:00Z');
    await heartbeat(s, { vm: VM, session: who.session });
    const text = read(dir, ACTIVE);
    clock.set('2026-05-19T10:05:00Z'); // back 5 min, past the 2 min margin
    expect(((await heartbeat(s, { vm: VM, session: who.session }).catch((e: unknown) => e)) as { reason?: string }).reason).toBe('clock');
    clock.set('2026-05-19T10:43:00Z'); // forward past ttl (30) + skew (2) from the last beat
    expect(((await heartbeat(s, { vm: VM, session: who.session }).catch((e: unknown) => e)) as { reason?: string }).reason).toBe('expired');
    expect(read(dir, ACTIVE)).toBe(text);
  });

  it('a claim removed by someone else: LockLostError(claim-gone)', async () => {
    const dir = tempRepo();
    const s = await storeIn(dir, clockAt('2026-05-19T10:00:00Z'));
    const a = await acquire(s, { vm: VM, ...who, claim: { command: 'x' } });
    const claim = a.status === 'acquired' ? a.claim! : '';
    await release(s, { vm: VM, session: who.session, claim });
    await acquire(s, { vm: VM, ...who });
    const err = await heartbeat(s, { vm: VM, session: who.session, claim }).catch((e: unknown) => e);
    expect((err as { reason?: string }).reason).toBe('claim-gone');
  });
});
