// Every checkout of the monorepo is guarded (issue 20): every door, in a table of layouts a developer
// running several agents has on one laptop: the canonical checkout (~/dev/koder), a Claude Code worktree
// inside it (.claude/worktrees/NAME), a `git worktree add` beside it, a second clone, a symlink to that
// clone, a clone in a path with a space, and a bare repository with worktrees. In each, heavy work (the
// Koda engine build, spelled four ways) is rerouted, light work is allowed, the stand-in heavy programs
// record where they ran, and `offhost run` runs that checkout's own tree or refuses with the fix.
//
// Every (layout, line) pair is judged in process by the guard the executable loads; the doors, each a
// child process (several with the VM stand-ins behind them), run a fixed sample in the default run: the
// check pairs every CHECK_STRIDE-th, every agent in the canonical checkout and two in turn in the others,
// and the per-layout doors alternate layouts, so each layout and each kind (seen by the VM, or refused)
// meets several doors (test/helpers/sample.ts). `npm run test:full` runs every door in every layout.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BIN, SHELL, type Tree, clearHeavy, heavyRuns, laptopEnv, makeTree } from '../shims/tree.js';
import { loadGuard } from '../../src/config/load-guard.js';
import { sampling } from '../helpers/sample.js';

const sample = sampling('full');
const CHECK_STRIDE = 6;
/** The per-layout doors take every LAYOUT_STRIDE-th layout, from their own offsets. */
const LAYOUT_STRIDE = 3;

interface Layout {
  name: string;
  /** The checkout's top as the user reaches it (a symlink stays a symlink). */
  top: string;
  /** Its physical path. */
  physical: string;
  /** The VM's shared mount (the canonical checkout) shows it: offhost run runs there; otherwise it refuses. */
  seenByVm: boolean;
}

const KODA = 'engines/lang/koda';
const PACKAGE_JSON = `{
  "name": "koder",
  "scripts": {
    "koda": "make -C engines/lang/koda build-safe",
    "koda-cd": "cd engines/lang/koda && make build",
    "dry": "make -n -C engines/lang/koda build-safe",
    "clean": "make -C engines/lang/koda clean",
    "e2e": "npx playwright test",
    "lint": "eslint ."
  }
}
`;

/** Heavy lines (rerouted by koda-make), each with the folder of the checkout it starts in. */
const HEAVY: [string, string][] = [
  [KODA, 'make build-safe'],
  ['', 'make -C engines/lang/koda build-safe'],
  ['', 'cd engines/lang/koda && make build'],
  [KODA, 'sudo nice make kasm'],
  ['', 'npm run koda'],
  [KODA, 'bash build.sh'],
];
/** Light lines, allowed in every checkout. */
const LIGHT: [string, string][] = [
  [KODA, 'make -n build-safe'],
  [KODA, 'make clean'],
  ['', 'git status'],
  ['', 'ls engines/lang/koda'],
  ['', 'npm run clean'],
  ['', 'npm run dry'],
];

let t: Tree;
let layouts: Layout[];
const LAYOUT_NAMES = [
  'the canonical checkout',
  'a worktree inside it',
  'a worktree beside it',
  'a clone elsewhere',
  'a symlink to the clone',
  'a symlink to the canonical checkout',
  'a clone in a path with a space',
  "a bare repository's worktree",
];

function git(cwd: string, ...args: string[]): string {
  const r = spawnSync('git', args, { cwd, encoding: 'utf8', env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: t.home } });
  if (r.status !== 0) throw new Error(`git ${args.join(' ')} in ${cwd}: ${r.stderr}`);
  return r.stdout;
}

function offhost(args: string[], cwd: string, extra: Record<string, string> = {}, input?: string) {
  return spawnSync(process.execPath, [BIN, ...args], { cwd, env: laptopEnv(t, { PWD: cwd, ...extra }), encoding: 'utf8', timeout: 60_000, ...(input !== undefined ? { input } : {}) });
}

const at = (l: Layout, rel: string) => (rel ? join(l.top, rel) : l.top);
const physicalAt = (l: Layout, rel: string) => (rel ? join(l.physical, rel) : l.physical);

