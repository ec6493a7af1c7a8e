// The one git environment policy (src/git/run.ts), checked with a real git reading its own environment.
import { describe, expect, it } from 'vitest';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { WAIT_MS } from '../helpers/hang-guard.js';
import { processesWhere } from '../helpers/processes.js';
import { gitEnv, runGit, runGitSync } from '../../src/git/run.js';
import { parseCatFileBatch, parseLsTree, parseNameStatus, parseRawEntries, splitZ } from '../../src/git/plumbing.js';
import { tempRepo, cleanEnv } from '../locks/lifecycle-helpers.js';

describe('gitEnv', () => {
  it('passes identity and transport variables, drops the repository-selecting ones unless asked', () => {
    const base = { GIT_AUTHOR_NAME: 'A', GIT_COMMITTER_EMAIL: 'c@x', GIT_SSH_COMMAND: 'ssh -i k', GIT_DIR: '/elsewhere/.git', GIT_INDEX_FILE: '/tmp/next-index.lock', GIT_WORK_TREE: '/w', PATH: '/bin' };
    const env = gitEnv({ env: base });
    expect(env).toMatchObject({ GIT_AUTHOR_NAME: 'A', GIT_COMMITTER_EMAIL: 'c@x', GIT_SSH_COMMAND: 'ssh -i k', PATH: '/bin', GIT_TERMINAL_PROMPT: '0', GIT_OPTIONAL_LOCKS: '0' });
    expect(env.GIT_DIR).toBeUndefined();
    expect(env.GIT_INDEX_FILE).toBeUndefined();
    expect(env.GIT_WORK_TREE).toBeUndefined();
    expect(gitEnv({ env: base, repoEnv: 'inherit' })).toMatchObject({ GIT_DIR: '/elsewhere/.git', GIT_INDEX_FILE: '/tmp/next-index.lock' });
    expect(gitEnv({ env: base, extra: { GIT_INDEX_FILE: '/own' } }).GIT_INDEX_FILE).toBe('/own');
  });

  it('a hook-set GIT_DIR pointing elsewhere does not redirect offhost (real git)', async () => {
    const dir = tempRepo();
    const other = tempRepo('other');
    const env = { ...cleanEnv(), GIT_DIR: `${other}/.git` };
    const top = (await runGit(['rev-parse', '--show-toplevel'], { cwd: dir, env })).stdout.toString().trim();
    expect(top).toBe(dir);
    const inherited = runGitSync(['rev-parse', '--absolute-git-dir'], { cwd: dir, env, repoEnv: 'inherit' }).stdout.toString().trim();
    expect(inherited).toBe(`${other}/.git`);
    const ident = runGitSync(['var', 'GIT_AUTHOR_IDENT'], { cwd: dir, env: { ...cleanEnv(), GIT_AUTHOR_NAME: 'Bot', GIT_AUTHOR_EMAIL: 'bot@x' } }).stdout.toString();
    expect(ident).toMatch(/^Bot <bot@x> /);
  });

  it('a git that does not finish is stopped within its bound', async () => {
    const dir = tempRepo();
    // What shows it was stopped, not waited for (no clock): the alias's shell never got past its sleep,
    // and it is gone when runGit returns.
    const r = await runGit(['-c', 'alias.slow=!echo $$ > slow.pid; sleep 30 && touch finished', 'slow'], { cwd: dir, env: cleanEnv(), timeoutMs: 300 });
    expect(r.code).toBe(124);
    expect(r.stderr).toContain('did not finish');
    expect(existsSync(join(dir, 'finished'))).toBe(false);
    const pid = Number(readFileSync(join(dir, 'slow.pid'), 'utf8'));
    const running = () => {
      try {
        const st = readFileSync(`/proc/${pid}/stat`, 'utf8');
        return st.slice(st.lastIndexOf(')') + 2)[0] !== 'Z';
      } catch {
        return false;
      }
    };
    for (let i = 0; running() && i < WAIT_MS / 50; i++) await new Promise((res) => setTimeout(res, 50));
    expect(running()).toBe(false);
    expect(existsSync(join(dir, 'finished'))).toBe(false); // killed, not ended after its sleep
  });
});

describe('network reads (ls-remote, fetch)', () => {
  /** Live processes with a word of their command line holding `needle` (Linux's /proc; elsewhere skipped). */
  const holding = (needle: string): number[] => processesWhere((argv) => argv.some((w) => w.includes(needle)));

  it.skipIf(!existsSync('/proc/self/cmdline'))('answer as git does, and leave nothing behind: the watchdog beside git ends with it', async () => {
    const seed = tempRepo('seed');
    const bare = join(dirname(seed), `remote-${process.pid}-${Date.now()}.git`);
    runGitSync(['clone', '-q', '--bare', seed, bare], { cwd: dirname(seed), env: cleanEnv() });
    runGitSync(['update-ref', 'refs/offhost/locks', 'HEAD'], { cwd: bare, env: cleanEnv() });
    const head = runGitSync(['rev-parse', 'HEAD'], { cwd: bare, env: cleanEnv() }).stdout.toString().trim();
    for (const background of [false, true]) {
      const r = await runGit(['ls-remote', '--refs', bare, 'refs/offhost/locks'], { cwd: seed, env: cleanEnv(), ...(background ? { background } : {}) });
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout.toString()).toBe(`${head}\trefs/offhost/locks\n`);
      // The watchdog's shell kept the arguments it was started with (the bare repository's unique path).
      for (let i = 0; holding(bare).length > 0 && i < WAIT_MS / 50; i++) await new Promise((res) => setTimeout(res, 50));
      expect(holding(bare)).toEqual([]);
    }
    // A failing read is git's failure, said as git says it.
    const missing = await runGit(['ls-remote', join(dirname(seed), 'no-such.git')], { cwd: seed, env: cleanEnv() });
    expect(missing.code).not.toBe(0);
    expect(missing.stderr).toMatch(/does not appear to be a git repository|not found|No such/i);
  });
});

describe('plumbing parsers', () => {
  it('read -z lists, ls-tree, name-status, raw diffs and cat-file batches', () => {
    expect(splitZ('a\0b c\0')).toEqual(['a', 'b c']);
    expect(parseLsTree('100644 blob aaaa\tx/y z\x00040000 tree bbbb\tx\x00')).toEqual([
      { mode: '100644', type: 'blob', sha: 'aaaa', path: 'x/y z' },
      { mode: '040000', type: 'tree', sha: 'bbbb', path: 'x' },
    ]);
    expect(parseNameStatus('A\0p\0D\0q\0')).toEqual([{ status: 'A', path: 'p' }, { status: 'D', path: 'q' }]);
    const raw = parseRawEntries([':100644 100644 a b M', 'p', ':100644 100644 c d R90', 'old', 'new', 'commitsha'], 0);
    expect(raw.changes.map((c) => [c.status, c.path, c.oldPath])).toEqual([['M', 'p', 'p'], ['R90', 'new', 'old']]);
    expect(raw.next).toBe(5);
    const out = Buffer.from('1111 blob 3\nabc\nzz missing\n2222 blob 0\n\n');
    const got = parseCatFileBatch(out, ['x', 'zz', 'y']);
    expect(got.get('x')!.data.toString()).toBe('abc');
    expect(got.has('zz')).toBe(false);
    expect(got.get('y')!.data.length).toBe(0);
  });
});
