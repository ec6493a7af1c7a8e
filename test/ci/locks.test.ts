// Lock hygiene across a pull request, commit by commit and at head (adapter level, real git).
import { afterEach, describe, expect, it } from 'vitest';
import { runCi } from '../../src/adapters/ci.js';
import type { Finding } from '../../src/types.js';
import { active, archive, basePr, component, lockText, N, type Repo, VM } from './repo.js';

const repos: Repo[] = [];
afterEach(() => {
  while (repos.length) repos.pop()!.cleanup();
});
const track = (r: Repo) => (repos.push(r), r);
const NOW = new Date('2026-05-19T23:00:00Z');
const ci = (r: Repo, now = NOW, extra: Partial<Parameters<typeof runCi>[0]> = {}) =>
  runCi({ cwd: r.dir, env: process.env, base: 'main', head: 'pr', now, scanner: null, ...extra });
const rules = (f: Finding[]) => f.map((x) => x.ruleId).sort();

describe('clean pull requests', () => {
  it('acquire then release (move to the archive) passes', () => {
    const r = track(basePr());
    r.commit({ [active()]: lockText() }, 'acquire', '2026-05-19T22:31:00Z');
    r.commit({ [active()]: lockText({ heartbeat: '2026-05-19T22:50:00Z' }) }, 'heartbeat', '2026-05-19T22:50:00Z');
    r.commit({ [archive()]: { from: active() } }, 'release', '2026-05-19T22:55:00Z');
    const res = ci(r);
    expect(res.findings).toEqual([]);
    expect(res.commits).toBe(3);
    expect(res.stats.lockChanges).toBe(4);
  });

  it('a live lock still held at head passes', () => {
    const r = track(basePr());
    r.commit({ [active()]: lockText() }, 'acquire', '2026-05-19T22:31:00Z');
    expect(ci(r).findings).toEqual([]);
  });
});

describe('findings, one pull request each', () => {
  it('lock deleted without archive', () => {
    const r = track(basePr({ [active()]: lockText() }));
    const c = r.commit({ [active()]: null }, 'drop lock', '2026-05-19T22:45:00Z');
    const f = ci(r).findings;
    expect(rules(f)).toEqual(['lock-deleted-unarchived']);
    expect(f[0]!.file).toBe(active());
    expect(f[0]!.message).toContain(`commit ${c.slice(0, 12)}:`);
    expect(f[0]!.severity).toBe('error');
  });

  it('archive changed', () => {
    const r = track(basePr({ [archive()]: lockText() }));
    r.commit({ [archive()]: lockText({ body: 'rewritten history' }) }, 'edit archive');
    expect(rules(ci(r).findings)).toEqual(['archive-modified']);
  });

  it("live lock of another session replaced (judged at the commit's time)", () => {
    const r = track(basePr({ [active()]: lockText({ session: 'codex-b', ai: 'codex' }) }, '2026-05-19T22:31:00Z'));
    r.commit({ [active()]: lockText({ session: 'claude-a', started: '2026-05-19T22:40:00Z' }) }, 'take it', '2026-05-19T22:41:00Z');
    // CI runs a day later: codex-b's lock has expired by now, but it was live when it was replaced.
    const f = ci(r, new Date('2026-05-21T10:00:00Z'), { head: 'pr' }).findings;
    expect(rules(f)).toContain('lock-stolen');
  });

  it('heartbeat moved backwards', () => {
    const r = track(basePr());
    r.commit({ [active()]: lockText({ heartbeat: '2026-05-19T22:50:00Z' }) }, 'acquire', '2026-05-19T22:50:00Z');
    r.commit({ [active()]: lockText({ heartbeat: '2026-05-19T22:35:00Z' }) }, 'oops', '2026-05-19T22:52:00Z');
    expect(rules(ci(r).findings)).toEqual(['lock-heartbeat-backwards']);
  });

  it('expired lock left active at head is an error at CI time', () => {
    const r = track(basePr());
    r.commit({ [active()]: lockText({ ttl: 60 }) }, 'acquire', '2026-05-19T22:31:00Z');
    const f = ci(r, new Date('2026-05-20T02:00:00Z')).findings;
    expect(rules(f)).toEqual(['lock-expired']);
    expect(f[0]).toMatchObject({ severity: 'error', file: active() });
    expect(f[0]!.message).toMatch(/^at head: /);
  });

  it('a commit that leaves an expired lock active (a heartbeat written too late) is an error', () => {
    const r = track(basePr());
    r.commit({ [active()]: lockText({ ttl: 30 }) }, 'acquire', '2026-05-19T22:31:00Z');
    // The heartbeat commit comes after the ttl ran out and keeps the old heartbeat: still expired at commit time.
    r.commit({ [active()]: lockText({ ttl: 30, body: 'more notes' }) }, 'notes', '2026-05-19T23:30:00Z');
    r.commit({ [archive()]: { from: active() } }, 'release', '2026-05-19T23:31:00Z');
    const f = ci(r, new Date('2026-05-19T23:40:00Z')).findings;
    expect(rules(f)).toEqual(['lock-expired']);
    expect(f[0]!.severity).toBe('error');
  });

  it('R7: component lock released while the VM lock is still held', () => {
    const comp = lockText({ vm: VM }).replace(`vm: ${VM}\n`, '');
    const r = track(basePr({ [active()]: lockText(), [component('koda-engine')]: comp }, '2026-05-19T22:31:00Z'));
    r.commit({ [`${N}/done/lock-koda-engine.md`]: { from: component('koda-engine') } }, 'release component first', '2026-05-19T22:45:00Z');
    expect(rules(ci(r).findings)).toEqual(['release-order']);
  });

  it('name and vm disagree', () => {
    const r = track(basePr());
    r.commit({ [active('s.khost1.dev-linux-gui')]: lockText({ vm: VM }) }, 'wrong name', '2026-05-19T22:31:00Z');
    const f = ci(r).findings;
    expect(rules(f)).toEqual(['lock-name-mismatch']);
    expect(f[0]!.message).toMatch(/^at head: /);
    expect(f[0]!.line).toBe(2);
  });

  it('an expired lock in base that the pull request does not touch is not its problem (unless --all-locks)', () => {
    const r = track(basePr({ [active()]: lockText({ ttl: 30 }) }, '2026-05-19T22:31:00Z'));
    r.commit({ 'src/x.ts': 'export {}\n' }, 'unrelated');
    expect(ci(r, new Date('2026-05-20T12:00:00Z')).findings).toEqual([]);
    expect(rules(ci(r, new Date('2026-05-20T12:00:00Z'), { allLocks: true }).findings)).toEqual(['lock-expired']);
  });
});