beforeAll(() => {
  t = makeTree('plain');
  writeFileSync(join(t.root, 'package.json'), PACKAGE_JSON);
  writeFileSync(join(t.koda, 'build.sh'), '#!/bin/sh\nmake build-safe\n');
  git(t.root, 'add', '-A');
  git(t.root, 'commit', '-q', '-m', 'scripts');
  const home = t.home;
  git(t.root, 'worktree', 'add', '-q', '-b', 'agent-1', '.claude/worktrees/agent-1');
  git(t.root, 'worktree', 'add', '-q', '-b', 'feature', join(home, 'dev', 'koder-feature'));
  mkdirSync(join(home, 'src'));
  git(home, 'clone', '-q', t.root, join(home, 'src', 'koder'));
  symlinkSync(join(home, 'src', 'koder'), join(home, 'koder-link'));
  mkdirSync(join(home, 'My Projects'));
  git(home, 'clone', '-q', t.root, join(home, 'My Projects', 'koder'));
  mkdirSync(join(home, 'bare'));
  git(home, 'clone', '-q', '--bare', t.root, join(home, 'bare', 'koder.git'));
  git(join(home, 'bare', 'koder.git'), 'worktree', 'add', '-q', '-b', 'task', join(home, 'bare', 'task'));
  const l = (name: string, top: string, seenByVm = false): Layout => ({ name, top, physical: realpathSync(top), seenByVm });
  const [canonical, inside, beside, clone, link, canonicalLink, space, bare] = LAYOUT_NAMES as [string, string, string, string, string, string, string, string];
  symlinkSync(t.root, join(home, 'koder-canonical'));
  layouts = [
    l(canonical, t.root, true),
    l(inside, join(t.root, '.claude', 'worktrees', 'agent-1'), true),
    l(beside, join(home, 'dev', 'koder-feature')),
    l(clone, join(home, 'src', 'koder')),
    l(link, join(home, 'koder-link')),
    l(canonicalLink, join(home, 'koder-canonical'), true),
    l(space, join(home, 'My Projects', 'koder')),
    l(bare, join(home, 'bare', 'task')),
  ];
  expect(layouts[4]!.physical).toBe(layouts[3]!.physical);
  expect(layouts[5]!.physical).toBe(t.root);
});
afterAll(() => t.cleanup());

describe('check and explain', () => {
  it('reroute heavy work and allow light work in every checkout, the route staying in that checkout', { timeout: 400_000 }, () => {
    const pairs = layouts.flatMap((l) => [...HEAVY.map(([rel, line]) => ({ l, rel, line, heavy: true })), ...LIGHT.map(([rel, line]) => ({ l, rel, line, heavy: false }))]);
    expect(pairs.length).toBe(layouts.length * (HEAVY.length + LIGHT.length));
    // Every pair in process, by the guard `offhost check` loads there.
    for (const { l, rel, line, heavy } of pairs) {
      const cwd = at(l, rel);
      const env = laptopEnv(t, { PWD: cwd });
      const v = loadGuard({ cwd, env }).classify(line, { cwd, env });
      if (heavy) {
        expect([v.decision, v.rule], `${l.name}: ${line}: ${v.reason}`).toEqual(['reroute', 'koda-make']);
        // The VM is sent to this checkout's own directory, never to the canonical checkout's files.
        expect(v.route?.cwd, `${l.name}: ${line}`).toBe(physicalAt(l, rel));
      } else expect(v.decision, `${l.name}: ${line}: ${v.reason}`).toBe('allow');
    }
    // The executable on a sample of them (all with npm run test:full).
    for (const { l, rel, line, heavy } of sample.pick(pairs, CHECK_STRIDE)) {
      const r = offhost(['check', '--json', line], at(l, rel));
      if (!heavy) {
        expect(r.status, `${l.name}: ${line}: ${r.stdout}${r.stderr}`).toBe(0);
        continue;
      }
      const v = JSON.parse(r.stdout || '{}');
      expect(r.status, `${l.name}: ${line}: ${r.stderr}`).toBe(3);
      expect(v.rule).toBe('koda-make');
      expect(v.route.cwd, `${l.name}: ${line}`).toBe(physicalAt(l, rel));
    }
    // Outside every checkout the same line is light (the rule is bound to the engine's folder).
    expect(offhost(['check', 'make build-safe'], t.elsewhere).status).toBe(0);
  });

  it('explain says which checkout it sees, and how the rules see the directory', () => {
    for (const l of layouts) {
      const r = offhost(['explain', '--json', 'make build-safe'], at(l, KODA));
      expect(r.status, r.stderr).toBe(3);
      const where = JSON.parse(r.stdout).where;
      expect(where.checkout.top, l.name).toBe(l.physical);
      expect(where.root).toBe(t.root);
      expect(where.ruleCwd, l.name).toBe(l.physical === t.root ? null : join(t.root, KODA));
      expect(where.boundRules).toContain('koda-make');
      const text = offhost(['explain', 'make build-safe'], at(l, KODA)).stdout;
      expect(text).toContain(`monorepo checkout: ${l.physical} (`);
    }
    // init says it too, so a new user learns whether the policy applies where they set it up.
    const init = offhost(['init', '--agent', 'claude-code', '--project', layouts[2]!.top], t.home);
    expect(init.status, init.stderr).toBe(0);
    expect(init.stdout).toContain(`offhost sees monorepo checkout ${layouts[2]!.physical} (holds ${KODA}`);
    const outside = offhost(['explain', 'make build-safe'], t.elsewhere);
    expect(outside.status).toBe(0);
    expect(outside.stdout).toContain('monorepo checkout: none');
  });
});

