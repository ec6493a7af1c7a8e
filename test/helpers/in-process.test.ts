// The in-process CLI (./in-process.ts) must answer as the built executable does, and must see the test's
// environment and directory, never the test process's own.
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { BIN, VM, cleanEnv, ensureBuilt, sessionEnv, tempRepo } from '../locks/lifecycle-helpers.js';
import { offhostInProcess } from './in-process.js';
import { gitBatchPids } from '../../src/git/batch.js';

beforeAll(() => ensureBuilt());

function spawned(args: string[], cwd: string, env: NodeJS.ProcessEnv) {
  const r = spawnSync(process.execPath, [BIN, ...args], { cwd, env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/**
 * Output without its times and commit names, which differ between two repositories (and durations, which
 * differ when the two calls fall on either side of a rounding: `expires in 2h` then `1h 59m`).
 */
const timeless = (s: string) =>
  s
    .replace(/\b[0-9a-f]{10,40}\b/g, 'SHA')
    .replace(/\d{4}-\d\d-\d\dT[\d:.]+Z/g, 'T')
    .replace(/\d+ (min|s|h)\b/g, 'N')
    .replace(/\b\d+[hms]( \d+[ms])*\b/g, 'N');

describe('offhostInProcess', () => {
  const saved = { ...process.env };
  afterEach(() => {
    for (const k of Object.keys(process.env)) if (!(k in saved)) delete process.env[k];
    Object.assign(process.env, saved);
  });

  it('gives the exit status and output the executable gives, call for call', async () => {
    const a = tempRepo('spawned');
    const b = tempRepo('in-process');
    const steps: [string[], Record<string, string>][] = [
      [['lock', 'acquire', VM, '--reason', 'x'], {}],
      [['lock', 'acquire', VM, '--reason', 'x'], sessionEnv('s1')],
      [['lock', 'acquire', VM, '--reason', 'x'], sessionEnv('s2')],
      [['lock', 'status'], sessionEnv('s2')],
      [['lock', 'release', VM], sessionEnv('s1')],
      [['check', 'make build-safe'], {}],
      [['nosuch'], {}],
    ];
    for (const [args, extra] of steps) {
      const want = spawned(args, a, cleanEnv(extra));
      const got = await offhostInProcess(args, { cwd: b, env: cleanEnv(extra) });
      expect({ args, code: got.code }).toEqual({ args, code: want.code });
      expect(timeless(got.stdout).replaceAll(b, 'DIR')).toBe(timeless(want.stdout).replaceAll(a, 'DIR'));
    }
  });

  it("reads the call's environment, not the test process's (a session set only in process.env is not seen)", async () => {
    const dir = tempRepo();
    process.env.OFFHOST_SESSION = 'the-test-process';
    process.env.OFFHOST_AI = 'claude';
    const r = await offhostInProcess(['lock', 'acquire', VM, '--reason', 'x'], { cwd: dir, env: cleanEnv() });
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/session/);
    const ok = await offhostInProcess(['lock', 'acquire', VM, '--reason', 'x'], { cwd: dir, env: cleanEnv(sessionEnv('mine')) });
    expect(ok.code).toBe(0);
    const st = await offhostInProcess(['lock', 'status', '--json'], { cwd: dir, env: cleanEnv() });
    expect(st.stdout).toContain('"mine"');
    expect(st.stdout).not.toContain('the-test-process');
  });

  it('leaves no git batch process running after a call', async () => {
    const dir = tempRepo();
    await offhostInProcess(['lock', 'status'], { cwd: dir, env: cleanEnv() });
    expect(gitBatchPids()).toEqual([]);
  });
});
