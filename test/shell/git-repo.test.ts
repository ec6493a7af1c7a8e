// git-repo.ts: the config-file reader against real git (`git config --file F --list` on the same files,
// including the tricky syntax), the ext:: URL words against what real git-remote-ext starts (a recorder),
// the ssh test for --upload-pack, and the hooks each subcommand runs.
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { extCommand, fileConfig, gitDirs, hookFile, hooksOf, readConfigFile, remoteOverSsh } from '../../src/shell/programs/git-repo.js';
import { diskFiles } from '../../src/policy/disk-files.js';
import type { Field } from '../../src/shell/expand.js';
import type { Ctx } from '../../src/shell/walk-state.js';

const base = mkdtempSync(join(tmpdir(), 'offhost-git-repo-'));
afterAll(() => rmSync(base, { recursive: true, force: true }));
const ctx = (home: string | null = null) => ({ files: diskFiles(), home }) as unknown as Ctx;
const known = (value: string): Field => ({ value, known: true });

/** What real git reads from the file: the last value of each key (lowercased, as offhost keeps them). */
function gitList(file: string): Map<string, string> {
  const r = spawnSync('git', ['config', '--file', file, '--includes', '--list', '-z'], { encoding: 'utf8', env: { PATH: process.env.PATH, HOME: base } });
  expect(r.status, r.stderr).toBe(0);
  const out = new Map<string, string>();
  for (const rec of r.stdout.split('\0').filter(Boolean)) {
    const nl = rec.indexOf('\n');
    out.set((nl < 0 ? rec : rec.slice(0, nl)).toLowerCase(), nl < 0 ? 'true' : rec.slice(nl + 1));
  }
  return out;
}

const CONFIGS: Record<string, string> = {
  plain: '[alias]\n\tkb = !make -C engines/lang/koda build\n\tst = status\n',
  quoted: '[alias]\n\tkb = "!make -C engines/lang/koda build"  # a comment\n\tq = "!echo \\"a;b\\" # not a comment" ; comment\n',
  subsections: '[remote "Origin"]\n\turl = ext::make% build\n[remote.Old]\n\turl = ../old\n[Core]\n\tHooksPath = tools/hooks\n',
  continued: '[alias]\n\tlong = !make \\\n -C engines/lang/koda \\\n build\n',
  escapes: '[alias]\n\tt = "!printf \\"%s\\\\n\\" x\\ty"\n',
  bare: '[core]\n\tbare\n\tsshCommand=ssh -v\n[alias] x = !true\n',
  comments: '; top comment\n# another\n[alias]\n  ; k = !make build\n  k2 = !make build-safe\n',
  lastWins: '[alias]\n\tk = !true\n[alias]\n\tk = !make build\n',
};

describe('readConfigFile reads what git reads', () => {
  for (const [name, text] of Object.entries(CONFIGS)) {
    it(name, () => {
      const file = join(base, `${name}.config`);
      writeFileSync(file, text);
      const mine = new Map<string, string>();
      const into = new Map<string, Field>();
      readConfigFile(file, ctx(), null, into);
      for (const [k, v] of into) mine.set(k, v.value);
      expect(mine).toEqual(gitList(file));
    });
  }

  it('follows include.path and includeIf paths (relative to the including file)', () => {
    mkdirSync(join(base, 'inc'), { recursive: true });
    writeFileSync(join(base, 'inc/aliases'), '[alias]\n\tkb = !make build\n');
    writeFileSync(join(base, 'inc/main'), '[include]\n\tpath = aliases\n[includeIf "gitdir:/nowhere/"]\n\tpath = aliases2\n');
    writeFileSync(join(base, 'inc/aliases2'), '[alias]\n\tkc = !make build-safe\n');
    const into = new Map<string, Field>();
    readConfigFile(join(base, 'inc/main'), ctx(), null, into);
    expect(into.get('alias.kb')?.value).toBe('!make build');
    // A condition offhost does not evaluate counts as true (it may hold an alias).
    expect(into.get('alias.kc')?.value).toBe('!make build-safe');
  });

  it('an include loop ends', () => {
    writeFileSync(join(base, 'loop'), '[include]\n\tpath = loop\n[alias]\n\tx = !true\n');
    const into = new Map<string, Field>();
    readConfigFile(join(base, 'loop'), ctx(), null, into);
    expect(into.get('alias.x')?.value).toBe('!true');
  });
});

