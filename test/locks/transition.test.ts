// transitionFindings: one scenario per rule, before/after maps as a commit would make them.
import { describe, expect, it } from 'vitest';
import { transitionFindings } from '../../src/locks/transition.js';
import { ACTIVE, VM, lockText } from '../lint/helpers.js';

const D = 'meta/context/notices';
const ARCH = `${D}/vm-active-archive/lock-${VM}-2026-05-19.md`;
const ARCH_EXP = `${D}/vm-active-archive/lock-${VM}-expired-2026-05-20.md`;
const COMP = `${D}/active/lock-rfc019.md`;
const now = new Date('2026-05-19T23:00:00Z'); // claude-a's lock (22:30, ttl 120) is live until 00:30
const late = new Date('2026-05-20T01:00:00Z'); // ... and expired here
const ctx = { now, severityForTime: 'warning' as const };

const m = (o: Record<string, string>) => new Map(Object.entries(o));
const rules = (before: Record<string, string>, after: Record<string, string>, c: Parameters<typeof transitionFindings>[2] = ctx) =>
  transitionFindings(m(before), m(after), c).map((f) => `${f.ruleId}@${f.file.split('/').slice(-2).join('/')}${f.line ? `:${f.line}` : ''}/${f.severity}`);

const a = lockText();
const componentText = '---\nslug: rfc019\nsession: claude-a\n---\n';