/** The event each agent sends for a shell command, with the directory it reports. */
function agentEvent(agent: string, command: string, cwd: string): string {
  switch (agent) {
    case 'claude-code':
      return JSON.stringify({ session_id: 's1', cwd, hook_event_name: 'PreToolUse', tool_name: 'Bash', tool_input: { command } });
    case 'codex':
      return JSON.stringify({ session_id: 's1', turn_id: 't1', cwd, hook_event_name: 'PreToolUse', model: 'gpt-5-codex', tool_name: 'Bash', tool_input: { command } });
    case 'gemini':
      return JSON.stringify({ session_id: 's1', cwd, hook_event_name: 'BeforeTool', tool_name: 'run_shell_command', tool_input: { command } });
    case 'cursor':
      return JSON.stringify({ hook_event_name: 'beforeShellExecution', conversation_id: 'c1', generation_id: 'g1', workspace_roots: [cwd], command, cwd });
    case 'copilot':
      return JSON.stringify({ timestamp: 1704614400000, cwd, toolName: 'bash', toolArgs: JSON.stringify({ command }) });
    case 'windsurf':
      return JSON.stringify({ agent_action_name: 'pre_run_command', trajectory_id: 'tr1', execution_id: 'e1', tool_info: { command_line: command, cwd } });
    case 'opencode':
      return JSON.stringify({ event: 'tool.execute.before', tool: 'bash', sessionID: 'ses1', callID: 'c1', args: { command }, cwd });
    default:
      throw new Error(agent);
  }
}
const AGENTS = ['claude-code', 'codex', 'gemini', 'cursor', 'copilot', 'windsurf', 'opencode'];

describe('the seven agent hooks, as child processes', () => {
  it('refuse the heavy build with the rewrite, and let light work through, in every checkout', { timeout: 600_000 }, () => {
    // Agents report getcwd() (physical); a shell-started one may report the symlinked path.
    const places = layouts.flatMap((l) => [...new Set([at(l, KODA), physicalAt(l, KODA)])].map((dir) => ({ l, dir })));
    const elsewhere = new Set<string>();
    places.forEach(({ l, dir }, k) => {
      // Every agent in the canonical checkout; in the others two in turn (every agent with npm run test:full).
      const agents = sample.full || l === layouts[0] ? AGENTS : [AGENTS[k % AGENTS.length]!, AGENTS[(k + 3) % AGENTS.length]!];
      for (const agent of agents) {
        if (l !== layouts[0]) elsewhere.add(agent);
        const heavy = offhost(['hook', agent], t.home, {}, agentEvent(agent, 'make build-safe', dir));
        expect(`${heavy.stdout}${heavy.stderr}`, `${agent} in ${l.name} (${dir})`).toContain('koda-make');
        expect(`${heavy.stdout}${heavy.stderr}`).toContain(" run -- 'make build-safe'");
        const light = offhost(['hook', agent], t.home, {}, agentEvent(agent, 'make clean', dir));
        expect(light.status, `${agent} light in ${l.name}: ${light.stderr}`).toBe(0);
        expect(`${light.stdout}${light.stderr}`, `${agent} light in ${l.name}`).not.toContain('offhost:');
      }
    });
    // Each agent met other checkouts than the canonical one too.
    expect([...elsewhere].sort()).toEqual([...AGENTS].sort());
  });
});

