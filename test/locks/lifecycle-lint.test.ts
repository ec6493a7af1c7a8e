// offhost's own lock commits (on refs/offhost/locks) pass the commit-time check (`offhost lint --staged` rules): every commit made
// by acquire, heartbeat, release, expired takeover, gc and the component lock steps is a clean transition.
import { beforeAll, describe, expect, it } from 'vitest';
import { transitionFindings } from '../../src/locks/transition.js';
import { REF, VM, ensureBuilt, g, offhost, sessionEnv, tempRepo } from './lifecycle-helpers.js';

beforeAll(() => ensureBuilt());

function tree(dir: string, rev: string): Map<string, string> {
  const m = new Map<string, string>();
  const names = g(dir, 'ls-tree', '-r', '--name-only', rev, '--', 'meta/context/notices').trim();
  for (const p of names ? names.split('\n') : []) m.set(p, g(dir, 'show', `${rev}:${p}`));
  return m;
}

describe("offhost's lock commits are clean transitions", () => {
  it('for every step of the protocol', async () => {
    const dir = tempRepo();
    const steps: [string[], string, string][] = [
      [['lock', 'acquire', '--component', 'koda-parser', '--reason', 'parser work'], 'a', '2026-05-19T10:00:00Z'],
      [['lock', 'acquire', VM, '--reason', 'koda build, K-1', '--ttl', '30'], 'a', '2026-05-19T10:01:00Z'],
      [['lock', 'heartbeat', VM], 'a', '2026-05-19T10:10:00Z'],
      [['lock', 'release', VM], 'a', '2026-05-19T10:20:00Z'],
      [['lock', 'release', '--component', 'koda-parser'], 'a', '2026-05-19T10:21:00Z'],
      [['lock', 'acquire', VM, '--reason', 'second', '--ttl', '30'], 'b', '2026-05-19T11:00:00Z'],
      // b's lock expires; c takes it over (archive -expired- + new lock in one commit).
      [['lock', 'acquire', VM, '--reason', 'third'], 'c', '2026-05-19T13:00:00Z'],
      [['lock', 'release', VM], 'c', '2026-05-19T13:05:00Z'],
      [['lock', 'acquire', 's.khost1.dev-linux-gui', '--reason', 'gui', '--ttl', '30'], 'd', '2026-05-19T14:00:00Z'],
      [['lock', 'gc'], 'e', '2026-05-19T16:00:00Z'],
    ];
    let first = true;
    for (const [args, session, now] of steps) {
      const r = await offhost([...args, '--now', now], { cwd: dir, env: sessionEnv(session) });
      expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(0);
      const findings = transitionFindings(first ? new Map() : tree(dir, `${REF}~1`), tree(dir, REF), { now: new Date(now), severityForTime: 'error' });
      first = false;
      expect(findings.filter((f) => f.severity === 'error'), `${args.join(' ')}`).toEqual([]);
    }
    expect(g(dir, 'log', '--format=%s', REF).trim().split('\n')).toHaveLength(steps.length);
    expect(g(dir, 'log', '--format=%s').trim()).toBe('init');
  });
});
