// `offhost lint --staged` against real git repositories in temp folders: it reads the INDEX (not the
// working tree) against HEAD, checks the whole staged transition whatever paths it is given, and exits
// 0 clean / warnings only, 1 errors, 2 not a repository or bad arguments.
import { existsSync, mkdirSync, readFileSync, rmSync, unlinkSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ACTIVE, VM, git, initRepo, lockText, offhost, tempDir, write } from './helpers.js';

const NOW = '2026-05-19T23:00:00Z';
const D = 'meta/context/notices';
const ARCH = `${D}/vm-active-archive/lock-${VM}-2026-05-19.md`;
const lint = (cwd: string, ...args: string[]) => offhost(['lint', '--staged', '--now', NOW, ...args], cwd);
const json = (out: string) => JSON.parse(out) as { file: string; line: number | null; ruleId: string; severity: string; message: string }[];

function mv(dir: string, from: string, to: string): void {
  mkdirSync(join(dir, dirname(to)), { recursive: true });
  git(dir, 'mv', from, to);
}

function repoWithLock(): string {
  const dir = initRepo();
  write(dir, 'README.md', 'x\n');
  write(dir, ACTIVE, lockText());
  git(dir, 'add', '.');
  git(dir, 'commit', '-q', '-m', 'acquire');
  return dir;
}

