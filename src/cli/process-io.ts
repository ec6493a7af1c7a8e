// The real process behind Io: argv, environment, synchronous stdout/stderr and a standard input reader
// that avoids Node's stream machinery. Shared by both bundles (dist/hot.cjs and dist/hook.cjs).
import type { Io, StdinRead } from '../io.js';
import { systemClock } from '../types.js';
import { closeSync, constants, fstatSync, openSync, readFileSync, readSync, statSync, writeSync } from 'node:fs';

/**
 * Synchronous write to fd 1/2: creating process.stdout costs about a millisecond at start-up (stream and
 * tty machinery) on the hook path, and a synchronous write also cannot be lost when the process exits.
 */
function writeAll(fd: number, text: string | Uint8Array): void {
  const buf = typeof text === 'string' ? Buffer.from(text, 'utf8') : text;
  let off = 0;
  while (off < buf.length) {
    try {
      off += writeSync(fd, buf, off);
    } catch (err) {
      // A non-blocking pipe that is full: wait for the reader.
      if ((err as NodeJS.ErrnoException).code === 'EAGAIN') Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 5);
      else if ((err as NodeJS.ErrnoException).code === 'EPIPE') return;
      else throw err;
    }
  }
}

/**
 * All of standard input. process.stdin would load the net and stream modules (about 6 ms, on the path of
 * every agent hook), so stdin is read with fs: a regular file directly; a pipe through a second,
 * non-blocking open of /dev/stdin polled from the event loop (a blocking read in libuv's thread pool
 * could not be abandoned when the hook gives up on a stalled agent). A socket (what an agent written in
 * Node hands its hooks: libuv's stdio pipes are socket pairs) cannot be opened again, so fd 0 itself is
 * made non-blocking by libuv's own pipe handle, without the stream machinery. Anything else, or a Node
 * without that handle: process.stdin.
 */
let cancelPending: (() => void) | null = null;
/** In-place waits of 0.2 ms before polling with timers: 50 ms at most. */
const SPIN_LIMIT = 250;

let streamUsed = false;
/** libuv's handle on fd 0 once made non-blocking; kept alive, since closing it would close fd 0. */
let socketHandle: unknown;

function cancelStdin(): void {
  cancelPending?.();
  if (streamUsed && process.stdin.readable) process.stdin.destroy();
}

/**
 * Puts the socket on fd 0 in non-blocking mode through libuv's Pipe handle (uv_pipe_open sets
 * O_NONBLOCK; the handle does not read and keeps nothing alive). process.binding('pipe_wrap') is a
 * documentation-only deprecation; if a Node drops it, this returns false and stdin is read as a stream.
 */
function socketStdinNonBlocking(): boolean {
  const quiet = process.noDeprecation;
  process.noDeprecation = true; // no DEP0111 warning under --pending-deprecation: the hook's stderr is an answer
  try {
    type PipeCtor = new (type: number) => { open(fd: number): number };
    const binding = (process as unknown as { binding(name: string): { Pipe: PipeCtor; constants: { SOCKET: number } } })
      .binding('pipe_wrap');
    const pipe = new binding.Pipe(binding.constants.SOCKET);
    if (pipe.open(0) !== 0) return false;
    socketHandle = pipe;
    return true;
  } catch {
    return false;
  } finally {
    process.noDeprecation = quiet;
  }
}

/** More standard input than any caller takes is refused unread past this (no unbounded buffering). */
export const READ_MAX = 64 * 1024 * 1024;
const tooLarge = () => new Error(`standard input is larger than ${READ_MAX / 1024 / 1024} MiB`);

/**
 * The first `length` bytes of `buf` as UTF-8. Buffer#utf8Slice is what Buffer#toString('utf8') calls after
 * its argument checks, whose first call costs a tenth of a millisecond on every hook call; a Node without
 * it (it is not in the documentation) gets toString.
 */
export function utf8(buf: Buffer, length: number): string {
  const slice = (buf as Buffer & { utf8Slice?: (start: number, end: number) => string }).utf8Slice;
  return typeof slice === 'function' ? slice.call(buf, 0, length) : buf.toString('utf8', 0, length);
}

type StatBinding = { fstat(fd: number, bigint: false, req: undefined, shouldThrow: true): ArrayLike<number>; stat(path: string, bigint: false, req: undefined, throwIfNoEntry: true): ArrayLike<number> };

/**
 * The file type of fd 0 (its mode's S_IFMT bits). fs.fstatSync builds a Stats object, whose first
 * construction cost 0.1 ms of every hook call; the fs binding's fstat returns the raw numbers, the mode at
 * index 1. Like pipe_wrap below, process.binding('fs') is a documentation-only deprecation: its layout is
 * checked on /dev/null (a character device) before it is trusted, and anything else falls back to
 * fstatSync.
 */
function stdinType(): number {
  const quiet = process.noDeprecation;
  process.noDeprecation = true; // no DEP0111 warning under --pending-deprecation: the hook's stderr is an answer
  try {
    const b = (process as unknown as { binding(name: string): Partial<StatBinding> }).binding('fs');
    if (typeof b.fstat === 'function' && typeof b.stat === 'function') {
      const devNull = b.stat('/dev/null', false, undefined, true);
      if ((Number(devNull[1]) & constants.S_IFMT) === constants.S_IFCHR) {
        const mode = Number(b.fstat(0, false, undefined, true)[1]);
        if (Number.isInteger(mode)) return mode & constants.S_IFMT;
      }
    }
  } catch {
    // A Node without it, or fd 0 closed: fstatSync says which.
  } finally {
    process.noDeprecation = quiet;
  }
  return fstatSync(0).mode & constants.S_IFMT;
}

