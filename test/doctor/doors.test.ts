// `offhost doctor` against every door `offhost init` can set up, each broken in turn the way users break
// them: one project with offhost installed (node_modules/offhost -> this checkout) and all seven agents
// wired, the shims, the bash, zsh and fish snippets sourced from their rc files, and the $SHELL wrapper.
// Everything passes (exit 0); then each door is broken alone, doctor must exit 1 and name it in a FIX line
// (and --format json must say the same), and the door is restored before the next. Each doctor run
// starts every door (agents, shells, the wrapper, the shims): the default run breaks every other door, and
// each that breaks another with it, and reads doctor's JSON for each (test/helpers/sample.ts); `npm run
// test:full` breaks every door.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { BIN, ROOT, requireBuild } from '../e2e/hooks-helpers.js';
import { sampling } from '../helpers/sample.js';

const AGENTS = ['claude-code', 'codex', 'gemini', 'cursor', 'copilot', 'windsurf', 'opencode'];
const hasFish = spawnSync('sh', ['-c', 'command -v fish']).status === 0;
const hasZsh = spawnSync('sh', ['-c', 'command -v zsh']).status === 0;

// Made when the file loads (the door list below names files in them); filled in beforeAll.
const home = mkdtempSync(join(tmpdir(), 'offhost-doctor-home-'));
const project = join(home, 'proj');
let env: Record<string, string>;

const run = (args: string[], extra: Record<string, string> = {}, cwd = project) => spawnSync(process.execPath, [BIN, ...args], { cwd, env: { ...env, ...extra }, encoding: 'utf8', timeout: 240_000 });
const doctor = (extra: Record<string, string> = {}) => run(['doctor'], extra);
const git = (...args: string[]) => {
  const r = spawnSync('git', args, { cwd: project, env, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`git ${args.join(' ')}: ${r.stderr}`);
};

beforeAll(() => {
  requireBuild();
  mkdirSync(project);
  env = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: home,
    SHELL: '/bin/sh',
    LANG: 'C.UTF-8',
    OFFHOST_ROLE: 'laptop',
    GIT_AUTHOR_NAME: 't',
    GIT_AUTHOR_EMAIL: 't@t',
    GIT_COMMITTER_NAME: 't',
    GIT_COMMITTER_EMAIL: 't@t',
  };
  git('init', '-q', '-b', 'main');
  mkdirSync(join(project, 'node_modules', '.bin'), { recursive: true });
  symlinkSync(ROOT, join(project, 'node_modules', 'offhost'));
  symlinkSync('../offhost/dist/offhost.cjs', join(project, 'node_modules', '.bin', 'offhost'));
  writeFileSync(join(project, '.gitignore'), 'node_modules\n');
  for (const a of AGENTS) expect(run(['init', '--agent', a]).status).toBe(0);
  expect(run(['init', '--shims']).status).toBe(0);
  mkdirSync(join(project, '.husky'));
  writeFileSync(join(project, '.husky', 'pre-commit'), 'npx lint-staged\n');
  git('config', 'core.hooksPath', '.husky/_');
  // The snippets, put in place as hooks/README.md says.
  const cfg = join(home, '.config', 'offhost');
  mkdirSync(cfg, { recursive: true });
  for (const sh of ['bash', 'zsh', 'fish']) writeFileSync(join(cfg, `offhost.${sh}`), run(['init', '--shell', sh]).stdout);
  writeFileSync(join(home, '.bashrc'), '# mine\nalias ll="ls -l"\nsource ~/.config/offhost/offhost.bash\n');
  writeFileSync(join(home, '.zshrc'), 'source "$HOME/.config/offhost/offhost.zsh"\n');
  mkdirSync(join(home, '.config', 'fish'), { recursive: true });
  writeFileSync(join(home, '.config', 'fish', 'config.fish'), 'source ~/.config/offhost/offhost.fish\n');
  git('add', '-A');
  git('commit', '-qm', 'offhost wired');
});
afterAll(() => rmSync(home, { recursive: true, force: true }));