/** What a rerouted heavy line did: ran on the VM in this checkout, or was refused as the VM cannot see it. */
function expectRerouted(l: Layout, r: { status: number | null; stderr: string }, what: string) {
  const runs = heavyRuns(t);
  if (l.seenByVm) {
    expect(r.status, `${what} in ${l.name}: ${r.stderr}`).toBe(0);
    expect(runs.map((h) => [h.prog, h.laptop, h.cwd]), `${what} in ${l.name}`).toEqual([['make', false, physicalAt(l, KODA)]]);
  } else {
    // Honest refusal, with offhost's own status and the fix; nothing ran anywhere.
    expect(r.status, `${what} in ${l.name}: ${r.stderr}`).toBe(245);
    expect(r.stderr).toContain('cannot see this checkout');
    expect(r.stderr).toContain('sync: rsync');
    expect(runs, `${what} in ${l.name}`).toEqual([]);
  }
}

describe('offhost run, the $SHELL wrapper, the shims and the snippets run the build on the VM or refuse', () => {
  it.each(sample.pick(LAYOUT_NAMES, LAYOUT_STRIDE))('offhost run and the $SHELL wrapper in %s', (name) => {
    {
      const l = layouts.find((x) => x.name === name)!;
      clearHeavy(t);
      expectRerouted(l, offhost(['run', '--', 'make build-safe'], at(l, KODA), { OFFHOST_SESSION: 'checkouts-run' }), 'offhost run');
      clearHeavy(t);
      const w = spawnSync(SHELL, ['-c', 'make build-safe'], { cwd: at(l, KODA), env: laptopEnv(t, { PWD: at(l, KODA), SHELL, OFFHOST_SESSION: 'checkouts-shell' }), encoding: 'utf8', timeout: 60_000 });
      expectRerouted(l, w, '$SHELL -c');
      clearHeavy(t);
      const light = spawnSync(SHELL, ['-c', 'make clean'], { cwd: at(l, KODA), env: laptopEnv(t, { PWD: at(l, KODA), SHELL }), encoding: 'utf8', timeout: 60_000 });
      expect(light.status, light.stderr).toBe(0);
      expect(heavyRuns(t).map((h) => [h.prog, h.laptop, h.cwd])).toEqual([['make', true, physicalAt(l, KODA)]]);
    }
  }, 400_000);

  it('the exec-time shims (a plain bash with the shims first on PATH): the fast path never skips another checkout\'s engine', { timeout: 400_000 }, () => {
    expect(offhost(['shim', 'install'], t.home).status).toBe(0);
    for (const l of sample.pick(layouts, LAYOUT_STRIDE, { offset: 1 })) {
      const env = laptopEnv(t, { PWD: at(l, KODA), OFFHOST_SESSION: 'checkouts-shim' });
      env.PATH = `${t.shims}:${env.PATH}`;
      clearHeavy(t);
      const r = spawnSync('bash', ['-c', 'make build-safe'], { cwd: at(l, KODA), env, encoding: 'utf8', timeout: 60_000 });
      expect(heavyRuns(t).filter((h) => h.laptop), `${l.name}: ${r.stderr}`).toEqual([]);
      expectRerouted(l, r, 'shim');
      clearHeavy(t);
      const light = spawnSync('bash', ['-c', 'make clean'], { cwd: at(l, KODA), env, encoding: 'utf8', timeout: 60_000 });
      expect(light.status, light.stderr).toBe(0);
      expect(heavyRuns(t).map((h) => [h.prog, h.laptop])).toEqual([['make', true]]);
    }
    expect(offhost(['shim', 'remove'], t.home).status).toBe(0);
  });

  it('the bash snippet at a real interactive bash', { timeout: 400_000 }, () => {
    const snippet = offhost(['init', '--shell', 'bash'], t.home);
    expect(snippet.status, snippet.stderr).toBe(0);
    const rc = join(t.base, 'checkouts-bashrc');
    writeFileSync(rc, `PS1='$ '\n${snippet.stdout}`);
    for (const l of sample.pick(layouts, LAYOUT_STRIDE, { offset: 1 })) {
      clearHeavy(t);
      const r = spawnSync('bash', ['--noprofile', '--rcfile', rc, '-i'], {
        cwd: at(l, KODA),
        input: 'make build-safe\nmake clean\necho end\n',
        encoding: 'utf8',
        env: laptopEnv(t, { PWD: at(l, KODA), HISTFILE: join(t.base, 'hist'), OFFHOST_SESSION: 'checkouts-snippet' }),
        timeout: 60_000,
      });
      expect(r.stdout, `${l.name}: ${r.stderr}`).toContain('end\n');
      const runs = heavyRuns(t).map((h) => [h.prog, h.laptop]);
      // The build went to the VM (or was refused: nothing ran); `make clean` ran here.
      expect(runs, `${l.name}: ${r.stderr}`).toEqual(l.seenByVm ? [['make', false], ['make', true]] : [['make', true]]);
      if (!l.seenByVm) expect(r.stderr).toContain('cannot see this checkout');
    }
  });

  it('the zsh and fish snippets\' judge (`shell --check`, called as they call it, with the logical $PWD)', { timeout: 300_000 }, () => {
    for (const l of layouts) {
      for (const fish of [[], ['--fish']]) {
        const heavy = offhost(['shell', '--check', ...fish, '--cwd', at(l, KODA), '--', 'make build-safe'], at(l, KODA));
        expect(heavy.status, `${l.name} ${fish.join('')}: ${heavy.stderr}`).toBe(3);
        expect(heavy.stdout).toContain('run --');
        expect(offhost(['shell', '--check', ...fish, '--cwd', at(l, KODA), '--', 'make clean'], at(l, KODA)).status).toBe(0);
      }
    }
  });
});

