// A hook that hangs must block, not fail open. Claude Code, Codex and Gemini CLI kill a hook at its timeout
// (30 s as init writes it) and then run the tool, so the command init writes bounds node itself and gives
// the agent's blocking answer first (src/adapters/init-agent.ts `guarded`). Tried the two ways a user meets
// it: node hanging before offhost's code runs (a NODE_OPTIONS preload that never returns) and a project
// config that is a FIFO nobody writes (offhost must not block reading it). Each hook command is run the way
// its agent runs it, and stopped at the agent's own timeout (the spawn timeout below stands for the
// agent's kill: a hook still running then is what the agent would have let through).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdirSync, mkdtempSync, readdirSync, readlinkSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawn, spawnSync } from 'node:child_process';
import { quote as shellQuote } from 'shell-quote';
import { type FakeHome, BIN, ROOT, event, fakeHome, hookCommand, hookEnv, requireBuild } from './hooks-helpers.js';
import { processesWhere } from '../helpers/processes.js';

let h: FakeHome;
const made: string[] = [];
beforeAll(() => {
  requireBuild();
  h = fakeHome();
  made.push(h.home);
});
afterAll(() => {
  for (const d of made) rmSync(d, { recursive: true, force: true });
});

const TAG = `${process.pid}-${Date.now()}`;

/** The pids of processes whose environment carries OFFHOST_HANG_TEST=tag and whose argv `is` accepts. */
function taggedProcesses(tag: string, is: (argv: string[]) => boolean): string[] {
  return processesWhere(is, `OFFHOST_HANG_TEST=${tag}`).map(String);
}

/** The pids of `sleep 27` processes (the watchdog's) whose environment carries OFFHOST_HANG_TEST=tag. */
function watchdogSleepsTagged(tag: string): string[] {
  return taggedProcesses(tag, (a) => a.length === 2 && a[0] === 'sleep' && a[1] === '27');
}

/** The hung offhost processes (node running `offhost hook`) of the hooks tagged `tag`. */
function hungOffhostTagged(tag: string): string[] {
  return taggedProcesses(tag, (a) => a[0]?.endsWith('node') === true && a.includes('hook'));
}

// A failed assertion must not leave this file's hung hooks spinning (a `for (;;)` preload each) for ever.
afterAll(() => {
  for (const tag of [TAG, `${TAG}-quit`]) for (const pid of [...hungOffhostTagged(tag), ...watchdogSleepsTagged(tag)]) {
    try {
      process.kill(Number(pid), 'SIGKILL');
    } catch {
      /* gone */
    }
  }
});

const AGENTS = ['claude-code', 'codex', 'gemini', 'cursor', 'copilot', 'windsurf'] as const;
type Agent = (typeof AGENTS)[number];
/** The agent's timeout as init writes it (30 s), minus a little for this machine's load: what a hook must beat. */
const AGENT_KILLS_AT_MS = 29_500;

function installedProject(): string {
  const d = mkdtempSync(join(tmpdir(), 'offhost-hang-'));
  made.push(d);
  spawnSync('git', ['init', '-q'], { cwd: d });
  mkdirSync(join(d, 'node_modules', '.bin'), { recursive: true });
  symlinkSync(ROOT, join(d, 'node_modules', 'offhost'));
  symlinkSync('../offhost/dist/offhost.cjs', join(d, 'node_modules', '.bin', 'offhost'));
  const r = spawnSync(process.execPath, [BIN, 'init', '--agent', 'claude-code'], { cwd: d, env: hookEnv(h), encoding: 'utf8' });
  if (r.status !== 0) throw new Error(r.stderr);
  for (const a of AGENTS.slice(1)) spawnSync(process.execPath, [BIN, 'init', '--agent', a], { cwd: d, env: hookEnv(h), encoding: 'utf8' });
  return d;
}

interface Done {
  status: number | null;
  stdout: string;
  stderr: string;
  /** The agent's timeout came first (the agent would have killed the hook and run the tool). */
  killedByAgent: boolean;
}

/**
 * Runs the command as the agent does (Claude Code `sh -c`, Codex `$SHELL -lc`, Gemini `bash -c` after its text
 * replacement, the others a shell -c) and waits, like the agents, until the process has exited and its
 * stdout and stderr are closed.
 */
