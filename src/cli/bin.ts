// The `offhost` executable.
import { main, processIo } from './main.js';

const io = processIo();
main(io.argv, io).then(
  (code) => {
    // check and explain write only through synchronous writes (writeAll): they exit at once, which skips the
    // heap teardown of a natural exit (about 0.7 ms). Other commands may still have output in flight.
    if (io.argv[0] === 'check' || io.argv[0] === 'explain') process.exit(code);
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`offhost: internal error: ${String((err as Error)?.stack ?? err)}\n`);
    process.exitCode = 2;
  },
);