describe('transitionFindings', () => {
  it('acquire: a new valid live lock is clean', () => {
    expect(rules({}, { [ACTIVE]: a })).toEqual([]);
  });

  it('acquire: schema and name findings on the new file', () => {
    expect(rules({}, { [ACTIVE]: lockText({ ai: 'Claude' }) })).toEqual([`lock-schema@vm-active/lock-${VM}.md:4/error`]);
    expect(rules({}, { [ACTIVE]: lockText({ vm: 's.khost1.dev-linux-gui' }) })).toEqual([`lock-name-mismatch@vm-active/lock-${VM}.md:2/error`]);
  });

  it('an already expired active lock: warning at commit time, error when the caller says so (ci)', () => {
    expect(rules({}, { [ACTIVE]: a }, { now: late, severityForTime: 'warning' })).toEqual([`lock-expired@vm-active/lock-${VM}.md:5/warning`]);
    expect(rules({}, { [ACTIVE]: a }, { now: late, severityForTime: 'error' })).toEqual([`lock-expired@vm-active/lock-${VM}.md:5/error`]);
  });

  it('a future timestamp is an error', () => {
    expect(rules({}, { [ACTIVE]: lockText({ started: '2026-05-19T23:30:00Z' }) })).toEqual([`lock-future-timestamp@vm-active/lock-${VM}.md:5/error`]);
  });

  it('skew margin is configurable', () => {
    const near = lockText({ started: '2026-05-19T23:04:00Z' });
    expect(rules({}, { [ACTIVE]: near })).toEqual([`lock-future-timestamp@vm-active/lock-${VM}.md:5/error`]);
    expect(rules({}, { [ACTIVE]: near }, { ...ctx, skewSeconds: 300 })).toEqual([]);
  });

  it('heartbeat moving forward is clean; backwards or removed is an error', () => {
    const h1 = lockText({ heartbeat: '2026-05-19T22:50:00Z' });
    expect(rules({ [ACTIVE]: h1 }, { [ACTIVE]: lockText({ heartbeat: '2026-05-19T22:55:00Z' }) })).toEqual([]);
    expect(rules({ [ACTIVE]: h1 }, { [ACTIVE]: lockText({ heartbeat: '2026-05-19T22:40:00Z' }) })).toEqual([`lock-heartbeat-backwards@vm-active/lock-${VM}.md:7/error`]);
    const removed = transitionFindings(m({ [ACTIVE]: h1 }), m({ [ACTIVE]: a }), ctx);
    expect(removed.map((f) => f.ruleId)).toEqual(['lock-heartbeat-backwards']);
    expect(removed[0]!.message).toContain('was removed');
  });

  it("replacing another session's live lock is lock-stolen, with who, since when and why", () => {
    const f = transitionFindings(m({ [ACTIVE]: a }), m({ [ACTIVE]: lockText({ session: 'codex-b', ai: 'codex', started: '2026-05-19T22:59:00Z' }) }), ctx);
    expect(f.map((x) => `${x.ruleId}:${x.line}`)).toEqual(['lock-stolen:3']);
    expect(f[0]!.message).toContain('replaces the live lock of session claude-a (claude, since 2026-05-19T22:30:00Z, for: make build-safe for KODA-1; expires at 2026-05-20T00:30:00Z, in 1h 30m)');
    // archiving a live lock of another session in the same change is still stealing it
    expect(rules({ [ACTIVE]: a }, { [ACTIVE]: lockText({ session: 'codex-b', started: '2026-05-19T22:59:00Z' }), [ARCH]: a })).toEqual([`lock-stolen@vm-active/lock-${VM}.md:3/error`]);
  });

  it('taking over an expired lock: fine when it is archived in the same change, else identity changed', () => {
    const next = lockText({ session: 'codex-b', started: '2026-05-20T00:59:00Z' });
    expect(rules({ [ACTIVE]: a }, { [ACTIVE]: next, [ARCH_EXP]: a }, { now: late, severityForTime: 'warning' })).toEqual([]);
    expect(rules({ [ACTIVE]: a }, { [ACTIVE]: next }, { now: late, severityForTime: 'warning' })).toEqual([`lock-identity-changed@vm-active/lock-${VM}.md:3/error`]);
  });

  it('session or started changed in place', () => {
    const f = transitionFindings(m({ [ACTIVE]: a }), m({ [ACTIVE]: lockText({ started: '2026-05-19T22:45:00Z' }) }), ctx);
    expect(f.map((x) => `${x.ruleId}:${x.line}`)).toEqual(['lock-identity-changed:5']);
    expect(f[0]!.message).toContain('started changed in place from 2026-05-19T22:30:00Z to 2026-05-19T22:45:00Z');
  });

  it('release: a rename active -> archive is clean; a deletion without archive is an error', () => {
    expect(rules({ [ACTIVE]: a }, { [ARCH]: a })).toEqual([]);
    expect(rules({ [ACTIVE]: a }, { [ARCH]: `${a}\nreleased at 23:00\n` })).toEqual([]);
    const f = transitionFindings(m({ [ACTIVE]: a }), m({}), ctx);
    expect(f.map((x) => x.ruleId)).toEqual(['lock-deleted-unarchived']);
    expect(f[0]!.suggestion).toContain(`git mv ${ACTIVE} ${D}/vm-active-archive/lock-${VM}-2026-05-19.md`);
    // an archive of another VM does not count
    expect(rules({ [ACTIVE]: a }, { [`${D}/vm-active-archive/lock-s.khost1.dev-linux-gui-2026-05-19.md`]: lockText({ vm: 's.khost1.dev-linux-gui' }) })).toEqual([
      `lock-deleted-unarchived@vm-active/lock-${VM}.md/error`,
    ]);
  });

  it('archives are append-only', () => {
    expect(rules({ [ARCH]: a }, { [ARCH]: `${a}edit\n` })).toEqual([`archive-modified@vm-active-archive/lock-${VM}-2026-05-19.md/error`]);
    expect(rules({ [ARCH]: a }, {})).toEqual([`archive-modified@vm-active-archive/lock-${VM}-2026-05-19.md/error`]);
    expect(rules({ [ARCH]: a }, { [ARCH]: a })).toEqual([]);
  });

  it('R7: releasing the component lock while the same session holds a VM lock is release-order', () => {
    const f = transitionFindings(m({ [ACTIVE]: a, [COMP]: componentText }), m({ [ACTIVE]: a }), ctx);
    expect(f.map((x) => x.ruleId)).toEqual(['release-order']);
    expect(f[0]!.message).toContain(`while session claude-a still holds the VM lock ${VM}`);
    // VM lock first, then the component: fine, also both in one change
    expect(rules({ [ACTIVE]: a, [COMP]: componentText }, { [ARCH]: a, [COMP]: componentText })).toEqual([]);
    expect(rules({ [COMP]: componentText }, {})).toEqual([]);
    expect(rules({ [ACTIVE]: a, [COMP]: componentText }, { [ARCH]: a })).toEqual([]);
    // another session's VM lock does not block
    expect(rules({ [ACTIVE]: lockText({ session: 'codex-b' }), [COMP]: componentText }, { [ACTIVE]: lockText({ session: 'codex-b' }) })).toEqual([]);
  });

  it('paths outside the lock folders are ignored; the notices folder is configurable', () => {
    expect(rules({ [`${D}/README.md`]: 'x' }, {})).toEqual([]);
    const p = `notes/vm-active/lock-${VM}.md`;
    expect(transitionFindings(m({ [p]: a }), m({}), { ...ctx, noticesDir: 'notes' }).map((f) => f.ruleId)).toEqual(['lock-deleted-unarchived']);
    expect(transitionFindings(m({ [p]: a }), m({}), ctx)).toEqual([]);
  });

  it('unchanged files give nothing, even expired ones', () => {
    expect(rules({ [ACTIVE]: a }, { [ACTIVE]: a }, { now: late, severityForTime: 'error' })).toEqual([]);
  });
});