function readStdin(): StdinRead {
  let fd: number;
  try {
    const type = stdinType();
    if (type === constants.S_IFREG) {
      if (fstatSync(0).size > READ_MAX) return Promise.reject(tooLarge());
      const now = readFileSync(0, 'utf8');
      return Object.assign(Promise.resolve(now), { now });
    }
    if (type === constants.S_IFSOCK) {
      if (!socketStdinNonBlocking()) return viaStream();
      fd = 0;
    } else if (type === constants.S_IFIFO) {
      fd = openSync('/dev/stdin', constants.O_RDONLY | constants.O_NONBLOCK);
    } else {
      return viaStream();
    }
  } catch {
    return viaStream();
  }
  // Set when the input was all there at once: step() below then finishes before the promise is returned.
  let now: string | undefined;
  const reading = new Promise<string>((resolveText, reject) => {
    // An event is a few kilobytes: a 16 KiB buffer takes it in one read. Input is gathered in place (the
    // buffer doubles when full) and decoded once: a copy per read cost a tenth of a millisecond at start.
    let buf = Buffer.allocUnsafe(16 * 1024);
    let total = 0;
    let wait = 1;
    let spun = 0;
    const sleeper = new Int32Array(new SharedArrayBuffer(4));
    let timer: NodeJS.Timeout | undefined;
    cancelPending = () => {
      clearTimeout(timer);
      finish(null, ''); // the caller has already given up; nothing reads this
    };
    const finish = (err: unknown, text?: string) => {
      cancelPending = null;
      try {
        // fd 0 belongs to socketHandle (and Node gives fds 0-2 their original flags back at exit).
        if (fd !== 0) closeSync(fd);
      } catch {
        /* already closed */
      }
      if (err) reject(err);
      else {
        now = text!;
        resolveText(text!);
      }
    };
    const step = (): void => {
      for (;;) {
        let n: number;
        try {
          n = readSync(fd, buf, total, buf.length - total, null);
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code === 'EAGAIN') {
            // The agent is still writing: wait a little in place first (a timer costs a millisecond
            // at least), then poll from the event loop so that the hook's deadline can fire.
            if (spun < SPIN_LIMIT) {
              spun++;
              Atomics.wait(sleeper, 0, 0, 0.2);
              continue;
            }
            timer = setTimeout(step, wait);
            wait = Math.min(wait * 2, 20);
            return;
          }
          return finish(err);
        }
        if (n === 0) return finish(null, utf8(buf, total));
        if ((total += n) > READ_MAX) return finish(tooLarge());
        if (total === buf.length) {
          const bigger = Buffer.allocUnsafe(Math.min(buf.length * 2, READ_MAX + 1));
          buf.copy(bigger, 0, 0, total);
          buf = bigger;
        }
        wait = 1;
      }
    };
    step();
  });
  return now === undefined ? reading : Object.assign(reading, { now });
}

async function viaStream(): Promise<string> {
  streamUsed = true;
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const c of process.stdin) {
    chunks.push(c as Buffer);
    if ((total += (c as Buffer).length) > READ_MAX) {
      process.stdin.destroy();
      throw tooLarge();
    }
  }
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * The working directory as the shell that started us spells it: $PWD when it names this very directory
 * (what bash and zsh themselves check before trusting an inherited PWD), else getcwd(). So `offhost run`
 * and `offhost shell` start from the directory `offhost check --cwd "$PWD"` judged, and a `cd ..` in the
 * line goes where bash's logical `cd ..` goes; the guard then judges the canonical directory either way.
 */
export function logicalCwd(env: NodeJS.ProcessEnv = process.env): string {
  const physical = process.cwd();
  const pwd = env.PWD;
  if (!pwd || pwd === physical || !pwd.startsWith('/') || /(^|\/)\.\.?(\/|$)/.test(pwd)) return physical;
  try {
    const a = statSync(pwd);
    const b = statSync(physical);
    return a.dev === b.dev && a.ino === b.ino ? pwd : physical;
  } catch {
    return physical;
  }
}

/**
 * Is fd a terminal? A character device other than /dev/null. (node:tty's isatty would load node:net, over a
 * millisecond on the start-up of `offhost check`.)
 */
function isTTY(fd: 1 | 2): boolean {
  try {
    const st = fstatSync(fd);
    if (!st.isCharacterDevice()) return false;
    const devNull = statSync('/dev/null');
    return st.rdev !== devNull.rdev;
  } catch {
    return false;
  }
}

export function processIo(): Io {
  return {
    argv: process.argv.slice(2),
    env: process.env,
    cwd: logicalCwd(),
    stdout: (t) => writeAll(1, t),
    stderr: (t) => writeAll(2, t),
    stdoutBytes: (b) => writeAll(1, b),
    stderrBytes: (b) => writeAll(2, b),
    readStdin,
    cancelStdin,
    clock: systemClock,
    isTTY,
  };
}
