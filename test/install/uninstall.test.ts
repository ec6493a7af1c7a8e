// `offhost uninstall` against real files written by the real `offhost init` (built CLI, real git): it takes
// out exactly what init put in, keeps everything of the user's around it, and says what it removed.
import { readFileSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { git, initRepo, offhost as run, tempDir, write } from '../lint/helpers.js';

// A HOME of the test's own: uninstall also looks at the user's per-user wiring (src/install/uninstall-user.ts).
const home = tempDir('offhost-home-');
const offhost = (args: string[], cwd: string) => run(args, cwd, { HOME: home, XDG_DATA_HOME: '', XDG_STATE_HOME: '', OFFHOST_SHIMS_DIR: '', OFFHOST_STATE_DIR: '' });

const CMD = 'offhost lint --staged';
const GLOB = 'meta/context/notices/**/*.md';

function snapshot(dir: string, files: string[]): Record<string, string | null> {
  return Object.fromEntries(files.map((f) => [f, existsSync(join(dir, f)) ? readFileSync(join(dir, f), 'utf8') : null]));
}

function repo(pkg: Record<string, unknown> = { name: 'x', private: true, devDependencies: { husky: '^9', 'lint-staged': '^16' } }): string {
  const dir = initRepo('offhost-uninstall-');
  git(dir, 'config', '--unset', 'core.hooksPath');
  write(dir, 'package.json', `${JSON.stringify(pkg, null, 2)}\n`);
  // offhost installed in the project (node_modules/.bin/offhost), as npm lays it out: `init --agent` then
  // writes its project-relative hook into the committed settings (without it, the personal file).
  write(dir, 'node_modules/.bin/offhost', '#!/bin/sh\n');
  return dir;
}

describe('offhost uninstall', () => {
  it('after init in a fresh repository: the hook file, the lint-staged entry and the agent hook go; the rest stays', () => {
    const dir = repo();
    const before = snapshot(dir, ['package.json']);
    expect(offhost(['init'], dir).status).toBe(0);
    expect(offhost(['init', '--agent', 'claude-code'], dir).status).toBe(0);
    expect(offhost(['init', '--agent', 'gemini'], dir).status).toBe(0);
    const r = offhost(['uninstall'], dir);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toContain('.husky/pre-commit: removed offhost\'s lines (nothing else was in it: file removed)');
    expect(r.stdout).toContain(`package.json: removed the lint-staged entry "${CMD}"`);
    expect(r.stdout).toContain('.claude/settings.json: removed 1 offhost hook');
    expect(r.stdout).toContain('.gemini/settings.json: removed 1 offhost hook');
    expect(r.stdout).toContain('kept: husky and lint-staged');
    expect(existsSync(join(dir, '.husky/pre-commit'))).toBe(false);
    expect(existsSync(join(dir, '.claude'))).toBe(false);
    expect(existsSync(join(dir, '.gemini'))).toBe(false);
    // package.json as it was before init (init added only the prepare script, kept: husky's own set-up)
    const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
    expect({ ...pkg, scripts: undefined }).toEqual({ ...JSON.parse(before['package.json']!), scripts: undefined });
    // a second run has nothing left to do
    const again = offhost(['uninstall'], dir);
    expect(again.stdout).toContain('nothing of offhost to remove');
  });

  it('removes the Copilot hook (its command is in `bash`), the OpenCode plugin file, and a Gemini hook in settings with comments', () => {
    const dir = repo();
    expect(offhost(['init', '--agent', 'copilot'], dir).status).toBe(0);
    expect(offhost(['init', '--agent', 'opencode'], dir).status).toBe(0);
    // Cursor's file as init makes it holds `"version": 1` beside the hooks: it goes with them
    expect(offhost(['init', '--agent', 'cursor'], dir).status).toBe(0);
    expect(offhost(['init', '--agent', 'windsurf'], dir).status).toBe(0);
    write(dir, '.gemini/settings.json', '// the team\'s Gemini settings\n{\n  "general": { "vimMode": true } // keep\n}\n');
    const init = offhost(['init', '--agent', 'gemini'], dir);
    expect(init.status, init.stderr).toBe(0);
    expect(existsSync(join(dir, '.opencode/plugins/offhost.js'))).toBe(true);
    // Comments back in, as a user editing the file would leave them.
    write(dir, '.gemini/settings.json', `// edited again\n${readFileSync(join(dir, '.gemini/settings.json'), 'utf8')}`);
    const r = offhost(['uninstall'], dir);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toContain('.github/hooks/offhost.json: removed 1 offhost hook');
    expect(r.stdout).toContain("removed offhost's OpenCode plugin");
    expect(r.stdout).toMatch(/\.gemini\/settings\.json: removed 1 offhost hook.*comments dropped/);
    expect(existsSync(join(dir, '.github/hooks/offhost.json'))).toBe(false);
    expect(existsSync(join(dir, '.opencode/plugins/offhost.js'))).toBe(false);
    expect(existsSync(join(dir, '.cursor'))).toBe(false);
    expect(existsSync(join(dir, '.windsurf'))).toBe(false);
    const gemini = JSON.parse(readFileSync(join(dir, '.gemini/settings.json'), 'utf8'));
    expect(gemini).toEqual({ general: { vimMode: true } });
    expect(offhost(['uninstall'], dir).stdout).toContain('nothing of offhost to remove');
  });

  it('leaves an OpenCode plugin of the same name that offhost did not write', () => {
    const dir = repo();
    write(dir, '.opencode/plugins/offhost.js', 'export const mine = 1;\n');
    expect(offhost(['uninstall'], dir).stdout).toContain('nothing of offhost to remove');
    expect(readFileSync(join(dir, '.opencode/plugins/offhost.js'), 'utf8')).toBe('export const mine = 1;\n');
  });

  it("keeps the user's own hook lines, lint-staged entries and agent hooks, and init's lint-staged line while others use it", () => {
    const dir = repo({ name: 'x', private: true, devDependencies: { husky: '^9', 'lint-staged': '^16' }, 'lint-staged': { '*.ts': 'eslint --fix', [GLOB]: 'prettier --check' } });
    write(dir, '.husky/pre-commit', 'npm test\n');
    write(dir, '.claude/settings.json', `${JSON.stringify({ permissions: { allow: ['Bash(ls)'] }, hooks: { PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: './my-check.sh' }] }] } }, null, 2)}\n`);
    const before = snapshot(dir, ['package.json', '.husky/pre-commit', '.claude/settings.json']);
    expect(offhost(['init'], dir).status).toBe(0);
    expect(offhost(['init', '--agent', 'claude-code'], dir).status).toBe(0);
    const r = offhost(['uninstall'], dir);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toContain('kept `OFFHOST_NO_TTY=1 npx lint-staged --verbose`: other lint-staged entries use it');
    const after = snapshot(dir, ['package.json', '.husky/pre-commit', '.claude/settings.json']);
    expect(after['.claude/settings.json']).toBe(before['.claude/settings.json']);
    const pkg = JSON.parse(after['package.json']!);
    expect(pkg['lint-staged']).toEqual({ '*.ts': 'eslint --fix', [GLOB]: 'prettier --check' });
    expect(after['.husky/pre-commit']).toBe('npm test\n\nOFFHOST_NO_TTY=1 npx lint-staged --verbose\n');
  });

  it('recognises offhost agent hooks by their command, whatever path form, and only those', () => {
    const dir = repo();
    const hooks = [
      "'/usr/bin/node' '/opt/x/node_modules/offhost/dist/offhost.cjs' 'hook' 'claude-code'",
      '/home/u/proj/node_modules/.bin/offhost hook claude-code --mode suggest',
      'npx offhost hook claude-code',
      'node "/srv/offhost/dist/offhost.mjs" hook claude-code',
      './not-offhost.sh hook claude-code',
      'echo offhost hooks',
    ];
    write(dir, '.claude/settings.json', `${JSON.stringify({ hooks: { PreToolUse: [{ matcher: 'Bash', hooks: hooks.map((command) => ({ type: 'command', command })) }] } }, null, 2)}\n`);
    const r = offhost(['uninstall'], dir);
    expect(r.stdout).toContain('.claude/settings.json: removed 4 offhost hooks');
    const left = JSON.parse(readFileSync(join(dir, '.claude/settings.json'), 'utf8'));
    expect(left.hooks.PreToolUse[0].hooks.map((h: { command: string }) => h.command)).toEqual(['./not-offhost.sh hook claude-code', 'echo offhost hooks']);
  });

  it('--dry-run says what would go and writes nothing; a settings file that is not JSON stops it with its name', () => {
    const dir = repo();
    expect(offhost(['init'], dir).status).toBe(0);
    const files = ['package.json', '.husky/pre-commit'];
    const before = snapshot(dir, files);
    const dry = offhost(['uninstall', '--dry-run'], dir);
    expect(dry.stdout).toContain('would remove:');
    expect(dry.stdout).toContain('.husky/pre-commit');
    expect(snapshot(dir, files)).toEqual(before);
    write(dir, '.codex/hooks.json', '{ "hooks": ');
    const bad = offhost(['uninstall'], dir);
    expect(bad.status).toBe(2);
    expect(bad.stderr).toContain('.codex/hooks.json');
    expect(snapshot(dir, files)).toEqual(before);
  });

  it('takes the entry out of a YAML .lintstagedrc, keeping its comments', () => {
    const dir = repo();
    write(dir, '.lintstagedrc.yaml', `# mine\n'*.ts': eslint --fix\n`);
    expect(offhost(['init'], dir).status).toBe(0);
    expect(readFileSync(join(dir, '.lintstagedrc.yaml'), 'utf8')).toContain(CMD);
    expect(offhost(['uninstall'], dir).status).toBe(0);
    expect(readFileSync(join(dir, '.lintstagedrc.yaml'), 'utf8')).toBe(`# mine\n'*.ts': eslint --fix\n`);
  });

  it('init says when an existing lint-staged line would hide the warnings (no --verbose), and leaves that line alone', () => {
    const dir = repo();
    write(dir, '.husky/pre-commit', 'npx lint-staged\n');
    const r = offhost(['init'], dir);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr).toContain('runs lint-staged without --verbose');
    expect(readFileSync(join(dir, '.husky/pre-commit'), 'utf8').startsWith('npx lint-staged\n')).toBe(true);
    // and uninstall gives the hook back as it was
    expect(offhost(['uninstall'], dir).status).toBe(0);
    expect(readFileSync(join(dir, '.husky/pre-commit'), 'utf8')).toBe('npx lint-staged\n');
  });
});

