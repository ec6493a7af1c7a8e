// The `offhost` executable.
import { main, processIo } from './main.js';

const io = processIo();
main(io.argv, io).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`offhost: internal error: ${String((err as Error)?.stack ?? err)}\n`);
    process.exitCode = 2;
  },
);
