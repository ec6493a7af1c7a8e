// The CLI called in this test process, as ESLint's own CLI tests call theirs: the same `main` the
// executable runs (src/cli/main.ts), with an Io that holds the test's argv, environment and working
// directory and collects what the command writes. For tests about what a command decides and writes, not
// about the process boundary (exit on a signal, start-up, stdin of a real pipe, the bundles): those spawn
// the built executable (test/e2e, test/cli/conventions.test.ts, and every file that does not opt in).
//
// What an in-process call shares with its caller is the process: its pid and start time (a run's claim
// would name the test worker, which is alive), Node's module caches and the signal handlers. Files whose
// subject is one of those keep spawning. The git batch processes a command starts are closed when it
// returns, as its exit would.
import { systemClock } from '../../src/types.js';
import type { Io } from '../../src/io.js';
import { closeGitBatches, gitBatchPids } from '../../src/git/batch.js';

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface InProcessOptions {
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** Standard input's whole text ('' : the null device, as a spawned test's stdio 'ignore'). */
  stdin?: string;
  /** Updated with stderr as the command writes it (a test that waits for a line). */
  progress?: { stderr: string };
}

/** Resolves when process `pid` has ended (polled: it is not our child's handle to wait on here). */
async function gone(pid: number): Promise<void> {
  for (;;) {
    try {
      process.kill(pid, 0);
    } catch {
      return;
    }
    await new Promise((r) => setTimeout(r, 2));
  }
}

let mainOf: Promise<typeof import('../../src/cli/main.js')> | undefined;

/** Runs `offhost ...args` in this process; resolves with what a spawned one would have given. */
export async function offhostInProcess(args: string[], o: InProcessOptions): Promise<CliResult> {
  const { main } = await (mainOf ??= import('../../src/cli/main.js'));
  let stdout = '';
  let stderr = '';
  const dec = new TextDecoder();
  const io: Io = {
    argv: args,
    // A copy: a command that sets a variable for its children must not change the next call's.
    env: { ...o.env },
    cwd: o.cwd,
    stdout: (t) => void (stdout += t),
    stderr: (t) => {
      stderr += t;
      if (o.progress) o.progress.stderr = stderr;
    },
    stdoutBytes: (b) => void (stdout += dec.decode(b)),
    stderrBytes: (b) => {
      stderr += dec.decode(b);
      if (o.progress) o.progress.stderr = stderr;
    },
    readStdin: () => Object.assign(Promise.resolve(o.stdin ?? ''), { now: o.stdin ?? '' }),
    clock: systemClock,
    isTTY: () => false,
  };
  let code: number;
  try {
    code = await main(args, io);
  } catch (err) {
    // What bin.ts prints and returns for an error that escapes main.
    stderr += `offhost: internal error: ${String((err as Error)?.stack ?? err)}\n`;
    code = 2;
  }
  // What the process's exit does (src/git/batch.ts): the command's git batch processes end with it, so
  // that none outlives the call in a folder the test then removes or unmounts.
  const batches = gitBatchPids();
  closeGitBatches();
  await Promise.all(batches.map(gone));
  return { code, signal: null, stdout, stderr };
}
