// Lock paths (POLICY R3/R4), archive collisions, classification; serializeLock round-trips through parseLockText.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { activeLockPath, archiveLockPath, classifyPath, componentLockPath, DEFAULT_NOTICES_DIR } from '../../src/locks/paths.js';
import { parseLockText, serializeLock } from '../../src/locks/parse.js';
import { LockError } from '../../src/errors.js';
import { MAX_TTL_MINUTES } from '../../src/locks/schema.js';

const VM = 's.khost1.dev-linux-koda';
const day = new Date('2026-05-19T23:59:59Z');

describe('paths', () => {
  it('active, archive and component paths', () => {
    expect(DEFAULT_NOTICES_DIR).toBe('meta/context/notices');
    expect(activeLockPath(VM)).toBe(`meta/context/notices/vm-active/lock-${VM}.md`);
    expect(activeLockPath(VM, 'notes/')).toBe(`notes/vm-active/lock-${VM}.md`);
    expect(archiveLockPath(VM, day, 'released', () => false)).toBe(`meta/context/notices/vm-active-archive/lock-${VM}-2026-05-19.md`);
    expect(archiveLockPath(VM, day, 'expired', () => false)).toBe(`meta/context/notices/vm-active-archive/lock-${VM}-expired-2026-05-19.md`);
    expect(componentLockPath('rfc019')).toBe('meta/context/notices/active/lock-rfc019.md');
  });

  it('two archives of one VM on one day never overwrite each other', () => {
    const taken = new Set<string>();
    const got: string[] = [];
    for (let i = 0; i < 12; i++) {
      const p = archiveLockPath(VM, day, 'released', (q) => taken.has(q));
      taken.add(p);
      got.push(p);
    }
    // Zero-padded, so the names sort in the order they were written (-0010 after -0002; issue 14).
    const numbered = got.slice(1);
    expect([...numbered].sort()).toEqual(numbered);
    expect(got.map((p) => p.split('/').pop()).slice(0, 4)).toEqual([
      `lock-${VM}-2026-05-19.md`,
      `lock-${VM}-2026-05-19-0002.md`,
      `lock-${VM}-2026-05-19-0003.md`,
      `lock-${VM}-2026-05-19-0004.md`,
    ]);
  });

  it('uses the UTC date', () => {
    expect(archiveLockPath(VM, new Date('2026-05-19T23:30:00-03:00'), 'released', () => false)).toContain('-2026-05-20.md');
  });

  it('refuses ids that are not canonical test VMs (no path escapes)', () => {
    for (const bad of ['s.khost1.flow', '../../etc/passwd', 's.khost1.dev-x/../../y', '']) {
      expect(() => activeLockPath(bad)).toThrow(LockError);
      expect(() => archiveLockPath(bad, day, 'released', () => false)).toThrow(LockError);
    }
    expect(() => componentLockPath('../x')).toThrow(LockError);
  });

  it('classifies paths', () => {
    expect(classifyPath(`meta/context/notices/vm-active/lock-${VM}.md`)).toEqual({ kind: 'active', vm: VM });
    expect(classifyPath(`meta/context/notices/vm-active-archive/lock-${VM}-2026-05-19.md`)).toEqual({ kind: 'archive', vm: VM });
    expect(classifyPath(`meta/context/notices/vm-active-archive/lock-${VM}-expired-2026-05-19-3.md`)).toEqual({ kind: 'archive', vm: VM });
    expect(classifyPath('meta/context/notices/active/lock-rfc019.md')).toMatchObject({ kind: 'component', slug: 'rfc019' });
    expect(classifyPath('meta/context/notices/README.md')).toEqual({ kind: 'other' });
    expect(classifyPath(`meta/context/notices/vm-active/sub/lock-${VM}.md`)).toEqual({ kind: 'other' });
    expect(classifyPath(`x/vm-active/lock-${VM}.md`, 'x')).toEqual({ kind: 'active', vm: VM });
    expect(classifyPath(`vm-active/lock-${VM}.md`, '.')).toEqual({ kind: 'active', vm: VM });
  });
  it('a case variant of the folders is the lock folder (on a Mac it is the same directory); the id keeps its spelling', () => {
    expect(classifyPath(`Meta/Context/Notices/VM-Active/LOCK-${VM}.MD`)).toEqual({ kind: 'active', vm: VM });
    expect(classifyPath(`meta/context/notices/Vm-Active-Archive/lock-${VM}-2026-05-19.md`)).toEqual({ kind: 'archive', vm: VM });
    expect(classifyPath('META/context/notices/Active/lock-rfc019.md')).toMatchObject({ kind: 'component', slug: 'rfc019' });
    expect(classifyPath(`meta/context/notices/vm-active/lock-S.KHOST1.dev-linux-koda.md`)).toEqual({ kind: 'active', vm: 'S.KHOST1.dev-linux-koda' });
    expect(classifyPath(`meta/context/noticesX/vm-active/lock-${VM}.md`)).toEqual({ kind: 'other' });
  });
});

