// The bundle behind `offhost hook …` (dist/hook.cjs): the loader runs it instead of the general one
// (dist/hot.cjs) because the hook runs before every command an agent executes, and a bundle with only
// the hook's code starts faster (a smaller code cache to read and deserialize).
import { EXIT } from '../errors.js';
import type { Io } from './io.js';
import { processIo } from './process-io.js';
import { runCommand } from './run-command.js';
import * as hook from './commands/hook.js';
import { AGENT_LINES, quietIo, warmLines } from './warm.js';

async function warm(io: Io): Promise<number> {
  const quiet = quietIo(io);
  for (const command of [...AGENT_LINES, ...warmLines(io.env.HOME ?? '/home/koder')]) {
    const preToolUse = JSON.stringify({ session_id: 'warm', cwd: io.cwd, hook_event_name: 'PreToolUse', tool_name: 'Bash', tool_input: { command } });
    const beforeTool = JSON.stringify({ session_id: 'warm', cwd: io.cwd, hook_event_name: 'BeforeTool', tool_name: 'run_shell_command', tool_input: { command } });
    for (const [agent, event] of [['claude-code', preToolUse], ['codex', preToolUse], ['gemini', beforeTool]] as const) {
      await hook.run([agent], { ...quiet, readStdin: async () => event });
    }
  }
  return EXIT.ok;
}

const io = processIo();
const args = io.argv.slice(1); // argv[0] is 'hook': the loader only runs this bundle for it
(args[0] === '--warm-cache' ? warm(io) : runCommand('hook', async () => hook, args, io)).then(
  (code) => {
    // Everything is written synchronously by now (writeAll, the audit log): exiting at once skips the
    // heap teardown of a natural exit (about 0.7 ms, on every command an agent runs).
    process.exit(code);
  },
  (err: unknown) => {
    process.stderr.write(`offhost: internal error: ${String((err as Error)?.stack ?? err)}\n`);
    process.exitCode = 2;
  },
);
