// What a subcommand may touch of the outside world, passed in so tests can run commands in-process.
import type { Clock } from './types.js';

export interface Io {
  argv: string[];
  env: NodeJS.ProcessEnv;
  cwd: string;
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  /** Bytes as they are (a remote command's output passed through by `offhost run`); default: via stdout/stderr. */
  stdoutBytes?: (bytes: Uint8Array) => void;
  stderrBytes?: (bytes: Uint8Array) => void;
  /**
   * Reads all of standard input (hooks get their event JSON there). The promise may carry `now`: the whole
   * input, when it was all there at the first read (the usual case for a hook), so that a caller need not
   * wait a turn of the event loop to learn it.
   */
  readStdin: () => StdinRead;
  /** Gives up a readStdin still waiting for input (a stalled agent), so that the process can end. */
  cancelStdin?: () => void;
  clock: Clock;
  /** Is this descriptor (1 stdout, 2 stderr) a terminal? Absent: not one (tests, embedding). */
  isTTY?: (fd: 1 | 2) => boolean;
}

export type CommandModule = { run(args: string[], io: Io): Promise<number> };

/** What readStdin returns (see Io.readStdin). */
export type StdinRead = Promise<string> & { readonly now?: string };
