// The provisioning runbook (POLICY R2, R8): meta/context/runbooks/test-vm-provisioning.md, created or
// appended with what `offhost vm provision` did, and committed alone: `git commit -- <that path>`
// commits only that file and leaves whatever else the user has staged staged and uncommitted.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

export const RUNBOOK_PATH = 'meta/context/runbooks/test-vm-provisioning.md';

const HEADER = `# Test VM provisioning

What \`offhost vm provision\` did on each test VM, newest last (POLICY R2, R8). Each entry lists the
commands that ran on the VM host; re-running the command is safe (it changes only what is missing).
`;

export interface RunbookStep {
  name: string;
  result: 'done' | 'unchanged';
  detail: string;
  command?: string;
}

export function runbookEntry(a: { vm: string; where: string; when: Date; session?: string; steps: RunbookStep[] }): string {
  const rows = a.steps.map((s) => `| ${s.name} | ${s.result} | ${s.detail.replace(/\|/g, '\\|')} | ${s.command ? `\`${s.command.replace(/\|/g, '\\|').replace(/`/g, "'")}\`` : ''} |`);
  return [
    '',
    `## ${a.when.toISOString().replace(/\.\d+Z$/, 'Z')} ${a.vm}`,
    '',
    `Provisioned by \`offhost vm provision ${a.vm}\`${a.session ? ` (session ${a.session})` : ''} on ${a.where}.`,
    '',
    '| step | result | what | command |',
    '|---|---|---|---|',
    ...rows,
    '',
    `Reset to the provisioned state: \`${a.steps.find((s) => s.name === 'snapshot')?.command?.replace(' snapshot create ', ' snapshot restore ') ?? 'incus snapshot restore <instance> provisioned'}\` (needs the VM's lock).`,
    '',
  ].join('\n');
}

function git(repo: string, args: string[], env: NodeJS.ProcessEnv): { status: number; out: string; err: string } {
  const r = spawnSync('git', args, { cwd: repo, env, encoding: 'utf8' });
  return { status: r.status ?? 1, out: r.stdout ?? '', err: r.stderr ?? '' };
}

/** The repository root of `cwd`, or null outside a repository. */
export function repoRoot(cwd: string, env: NodeJS.ProcessEnv): string | null {
  const r = git(cwd, ['rev-parse', '--show-toplevel'], env);
  return r.status === 0 ? r.out.trim() : null;
}

export interface RunbookResult {
  file: string;
  committed: string | null;
  /** Why it was not committed. */
  problem?: string;
}

/** Appends the entry (creating the file with its header); with a message, commits that one path. */
export function writeRunbook(repo: string, entry: string, message: string | null, env: NodeJS.ProcessEnv): RunbookResult {
  const file = join(repo, RUNBOOK_PATH);
  mkdirSync(dirname(file), { recursive: true });
  const before = existsSync(file) ? readFileSync(file, 'utf8') : HEADER;
  writeFileSync(file, before.endsWith('\n') ? before + entry : `${before}\n${entry}`);
  if (message === null) return { file, committed: null, problem: 'not committed (--no-commit)' };
  // --only (the default with a pathspec): a temporary index of HEAD plus this path; the user's index
  // keeps their staged work for the next commit. --no-verify: this commit holds one generated file, and
  // a pre-commit hook that stashes partial work must not run around someone else's staged changes.
  const add = git(repo, ['add', '--', RUNBOOK_PATH], env);
  if (add.status !== 0) return { file, committed: null, problem: `git add failed: ${add.err.trim()}` };
  const c = git(repo, ['commit', '--no-verify', '-q', '-m', message, '--', RUNBOOK_PATH], env);
  if (c.status !== 0) return { file, committed: null, problem: `git commit failed: ${(c.err || c.out).trim()}` };
  return { file, committed: git(repo, ['rev-parse', 'HEAD'], env).out.trim() };
}
