// doctor's agents check: every agent wiring `offhost init --agent` can write (src/adapters/init-agent.ts
// TARGETS: the project file and the personal one), one item per agent. For each file that is there: it is
// read as the agent reads it, every event (and matcher) init writes must hold offhost's hook, and the exact
// command of that hook is run the way the agent runs it (src/doctor/agent-launch.ts) with a synthetic heavy
// tool call, which must come back blocked, and a light one, which must come back allowed.
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { spawnSync } from 'node:child_process';
import { AGENTS, type AgentName, isRecord } from '../adapters/common.js';
import { TARGETS, guardIsCurrent, isOurs, stripJsonComments } from '../adapters/init-agent.js';
import { agentReading, type CommandAgent, describeRun, launchAsAgent, syntheticEvent } from './agent-launch.js';
import type { DoctorCheck, DoctorContext, DoctorItem } from './check.js';
import { runGitSync } from '../git/run.js';

/** A command the built-in rules refuse wherever it runs (qemu-windows), and one they let through. */
export const PROBE_HEAVY = 'qemu-system-x86_64 -hda win10.qcow2';
export const PROBE_LIGHT = 'ls';

interface Location {
  file: string;
  /** How it is shown: relative to the project, or ~/…. */
  shown: string;
  /** The personal file (under HOME, or Claude Code's settings.local.json), not the committed one. */
  personal: boolean;
}

function locations(agent: AgentName, ctx: DoctorContext): Location[] {
  const t = TARGETS[agent];
  const home = ctx.env.HOME;
  const show = (p: string) => (home && p.startsWith(`${home}/`) && !p.startsWith(`${ctx.project}/`) ? `~/${relative(home, p)}` : relative(ctx.cwd, p) || p);
  const files = [join(ctx.project, t.file)];
  if (t.personal !== '') {
    if (!t.personalInHome) files.push(join(ctx.project, t.personal));
    else if (home) files.push(join(home, t.personal));
  }
  return [...new Set(files)].map((file, i) => ({ file, shown: show(file), personal: i > 0 }));
}

/** The command of offhost's entry for each event (and matcher) init writes, or what is missing. */
function entriesOf(agent: CommandAgent, settings: Record<string, unknown>): { commands: string[]; missing: string[] } {
  const t = TARGETS[agent];
  const hooks = isRecord(settings.hooks) ? settings.hooks : {};
  const commands: string[] = [];
  const missing: string[] = [];
  for (const { event, matchers } of t.events) {
    const list = Array.isArray(hooks[event]) ? (hooks[event] as unknown[]) : [];
    const ours = (g: unknown): string | null => {
      if (!isRecord(g)) return null;
      if (t.shape === 'groups') {
        for (const h of Array.isArray(g.hooks) ? g.hooks : []) if (isRecord(h) && isOurs(h.command, agent)) return h.command as string;
        return null;
      }
      const c = t.shape === 'copilot' ? g.bash : g.command;
      return isOurs(c, agent) ? (c as string) : null;
    };
    if (t.shape === 'groups') {
      // The agent matches a tool name against each group's matcher (a regex, anchored): every tool name
      // init's matchers cover must be matched by a group holding offhost's hook.
      const groups = list.filter((g) => ours(g) !== null) as Record<string, unknown>[];
      const covers = (g: Record<string, unknown>, tool: string): boolean => {
        const m = typeof g.matcher === 'string' ? g.matcher : '';
        if (m === '' || m === '*') return true;
        try {
          return new RegExp(`^(?:${m})$`).test(tool);
        } catch {
          return false;
        }
      };
      for (const m of matchers ?? []) {
        for (const tool of m.split('|').map((a) => a.replace(/\.\*$/, 'server__tool'))) {
          const g = groups.find((x) => covers(x, tool));
          if (g) commands.push(ours(g) as string);
          else missing.push(`${event} ${tool.replace(/server__tool$/, '*')}`);
        }
      }
    } else {
      const c = list.map(ours).find((x) => x !== null);
      if (c) commands.push(c);
      else missing.push(event);
    }
  }
  return { commands, missing };
}

