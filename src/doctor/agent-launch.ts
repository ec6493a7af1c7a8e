// How each agent launches the hook command init wrote, and how it reads the answer: used by doctor to run
// the exact command with a synthetic tool call, the way the agent would, and to say whether the agent would
// have blocked it. Sources (hooks/README.md has the detail):
//   Claude Code  `sh -c COMMAND`, CLAUDE_PROJECT_DIR set; exit 2 + stderr blocks, or exit 0 with
//                hookSpecificOutput.permissionDecision "deny".
//   Codex        `$SHELL -lc COMMAND` in the session cwd (codex-rs/hooks/src/engine/command_runner.rs); the same answers.
//   Gemini CLI   `bash -c` after replacing the text $GEMINI_PROJECT_DIR with the quoted cwd, which it also
//                exports (packages/core/src/hooks/hookRunner.ts); exit 2, or decision deny/block.
//   Cursor       a shell command; exit 2, or {"permission":"deny"}.
//   Copilot      the `bash` field, with bash; only a deny printed on stdout is documented to block.
//   Windsurf     a shell command; exit 2 blocks.
import { spawnSync } from 'node:child_process';
import type { AgentName } from '../adapters/common.js';
import { quote } from '../routes/quote.js';

export type CommandAgent = Exclude<AgentName, 'opencode'>;

/** The agent's event for a shell tool call of `command` in `cwd`. */
export function syntheticEvent(agent: CommandAgent, command: string, cwd: string): string {
  const session = 'offhost-doctor';
  switch (agent) {
    case 'claude-code':
      return JSON.stringify({ session_id: session, transcript_path: '', cwd, permission_mode: 'default', hook_event_name: 'PreToolUse', tool_name: 'Bash', tool_input: { command }, tool_use_id: 'doctor' });
    case 'codex':
      return JSON.stringify({ session_id: session, turn_id: 'doctor', transcript_path: null, cwd, hook_event_name: 'PreToolUse', model: 'doctor', permission_mode: 'default', tool_name: 'Bash', tool_input: { command }, tool_use_id: 'doctor' });
    case 'gemini':
      return JSON.stringify({ session_id: session, transcript_path: '', cwd, hook_event_name: 'BeforeTool', timestamp: new Date(0).toISOString(), tool_name: 'run_shell_command', tool_input: { command } });
    case 'cursor':
      return JSON.stringify({ hook_event_name: 'beforeShellExecution', conversation_id: session, generation_id: 'doctor', workspace_roots: [cwd], command, cwd });
    case 'copilot':
      return JSON.stringify({ timestamp: 0, cwd, toolName: 'bash', toolArgs: JSON.stringify({ command, description: 'offhost doctor' }) });
    case 'windsurf':
      return JSON.stringify({ agent_action_name: 'pre_run_command', trajectory_id: session, execution_id: 'doctor', timestamp: new Date(0).toISOString(), tool_info: { command_line: command, cwd } });
  }
}

export interface HookRun {
  status: number | null;
  stdout: string;
  stderr: string;
  /** Why it did not run to the end (spawn error, killed at the agent's timeout). */
  error?: string;
}

/** The agent's timeout as init writes it: a hook still running then is killed, and the tool runs. */
const AGENT_TIMEOUT_MS = 30_000;

/** Runs `command` as the agent would, in `project`, with `event` on stdin. */
export function launchAsAgent(agent: CommandAgent, command: string, project: string, event: string, env: NodeJS.ProcessEnv): HookRun {
  // The probe must not leave a refusal of a command nobody ran in the audit trail.
  const base: NodeJS.ProcessEnv = { ...env, OFFHOST_AUDIT_LOG: 'off' };
  let argv: string[];
  if (agent === 'claude-code') {
    argv = ['/bin/sh', '-c', command];
    base.CLAUDE_PROJECT_DIR = project;
  } else if (agent === 'codex') {
    argv = [env.SHELL || '/bin/sh', '-lc', command];
  } else if (agent === 'gemini') {
    argv = ['bash', '-c', command.replace(/\$GEMINI_PROJECT_DIR/g, () => quote(project)).replace(/\$CLAUDE_PROJECT_DIR/g, () => quote(project))];
    base.GEMINI_PROJECT_DIR = project;
    base.CLAUDE_PROJECT_DIR = project;
  } else if (agent === 'copilot') {
    argv = ['bash', '-c', command];
  } else {
    argv = ['/bin/sh', '-c', command];
  }
  const r = spawnSync(argv[0] as string, argv.slice(1), { cwd: project, env: base, input: event, encoding: 'utf8', timeout: AGENT_TIMEOUT_MS, maxBuffer: 4 * 1024 * 1024 });
  const out: HookRun = { status: r.status, stdout: r.stdout ?? '', stderr: r.stderr ?? '' };
  const code = (r.error as NodeJS.ErrnoException | undefined)?.code;
  // EPIPE: the hook ended before it read the whole event (a wrapper that cannot start offhost exits at
  // once). The agent then reads its exit status like any other: so does doctor. Which of the two came
  // first is the machine's timing, not the door's state.
  if (r.error && !(code === 'EPIPE' && (r.status !== null || r.signal !== null))) out.error = code === 'ETIMEDOUT' ? `still running after ${AGENT_TIMEOUT_MS / 1000} s (the agent kills it and runs the tool)` : r.error.message;
  return out;
}

function firstJson(stdout: string): Record<string, unknown> | null {
  const t = stdout.trim();
  if (!t) return null;
  try {
    const v = JSON.parse(t.split('\n')[0] as string) as unknown;
    return typeof v === 'object' && v !== null ? (v as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/** What the agent does with this answer: the tool call is blocked, let through, or (rewritten) replaced. */
export function agentReading(agent: CommandAgent, r: HookRun): 'blocked' | 'allowed' | 'rewritten' {
  if (r.error !== undefined || r.status === null) return 'allowed';
  const out = firstJson(r.stdout);
  const specific = (out?.hookSpecificOutput ?? null) as Record<string, unknown> | null;
  switch (agent) {
    case 'claude-code':
    case 'codex':
      if (r.status === 2) return r.stderr.trim() !== '' || agent === 'claude-code' ? 'blocked' : 'allowed';
      if (r.status !== 0) return 'allowed';
      if (specific?.permissionDecision === 'deny') return 'blocked';
      return specific?.updatedInput !== undefined ? 'rewritten' : 'allowed';
    case 'gemini':
      if (r.status === 2) return 'blocked';
      if (r.status !== 0) return 'allowed';
      if (out?.decision === 'deny' || out?.decision === 'block') return 'blocked';
      return specific?.tool_input !== undefined ? 'rewritten' : 'allowed';
    case 'cursor':
      return r.status === 2 || (r.status === 0 && out?.permission === 'deny') ? 'blocked' : 'allowed';
    case 'copilot':
      return r.status === 0 && out?.permissionDecision === 'deny' ? 'blocked' : 'allowed';
    case 'windsurf':
      return r.status === 2 ? 'blocked' : 'allowed';
  }
}

/** One line about a run, for a detail: status and the first line of stderr. */
export function describeRun(r: HookRun): string {
  const first = (r.stderr.trim().split('\n')[0] ?? '').slice(0, 200);
  return r.error !== undefined ? r.error : `status ${r.status}${first ? `: ${first}` : ''}`;
}
