// The per-user parts of `offhost init` (the shims folder, an agent's personal settings) are shared by every
// repository of the user: `offhost uninstall` in one repository takes out that repository's wiring, and the
// shared thing only with the last repository that asked for it (or with --shared), and says what it kept and
// why. Real commands (the built CLI), real git repositories, a temporary HOME; a symlinked checkout counts
// as the same repository.
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { git, initRepo, offhost as run, tempDir, write } from '../lint/helpers.js';
import { sampling } from '../helpers/sample.js';

/** Tests that repeat what a kept test does end to end run in `npm run test:full` (test/helpers/sample.ts). */
const sample = sampling('full');

let home: string;
const env = () => ({ HOME: home, XDG_DATA_HOME: '', XDG_STATE_HOME: '', OFFHOST_SHIMS_DIR: '', OFFHOST_STATE_DIR: '', CLAUDE_PROJECT_DIR: '' });
const offhost = (args: string[], cwd: string) => run(args, cwd, env());
const ok = (args: string[], cwd: string) => {
  const r = offhost(args, cwd);
  expect(r.status, `offhost ${args.join(' ')}\n${r.stdout}\n${r.stderr}`).toBe(0);
  return r;
};
const shims = () => join(home, '.local', 'share', 'offhost', 'shims');
const ledgerFile = () => join(home, '.local', 'state', 'offhost', 'installs.json');
const ledger = () => JSON.parse(readFileSync(ledgerFile(), 'utf8')) as { wiring: { kind: string; path: string; repositories: string[] }[] };
const usersOfShims = () => ledger().wiring.find((w) => w.kind === 'shims')?.repositories ?? [];

beforeEach(() => {
  home = tempDir('offhost-home-');
});

