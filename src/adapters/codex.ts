// `offhost hook codex`: a Codex CLI `PreToolUse` command hook (hooks.json or config.toml `[[hooks.PreToolUse]]`).
//
// Protocol, as read in Codex's own source and docs (openai/codex):
// - stdin (codex-rs/hooks/schema/generated/pre-tool-use.command.input.schema.json): `session_id`, `turn_id`,
//   `transcript_path` (string or null), `cwd`, `hook_event_name: "PreToolUse"`, `model`, `permission_mode`,
//   `tool_name`, `tool_input`, `tool_use_id`. Every shell-like tool (`shell`, `shell_command`,
//   `exec_command`, `local_shell`) is reported with the canonical name `Bash` ("the hook identity
//   historically used for shell-like tools", codex-rs core hook_names.rs) and `tool_input: {command: string}`;
//   for the argv-style `shell` tool Codex sends `shlex_join(argv)`, e.g. `bash -lc 'make build'`, which the
//   guard re-parses. We also accept an argv array for `command`, joined with bash quoting, in case a build
//   sends it raw.
// - output (codex-rs/hooks/src/events/pre_tool_use.rs, output_parser.rs): `permissionDecision: "deny"` with
//   `permissionDecisionReason` blocks and the reason goes to the model; `updatedInput` is accepted only
//   together with `permissionDecision: "allow"` ("PreToolUse hook returned updatedInput without
//   permissionDecision:allow", openai/codex#46664), and a bare `allow` without updatedInput is rejected. Codex
//   treats that `allow` as "no objection", not as waiving its own approvals (openai/codex#20702).
//   So the default reroute answer here is `suggest` (a deny carrying the command to run); `--mode rewrite`
//   answers allow + updatedInput.
// - exit 2 with stderr is documented to block, but hook failures fail open in some releases
//   (openai/codex#41979: exit 2 without stdout let the command run on 0.153.3). So broken input is refused
//   with a deny JSON on stdout and exit 0, the path Codex's own tests cover
//   (`permission_decision_deny_blocks_processing`), plus the reason on stderr.
import type { Classify, HookOptions, HookReply } from './common.js';
import { HOOK_RULES, json } from './common.js';
import { type PreToolUseFlavour, handlePreToolUse } from './pretooluse.js';

export const CODEX_SHELL_TOOLS = ['Bash', 'shell', 'shell_command', 'exec_command', 'local_shell', 'container.exec'] as const;

function refuseCodexInput(reason: string): HookReply {
  const text = `offhost refused this tool call: ${reason}`;
  return {
    stdout: json({ hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny', permissionDecisionReason: text } }),
    stderr: `${text}\n`,
    exitCode: 0,
    audit: { agent: 'codex', session: null, cwd: null, command: null, decision: 'deny', rule: HOOK_RULES.input, reason },
  };
}

export const codex: PreToolUseFlavour = {
  agent: 'codex',
  shellTools: CODEX_SHELL_TOOLS,
  defaultMode: 'suggest',
  // Codex takes updatedInput only with allow (and its own approval policy still applies after it).
  rewriteDecision: () => 'allow',
  refuseInput: refuseCodexInput,
  argvCommand: true,
  // MCP tools reach PreToolUse as `mcp__<server>__<tool>` with their arguments (pre_tool_use.rs).
  mcpPrefix: 'mcp__',
  // The shell tools' `workdir` parameter, where a Codex build puts it in the event's tool_input; current
  // builds send `{command}` only, so the $SHELL wrapper and the exec-time shims are the layer that sees it.
  workdirField: 'workdir',
};

export function handleCodex(raw: string, classifyAt: (cwd: string) => Classify, opts: HookOptions): HookReply {
  return handlePreToolUse(codex, raw, classifyAt, opts);
}
