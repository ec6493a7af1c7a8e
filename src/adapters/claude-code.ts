// `offhost hook claude-code`: a Claude Code `PreToolUse` command hook.
//
// Protocol, as documented in the Claude Code hooks reference (https://code.claude.com/docs/en/hooks,
// "PreToolUse" and "Exit code 2"; summarised in the claudetto wiki page "Claude Code Hooks Events Tool"):
// - stdin: one JSON object with `session_id`, `transcript_path`, `cwd`, `hook_event_name: "PreToolUse"`,
//   `tool_name` (the shell tool is `Bash`), `tool_input` (Bash: `command`, `description`, `timeout`,
//   `run_in_background`), `tool_use_id`.
// - exit 0 with no output: no decision, the normal permission flow goes on. We answer nothing for an
//   allowed command: `permissionDecision: "allow"` would skip the user's own ask/permission prompts.
// - exit 0 with `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny",
//   "permissionDecisionReason":…}}`: blocked; the reason is shown to Claude.
// - `permissionDecision: "ask"`: the user is prompted, with the reason shown in the prompt.
// - `updatedInput`: replaces the whole tool input (so every original field is copied, only `command` is
//   swapped); it goes with allow or ask.
// - exit 2: blocks the tool call, stderr is the reason given to Claude. Any other non-zero status is a
//   non-blocking error and the tool call goes ahead (anthropics/claude-code#44707), so broken input is
//   answered with exit 2, never 1.
import type { Classify, HookOptions, HookReply } from './common.js';
import { type PreToolUseFlavour, handlePreToolUse, refuseByExit2 } from './pretooluse.js';

// Tools that run commands: `Bash`; `Monitor` (runs a command in the background and streams its output,
// `tool_input.command`); `PowerShell` (Windows, `tool_input.command` is a PowerShell line: read by
// src/adapters/powershell.ts, refused when it names a trigger, never rewritten); MCP tools
// (`mcp__<server>__<tool>`) whose input names a command (common.ts COMMAND_FIELDS), refused or answered
// with the command to run instead.
// Nobody can answer `ask` in headless runs (`claude -p`, the SDK: CLAUDE_CODE_ENTRYPOINT=sdk-*) or when the
// session's permission_mode is bypassPermissions/dontAsk/auto: reroutes are then answered in suggest form.
const HEADLESS_MODES = new Set(['bypassPermissions', 'dontAsk', 'auto']);

export const claudeCode: PreToolUseFlavour = {
  agent: 'claude-code',
  shellTools: ['Bash', 'Monitor'],
  powershellTools: ['PowerShell'],
  mcpPrefix: 'mcp__',
  defaultMode: 'rewrite',
  rewriteDecision: (opts) => (opts.allowRewrite ? 'allow' : 'ask'),
  refuseInput: (reason) => refuseByExit2('claude-code', reason),
  argvCommand: false,
  noOneToAsk: (ev, env) =>
    (typeof ev.permission_mode === 'string' && HEADLESS_MODES.has(ev.permission_mode)) ||
    /^sdk/.test(env.CLAUDE_CODE_ENTRYPOINT ?? '') ||
    env.OFFHOST_HOOK_HEADLESS === '1',
};

export function handleClaudeCode(raw: string, classifyAt: (cwd: string) => Classify, opts: HookOptions): HookReply {
  return handlePreToolUse(claudeCode, raw, classifyAt, opts);
}
