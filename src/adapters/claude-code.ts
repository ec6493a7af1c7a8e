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

export const claudeCode: PreToolUseFlavour = {
  agent: 'claude-code',
  shellTools: ['Bash'],
  defaultMode: 'rewrite',
  rewriteDecision: (opts) => (opts.allowRewrite ? 'allow' : 'ask'),
  refuseInput: (reason) => refuseByExit2('claude-code', reason),
  argvCommand: false,
};

export function handleClaudeCode(raw: string, classifyAt: (cwd: string) => Classify, opts: HookOptions): HookReply {
  return handlePreToolUse(claudeCode, raw, classifyAt, opts);
}
