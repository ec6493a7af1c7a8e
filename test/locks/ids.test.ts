// Ids, bounds and hostile frontmatters: only dev VMs are locked as test VMs (POLICY R2), ttl_minutes has a
// bound, a `started` in year 9999 is reported, deep YAML is refused with a clean message; and a writer is
// not starved by a process heartbeating in a tight loop. Real repositories, the built CLI, real processes.
import { beforeAll, describe, expect, it } from 'vitest';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ACTIVE, REF, VM, cleanEnv, cliInProcess, ensureBuilt, g, offhost, sessionEnv, tempRepo } from './lifecycle-helpers.js';
import { nestingProblem, parseLockText, MAX_YAML_DEPTH } from '../../src/locks/parse.js';
import { openLockStore, acquire, heartbeat } from '../../src/locks/index.js';
import { heartbeatSpacingMs } from '../../src/locks/lifecycle.js';

// Lock commands' decisions and writes, not the process boundary: the CLI runs in this process.
cliInProcess();

beforeAll(() => ensureBuilt());

const FILE = `meta/context/notices/vm-active/lock-${VM}.md`;
const lock = (extra: string, vm = VM) => `---\nvm: ${vm}\nsession: s1\nai: claude\nstarted: 2026-05-19T22:30:00Z\nreason: r\n${extra}---\n`;

describe('only dev VMs are test VMs (POLICY R2)', () => {
  it('acquire refuses stg, prd and production containers, saying why; dev is fine', async () => {
    const dir = tempRepo();
    for (const [vm, why] of [
      ['s.khost1.prd-web', /prd VM, not a test VM: POLICY R2/],
      ['s.khost1.stg-linux-x', /stg VM, not a test VM: POLICY R2/],
      ['s.khost1.flow', /production container/],
    ] as const) {
      const r = await offhost(['lock', 'acquire', vm, '--reason', 'r'], { cwd: dir, env: sessionEnv('a') });
      expect(r.code, vm).toBe(2);
      expect(r.stderr).toMatch(why);
    }
    expect(g(dir, 'for-each-ref', 'refs/offhost').trim()).toBe('');
    expect((await offhost(['lock', 'acquire', 's.khost1.dev-linux-x', '--reason', 'r'], { cwd: dir, env: sessionEnv('a') })).code).toBe(0);
  }, 180_000);

  it('lint reports a lock file of a stg VM', () => {
    const { findings } = parseLockText(lock('', 's.khost1.stg-linux-x'), 'meta/context/notices/vm-active/lock-s.khost1.stg-linux-x.md');
    expect(findings.some((f) => f.severity === 'error' && /not a test VM/.test(f.message))).toBe(true);
  });
});

describe('ttl_minutes is bounded', () => {
  it('--ttl 1e9, 1441, 1.5 and 0x10 are refused naming the bound; 1440 is accepted', async () => {
    const dir = tempRepo();
    for (const ttl of ['1e9', '1441', '1.5', '0x10', '0']) {
      const r = await offhost(['lock', 'acquire', VM, '--reason', 'r', '--ttl', ttl], { cwd: dir, env: sessionEnv('a') });
      expect(r.code, ttl).toBe(2);
      expect(r.stderr).toContain('from 1 to 1440');
    }
    expect((await offhost(['lock', 'acquire', VM, '--reason', 'r', '--ttl', '1440'], { cwd: dir, env: sessionEnv('a') })).code).toBe(0);
  }, 180_000);

  it('a lock file with ttl_minutes: 1000000000 is an error naming the bound and the line', () => {
    const { lock: l, findings } = parseLockText(lock('ttl_minutes: 1000000000\n'), FILE);
    expect(l).toBeNull();
    const f = findings.find((x) => x.severity === 'error')!;
    expect(f.message).toContain('1440-minute (24 h) bound');
    expect(f.line).toBe(7);
  });
});

describe('a started in year 9999', () => {
  it('lint reports it (error, with the line)', async () => {
    const dir = tempRepo();
    mkdirSync(join(dir, 'meta/context/notices/vm-active'), { recursive: true });
    writeFileSync(join(dir, FILE), lock('').replace('2026-05-19T22:30:00Z', '9999-01-01T00:00:00Z'));
    const r = await offhost(['lint', FILE], { cwd: dir });
    expect(r.code).toBe(1);
    expect(r.stdout).toContain('lock-future-timestamp');
    expect(r.stdout).toMatch(/^\s+5:1\s+error/m);
  });
});