describe('offhost uninstall: what else of offhost it finds, and what it keeps', () => {
  it('empty .github/ and .opencode/ init made go (a .github/ with workflows stays); offhost\'s .git/info/exclude block and its read-only lock views go; ~/.cache/offhost goes; the audit log and refs/offhost/locks are kept and named', async () => {
    const { chmodSync, mkdirSync, writeFileSync } = await import('node:fs');
    const dir = repo();
    const other = repo();
    write(other, '.github/workflows/ci.yml', 'on: push\n');
    for (const d of [dir, other]) {
      expect(offhost(['init', '--agent', 'copilot'], d).status).toBe(0);
      expect(offhost(['init', '--agent', 'opencode'], d).status).toBe(0);
    }
    // What the lock views leave (src/locks/view.ts): the header, view lines, a line of the user's after them.
    const viewSrc = readFileSync(join(import.meta.dirname, '..', '..', 'src', 'locks', 'view.ts'), 'utf8');
    const head = /const EXCLUDE_HEAD = '([^']+)'/.exec(viewSrc)?.[1];
    const { EXCLUDE_HEAD } = await import('../../src/install/uninstall-leftovers.js');
    expect(head, 'the header uninstall looks for is the one the views write').toBe(EXCLUDE_HEAD);
    const view = 'meta/context/notices/vm-active/lock-s.khost1.dev-linux-koda.md';
    write(dir, view, '---\nvm: s.khost1.dev-linux-koda\n---\n');
    chmodSync(join(dir, view), 0o444);
    write(dir, '.git/info/exclude', `# git ls-files --others --exclude-from=.git/info/exclude\n*.swp\n${EXCLUDE_HEAD}\n/${view}\n/build-output/\n`);
    git(dir, 'commit', '-q', '--allow-empty', '-m', 'x');
    git(dir, 'update-ref', 'refs/offhost/locks', 'HEAD');
    const cache = join(home, '.cache', 'offhost');
    mkdirSync(cache, { recursive: true });
    writeFileSync(join(cache, 'layer-abc.json'), '{}');
    const audit = join(home, '.local', 'state', 'offhost', 'audit.jsonl');
    mkdirSync(join(audit, '..'), { recursive: true });
    writeFileSync(audit, '{"decision":"deny"}\n');

    const r = offhost(['uninstall'], dir);
    expect(r.status, r.stderr).toBe(0);
    expect(existsSync(join(dir, '.github'))).toBe(false);
    expect(existsSync(join(dir, '.opencode'))).toBe(false);
    expect(readFileSync(join(dir, '.git/info/exclude'), 'utf8')).toBe('# git ls-files --others --exclude-from=.git/info/exclude\n*.swp\n/build-output/\n');
    expect(existsSync(join(dir, view))).toBe(false);
    expect(existsSync(join(dir, 'meta'))).toBe(false);
    expect(r.stdout).toContain("removed offhost's entries (1 lock view)");
    expect(existsSync(cache)).toBe(false);
    expect(r.stdout).toContain('~/.cache/offhost: removed');
    expect(existsSync(audit)).toBe(true);
    expect(r.stdout).toMatch(/kept: ~\/\.local\/state\/offhost\/audit\.jsonl \(20 bytes: the audit log .* `rm ~\/\.local\/state\/offhost\/audit\.jsonl\*` removes it/);
    expect(git(dir, 'rev-parse', '--verify', 'refs/offhost/locks')).toMatch(/^[0-9a-f]{40}/);
    expect(r.stdout).toContain('kept: refs/offhost/locks (the history of every VM lock');

    const r2 = offhost(['uninstall'], other);
    expect(r2.status, r2.stderr).toBe(0);
    expect(existsSync(join(other, '.github', 'hooks'))).toBe(false);
    expect(readFileSync(join(other, '.github/workflows/ci.yml'), 'utf8')).toBe('on: push\n');
    expect(existsSync(join(other, '.opencode'))).toBe(false);
  });

  it("offhost's caches inside the git directory go, this checkout's and every worktree's (index snapshot, hashes, store id, snapshot record); the lock ref stays", () => {
    const dir = repo();
    git(dir, 'commit', '-q', '--allow-empty', '-m', 'x');
    git(dir, 'update-ref', 'refs/offhost/locks', 'HEAD');
    const wt = `${dir}-wt`;
    git(dir, 'worktree', 'add', '-q', '--detach', wt);
    const wtGit = git(wt, 'rev-parse', '--absolute-git-dir').trim();
    write(dir, '.git/offhost/index-snapshot', 'x');
    write(dir, '.git/offhost/store-id', 'y');
    write(dir, '.git/offhost-snapshot.json', '{}');
    writeFileSync(join(wtGit, 'offhost-snapshot.json'), '{}');
    mkdirSync(join(wtGit, 'offhost'));
    writeFileSync(join(wtGit, 'offhost', 'view-tracked.json'), '{}');
    const r = offhost(['uninstall'], dir);
    expect(r.status, r.stderr).toBe(0);
    for (const p of [join(dir, '.git', 'offhost'), join(dir, '.git', 'offhost-snapshot.json'), join(wtGit, 'offhost'), join(wtGit, 'offhost-snapshot.json')]) expect(existsSync(p), p).toBe(false);
    expect(r.stdout).toMatch(/\.git\/offhost: removed \(offhost's caches/);
    expect(git(dir, 'rev-parse', '--verify', 'refs/offhost/locks')).toMatch(/^[0-9a-f]{40}/);
    expect(existsSync(join(wtGit, 'HEAD'))).toBe(true);
    // Run again: nothing of this kind is left to remove.
    expect(offhost(['uninstall'], dir).stdout).not.toContain('offhost: removed (offhost');
  });
});
