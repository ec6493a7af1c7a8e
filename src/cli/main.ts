// Entry point: dispatches on the subcommand and loads only that subcommand's module, so that the hot
// paths (check, hook, shell) start without the code of lock, lint, ci and their dependencies.
import { EXIT, exitCodeFor, isOffhostError } from '../errors.js';
import type { CommandModule, Io } from './io.js';
import { systemClock } from '../types.js';
import { closeSync, constants, fstatSync, openSync, readFileSync, readSync, writeSync } from 'node:fs';
// The hot paths (run before every command an agent executes) are in the entry file itself; the rest are
// separate files loaded on demand (scripts/build.mjs makes the cold imports external).
import * as check from './commands/check.js';
import * as explain from './commands/explain.js';
import * as hook from './commands/hook.js';
import * as shell from './commands/shell.js';
import { loadCold } from './cold.js';

const COMMANDS: Record<string, { summary: string; load: () => Promise<CommandModule> }> = {
  check: { summary: 'classify one command line: allow, deny or reroute', load: async () => check },
  explain: { summary: 'show the commands found in a line and the rule that decided each', load: async () => explain },
  rules: { summary: 'list the rules in force, or test their examples', load: () => loadCold('rules') },
  lock: { summary: 'acquire, heartbeat, release, inspect VM locks (POLICY R3/R4)', load: () => loadCold('lock') },
  run: { summary: 'run a command here, or on its VM under the VM lock', load: () => loadCold('run') },
  lint: { summary: 'validate lock files and the staged lock transition', load: () => loadCold('lint') },
  init: { summary: 'set up husky + lint-staged, agent hooks or shell integration', load: () => loadCold('init') },
  hook: { summary: 'pre-exec hook for claude-code, codex or gemini (event JSON on stdin)', load: async () => hook },
  shell: { summary: 'drop-in $SHELL: check `-c COMMAND`, then run it or its reroute', load: async () => shell },
  scan: { summary: 'scan scripts, CI files and docs for heavy commands', load: () => loadCold('scan') },
  ci: { summary: 'pull-request policy check: lock hygiene and heavy commands', load: () => loadCold('ci') },
};

function usage(): string {
  const width = Math.max(...Object.keys(COMMANDS).map((k) => k.length));
  const lines = Object.entries(COMMANDS).map(([k, v]) => `  ${k.padEnd(width)}  ${v.summary}`);
  return `Usage: offhost <command> [options]\n\nCommands:\n${lines.join('\n')}\n\nRun \`offhost <command> --help\` for a command's options.\n`;
}

export async function main(argv: string[], io: Io): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    (name === undefined ? io.stderr : io.stdout)(usage());
    return name === undefined ? EXIT.error : EXIT.ok;
  }
  if (name === '--warm-cache') return warm(io);
  if (name === '--version' || name === '-V') {
    io.stdout(`${process.env.OFFHOST_VERSION ?? '0.1.0'}\n`);
    return EXIT.ok;
  }
  const entry = Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined;
  if (!entry) {
    io.stderr(`offhost: unknown command '${name}'\n\n${usage()}`);
    return EXIT.error;
  }
  try {
    const mod = await entry.load();
    return await mod.run(rest, io);
  } catch (err) {
    io.stderr(`offhost ${name}: ${isOffhostError(err) ? err.message : String((err as Error)?.stack ?? err)}\n`);
    return exitCodeFor(err);
  }
}

/**
 * Synchronous write to fd 1/2: creating process.stdout costs about a millisecond at start-up (stream and
 * tty machinery) on the hook path, and a synchronous write also cannot be lost when the process exits.
 */
function writeAll(fd: number, text: string): void {
  const buf = Buffer.from(text, 'utf8');
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
  }
}

function readStdin(): Promise<string> {
  let fd: number;
  try {
    const st = fstatSync(0);
    if (st.isFile()) return Promise.resolve(readFileSync(0, 'utf8'));
    if (st.isSocket()) {
      if (!socketStdinNonBlocking()) return viaStream();
      fd = 0;
    } else if (st.isFIFO()) {
      fd = openSync('/dev/stdin', constants.O_RDONLY | constants.O_NONBLOCK);
    } else {
      return viaStream();
    }
  } catch {
    return viaStream();
  }
  return new Promise((resolveText, reject) => {
    const chunks: Buffer[] = [];
    const buf = Buffer.allocUnsafe(64 * 1024);
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
        if (fd !== 0) closeSync(fd); // fd 0 belongs to socketHandle
      } catch {
        /* already closed */
      }
      if (err) reject(err);
      else resolveText(text!);
    };
    const step = (): void => {
      for (;;) {
        let n: number;
        try {
          n = readSync(fd, buf, 0, buf.length, null);
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
        if (n === 0) return finish(null, Buffer.concat(chunks).toString('utf8'));
        chunks.push(Buffer.from(buf.subarray(0, n)));
        wait = 1;
      }
    };
    step();
  });
}

async function viaStream(): Promise<string> {
  streamUsed = true;
  const chunks: Buffer[] = [];
  for await (const c of process.stdin) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

export function processIo(): Io {
  return {
    argv: process.argv.slice(2),
    env: process.env,
    cwd: process.cwd(),
    stdout: (t) => writeAll(1, t),
    stderr: (t) => writeAll(2, t),
    readStdin,
    cancelStdin,
    clock: systemClock,
  };
}

/**
 * Exercises the hot paths in-process, output discarded, so that the loader's V8 code cache (written when
 * this process exits) holds their compiled functions: `npm run build` runs it once.
 */
async function warm(io: Io): Promise<number> {
  const quiet: Io = { ...io, stdout: () => {}, stderr: () => {}, env: { ...io.env, OFFHOST_ROLE: 'laptop', OFFHOST_AUDIT_LOG: '/dev/null' } };
  const home = io.env.HOME ?? '/home/koder';
  const lines = [
    'ls -la',
    `cd ${home}/dev/koder/engines/lang/koda && make build-safe 2>&1 | tail -50`,
    'sudo env FOO=1 bash -c "timeout 60 npx playwright test" | tee log',
    'qemu-system-x86_64 -hda win10.qcow2',
    'echo "unterminated',
  ];
  for (const line of lines) {
    await check.run(['--json', line], quiet);
    await check.run([line], quiet);
  }
  for (const command of lines) {
    const event = JSON.stringify({ session_id: 'warm', cwd: io.cwd, hook_event_name: 'PreToolUse', tool_name: 'Bash', tool_input: { command } });
    await hook.run(['claude-code'], { ...quiet, readStdin: async () => event });
  }
  return EXIT.ok;
}
