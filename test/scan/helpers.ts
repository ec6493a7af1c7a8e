import { cpSync, mkdtempSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Io } from '../../src/io.js';

export const ROOT = join(import.meta.dirname, '..', '..');

/** An Io for in-process runs; `CI=true` on purpose: scan and ci must still judge as on a laptop. */
export function testIo(cwd: string, env: Record<string, string> = {}, now = '2026-05-19T23:00:00Z') {
  const out: string[] = [];
  const err: string[] = [];
  const home = mkdtempSync(join(tmpdir(), 'offhost-home-'));
  const io: Io = {
    argv: [],
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home, CI: 'true', OFFHOST_ROLE: 'ci', XDG_CONFIG_HOME: join(home, '.config'), ...env },
    cwd,
    stdout: (t) => void out.push(t),
    stderr: (t) => void err.push(t),
    readStdin: async () => '',
    clock: { now: () => new Date(now) },
  };
  return { io, out: () => out.join(''), err: () => err.join(''), home };
}

/** A copy of a fixtures/scan tree in a temp folder. */
export function copyFixture(name: string): string {
  const dir = mkdtempSync(join(tmpdir(), `offhost-scan-${name}-`));
  mkdirSync(dir, { recursive: true });
  cpSync(join(ROOT, 'fixtures', 'scan', name), dir, { recursive: true });
  return dir;
}