describe('gitDirs and fileConfig', () => {
  it('a linked worktree: its config is the common directory\'s, plus config.worktree', () => {
    const repo = join(base, 'repo');
    mkdirSync(repo);
    const git = (...a: string[]) => spawnSync('git', ['-C', repo, ...a], { encoding: 'utf8', env: { PATH: process.env.PATH, HOME: base, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@t', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@t' } });
    git('init', '-q', '-b', 'main');
    git('commit', '-q', '--allow-empty', '-m', 'one');
    git('config', 'alias.kb', '!make build');
    expect(git('worktree', 'add', '-q', join(base, 'wt'), '-b', 'wt').status).toBe(0);
    const dirs = gitDirs(join(base, 'wt'), ctx())!;
    expect(dirs.commonDir).toBe(join(repo, '.git'));
    expect(dirs.gitDir).toBe(join(repo, '.git/worktrees/wt'));
    const config = fileConfig(dirs, ctx(base), () => undefined);
    expect(config.get('alias.kb')?.value).toBe('!make build');
  });

  it('the global files under HOME, unless GIT_CONFIG_GLOBAL names another', () => {
    const home = join(base, 'home');
    mkdirSync(join(home, '.config/git'), { recursive: true });
    writeFileSync(join(home, '.gitconfig'), '[alias]\n\tg = !make build\n');
    writeFileSync(join(home, '.config/git/config'), '[alias]\n\tx = !make build-safe\n');
    const env = (k: string) => (k === 'GIT_CONFIG_NOSYSTEM' ? known('1') : undefined);
    const c = fileConfig(null, ctx(home), env);
    expect(c.get('alias.g')?.value).toBe('!make build');
    expect(c.get('alias.x')?.value).toBe('!make build-safe');
    const other = join(base, 'other.gitconfig');
    writeFileSync(other, '[alias]\n\to = !true\n');
    const c2 = fileConfig(null, ctx(home), (k) => (k === 'GIT_CONFIG_GLOBAL' ? known(other) : env(k)));
    expect(c2.has('alias.g')).toBe(false);
    expect(c2.get('alias.o')?.value).toBe('!true');
  });
});

describe('extCommand: the argv git-remote-ext starts', () => {
  const recorder = join(base, 'rec');
  writeFileSync(recorder, `#!/bin/sh\nfor a in "$@"; do printf '%s\\n' "$a"; done > "$REC_OUT"\nexit 1\n`);
  chmodSync(recorder, 0o755);
  for (const url of [`ext::${recorder} a b`, `ext::${recorder} a% b %%c`, `ext::${recorder} %s %S`, `ext::${recorder} x %G/repo y`, `ext::${recorder}   spaced   out`, `ext::${recorder} trailing `]) {
    it(url.replace(recorder, 'REC'), () => {
      const out = join(base, 'rec.out');
      rmSync(out, { force: true });
      spawnSync('git', ['-c', 'protocol.ext.allow=always', 'ls-remote', url], { env: { PATH: process.env.PATH, HOME: base, REC_OUT: out }, encoding: 'utf8' });
      const real = readFileSync(out, 'utf8').split('\n').slice(0, -1);
      const mine = extCommand(known(url))!.map((f) => f.value);
      expect(mine[0]).toBe(recorder);
      expect(mine.slice(1)).toEqual(real);
    });
  }
  it('not an ext:: URL', () => expect(extCommand(known('https://x/y'))).toBeNull());
});

describe('remoteOverSsh', () => {
  it.each([
    ['khost1:koder', true],
    ['git@github.com:o/r.git', true],
    ['ssh://khost1/srv/koder', true],
    ['ssh://me@[::1]/x', false],
    ['localhost:koder', false],
    ['127.0.0.1:koder', false],
    ['./repo', false],
    ['/srv/repo', false],
    ['../a:b', false],
    ['file:///srv/repo', false],
    ['origin', false],
  ])('%s -> %s', (url, over) => expect(remoteOverSsh(url)).toBe(over));
});

describe('hooks', () => {
  it('commit runs pre-commit unless --no-verify or -n', () => {
    expect(hooksOf('commit', [known('-m'), known('x')])).toContain('pre-commit');
    expect(hooksOf('commit', [known('--no-verify')])).not.toContain('pre-commit');
    expect(hooksOf('commit', [known('-an')])).not.toContain('pre-commit');
    expect(hooksOf('commit', [known('-an')])).toContain('post-commit');
    expect(hooksOf('log', [])).toEqual([]);
  });
  it("husky's .husky/_ hands over to .husky/<hook>", () => {
    expect(hookFile('/r/.husky/_', 'pre-commit')).toEqual({ path: '/r/.husky/pre-commit', shell: true });
    expect(hookFile('/r/.git/hooks', 'pre-commit')).toEqual({ path: '/r/.git/hooks/pre-commit', shell: false });
  });
  it('real git runs the hooks hooksOf lists for commit (a recorder in each)', () => {
    const repo = join(base, 'hooked');
    mkdirSync(join(repo, 'hooks'), { recursive: true });
    const log = join(base, 'hooks.log');
    const all = ['pre-commit', 'prepare-commit-msg', 'commit-msg', 'post-commit', 'post-rewrite', 'pre-auto-gc', 'reference-transaction', 'post-index-change', 'pre-push'];
    for (const h of all) writeFileSync(join(repo, 'hooks', h), `#!/bin/sh\necho ${h} >> ${log}\n`, { mode: 0o755 });
    const env = { PATH: process.env.PATH, HOME: base, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@t', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@t' };
    spawnSync('git', ['init', '-q', '-b', 'main', repo], { env });
    for (const args of [['commit', '--allow-empty', '-m', 'x'], ['commit', '--no-verify', '--allow-empty', '-m', 'y']]) {
      rmSync(log, { force: true });
      expect(spawnSync('git', ['-C', repo, '-c', 'core.hooksPath=hooks', ...args], { env }).status).toBe(0);
      const ran = new Set(readFileSync(log, 'utf8').split('\n').filter(Boolean));
      const listed = new Set(hooksOf('commit', args.slice(1).map(known)));
      // Every hook real git ran is one offhost reads (it may read more: fail closed).
      for (const h of ran) expect(listed, `${args.join(' ')} ran ${h}`).toContain(h);
    }
  });
});