function runAs(agent: Agent, project: string, cwd: string, command: string, input: string, env: Record<string, string>, killAt = AGENT_KILLS_AT_MS, started?: (pid: number) => void, quits = false): Promise<Done> {
  const vars: Record<string, string> = agent === 'claude-code' ? { CLAUDE_PROJECT_DIR: project } : agent === 'gemini' ? { GEMINI_PROJECT_DIR: cwd } : {};
  const argv =
    agent === 'codex' ? ['/bin/sh', '-c', command] : agent === 'gemini' ? ['/bin/bash', '-c', command.replace(/\$GEMINI_PROJECT_DIR/g, () => shellQuote([cwd]))] : ['/bin/sh', '-c', command];
  return new Promise((resolve) => {
    const child = spawn(argv[0] as string, argv.slice(1), { cwd, env: { ...env, ...vars }, stdio: ['pipe', 'pipe', 'pipe'] });
    if (child.pid !== undefined) started?.(child.pid);
    let stdout = '';
    let stderr = '';
    let killedByAgent = false;
    const timer = setTimeout(() => {
      killedByAgent = true;
      child.kill('SIGKILL');
    }, killAt);
    child.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
    child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
    if (quits) {
      // The agent quits without killing the hook: nobody reads its stdout or stderr any more.
      child.stdout.destroy();
      child.stderr.destroy();
      child.on('exit', (status) => {
        clearTimeout(timer);
        resolve({ status, stdout, stderr, killedByAgent });
      });
      child.stdin.on('error', () => {});
      child.stdin.end(input);
      return;
    }
    child.on('close', (status) => {
      clearTimeout(timer);
      resolve({ status, stdout, stderr, killedByAgent });
    });
    child.stdin.on('error', () => {});
    child.stdin.end(input);
  });
}

/** Each agent's blocking answer (the same reading as test/e2e/hooks-launch.test.ts). */
function blocked(agent: Agent, r: Done): boolean {
  if (r.killedByAgent) return false;
  const out = r.stdout.trim() ? (() => { try { return JSON.parse(r.stdout.trim().split('\n')[0] as string); } catch { return null; } })() : null;
  switch (agent) {
    case 'claude-code':
    case 'codex':
      return (r.status === 2 && r.stderr.trim() !== '') || (r.status === 0 && out?.hookSpecificOutput?.permissionDecision === 'deny');
    case 'gemini':
      return r.status === 2 || (r.status === 0 && (out?.decision === 'deny' || out?.decision === 'block'));
    case 'windsurf':
      return r.status === 2 && r.stderr.trim() !== '';
    case 'cursor':
      return r.status === 2 || (r.status === 0 && out?.permission === 'deny');
    case 'copilot':
      return r.status === 0 && out?.permissionDecision === 'deny';
  }
}

describe('the leftover check itself', () => {
  it('finds a tagged `sleep 27` and ignores an untagged one (another file\'s watchdog)', async () => {
    const { spawn } = await import('node:child_process');
    const mine = spawn('sleep', ['27'], { env: { ...process.env, OFFHOST_HANG_TEST: `${TAG}-self` }, stdio: 'ignore' });
    const other = spawn('sleep', ['27'], { env: { ...process.env, OFFHOST_HANG_TEST: 'someone-else' }, stdio: 'ignore' });
    try {
      // Until both have exec'd sleep (a hang guard only: the loop ends as soon as they have).
      for (let i = 0; i < 600 && watchdogSleepsTagged(`${TAG}-self`).length === 0; i++) await new Promise((r) => setTimeout(r, 50));
      expect(watchdogSleepsTagged(`${TAG}-self`)).toEqual([String(mine.pid)]);
      expect(watchdogSleepsTagged('someone-else')).toEqual([String(other.pid)]);
    } finally {
      mine.kill();
      other.kill();
    }
  });
});