describe('uninstall and the shims folder every repository of the user shares', () => {
  it('the first repository out keeps the folder for the other; the last one out removes it, its record and offhost\'s empty folders', () => {
    const a = initRepo('offhost-repo-a-');
    const b = initRepo('offhost-repo-b-');
    // b is worked on through a symbolic link: the same repository
    const bLink = join(tempDir('offhost-link-'), 'b');
    symlinkSync(b, bLink);
    ok(['init', '--shims', '--agent', 'claude-code'], a);
    const initB = ok(['init', '--shims'], bLink);
    expect(initB.stdout).toContain('recorded in ~/.local/state/offhost/installs.json');
    ok(['init', '--shims'], b); // again, by its real path: still one entry
    expect(usersOfShims()).toEqual([a, b]);
    const programs = readdirSync(shims()).filter((f) => !f.startsWith('.'));
    expect(programs.length).toBeGreaterThan(10);

    const outA = ok(['uninstall'], a);
    expect(outA.stdout).toContain('.claude/settings.json: removed the SessionStart hook that put the shims on PATH');
    expect(outA.stdout).toContain(`kept: ~/.local/share/offhost/shims (the shims folder, per user): still used by ${b}`);
    expect(existsSync(join(a, '.claude'))).toBe(false);
    expect(readdirSync(shims()).filter((f) => !f.startsWith('.'))).toEqual(programs);
    expect(usersOfShims()).toEqual([b]);

    const outB = ok(['uninstall'], bLink);
    expect(outB.stdout).toContain('~/.local/share/offhost/shims (the shims folder, per user; only this repository used it): removed the');
    expect(existsSync(shims())).toBe(false);
    expect(existsSync(ledgerFile())).toBe(false);
    // offhost's own folders under ~/.local went with them; ~/.local itself is the user's
    expect(existsSync(join(home, '.local', 'share', 'offhost'))).toBe(false);
    expect(existsSync(join(home, '.local', 'state', 'offhost'))).toBe(false);
    expect(existsSync(join(home, '.local', 'share'))).toBe(true);
    expect(ok(['uninstall'], b).stdout).toContain('nothing of offhost to remove');
  });

  sample.fullOnly('a repository that no longer exists does not hold the folder; a file of the user\'s in it stays, with the folder', () => {
    const a = initRepo('offhost-repo-a-');
    const gone = initRepo('offhost-repo-gone-');
    ok(['init', '--shims'], gone);
    ok(['init', '--shims'], a);
    rmSync(gone, { recursive: true, force: true });
    writeFileSync(join(shims(), 'NOTES.txt'), 'mine\n');
    const out = ok(['uninstall'], a);
    expect(out.stdout).toContain('(the shims folder, per user; only this repository used it');
    expect(out.stdout).toContain(`${gone} no longer exists`);
    expect(readdirSync(shims())).toEqual(['NOTES.txt']);
    expect(existsSync(ledgerFile())).toBe(false);
  });

  it('--shared removes the folder while another repository uses it, and names that repository', () => {
    const a = initRepo('offhost-repo-a-');
    const b = initRepo('offhost-repo-b-');
    ok(['init', '--shims'], a);
    ok(['init', '--shims', '--agent', 'claude-code'], b);
    const dry = ok(['uninstall', '--shared', '--dry-run'], a);
    expect(dry.stdout).toContain('would remove:');
    expect(existsSync(shims())).toBe(true);
    const out = ok(['uninstall', '--shared'], a);
    expect(out.stdout).toContain(`--shared: ${b} still uses it; their Claude Code SessionStart hooks would write the shims again: run \`offhost uninstall\` there`);
    expect(existsSync(shims())).toBe(false);
    // the shared thing is gone, so is its record; b's own wiring is b's to uninstall
    expect(existsSync(ledgerFile())).toBe(false);
    expect(readFileSync(join(b, '.claude', 'settings.json'), 'utf8')).toContain('shim env --claude-env-file');
  });

  it('shims no init recorded for this repository (`offhost shim install`) are named and left, unless --shared', () => {
    const a = initRepo('offhost-repo-a-');
    ok(['shim', 'install'], a);
    const out = ok(['uninstall'], a);
    expect(out.stdout).toContain('not touched: ~/.local/share/offhost/shims (the shims folder, per user): not set up for this repository by `offhost init`; `offhost uninstall --shared` removes it');
    expect(existsSync(join(shims(), '.offhost-shims'))).toBe(true);
    expect(ok(['uninstall', '--shared'], a).stdout).toContain('--shared: no repository had recorded it');
  });

  sample.fullOnly('shims set up only for a repository that is gone: named with it, left unless --shared', () => {
    const a = initRepo('offhost-repo-a-');
    const gone = initRepo('offhost-repo-gone-');
    ok(['init', '--shims'], gone);
    rmSync(gone, { recursive: true, force: true });
    expect(ok(['uninstall', '--dry-run'], a).stdout).toContain(`not set up for this repository by \`offhost init\` (set up for ${gone}, which no longer exists)`);
    expect(existsSync(join(shims(), '.offhost-shims'))).toBe(true);
    ok(['uninstall', '--shared'], a);
    expect(existsSync(shims())).toBe(false);
    expect(existsSync(shims())).toBe(false);
  });
});

