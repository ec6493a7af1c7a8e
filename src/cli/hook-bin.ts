// The bundle behind `offhost hook …` (dist/hook.cjs): the loader runs it instead of dist/hot.cjs for the
// hook, which runs before every command an agent executes. It holds the hook and the guard, without the
// other doors (check, explain, shell, shim) and the command table: less to read and deserialize at every
// start (docs/BUILD.md has the measurement).
import { processIo } from './process-io.js';
import { runCommand } from './run-command.js';
import * as hook from './commands/hook.js';
import { warmHook } from './warm.js';

const io = processIo();
// argv[0] is 'hook' (the loader runs this bundle for it alone); `--warm-cache hook` is the build's warm-up.
const warming = io.argv[0] === '--warm-cache';
const args = io.argv.slice(1);
(warming ? warmHook(io, hook) : runCommand('hook', async () => hook, args, io)).then(
  // Everything is written synchronously by now (writeAll, the audit log): exiting at once skips the heap
  // teardown of a natural exit (about 0.7 ms, on every command an agent runs).
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`offhost: internal error: ${String((err as Error)?.stack ?? err)}\n`);
    process.exitCode = 2;
  },
);
