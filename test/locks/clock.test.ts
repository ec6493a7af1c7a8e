// Expiry that does not trust another machine's clock (docs/LOCKS.md "Time"): a lock written on another host
// is taken over only once this machine has seen that version unchanged for the heartbeat interval + the
// skew margin on its own monotonic clock. Real repositories; the monotonic clock and the wall clock are
// injected (a clock running ahead is the very thing under test).
import { describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { openLockStore, acquire, gc, status, heartbeat } from '../../src/locks/index.js';
import { firstSighting, type Monotonic } from '../../src/locks/sightings.js';
import { observationMs, takeoverDecision } from '../../src/locks/takeover.js';
import { ACTIVE, REF, VM, cleanEnv, g, read, tempRepo } from './lifecycle-helpers.js';

const T0 = Date.parse('2026-05-19T22:00:00Z');

/** A monotonic clock the test moves, on boot `boot`. */
function fakeMono(boot = 'boot-1'): Monotonic & { advance(ms: number): void; boot: string } {
  let t = 1_000_000;
  const m = {
    boot,
    nowMs: () => t,
    bootId: () => m.boot,
    advance: (ms: number) => {
      t += ms;
    },
  };
  return m;
}

/** Commits `text` at the active lock path of VM on the clone's lock ref, by hand (what another host's offhost wrote). */
function putLock(dir: string, text: string): void {
  const env = { ...cleanEnv(), GIT_INDEX_FILE: join(dir, '.git', 'test-index') };
  const tip = execFileSync('git', ['rev-parse', '-q', '--verify', REF], { cwd: dir, env, encoding: 'utf8' }).trim();
  execFileSync('git', ['read-tree', tip], { cwd: dir, env });
  const blob = execFileSync('git', ['hash-object', '-w', '--stdin'], { cwd: dir, env, input: text }).toString().trim();
  execFileSync('git', ['update-index', '--add', '--cacheinfo', `100644,${blob},${ACTIVE}`], { cwd: dir, env });
  const tree = execFileSync('git', ['write-tree'], { cwd: dir, env }).toString().trim();
  const c = execFileSync('git', ['commit-tree', tree, '-p', tip, '-m', 'by hand'], { cwd: dir, env }).toString().trim();
  execFileSync('git', ['update-ref', REF, c, tip], { cwd: dir, env });
}

function lockText(o: { session: string; host?: string; started: string; heartbeat?: string; ttl?: number }): string {
  return (
    `---\nvm: ${VM}\nsession: ${o.session}\nai: claude\nstarted: ${o.started}\nreason: soak\n` +
    `${o.heartbeat ? `heartbeat: ${o.heartbeat}\n` : ''}ttl_minutes: ${o.ttl ?? 1}\n${o.host ? `host: ${o.host}\n` : ''}explicit: true\n---\nby another machine\n`
  );
}

const iso = (ms: number) => new Date(ms).toISOString().replace(/\.000Z$/, 'Z');

async function setup(mono: Monotonic, nowMs: () => number, extra: Record<string, unknown> = {}) {
  const dir = tempRepo();
  // The lock ref needs a first commit to put a hand-written lock on: one acquire and release by us.
  const sightings = mkdtempSync(join(tmpdir(), 'sightings-'));
  const store = await openLockStore({ repoDir: dir, clock: { now: () => new Date(nowMs()) }, env: cleanEnv(), monotonic: mono, sightingsDir: sightings, view: false, ...extra });
  await acquire(store, { vm: 's.khost1.dev-linux-seed', session: 'seed', ai: 'human', reason: 'seed' });
  return { dir, store, sightings };
}

describe('a lock of another host, judged by this machine\'s own clock', () => {
  it('a clock 190 s ahead does not steal a live --ttl 1 lock 40 s old; after the observation period, unchanged, it is taken', async () => {
    const mono = fakeMono();
    // The holder on laptop-b beat at T0; this machine's clock reads T0 + 40 s + 190 s (running 190 s ahead).
    const now = T0 + 40_000 + 190_000;
    const { dir, store } = await setup(mono, () => now);
    putLock(dir, lockText({ session: 'holder', host: 'laptop-b', started: iso(T0 - 60_000), heartbeat: iso(T0) }));
    const first = await acquire(store, { vm: VM, session: 'taker', ai: 'codex', reason: 'steal?' });
    expect(first.status).toBe('held');
    if (first.status !== 'held') throw new Error('unreachable');
    expect(first.holder.state).toBe('expired'); // by the timestamps and this (wrong) clock
    expect(first.holder.why).toContain('whose clock offhost does not trust');
    expect(read(dir, ACTIVE)).toContain('session: holder');
    // Just short of heartbeat interval (15 s for ttl 1) + margin (120 s): still held.
    mono.advance(observationMs(1, 120) - 1000);
    expect((await acquire(store, { vm: VM, session: 'taker', ai: 'codex', reason: 'steal?' })).status).toBe('held');
    mono.advance(1000);
    const taken = await acquire(store, { vm: VM, session: 'taker', ai: 'codex', reason: 'now' });
    expect(taken.status).toBe('acquired');
    if (taken.status !== 'acquired') throw new Error('unreachable');
    const arch = read(dir, taken.archived!);
    expect(arch).toContain('session: holder');
    expect(arch).toContain("as seen by this machine's own clock");
    expect(read(dir, ACTIVE)).toContain('session: taker');
  });

  it('a holder that keeps beating is never taken over, however far ahead the taker\'s clock runs', async () => {
    const mono = fakeMono();
    let now = T0 + 10 * 3_600_000; // ten hours ahead
    const { dir, store } = await setup(mono, () => now);
    for (let beat = 0; beat < 6; beat++) {
      // Every heartbeat interval (15 s) the holder writes a new version: each is a new first sighting.
      putLock(dir, lockText({ session: 'holder', host: 'laptop-b', started: iso(T0), heartbeat: iso(T0 + beat * 15_000) }));
      const r = await acquire(store, { vm: VM, session: 'taker', ai: 'codex', reason: 'steal?' });
      expect(r.status, `beat ${beat}`).toBe('held');
      mono.advance(15_000);
      now += 15_000;
    }
    expect(read(dir, ACTIVE)).toContain('session: holder');
  });

  it('a lock written on this host is judged by this clock at once; one that names no host waits like another host\'s', async () => {
    const mono = fakeMono();
    const now = T0 + 3_600_000;
    const { dir, store } = await setup(mono, () => now);
    putLock(dir, lockText({ session: 'here', host: hostname(), started: iso(T0), heartbeat: iso(T0) }));
    expect((await acquire(store, { vm: VM, session: 'taker', ai: 'codex', reason: 'expired here' })).status).toBe('acquired');
    putLock(dir, lockText({ session: 'nohost', started: iso(T0), heartbeat: iso(T0) }));
    const r = await acquire(store, { vm: VM, session: 'taker2', ai: 'codex', reason: 'no host' });
    expect(r.status).toBe('held');
    if (r.status === 'held') expect(r.holder.why).toContain('a host it does not name');
  });

  it('the holderGone seam: a holder proven gone is taken over at once', async () => {
    const mono = fakeMono();
    const now = T0 + 3_600_000;
    const { dir, store } = await setup(mono, () => now, { holderGone: (rec: { session: string }) => (rec.session === 'ghost' ? 'its process 4242 on laptop-b no longer runs' : null) });
    putLock(dir, lockText({ session: 'ghost', host: 'laptop-b', started: iso(T0), heartbeat: iso(T0) }));
    const r = await acquire(store, { vm: VM, session: 'taker', ai: 'codex', reason: 'gone' });
    expect(r.status).toBe('acquired');
    if (r.status === 'acquired') expect(read(dir, r.archived!)).toContain('no longer runs');
  });

  it('a restart (another boot id) starts the observation again', async () => {
    const mono = fakeMono('boot-1');
    const now = T0 + 3_600_000;
    const { dir, store } = await setup(mono, () => now);
    putLock(dir, lockText({ session: 'holder', host: 'laptop-b', started: iso(T0), heartbeat: iso(T0) }));
    expect((await acquire(store, { vm: VM, session: 'taker', ai: 'codex', reason: 'x' })).status).toBe('held');
    mono.boot = 'boot-2';
    mono.advance(observationMs(1, 120) + 1000);
    expect((await acquire(store, { vm: VM, session: 'taker', ai: 'codex', reason: 'x' })).status).toBe('held');
    mono.advance(observationMs(1, 120));
    expect((await acquire(store, { vm: VM, session: 'taker', ai: 'codex', reason: 'x' })).status).toBe('acquired');
  });
});

describe('timestamps from the future', () => {
  it('started in year 9999: reported by status, never held for ever; gc archives it after the observation, with a note', async () => {
    const mono = fakeMono();
    const now = T0;
    const { dir, store } = await setup(mono, () => now);
    putLock(dir, lockText({ session: 'timelord', host: 'laptop-b', started: '9999-01-01T00:00:00Z', ttl: 60 }));
    const st = await status(store);
    const e = st.locks.find((l) => l.file === ACTIVE)!;
    expect(e.holder!.state).toBe('future');
    expect(e.holder!.why).toContain('in the future');
    expect(e.takeover).toContain('can be taken over once');
    const early = await gc(store, { session: 'janitor' });
    expect(early.archived).toEqual([]);
    expect(early.waiting.map((w) => w.session)).toEqual(['timelord']);
    mono.advance(observationMs(60, 120));
    const later = await gc(store, { session: 'janitor' });
    expect(later.archived.map((a) => a.session)).toEqual(['timelord']);
    const text = read(dir, later.archived[0]!.archive);
    expect(text).toContain('in the future beyond the 120 s skew margin');
    expect(g(dir, 'ls-tree', '--name-only', REF, '--', ACTIVE).trim()).toBe('');
  });

  it("this session's own lock from the future cannot be renewed (the clock disagrees), and says so", async () => {
    const mono = fakeMono();
    const { dir, store } = await setup(mono, () => T0);
    putLock(dir, lockText({ session: 'me', host: hostname(), started: iso(T0 + 3_600_000), ttl: 60 }));
    await expect(heartbeat(store, { vm: VM, session: 'me' })).rejects.toThrow(/behind the lock's last heartbeat|future/);
  });
});

describe('first sightings (the record behind the rule)', () => {
  it('the first process to see a version fixes the time; later calls read it; a torn file counts from now', () => {
    const dir = mkdtempSync(join(tmpdir(), 'sight-'));
    const mono = fakeMono();
    const a = firstSighting(dir, 'store', 'p', 'v1', mono);
    expect(a.agoMs).toBe(0);
    mono.advance(5000);
    expect(firstSighting(dir, 'store', 'p', 'v1', mono).agoMs).toBe(5000);
    expect(firstSighting(dir, 'store', 'p', 'v2', mono).agoMs).toBe(0); // a new version: a new sighting
    for (const f of readdirSync(dir)) writeFileSync(join(dir, f), '{"boot":');
    mono.advance(5000);
    expect(firstSighting(dir, 'store', 'p', 'v1', mono).agoMs).toBe(0);
  });

  it('an unwritable folder never lets a lock go early', () => {
    const mono = fakeMono();
    const file = join(mkdtempSync(join(tmpdir(), 'sight-')), 'a-file');
    writeFileSync(file, 'x');
    expect(firstSighting(join(file, 'sub'), 's', 'p', 'v', mono).agoMs).toBe(0);
    mono.advance(10_000_000);
    expect(firstSighting(join(file, 'sub'), 's', 'p', 'v', mono).agoMs).toBe(0);
  });

  it('the decision table', () => {
    const base = { why: 'w', ttlMinutes: 1, skewSeconds: 120, thisHost: 'me', gone: null, seenForMs: 0 };
    expect(takeoverDecision({ ...base, state: 'live', lockHost: 'me' }).take).toBe(false);
    expect(takeoverDecision({ ...base, state: 'expired', lockHost: 'me' }).take).toBe(true);
    expect(takeoverDecision({ ...base, state: 'future', lockHost: 'me' }).take).toBe(false);
    expect(takeoverDecision({ ...base, state: 'expired', lockHost: 'other' }).take).toBe(false);
    expect(takeoverDecision({ ...base, state: 'expired', lockHost: 'other', seenForMs: 135_000 }).take).toBe(true);
    expect(takeoverDecision({ ...base, state: 'expired', lockHost: 'other', gone: 'dead' }).take).toBe(true);
    expect(takeoverDecision({ ...base, state: 'live', lockHost: 'other', gone: 'dead' }).take).toBe(true);
  });
});
