// The `offhost` executable (dist/hot.cjs, run by the loader dist/offhost.cjs).
import { commandEntry, main, processIo } from './main.js';

const io = processIo();
main(io.argv, io).then(
  (code) => {
    // Commands that write only through synchronous writes (writeAll) exit at once, which skips the heap
    // teardown of a natural exit (about 0.7 ms). Other commands may still have output in flight.
    if (commandEntry(io.argv[0])?.exitAtOnce || io.argv[0] === '--warm-cache') process.exit(code);
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`offhost: internal error: ${String((err as Error)?.stack ?? err)}\n`);
    process.exitCode = 2;
  },
);