describe("uninstall and an agent's personal settings", () => {
  // offhost not installed in the project (no node_modules/.bin/offhost): init writes the personal file.
  it("takes out offhost's hook and only that, and only with the last repository that asked for it", () => {
    const a = initRepo('offhost-repo-a-');
    const b = initRepo('offhost-repo-b-');
    const personal = join(home, '.codex', 'hooks.json');
    const mine = { type: 'command', command: '~/bin/my-codex-check' };
    write(home, '.codex/hooks.json', `${JSON.stringify({ hooks: { PreToolUse: [{ matcher: 'Bash', hooks: [mine] }] } }, null, 2)}\n`);
    const before = readFileSync(personal, 'utf8');
    ok(['init', '--agent', 'codex'], a);
    ok(['init', '--agent', 'codex'], b);
    expect(readFileSync(personal, 'utf8')).toContain('hook codex');
    const outA = ok(['uninstall'], a);
    expect(outA.stdout).toContain(`kept: ~/.codex/hooks.json (codex's personal settings, per user): still used by ${b}`);
    expect(readFileSync(personal, 'utf8')).toContain('hook codex');
    const outB = ok(['uninstall'], b);
    expect(outB.stdout).toMatch(/~\/\.codex\/hooks\.json \(codex's personal settings, per user; only this repository used it\): removed 2 offhost hooks\n/);
    // the user's own hook as it was (the group offhost added for mcp__.* went with offhost's entry)
    expect(JSON.parse(readFileSync(personal, 'utf8'))).toEqual(JSON.parse(before));
  });

  it.each([
    ['gemini', '.gemini/settings.json'],
    ['cursor', '.cursor/hooks.json'],
    ['windsurf', '.codeium/windsurf/hooks.json'],
    ['opencode', '.config/opencode/plugins/offhost.js'],
  ])('%s: a personal file left empty goes, with the folder init made for it', (agent, rel) => {
    const a = initRepo('offhost-repo-a-');
    ok(['init', '--agent', agent], a);
    expect(existsSync(join(home, rel))).toBe(true);
    expect(ok(['uninstall'], a).stdout).toContain(`~/${rel} (${agent}'s personal settings, per user; only this repository used it): removed`);
    expect(existsSync(join(home, rel))).toBe(false);
    expect(existsSync(join(home, rel, '..'))).toBe(false);
  });
});

describe('uninstall and the shell integration', () => {
  it('names the rc lines and the snippet file (the user put them there), and edits none of them', () => {
    const a = initRepo('offhost-repo-a-');
    ok(['init', '--shims'], a);
    const snippet = ok(['init', '--shell', 'bash'], a).stdout;
    mkdirSync(join(home, '.config', 'offhost'), { recursive: true });
    writeFileSync(join(home, '.config', 'offhost', 'offhost.bash'), snippet);
    const rc = `# my rc\nexport EDITOR=vi\n# offhost\n. ~/.config/offhost/offhost.bash\ncase ":$PATH:" in *:'${shims()}':*) ;; *) export PATH='${shims()}':"$PATH" ;; esac\n`;
    writeFileSync(join(home, '.bashrc'), rc);
    // the lines `init --shims --agent codex` prints for Codex's config.toml, pasted by the user
    const toml = `model = "o3"\n[shell_environment_policy]\nset = { PATH = "${shims()}:/usr/bin:/bin" }\n`;
    write(home, '.codex/config.toml', toml);
    const out = ok(['uninstall'], a);
    expect(out.stdout).toContain('not touched: ~/.config/offhost/offhost.bash (the bash integration, per user');
    expect(out.stdout).toContain('not touched: ~/.bashrc:4: . ~/.config/offhost/offhost.bash (your line; init never edits this file): remove it to stop it');
    expect(out.stdout).toContain('not touched: ~/.bashrc:5: case');
    expect(out.stdout).toContain('the shims folder it puts on PATH is gone, so it does nothing now');
    expect(out.stdout).not.toContain('~/.bashrc:3'); // a comment
    expect(out.stdout).toMatch(/not touched: ~\/\.codex\/config\.toml:3: set = \{ PATH = .*the shims folder it puts on PATH is gone/);
    expect(readFileSync(join(home, '.bashrc'), 'utf8')).toBe(rc);
    expect(readFileSync(join(home, '.codex', 'config.toml'), 'utf8')).toBe(toml);
    expect(readFileSync(join(home, '.config', 'offhost', 'offhost.bash'), 'utf8')).toBe(snippet);
    // the whole snippet pasted into ~/.zshrc: named as one range, not line by line
    writeFileSync(join(home, '.zshrc'), `export A=1\n${ok(['init', '--shell', 'zsh'], a).stdout}`);
    const zsh = ok(['uninstall'], a).stdout.split('\n').filter((l) => l.includes('~/.zshrc'));
    expect(zsh).toHaveLength(1);
    expect(zsh[0]).toMatch(/^not touched: ~\/\.zshrc: lines \d+-\d+ mention offhost \(\d+ lines: the pasted shell integration\?/);
  });
});

describe('the record of per-user installs fails closed', () => {
  it('a record offhost cannot read stops init and uninstall with its name, and nothing is changed', () => {
    const a = initRepo('offhost-repo-a-');
    git(a, 'config', '--unset', 'core.hooksPath');
    write(a, 'package.json', '{ "name": "a", "private": true, "devDependencies": { "husky": "^9", "lint-staged": "^16" } }\n');
    ok(['init', '--shims'], a);
    ok(['init'], a);
    writeFileSync(ledgerFile(), '{ "version": 1, "wiring": [ ');
    const hook = readFileSync(join(a, '.husky', 'pre-commit'), 'utf8');
    const un = offhost(['uninstall'], a);
    expect(un.status).toBe(2);
    expect(un.stderr).toContain('installs.json');
    expect(un.stderr).toContain('nothing was changed');
    expect(readFileSync(join(a, '.husky', 'pre-commit'), 'utf8')).toBe(hook);
    expect(existsSync(join(shims(), '.offhost-shims'))).toBe(true);
    const init = offhost(['init', '--agent', 'claude-code'], a);
    expect(init.status).toBe(2);
    expect(init.stderr).toContain('installs.json');
    expect(existsSync(join(a, '.claude'))).toBe(false);
    writeFileSync(ledgerFile(), '{ "version": 2 }\n');
    expect(offhost(['uninstall'], a).stderr).toContain("is not offhost's record of per-user installs");
  });
});

describe('doctor reads the record of per-user installs', () => {
  it('names who uses each shared thing, a recorded repository that is gone, and a shared thing removed behind its back', () => {
    const a = initRepo('offhost-repo-a-');
    const gone = initRepo('offhost-repo-gone-');
    ok(['init', '--shims'], a);
    ok(['init', '--shims'], gone);
    rmSync(gone, { recursive: true, force: true });
    let r = offhost(['doctor'], a);
    expect(r.stdout).toMatch(new RegExp(`ok\\s+shared\\s+${shims()} \\(the shims folder, per user\\): 1 repository uses it; recorded for ${gone}, which no longer exists`));
    rmSync(shims(), { recursive: true, force: true });
    r = offhost(['doctor'], a);
    expect(r.status).toBe(1);
    expect(r.stdout).toMatch(/FIX\s+shared .*\(the shims folder\) is gone, but 1 repository uses it/);
    expect(r.stdout).toContain('run `offhost init --shims` again in one of them');
  });
});

describe('the record under concurrent inits', () => {
  it('eight repositories running init --shims at once are all recorded', async () => {
    const { spawn } = await import('node:child_process');
    const { bin, cleanEnv } = await import('../lint/helpers.js');
    const repos = Array.from({ length: 8 }, (_, i) => initRepo(`offhost-repo-${i}-`));
    const codes = await Promise.all(
      repos.map(
        (r) =>
          new Promise<number | null>((done) => {
            const c = spawn(process.execPath, [bin, 'init', '--shims'], { cwd: r, env: cleanEnv(env()), stdio: 'ignore' });
            c.on('exit', (code) => done(code));
          }),
      ),
    );
    expect(codes).toEqual(repos.map(() => 0));
    expect([...usersOfShims()].sort()).toEqual([...repos].sort());
    expect(existsSync(`${ledgerFile()}.lock`)).toBe(false);
  });

  sample.fullOnly('uninstall in a HOME without any record makes no folder there', () => {
    const a = initRepo('offhost-repo-a-');
    ok(['uninstall'], a);
    expect(existsSync(join(home, '.local'))).toBe(false);
  });
});

describe('outside a git repository', () => {
  sample.fullOnly('init --shims records the folder it ran in, and uninstall there takes it out', () => {
    const plain = tempDir('offhost-plain-');
    ok(['init', '--shims'], plain);
    expect(usersOfShims()).toEqual([plain]);
    expect(ok(['uninstall'], plain).stdout).toContain('(the shims folder, per user; only this repository used it)');
    expect(existsSync(shims())).toBe(false);
  });
});
