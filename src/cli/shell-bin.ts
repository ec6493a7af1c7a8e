// The bundle behind `offhost shell …` (dist/shell.cjs): offhost as an agent's or a tool's $SHELL (`shell
// -c LINE`, before every command it runs) and the shell integration's check of a typed line (`shell
// --check`). It holds the shell door and the guard, without the other doors and the command table: less
// to read and deserialize at every start (docs/BUILD.md has the measurement).
import { processIo } from './process-io.js';
import { runCommand } from './run-command.js';
import * as shell from './commands/shell.js';
import { warmShell } from './warm.js';

const io = processIo();
// argv[0] is 'shell' (the loader runs this bundle for it alone); `--warm-cache shell` is the build's warm-up.
const warming = io.argv[0] === '--warm-cache';
(warming ? warmShell(io, shell) : runCommand('shell', async () => shell, io.argv.slice(1), io)).then(
  (code) => {
    // `shell -c` may leave output of its child in flight: a natural exit, unlike the hook's.
    if (warming) process.exit(code);
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`offhost: internal error: ${String((err as Error)?.stack ?? err)}\n`);
    process.exitCode = 2;
  },
);
