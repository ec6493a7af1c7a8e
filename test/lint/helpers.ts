// Helpers for the lock/lint tests: the built CLI, temp git repositories, lock texts.
import { execFileSync, spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

export const root = join(import.meta.dirname, '..', '..');
/** The built CLI (`npm run build`); OFFHOST_BIN overrides it (a private build while the shared tree is in flux). */
export const bin = process.env.OFFHOST_BIN ?? join(root, 'dist', 'offhost.mjs');

/** The environment for spawned git/offhost: no inherited GIT_* (a test may run inside a hook), fixed identity. */
export function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('GIT_') && k !== 'HUSKY') env[k] = v;
  return {
    ...env,
    GIT_AUTHOR_NAME: 'Test',
    GIT_AUTHOR_EMAIL: 'test@example.com',
    GIT_COMMITTER_NAME: 'Test',
    GIT_COMMITTER_EMAIL: 'test@example.com',
    GIT_CONFIG_NOSYSTEM: '1',
    ...extra,
  };
}

export function tempDir(prefix: string): string {
  return realpathSync(mkdtempSync(join(tmpdir(), prefix)));
}

export function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, { cwd, env: cleanEnv(), encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

export function initRepo(prefix = 'offhost-lint-'): string {
  const dir = tempDir(prefix);
  git(dir, 'init', '-q', '-b', 'main');
  git(dir, 'config', 'commit.gpgsign', 'false');
  git(dir, 'config', 'core.hooksPath', '.git/hooks-none');
  return dir;
}

export function write(dir: string, rel: string, text: string | Buffer): void {
  const p = join(dir, rel);
  mkdirSync(dirname(p), { recursive: true });
  writeFileSync(p, text);
}

export function offhost(args: string[], cwd: string, env: Record<string, string> = {}): SpawnSyncReturns<string> {
  return spawnSync(process.execPath, [bin, ...args], { cwd, env: cleanEnv(env), encoding: 'utf8' });
}

export const VM = 's.khost1.dev-linux-koda';
export const ACTIVE = `meta/context/notices/vm-active/lock-${VM}.md`;

export function lockText(f: { vm?: string; session?: string; ai?: string; started?: string; heartbeat?: string; ttl?: number; reason?: string; body?: string } = {}): string {
  const lines = [
    '---',
    `vm: ${f.vm ?? VM}`,
    `session: ${f.session ?? 'claude-a'}`,
    `ai: ${f.ai ?? 'claude'}`,
    `started: ${f.started ?? '2026-05-19T22:30:00Z'}`,
    `reason: ${f.reason ?? 'make build-safe for KODA-1'}`,
  ];
  if (f.heartbeat) lines.push(`heartbeat: ${f.heartbeat}`);
  if (f.ttl !== undefined) lines.push(`ttl_minutes: ${f.ttl}`);
  lines.push('---', f.body ?? 'notes', '');
  return lines.join('\n');
}