describe('offhost lint --staged', () => {
  it('exit 2 outside a git repository', () => {
    const dir = tempDir('offhost-norepo-');
    const r = lint(dir);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('is not inside a git repository');
    expect(offhost(['lint'], dir).status).toBe(2);
  });

  it('exit 2 on bad arguments', () => {
    const dir = initRepo();
    expect(offhost(['lint', '--now', 'tomorrow'], dir).status).toBe(2);
    expect(offhost(['lint', '--format', 'xml'], dir).status).toBe(2);
    expect(offhost(['lint', '--bogus'], dir).status).toBe(2);
    expect(offhost(['lint', '--notices-dir', '../x'], dir).status).toBe(2);
  });

  it('a valid first lock in the first commit (no HEAD yet): exit 0, no output', () => {
    const dir = initRepo();
    write(dir, ACTIVE, lockText());
    git(dir, 'add', '.');
    const r = lint(dir);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(r.stdout).toBe('');
  });

  it('a bad staged lock: exit 1, with file, line, column, rule id and message', () => {
    const dir = initRepo();
    write(dir, ACTIVE, lockText({ started: '"2026-05-19 22:30"' }));
    git(dir, 'add', '.');
    const r = lint(dir, '--format', 'json');
    expect(r.status).toBe(1);
    expect(json(r.stdout)).toEqual([
      expect.objectContaining({ file: ACTIVE, line: 5, column: 10, ruleId: 'lock-schema', severity: 'error', message: expect.stringContaining('write it like 2026-05-19T22:30:00Z') }),
    ]);
  });

  it('reads the index, not the working tree', () => {
    const dir = initRepo();
    // staged: bad; working tree: fixed afterwards, not staged
    write(dir, ACTIVE, lockText({ ai: 'Claude' }));
    git(dir, 'add', '.');
    write(dir, ACTIVE, lockText());
    const staged = lint(dir, '--format', 'json');
    expect(staged.status).toBe(1);
    expect(json(staged.stdout).map((f) => `${f.ruleId}:${f.line}`)).toEqual(['lock-schema:4']);
    // the plain (tree) lint reads the working tree: clean
    expect(offhost(['lint', '--now', NOW], dir).status).toBe(0);

    // the other way round: staged good, working tree broken
    const dir2 = initRepo();
    write(dir2, ACTIVE, lockText());
    git(dir2, 'add', '.');
    write(dir2, ACTIVE, 'garbage without frontmatter\n');
    expect(lint(dir2).status).toBe(0);
    expect(offhost(['lint', '--now', NOW], dir2).status).toBe(1);
    // a file deleted from the working tree but still staged is still checked from the index
    unlinkSync(join(dir, ACTIVE));
    expect(lint(dir).status).toBe(1);
  });

  it("replacing another session's live lock: lock-stolen", () => {
    const dir = repoWithLock();
    write(dir, ACTIVE, lockText({ session: 'codex-b', ai: 'codex', started: '2026-05-19T22:58:00Z' }));
    git(dir, 'add', ACTIVE);
    const r = lint(dir, '--format', 'json');
    expect(r.status).toBe(1);
    const f = json(r.stdout);
    expect(f.map((x) => `${x.ruleId}:${x.line}`)).toEqual(['lock-stolen:3']);
    expect(f[0]!.message).toContain('replaces the live lock of session claude-a');
  });

  it('heartbeat backwards, identity changed', () => {
    const dir = repoWithLock();
    write(dir, ACTIVE, lockText({ heartbeat: '2026-05-19T22:50:00Z' }));
    git(dir, 'commit', '-q', '-am', 'heartbeat');
    write(dir, ACTIVE, lockText({ heartbeat: '2026-05-19T22:40:00Z' }));
    git(dir, 'add', ACTIVE);
    expect(json(lint(dir, '--format', 'json').stdout).map((x) => x.ruleId)).toEqual(['lock-heartbeat-backwards']);
    write(dir, ACTIVE, lockText({ heartbeat: '2026-05-19T22:55:00Z' }));
    git(dir, 'add', ACTIVE);
    expect(lint(dir).status).toBe(0);
    write(dir, ACTIVE, lockText({ started: '2026-05-19T22:31:00Z', heartbeat: '2026-05-19T22:55:00Z' }));
    git(dir, 'add', ACTIVE);
    expect(json(lint(dir, '--format', 'json').stdout).map((x) => x.ruleId)).toEqual(['lock-identity-changed']);
  });

  it('release by git mv to the archive is clean; deleting the lock is not', () => {
    const dir = repoWithLock();
    mv(dir, ACTIVE, ARCH);
    expect(lint(dir).status).toBe(0);
    git(dir, 'commit', '-q', '-m', 'release');

    const dir2 = repoWithLock();
    git(dir2, 'rm', '-q', ACTIVE);
    const r = lint(dir2, '--format', 'json');
    expect(r.status).toBe(1);
    expect(json(r.stdout).map((x) => x.ruleId)).toEqual(['lock-deleted-unarchived']);
  });

  it('the archive is append-only (change or delete)', () => {
    const dir = repoWithLock();
    mv(dir, ACTIVE, ARCH);
    git(dir, 'commit', '-q', '-m', 'release');
    write(dir, ARCH, `${lockText()}\nedited\n`);
    git(dir, 'add', ARCH);
    expect(json(lint(dir, '--format', 'json').stdout).map((x) => x.ruleId)).toEqual(['archive-modified']);
    git(dir, 'rm', '-q', '-f', ARCH);
    expect(json(lint(dir, '--format', 'json').stdout).map((x) => x.ruleId)).toEqual(['archive-modified']);
  });

  it('R7: component lock released before the VM lock of the same session', () => {
    const dir = repoWithLock();
    const comp = `${D}/active/lock-rfc019.md`;
    write(dir, comp, '---\nsession: claude-a\n---\n');
    git(dir, 'add', comp);
    git(dir, 'commit', '-q', '-m', 'component');
    git(dir, 'rm', '-q', comp);
    expect(json(lint(dir, '--format', 'json').stdout).map((x) => x.ruleId)).toEqual(['release-order']);
    mv(dir, ACTIVE, ARCH);
    expect(lint(dir).status).toBe(0);
  });

  it('paths passed as lint-staged passes them (absolute, only some) do not narrow the check', () => {
    const dir = repoWithLock();
    write(dir, `${D}/other.md`, 'notes\n');
    git(dir, 'add', `${D}/other.md`);
    git(dir, 'rm', '-q', ACTIVE); // deletions are not passed by lint-staged
    const r = lint(dir, join(dir, D, 'other.md'));
    expect(r.status).toBe(1);
    expect(r.stdout).toContain('lock-deleted-unarchived');
  });

  it('a lock the commit adds already expired is an error (issue 14); warnings only exit 0 and are printed', () => {
    const dir = initRepo();
    write(dir, ACTIVE, lockText());
    git(dir, 'add', '.');
    const r = offhost(['lint', '--staged', '--now', '2026-05-20T03:00:00Z'], dir);
    expect(r.status).toBe(1);
    expect(r.stdout).toContain('lock-expired');
    expect(r.stdout).toContain('error');
    write(dir, ACTIVE, `${lockText().replace('---\n', '---\ncolour: blue\n')}`);
    git(dir, 'add', '.');
    const w = offhost(['lint', '--staged', '--now', NOW], dir);
    expect(w.status, w.stdout).toBe(0);
    expect(w.stdout).toContain('lock-unknown-field');
    expect(w.stdout).toContain('warning');
  });

  it('--notices-dir and a run from a subfolder', () => {
    const dir = initRepo();
    write(dir, `notes/vm-active/lock-${VM}.md`, lockText({ ai: 'X' }));
    write(dir, 'sub/x.txt', 'x');
    git(dir, 'add', '.');
    expect(lint(join(dir, 'sub')).status).toBe(0);
    const r = lint(join(dir, 'sub'), '--notices-dir', 'notes');
    expect(r.status).toBe(1);
    expect(r.stdout).toContain(`notes/vm-active/lock-${VM}.md`);
  });

  it('does not touch the index, the working tree or HEAD', () => {
    const dir = repoWithLock();
    write(dir, ACTIVE, lockText({ session: 'codex-b' }));
    git(dir, 'add', ACTIVE);
    write(dir, ACTIVE, lockText({ session: 'gemini-c' }));
    const before = [git(dir, 'rev-parse', 'HEAD'), git(dir, 'diff', '--cached'), git(dir, 'diff'), readFileSync(join(dir, '.git', 'index')).toString('hex')];
    lint(dir);
    const after = [git(dir, 'rev-parse', 'HEAD'), git(dir, 'diff', '--cached'), git(dir, 'diff'), readFileSync(join(dir, '.git', 'index')).toString('hex')];
    expect(after).toEqual(before);
    expect(existsSync(join(dir, '.git', 'index.lock'))).toBe(false);
    rmSync(dir, { recursive: true, force: true });
  });

  it('does not depend on the role (OFFHOST_ROLE, CI)', () => {
    const dir = initRepo();
    write(dir, ACTIVE, lockText({ ai: 'Claude' }));
    git(dir, 'add', '.');
    const envs: Record<string, string>[] = [{}, { CI: 'true' }, { OFFHOST_ROLE: 'laptop' }, { OFFHOST_ROLE: 'vm', CI: 'true' }, { OFFHOST_ROLE: 'ci' }];
    const outs = envs.map((env) => {
      const r = offhost(['lint', '--staged', '--now', NOW, '--format', 'json'], dir, env);
      return `${r.status} ${r.stdout}`;
    });
    expect(new Set(outs).size).toBe(1);
    expect(outs[0]!.startsWith('1 ')).toBe(true);
  });
});