const WRAPPER = join(ROOT, 'hooks', 'offhost-shell');

/** One door, how it is broken, how it is put back, and the FIX line doctor must print. */
interface Door {
  name: string;
  break(): void;
  restore(): void;
  expect: RegExp;
  /** The check id and subject the JSON item must carry. */
  check: string;
  subject?: string;
  /** Other doors that break with it (and must be named too). */
  alsoBroken?: { check: string; subject: string; line: RegExp }[];
  env?: Record<string, string>;
}

function fileDoor(name: string, rel: string, edit: (text: string) => string | null, expectLine: RegExp, check: string, subject?: string): Door {
  const file = join(project, rel);
  let saved = '';
  return {
    name,
    break() {
      saved = readFileSync(file, 'utf8');
      const next = edit(saved);
      if (next === null) unlinkSync(file);
      else writeFileSync(file, next);
    },
    restore() {
      writeFileSync(file, saved);
    },
    expect: expectLine,
    check,
    ...(subject !== undefined ? { subject } : {}),
  };
}

const replaceOnce = (from: string, to: string) => (t: string) => {
  if (!t.includes(from)) throw new Error(`not found: ${from}`);
  return t.replace(from, to);
};

const doors: Door[] = [
  fileDoor('claude-code: settings emptied to {}', '.claude/settings.json', () => '{}\n', /FIX\s+agents\s+claude-code: .claude\/settings.json is there but holds no offhost hook/, 'agents', 'claude-code'),
  fileDoor('codex: the Bash group taken out (only MCP left)', '.codex/hooks.json', (t) => {
    const j = JSON.parse(t);
    j.hooks.PreToolUse = j.hooks.PreToolUse.filter((g: { matcher: string }) => g.matcher !== 'Bash');
    return JSON.stringify(j);
  }, /FIX\s+agents\s+codex: .codex\/hooks.json has no offhost hook for PreToolUse Bash/, 'agents', 'codex'),
  fileDoor('gemini: a stray comma (not JSON)', '.gemini/settings.json', (t) => t.replace('"hooks"', ',"hooks"'), /FIX\s+agents\s+gemini: .gemini\/settings.json is not valid JSON/, 'agents', 'gemini'),
  fileDoor('cursor: hooks.json emptied (zero bytes)', '.cursor/hooks.json', () => '', /FIX\s+agents\s+cursor: .cursor\/hooks.json is there but holds no offhost hook/, 'agents', 'cursor'),
  fileDoor('copilot: an option offhost refuses (every call is then refused)', '.github/hooks/offhost.json', replaceOnce('hook copilot', 'hook copilot --mode nonsense'), /FIX\s+agents\s+copilot: .*`ls` was refused through it/, 'agents', 'copilot'),
  // Still blocks when asked: what is wrong is the watchdog of an older offhost (it spoke before it killed).
  fileDoor('gemini: a hook command an older offhost wrote', '.gemini/settings.json', (t) => {
    const older = t.replace(/\{ f=1; kill -9 \$p; (echo \\"offhost hook gemini gave no answer[^}]*?>&4); \}/, (_m, echo: string) => `{ f=1; ${echo}; kill -9 $p; }`);
    if (older === t) throw new Error('the watchdog was not found in the gemini settings');
    return older;
  }, /FIX\s+agents\s+gemini: .gemini\/settings.json holds a hook command written by another version of offhost/, 'agents', 'gemini'),
  fileDoor('windsurf: the committed file deleted', '.windsurf/hooks.json', () => null, /FIX\s+agents\s+windsurf: .windsurf\/hooks.json is committed but deleted from this work tree/, 'agents', 'windsurf'),
  fileDoor('opencode: the plugin edited to let refusals through', '.opencode/plugins/offhost.js', replaceOnce("throw new Error(String(answer.reason || 'offhost refused this tool call'));", 'return;'), /FIX\s+agents\s+opencode: .*`qemu-system-x86_64 -hda win10.qcow2` was let through by the plugin/, 'agents', 'opencode'),
  {
    name: 'bash snippet: the file it sources deleted',
    break() {
      rmSync(join(home, '.config', 'offhost', 'offhost.bash.saved'), { force: true });
      copyFileSync(join(home, '.config', 'offhost', 'offhost.bash'), join(home, '.config', 'offhost', 'offhost.bash.saved'));
      unlinkSync(join(home, '.config', 'offhost', 'offhost.bash'));
    },
    restore() {
      copyFileSync(join(home, '.config', 'offhost', 'offhost.bash.saved'), join(home, '.config', 'offhost', 'offhost.bash'));
    },
    expect: /FIX\s+shell\s+~\/.bashrc:3 loads .*offhost.bash, which is not there/,
    check: 'shell',
    subject: '~/.bashrc:3',
  },
  ...(hasZsh
    ? [
        {
          name: 'zsh snippet: pointing at an offhost that moved',
          ...(() => {
            const file = join(home, '.config', 'offhost', 'offhost.zsh');
            let saved = '';
            return {
              break() {
                saved = readFileSync(file, 'utf8');
                writeFileSync(file, saved.replace(/^__offhost_cmd=\(.*\)$/m, `__offhost_cmd=(${process.execPath} /opt/moved/offhost/dist/offhost.cjs)`));
              },
              restore() {
                writeFileSync(file, saved);
              },
            };
          })(),
          expect: /FIX\s+shell\s+.*offhost.zsh \(zsh, loaded by ~\/.zshrc:1\) runs .*\/opt\/moved\/offhost\/dist\/offhost.cjs, which did not refuse/,
          check: 'shell',
          subject: '~/.zshrc:1',
        },
      ]
    : []),
  ...(hasFish
    ? [
        {
          name: 'fish snippet: pointing at a node that is gone',
          ...(() => {
            const file = join(home, '.config', 'offhost', 'offhost.fish');
            let saved = '';
            return {
              break() {
                saved = readFileSync(file, 'utf8');
                writeFileSync(file, saved.replace(/^set -g __offhost_cmd '[^']*'/m, "set -g __offhost_cmd '/opt/node-0/bin/node'"));
              },
              restore() {
                writeFileSync(file, saved);
              },
            };
          })(),
          expect: /FIX\s+shell\s+.*offhost.fish \(fish, loaded by ~\/.config\/fish\/config.fish:1\) runs \/opt\/node-0\/bin\/node/,
          check: 'shell',
          subject: '~/.config/fish/config.fish:1',
        },
      ]
    : []),
  {
    name: 'the $SHELL wrapper: its offhost gone (OFFHOST_BIN points nowhere)',
    break() {},
    restore() {},
    env: { SHELL: WRAPPER, OFFHOST_BIN: '/opt/gone/offhost.cjs' },
    expect: /FIX\s+wrapper\s+\$SHELL .*offhost-shell did not refuse `qemu-system-x86_64 -hda win10.qcow2`/,
    check: 'wrapper',
    // Codex starts its hooks with `$SHELL -lc`: through a broken wrapper its hook cannot run either (the
    // wrapper's exit 2 with a reason blocks every call, where its old status 1 let every one through).
    alsoBroken: [{ check: 'agents', subject: 'codex', line: /FIX\s+agents\s+codex: .*`ls` was refused through it \(status 2: offhost-shell: cannot start offhost/ }],
  },
  {
    name: 'shims: one shim deleted',
    ...(() => {
      const file = join(home, '.local', 'share', 'offhost', 'shims', 'make');
      let saved = '';
      return {
        break() {
          saved = readFileSync(file, 'utf8');
          unlinkSync(file);
        },
        restore() {
          writeFileSync(file, saved, { mode: 0o755 });
        },
      };
    })(),
    expect: /FIX\s+shims\s+.*the shims of make are gone/,
    check: 'shims',
  },
];

const sample = sampling('full');
const jsonDoors = new Set(sample.pick(doors, 2, { always: (d) => d.alsoBroken !== undefined }));
/** The broken doors the default run breaks: those it also reads as JSON; `npm run test:full` breaks every one. */
const brokenDoors = sample.full ? doors : doors.filter((d) => jsonDoors.has(d));

describe('offhost doctor finds every broken door init can set up', () => {
  it('everything wired: every door is checked by running it, each agent once, exit 0', () => {
    const r = doctor({ SHELL: WRAPPER });
    expect(r.status, r.stdout + r.stderr).toBe(0);
    for (const a of AGENTS) {
      const lines = r.stdout.split('\n').filter((l) => new RegExp(`^\\S+\\s+agents\\s+${a}:`).test(l));
      expect(lines, a).toHaveLength(1);
      expect(lines[0], a).toMatch(/^ok\s/);
    }
    expect(r.stdout).toMatch(/ok\s+agents\s+claude-code: .claude\/settings.json: blocks `qemu-system-x86_64 -hda win10.qcow2`, lets `ls` through/);
    expect(r.stdout).toMatch(/ok\s+shell\s+.*offhost.bash \(bash, loaded by ~\/.bashrc:3\): refuses/);
    if (hasZsh) expect(r.stdout).toMatch(/ok\s+shell\s+.*offhost.zsh \(zsh/);
    if (hasFish) expect(r.stdout).toMatch(/ok\s+shell\s+.*offhost.fish \(fish/);
    expect(r.stdout).toMatch(/ok\s+wrapper\s+\$SHELL .*offhost-shell: refuses/);
    expect(r.stdout).toMatch(/ok\s+shims\s+.*`qemu-system-x86_64 -hda win10.qcow2` is refused through them/);
    expect(r.stdout).toContain('nothing to fix on this laptop');
  }, 240_000);

  for (const d of brokenDoors) {
    it(`${d.name}: named in a FIX line, exit 1${jsonDoors.has(d) ? ' (and in --format json)' : ''}`, () => {
      d.break();
      try {
        const r = doctor(d.env);
        expect(r.status, r.stdout).toBe(1);
        expect(r.stdout).toMatch(d.expect);
        for (const o of d.alsoBroken ?? []) expect(r.stdout).toMatch(o.line);
        // Only that door is broken (and what breaks with it).
        const also = d.alsoBroken ?? [];
        expect(r.stdout.split('\n').filter((l) => l.startsWith('FIX')), r.stdout).toHaveLength(1 + also.length);
        if (!jsonDoors.has(d)) return;
        const j = JSON.parse(run(['doctor', '--format', 'json'], d.env ?? {}).stdout) as { ok: boolean; problems: number; items: { check: string; subject?: string; ok: boolean }[] };
        expect(j.ok).toBe(false);
        expect(j.problems).toBe(1 + also.length);
        expect(j.items.filter((i) => !i.ok)).toEqual(
          expect.arrayContaining([expect.objectContaining({ check: d.check, ...(d.subject !== undefined ? { subject: d.subject } : {}) }), ...also.map((o) => expect.objectContaining({ check: o.check, subject: o.subject }))]),
        );
      } finally {
        d.restore();
      }
    }, 240_000);
  }

  it('the JSON lists the checks and one item per agent', () => {
    const j = JSON.parse(run(['doctor', '--format', 'json']).stdout) as { checks: { id: string }[]; items: { check: string; subject?: string }[] };
    expect(j.checks.map((c) => c.id)).toEqual(['config', 'checkout', 'routes', 'agents', 'shell', 'wrapper', 'shims', 'husky', 'shared', 'locks']);
    expect(j.items.filter((i) => i.check === 'agents').map((i) => i.subject)).toEqual(AGENTS);
    expect(run(['doctor', '--format', 'xml']).status).toBe(2);
  }, 240_000);
});
