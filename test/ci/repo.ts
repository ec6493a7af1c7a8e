// Real git repositories for the ci tests: a base branch and a pull-request branch, commits with chosen
// committer times.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync, renameSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

export const VM = 's.khost1.dev-linux-koda';
export const N = 'meta/context/notices';
export const active = (vm = VM) => `${N}/vm-active/lock-${vm}.md`;
export const archive = (vm = VM, day = '2026-05-19', expired = false) => `${N}/vm-active-archive/lock-${vm}-${expired ? 'expired-' : ''}${day}.md`;
export const component = (slug: string) => `${N}/active/lock-${slug}.md`;

export function lockText(f: { vm?: string; session?: string; ai?: string; started?: string; heartbeat?: string; ttl?: number; reason?: string; body?: string } = {}): string {
  const lines = [
    '---',
    `vm: ${f.vm ?? VM}`,
    `session: ${f.session ?? 'claude-a'}`,
    `ai: ${f.ai ?? 'claude'}`,
    `started: ${f.started ?? '2026-05-19T22:30:00Z'}`,
    'reason: |',
    `  ${f.reason ?? 'koda build-safe for RFC-019'}`,
  ];
  if (f.heartbeat) lines.push(`heartbeat: ${f.heartbeat}`);
  if (f.ttl) lines.push(`ttl_minutes: ${f.ttl}`);
  lines.push('---', f.body ?? 'running make build-safe on the VM', '');
  return lines.join('\n');
}

export class Repo {
  readonly dir: string;
  constructor() {
    this.dir = mkdtempSync(join(tmpdir(), 'offhost-ci-'));
    this.git('init', '-q', '-b', 'main');
    this.git('config', 'user.email', 'test@example.com');
    this.git('config', 'user.name', 'Test');
    this.git('config', 'commit.gpgsign', 'false');
  }
  git(...args: string[]): string {
    return this.gitEnv({}, ...args);
  }
  gitEnv(env: Record<string, string>, ...args: string[]): string {
    const r = spawnSync('git', args, { cwd: this.dir, encoding: 'utf8', env: { ...process.env, ...env } });
    if (r.status !== 0) throw new Error(`git ${args.join(' ')}: ${r.stderr}`);
    return r.stdout.trim();
  }
  /** Writes (string), deletes (null) or moves ({ from }) files, commits them at `at` (ISO). Returns the sha. */
  commit(files: Record<string, string | null | { from: string }>, message: string, at = '2026-05-19T22:40:00Z'): string {
    for (const [p, c] of Object.entries(files)) {
      const abs = join(this.dir, p);
      if (c === null) rmSync(abs, { force: true });
      else if (typeof c === 'object') {
        mkdirSync(dirname(abs), { recursive: true });
        renameSync(join(this.dir, c.from), abs);
      } else {
        mkdirSync(dirname(abs), { recursive: true });
        writeFileSync(abs, c);
      }
    }
    this.git('add', '-A', '.');
    this.gitEnv({ GIT_COMMITTER_DATE: at, GIT_AUTHOR_DATE: at }, 'commit', '-q', '--allow-empty', '-m', message);
    return this.git('rev-parse', 'HEAD');
  }
  branch(name: string, from = 'HEAD'): void {
    this.git('checkout', '-q', '-b', name, from);
  }
  checkout(name: string): void {
    this.git('checkout', '-q', name);
  }
  cleanup(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** A repository with a README on main and a `pr` branch checked out. */
export function basePr(baseFiles: Record<string, string> = {}, at = '2026-05-19T22:00:00Z'): Repo {
  const r = new Repo();
  r.commit({ 'README.md': '# project\n', ...baseFiles }, 'base', at);
  r.branch('pr');
  return r;
}
