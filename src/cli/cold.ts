// Entry of dist/cold.cjs: every command that is not hot (src/cli/commands-table.ts), in one CommonJS file
// that the hot bundle require()s when such a command runs (src/cli/main.ts). Each command's module is
// evaluated only when it is loaded (esbuild wraps a dynamically imported module in a lazy initializer).
import { isMainThread, workerData } from 'node:worker_threads';
import { COMMANDS } from './commands-table.js';

export { COMMANDS };

// A worker thread started on this file (lint's, for large sets) runs the module of the command it names.
const command = isMainThread ? undefined : (workerData as { command?: unknown } | null)?.command;
if (typeof command === 'string' && Object.hasOwn(COMMANDS, command)) void COMMANDS[command]!.load();