describe('scan and ci', () => {
  it('scan and check agree line for line in every checkout, and every checkout gets the same findings', { timeout: 400_000 }, () => {
    const lines = PACKAGE_JSON.split('\n');
    const scripts = lines.map((text, i) => ({ line: i + 1, m: /^\s+"[a-z-]+": "(.*)",?$/.exec(text) })).filter((x) => x.m !== null);
    expect(scripts.length).toBe(6);
    const outputs = new Set<string>();
    // `check` as a child process in every other checkout (in all with npm run test:full), in process in all.
    const checked = sample.pick(layouts, LAYOUT_STRIDE);
    for (const l of layouts) {
      const r = offhost(['scan', '--format', 'json'], l.top);
      expect(r.status, r.stderr).toBe(1);
      const findings = JSON.parse(r.stdout) as { file: string; line: number; ruleId: string }[];
      outputs.add(JSON.stringify(findings.map((f) => [f.file, f.line, f.ruleId])));
      for (const { line, m } of scripts) {
        const cmd = m![1]!;
        const f = findings.find((x) => x.file === 'package.json' && x.line === line);
        const env = laptopEnv(t, { PWD: l.top });
        const inProcess = loadGuard({ cwd: l.top, env }).classify(cmd, { cwd: l.top, env });
        expect([l.name, cmd, f?.ruleId ?? 'allow']).toEqual([l.name, cmd, inProcess.decision === 'allow' ? 'allow' : inProcess.rule]);
        if (!checked.includes(l)) continue;
        const c = offhost(['check', '--json', cmd], l.top);
        const v = JSON.parse(c.stdout);
        expect([l.name, cmd, f?.ruleId ?? 'allow'], c.stderr).toEqual([l.name, cmd, v.decision === 'allow' ? 'allow' : v.rule]);
      }
      const sh = findings.find((x) => x.file === `${KODA}/build.sh`);
      expect(sh?.ruleId).toBe('koda-make');
      expect(JSON.parse(offhost(['check', '--json', 'make build-safe'], at(l, KODA)).stdout).rule).toBe('koda-make');
    }
    expect(outputs.size).toBe(1);
  });

  it('ci flags a heavy script a pull request adds, in every checkout', { timeout: 400_000 }, () => {
    layouts.forEach((l, i) => {
      if (layouts.findIndex((x) => x.physical === l.physical) < i) return; // a symlink: the real checkout's row does it (one working tree)
      const branch = git(l.top, 'rev-parse', '--abbrev-ref', 'HEAD').trim();
      if (branch === 'main') git(l.top, 'checkout', '-q', '-b', `pr-${i}`);
      const file = `${KODA}/ci-${i}.sh`;
      writeFileSync(join(l.top, file), '#!/bin/sh\nmake -j8 build-safe\n');
      git(l.top, 'add', '-A');
      git(l.top, 'commit', '-q', '-m', `ci ${i}`);
      const r = offhost(['ci', '--base', 'main', '--format', 'json'], l.top, { GITHUB_STEP_SUMMARY: '' });
      expect(r.status, `${l.name}: ${r.stderr}`).toBe(1);
      const f = (JSON.parse(r.stdout) as { file: string; ruleId: string }[]).filter((x) => x.file === file);
      expect(f.map((x) => x.ruleId), l.name).toEqual(['koda-make']);
      if (branch === 'main') git(l.top, 'checkout', '-q', 'main');
    });
    expect(readFileSync(join(t.root, 'package.json'), 'utf8')).toBe(PACKAGE_JSON);
  });
});