/** Runs the hook as the agent would, heavy then light: a problem, or null when it blocks and lets through as it should. */
function probeCommand(agent: CommandAgent, command: string, ctx: DoctorContext): string | null {
  const heavy = launchAsAgent(agent, command, ctx.project, syntheticEvent(agent, PROBE_HEAVY, ctx.project), ctx.env);
  if (agentReading(agent, heavy) !== 'blocked') return `\`${PROBE_HEAVY}\` was not blocked through it (${describeRun(heavy)})`;
  const light = launchAsAgent(agent, command, ctx.project, syntheticEvent(agent, PROBE_LIGHT, ctx.project), ctx.env);
  if (agentReading(agent, light) !== 'allowed' || light.status !== 0) return `\`${PROBE_LIGHT}\` was refused through it (${describeRun(light)}): every command is refused`;
  return null;
}

/** The OpenCode plugin, loaded in a child node as OpenCode loads it, asked about a heavy and a light bash call. */
function probePlugin(file: string, ctx: DoctorContext): string | null {
  const dir = mkdtempSync(join(tmpdir(), 'offhost-doctor-'));
  try {
    // A copy named .mjs: the plugin is an ES module whatever the project's package.json says.
    const copy = join(dir, 'plugin.mjs');
    writeFileSync(copy, readFileSync(file));
    const script = `const m = await import(${JSON.stringify(`file://${copy}`)});
const f = Object.values(m).find((v) => typeof v === 'function');
const hooks = await f({ directory: ${JSON.stringify(ctx.cwd)}, worktree: ${JSON.stringify(ctx.project)} });
const out = [];
for (const command of ${JSON.stringify([PROBE_HEAVY, PROBE_LIGHT])}) {
  const output = { args: { command } };
  try { await hooks['tool.execute.before']({ tool: 'bash', sessionID: 'offhost-doctor', callID: 'doctor' }, output); out.push({ ok: true, command: output.args.command }); }
  catch (e) { out.push({ ok: false, message: String(e && e.message) }); }
}
process.stdout.write(JSON.stringify(out));`;
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { cwd: ctx.cwd, env: { ...ctx.env, OFFHOST_AUDIT_LOG: 'off' }, encoding: 'utf8', timeout: 40_000 });
    let res: { ok: boolean; command?: string; message?: string }[];
    try {
      res = JSON.parse(r.stdout) as typeof res;
    } catch {
      return `the plugin could not be loaded (status ${r.status}: ${(r.stderr ?? '').trim().split('\n')[0] ?? ''})`;
    }
    const [heavy, light] = res;
    if (!heavy || (heavy.ok && heavy.command === PROBE_HEAVY)) return `\`${PROBE_HEAVY}\` was let through by the plugin`;
    if (!light || !light.ok) return `\`${PROBE_LIGHT}\` was refused by the plugin (${light?.message ?? 'no answer'}): every command is refused`;
    return null;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

interface Found {
  wired: string[];
  problems: { where: string; what: string }[];
  /** Files that are there without offhost's hook (a problem only when no other file of the agent has it). */
  unwired: Location[];
}

function checkFile(agent: AgentName, loc: Location, ctx: DoctorContext, found: Found): void {
  const t = TARGETS[agent];
  let raw: string;
  try {
    raw = readFileSync(loc.file, 'utf8');
  } catch (err) {
    found.problems.push({ where: loc.shown, what: `cannot be read (${(err as NodeJS.ErrnoException).code ?? String(err)})` });
    return;
  }
  if (t.shape === 'plugin') {
    if (!/offhost hook opencode|"opencode"/.test(raw)) {
      found.problems.push({ where: loc.shown, what: 'is not offhost\'s plugin any more: OpenCode runs commands here unchecked' });
      return;
    }
    const p = probePlugin(loc.file, ctx);
    if (p) found.problems.push({ where: loc.shown, what: p });
    else found.wired.push(loc.shown);
    return;
  }
  const text = t.jsonc ? stripJsonComments(raw) : raw;
  let settings: unknown = {};
  if (text.trim() !== '') {
    try {
      settings = JSON.parse(text);
    } catch (err) {
      found.problems.push({ where: loc.shown, what: `is not valid JSON (${(err as Error).message}): ${agent} ignores it, and runs commands unchecked` });
      return;
    }
  }
  if (!isRecord(settings)) {
    found.problems.push({ where: loc.shown, what: 'is not a JSON object' });
    return;
  }
  const { commands, missing } = entriesOf(agent as CommandAgent, settings);
  if (commands.length === 0) {
    found.unwired.push(loc);
    return;
  }
  if (missing.length) found.problems.push({ where: loc.shown, what: `has no offhost hook for ${missing.join(', ')}` });
  const p = probeCommand(agent as CommandAgent, commands[0] as string, ctx);
  if (p) found.problems.push({ where: loc.shown, what: p });
  else if (!guardIsCurrent(agent as CommandAgent, commands[0] as string)) {
    const what = /\bsleep \d+\b/.test(commands[0] as string)
      ? 'holds a hook command written by another version of offhost (its watchdog is not the one this version writes; an older one could leave a hung offhost running once the agent quit)'
      : `holds a hook command without offhost's watchdog: a hung offhost (a NODE_OPTIONS preload, a stalled disk) would have ${agent} kill it at its timeout and run the tool`;
    found.problems.push({ where: loc.shown, what });
  } else if (!missing.length) found.wired.push(loc.shown);
}

/** Is `file` in git's index of `repo` (a committed settings file that was deleted here)? */
function tracked(repo: string, file: string, env: NodeJS.ProcessEnv): boolean {
  return runGitSync(['ls-files', '--error-unmatch', '--', relative(repo, file)], { cwd: repo, env }).code === 0;
}

export const agentsCheck: DoctorCheck = {
  id: 'agents',
  summary: 'each agent\'s hook that init can write: the file is there and complete, and its exact command blocks a heavy call and lets a light one through, run as the agent runs it',
  run(ctx) {
    const items: DoctorItem[] = [];
    for (const agent of AGENTS) {
      const found: Found = { wired: [], problems: [], unwired: [] };
      for (const loc of locations(agent, ctx)) {
        if (existsSync(loc.file)) checkFile(agent, loc, ctx, found);
        else if (!loc.personal && ctx.repo && tracked(ctx.repo, loc.file, ctx.env)) found.problems.push({ where: loc.shown, what: 'is committed but deleted from this work tree' });
      }
      // The agent merges its files: one wired file guards it. A committed file without the hook (emptied,
      // or the entry deleted) while none has it is an open door; a personal one is only said.
      if (found.wired.length === 0) {
        for (const u of found.unwired) {
          if (!u.personal) found.problems.push({ where: u.shown, what: `is there but holds no offhost hook: ${agent} runs commands here unchecked` });
        }
      }
      const personalOnly = found.wired.length === 0 && found.problems.length === 0 ? found.unwired.filter((u) => u.personal) : [];
      const fix = `offhost init --agent ${agent}${ctx.cwd !== ctx.project ? ` (in ${ctx.project})` : ''}`;
      if (found.problems.length) {
        items.push({ check: 'agents', subject: agent, ok: false, detail: `${agent}: ${found.problems.map((p) => `${p.where} ${p.what}`).join('; ')}`, fix: `run \`${fix}\` (it rewrites offhost's hook and keeps the others)` });
      } else if (found.wired.length) {
        items.push({ check: 'agents', subject: agent, ok: true, detail: `${agent}: ${found.wired.join(', ')}: blocks \`${PROBE_HEAVY}\`, lets \`${PROBE_LIGHT}\` through` });
      } else {
        const seen = personalOnly.length ? ` (${personalOnly.map((u) => u.shown).join(', ')} has no offhost hook)` : '';
        items.push({ check: 'agents', subject: agent, ok: true, note: true, detail: `${agent}: not set up here${seen} (\`${fix}\`)` });
      }
    }
    if (!items.some((i) => !i.note)) {
      // No agent at all is guarded here: said as a problem (offhost checks nothing an agent runs).
      items.push({ check: 'agents', subject: 'any', ok: false, detail: 'no agent hook calls offhost (here or in ~)', fix: 'run `offhost init --agent claude-code` (or codex, gemini, cursor, copilot, windsurf, opencode) in the project' });
    }
    return items;
  },
};