describe('a hook that hangs blocks before the agent\'s timeout', () => {
  it('every agent: a NODE_OPTIONS preload that never returns, and a project config that is a FIFO nobody writes', async () => {
    const p = installedProject();
    const hang = join(p, 'hang.cjs');
    writeFileSync(hang, 'for (;;) {}\n');
    const fifoProject = join(p, 'sub');
    mkdirSync(fifoProject);
    expect(spawnSync('mkfifo', [join(fifoProject, 'offhost.config.yaml')]).status).toBe(0);
    // Every process of this test's hooks carries this tag, so the leftover check below counts only theirs,
    // not the watchdogs of hooks other test files are running at the same time.
    const tagged = (e: Record<string, string>) => ({ ...e, OFFHOST_HANG_TEST: TAG });
    const preload = tagged({ ...hookEnv(h), NODE_OPTIONS: `--require ${hang}` });
    // All at once: each hang case waits for its watchdog (27 s).
    const hooks: number[] = [];
    const runs = AGENTS.flatMap((agent) => {
      const command = hookCommand(p, agent);
      return [
        runAs(agent, p, p, command, event(agent, 'ls', p), tagged(hookEnv(h))).then((r) => ({ agent, kind: 'sane', r })),
        runAs(agent, p, p, command, event(agent, 'make build-safe', h.koda), preload, undefined, (pid) => hooks.push(pid)).then((r) => ({ agent, kind: 'preload', r })),
        runAs(agent, p, fifoProject, command, event(agent, 'ls', fifoProject), tagged(hookEnv(h))).then((r) => ({ agent, kind: 'fifo', r })),
      ];
    });
    // An agent that quits while its hook hangs (it reads nothing more): the watchdog still stops offhost. One
    // that spoke before it killed died of SIGPIPE there, and left offhost spinning with no end. The spawn's
    // kill (60 s) is a hang guard here, not the agent.
    const quitting = { ...hookEnv(h), NODE_OPTIONS: `--require ${hang}`, OFFHOST_HANG_TEST: `${TAG}-quit` };
    const quit = (['claude-code', 'codex'] as const).map((agent) =>
      runAs(agent, p, p, hookCommand(p, agent), event(agent, 'make build-safe', h.koda), quitting, 60_000, undefined, true).then((r) => ({ agent, r })),
    );
    // While the preloads hang, each watchdog's sleep holds none of the agent's pipes (the hook's stdin, stdout
    // and stderr). One holding the hook's stderr (fd 4) kept a hook whose offhost failed at once open 27 s
    // whenever `kill $w` came between the sleep's start and `k=$!` (src/adapters/init-agent.ts `guarded`).
    const pipes = new Set<string>();
    for (const pid of hooks) for (const fd of [0, 1, 2]) pipes.add(readlinkSync(`/proc/${pid}/fd/${fd}`));
    expect([...pipes].filter((t) => /^(pipe|socket):/.test(t))).toHaveLength(hooks.length * 3);
    for (let i = 0; i < 600 && watchdogSleepsTagged(TAG).length < AGENTS.length; i++) await new Promise((res) => setTimeout(res, 50));
    const sleeps = watchdogSleepsTagged(TAG);
    expect(sleeps.length).toBeGreaterThanOrEqual(AGENTS.length);
    for (const pid of sleeps) {
      let held: string[];
      try {
        held = readdirSync(`/proc/${pid}/fd`).map((fd) => readlinkSync(`/proc/${pid}/fd/${fd}`)).filter((t) => pipes.has(t));
      } catch {
        continue; // a quick hook's watchdog, gone meanwhile
      }
      expect(held, `the watchdog's sleep ${pid} holds the agent's`).toEqual([]);
    }
    const results = await Promise.all(runs);
    for (const { agent, kind, r } of results) {
      const what = `${agent} ${kind}: ${JSON.stringify(r)}`;
      if (kind === 'sane') {
        expect(r.status, what).toBe(0);
        expect(blocked(agent, r), what).toBe(false);
      } else if (kind === 'preload') {
        expect(blocked(agent, r), what).toBe(true);
        expect(r.stderr, what).toContain(`offhost hook ${agent} gave no answer within 27 s and was stopped`);
      } else {
        expect(blocked(agent, r), what).toBe(true);
        expect(r.stdout + r.stderr, what).toContain('not a regular file');
      }
    }
    // Nothing of the watchdog is left running (its sleep ends with the hook).
    expect(watchdogSleepsTagged(TAG)).toEqual([]);
    for (const { agent, r } of await Promise.all(quit)) expect(r.killedByAgent, `${agent}: the hook of an agent that quit never ended`).toBe(false);
    expect(hungOffhostTagged(`${TAG}-quit`), 'offhost left running after its agent quit').toEqual([]);
  }, 120_000);

  it('a hook that answers is not held open by the watchdog (its sleep holds none of the agent\'s pipes)', async () => {
    const p = installedProject();
    for (const agent of AGENTS) {
      // An agent that kills at 15 s: a watchdog whose sleep held stdout or stderr would keep the hook "running" 27 s.
      const r = await runAs(agent, p, p, hookCommand(p, agent), event(agent, 'ls', p), hookEnv(h), 15_000);
      expect(r.killedByAgent, agent).toBe(false);
      expect(r.status, `${agent}: ${r.stderr}`).toBe(0);
    }
  }, 120_000);
});