describe('deep YAML nesting', () => {
  for (const [name, body] of [
    ['flow brackets', `reason: ${'['.repeat(5000)}${']'.repeat(5000)}\n`],
    ['flow mappings', `x: ${'{a: '.repeat(3000)}1${'}'.repeat(3000)}\n`],
    ['block mappings', Array.from({ length: 400 }, (_, i) => `${' '.repeat(i)}k${i}:`).join('\n') + ' 1\n'],
    ['list items', `x:\n${'- '.repeat(2000)}1\n`],
  ] as const) {
    it(`${name}: a clean message naming the limit, never "Maximum call stack size exceeded"`, () => {
      const { findings } = parseLockText(`---\nvm: ${VM}\nsession: s\nai: claude\nstarted: 2026-05-19T22:30:00Z\n${body}---\n`, FILE);
      expect(findings).toHaveLength(1);
      expect(findings[0]!.ruleId).toBe('lock-yaml');
      expect(findings[0]!.message).toContain(`at most ${MAX_YAML_DEPTH}`);
      expect(findings[0]!.message).not.toMatch(/call stack/i);
      expect(findings[0]!.line).toBeGreaterThanOrEqual(6);
    });
  }

  it('the depth scanner is not fooled by brackets in quotes or comments, and passes ordinary nesting', () => {
    expect(nestingProblem(`\nreason: "${'['.repeat(500)}"\nnote: '${'{'.repeat(500)}'\n# ${'['.repeat(500)}\n`)).toBeNull();
    expect(nestingProblem(`\nclaims:\n  - id: run-1\n    pid: 4\n    tags: [[a, b], {c: [d]}]\n`)).toBeNull();
    expect(nestingProblem(`\nx: ${'['.repeat(MAX_YAML_DEPTH)}${']'.repeat(MAX_YAML_DEPTH)}\n`)).toBeNull();
    expect(nestingProblem(`\nx: ${'['.repeat(MAX_YAML_DEPTH + 1)}${']'.repeat(MAX_YAML_DEPTH + 1)}\n`)).not.toBeNull();
    // An escaped quote does not end a string early.
    expect(nestingProblem(`\nx: "a \\" ${'['.repeat(100)}"\n`)).toBeNull();
  });
});

describe('heartbeats cannot starve a writer', () => {
  it('a heartbeat within the spacing of the last one writes nothing', async () => {
    const dir = tempRepo();
    let now = Date.parse('2026-05-19T22:00:00Z');
    const store = await openLockStore({ repoDir: dir, clock: { now: () => new Date(now) }, env: cleanEnv(), view: false });
    await acquire(store, { vm: VM, session: 'a', ai: 'claude', reason: 'r', ttlMinutes: 1 });
    now += 5000;
    const first = await heartbeat(store, { vm: VM, session: 'a' });
    expect(first.commit).not.toBeNull();
    const commits = g(dir, 'rev-list', '--count', REF).trim();
    now += heartbeatSpacingMs(1) - 1000;
    const second = await heartbeat(store, { vm: VM, session: 'a' });
    expect(second.commit).toBeNull();
    expect(second.heartbeat.getTime()).toBe(first.heartbeat.getTime());
    expect(g(dir, 'rev-list', '--count', REF).trim()).toBe(commits);
    now += heartbeatSpacingMs(1);
    expect((await heartbeat(store, { vm: VM, session: 'a' })).commit).not.toBeNull();
  });

  it('another process heartbeating in a tight loop does not keep an acquire of another VM from landing', async () => {
    const dir = tempRepo();
    expect((await offhost(['lock', 'acquire', 's.khost1.dev-linux-busy', '--reason', 'busy', '--ttl', '1'], { cwd: dir, env: sessionEnv('beater') })).code).toBe(0);
    // The beater: a shell loop of heartbeats, as fast as they go, until the acquire is done.
    const stop = join(dir, '.git', 'stop-beating');
    const loop = `while [ ! -e '${stop}' ]; do node '${process.env.OFFHOST_TEST_BIN ?? join(__dirname, '..', '..', 'dist', 'offhost.mjs')}' lock heartbeat s.khost1.dev-linux-busy >/dev/null 2>&1; done`;
    const { spawn } = await import('node:child_process');
    const beater = spawn('bash', ['-c', loop], { cwd: dir, env: { ...cleanEnv(), ...sessionEnv('beater') }, stdio: 'ignore' });
    try {
      for (let i = 0; i < 3; i++) {
        const r = await offhost(['lock', 'acquire', VM, '--reason', `writer ${i}`], { cwd: dir, env: sessionEnv(`writer-${i}`) });
        expect(r.code, r.stderr).toBe(0);
        expect((await offhost(['lock', 'release', VM], { cwd: dir, env: sessionEnv(`writer-${i}`) })).code).toBe(0);
      }
    } finally {
      writeFileSync(stop, '');
      await new Promise((res) => beater.once('exit', res));
    }
    expect(g(dir, 'show', `${REF}:${ACTIVE.replace(VM, 's.khost1.dev-linux-busy')}`)).toContain('session: beater');
  }, 180_000);
});