describe('merges', () => {
  it('changes that come cleanly from a parent are not re-checked; the merge is', () => {
    const r = track(basePr({ 'a.txt': 'a\n' }));
    // A side branch (not in base) that deletes a lock without archive: its own commit is reported once.
    r.commit({ [active()]: lockText() }, 'acquire', '2026-05-19T22:31:00Z');
    r.branch('side');
    r.commit({ [active()]: null }, 'drop on side', '2026-05-19T22:35:00Z');
    r.checkout('pr');
    r.commit({ 'b.txt': 'b\n' }, 'work', '2026-05-19T22:36:00Z');
    r.gitEnv({ GIT_COMMITTER_DATE: '2026-05-19T22:37:00Z', GIT_AUTHOR_DATE: '2026-05-19T22:37:00Z' }, 'merge', '-q', '--no-edit', 'side');
    const f = ci(r).findings;
    expect(rules(f)).toEqual(['lock-deleted-unarchived']);
    expect(f[0]!.message).toContain(r.git('rev-parse', 'side').slice(0, 12));
  });

  it('main merged into the pull request brings nothing to check', () => {
    const r = track(basePr());
    r.commit({ 'b.txt': 'b\n' }, 'work', '2026-05-19T22:36:00Z');
    r.checkout('main');
    // Another session's proper release on main, after the pull request branched.
    r.commit({ [active()]: lockText() }, 'acquire on main', '2026-05-19T22:38:00Z');
    r.commit({ [archive()]: { from: active() } }, 'release on main', '2026-05-19T22:39:00Z');
    r.checkout('pr');
    r.gitEnv({ GIT_COMMITTER_DATE: '2026-05-19T22:40:00Z', GIT_AUTHOR_DATE: '2026-05-19T22:40:00Z' }, 'merge', '-q', '--no-edit', 'main');
    const res = ci(r);
    expect(res.findings).toEqual([]);
    expect(res.commits).toBe(2);
  });
});