describe('serializeLock', () => {
  it('writes the R3 frontmatter and round-trips', () => {
    const text = serializeLock({
      vm: VM,
      session: 'claude-2026-05-19-rfc019',
      ai: 'claude',
      started: new Date('2026-05-19T22:30:00Z'),
      reason: 'make build-safe: RFC-019 # not a comment',
      heartbeat: new Date('2026-05-19T23:10:00Z'),
      ttlMinutes: 60,
      body: 'running make build-safe',
    });
    expect(text).toBe(
      `---\nvm: ${VM}\nsession: claude-2026-05-19-rfc019\nai: claude\nstarted: 2026-05-19T22:30:00Z\nreason: "make build-safe: RFC-019 # not a comment"\nheartbeat: 2026-05-19T23:10:00Z\nttl_minutes: 60\n---\nrunning make build-safe\n`,
    );
    const { lock, findings } = parseLockText(text, `meta/context/notices/vm-active/lock-${VM}.md`);
    expect(findings).toEqual([]);
    expect(lock?.reason).toBe('make build-safe: RFC-019 # not a comment');
  });

  it('round-trips any valid field values (property)', () => {
    const iso = fc.integer({ min: Date.parse('2000-01-01T00:00:00Z'), max: Date.parse('2099-12-31T23:59:59Z') }).map((ms) => new Date(Math.floor(ms / 1000) * 1000));
    fc.assert(
      fc.property(
        fc.stringMatching(/^[a-z0-9]{1,8}(-[a-z0-9]{1,8}){0,3}$/),
        fc.stringMatching(/^[A-Za-z0-9._:@+-]{1,40}$/),
        fc.constantFrom('claude', 'codex', 'gemini', 'human', 'other.agent'),
        iso,
        fc.option(fc.integer({ min: 0, max: 10_000_000 })),
        fc.option(fc.integer({ min: 1, max: MAX_TTL_MINUTES })), // valid values only: the schema bounds ttl_minutes
        fc.string({ minLength: 1, maxLength: 200 }).filter((s) => s.trim() !== '' && !/[\u0000\uFFFD\uFEFF]/.test(s)),
        fc.string({ maxLength: 100 }).filter((s) => !/[\u0000\uFFFD]/.test(s)),
        (target, session, ai, started, hbOff, ttl, reason, body) => {
          const vm = `s.khost1.dev-${target}`;
          const heartbeat = hbOff === null ? undefined : new Date(started.getTime() + hbOff * 1000);
          const text = serializeLock({ vm, session, ai, started, reason, heartbeat, ttlMinutes: ttl ?? undefined, body });
          const { lock, findings } = parseLockText(text, `n/vm-active/lock-${vm}.md`);
          expect(findings).toEqual([]);
          expect(lock).not.toBeNull();
          expect(lock!.vm).toBe(vm);
          expect(lock!.session).toBe(session);
          expect(lock!.ai).toBe(ai);
          expect(lock!.started.getTime()).toBe(started.getTime());
          expect(lock!.heartbeat?.getTime()).toBe(heartbeat?.getTime());
          expect(lock!.ttlMinutes).toBe(ttl ?? 120);
          expect(lock!.reason).toBe(reason.trim());
        },
      ),
      { numRuns: 300 },
    );
  });

  it('refuses what parseLockText would reject', () => {
    const ok = { vm: VM, session: 's', ai: 'claude', started: new Date(0), reason: 'r' };
    expect(() => serializeLock({ ...ok, vm: 's.khost1.flow' })).toThrow(LockError);
    expect(() => serializeLock({ ...ok, ai: 'Claude' })).toThrow(LockError);
    expect(() => serializeLock({ ...ok, reason: ' ' })).toThrow(LockError);
    expect(() => serializeLock({ ...ok, ttlMinutes: 0 })).toThrow(LockError);
    expect(() => serializeLock({ ...ok, started: new Date('x') })).toThrow(LockError);
  });
});

describe('no shared content cache', () => {
  it('parsing the same text twice gives independent results (no shared cache)', () => {
    const text = serializeLock({ vm: VM, session: 's', ai: 'claude', started: new Date('2026-05-19T22:30:00Z'), reason: 'r' });
    const a = parseLockText(text, `x/vm-active/lock-${VM}.md`);
    a.lock!.session = 'mutated';
    const b = parseLockText(text, `x/vm-active/lock-${VM}.md`);
    expect(b.lock!.session).toBe('s');
    const c = parseLockText(text, 'x/vm-active/lock-s.khost1.dev-other.md');
    expect(c.findings.map((f) => f.ruleId)).toEqual(['lock-name-mismatch']);
  });
});
