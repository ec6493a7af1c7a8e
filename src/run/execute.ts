// One remote session: the laptop command line (a backend rendering of `sh -c <VM script>`, see
// ./remote.ts) run by bash in its own process group, fed the handshake and the file list on stdin,
// its stdout split into the VM's protocol lines and the command's output, both streams teed.
//
// Stopping (a signal, --timeout, a lost lock): the signal's name is written to the VM script's watcher
// (on stdin), which signals the command's process group; after the grace period KILL; if the session
// still has not ended, the local ssh is killed and the caller checks the VM from a new session. With
// --stdin the stream belongs to the command, so the signal goes through a new session instead
// (`remoteSignal`).
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { HANDSHAKE, StreamReader, type Preamble } from './remote.js';
import type { RunSignal, SignalHub } from './signals.js';

export type StopReason = { kind: 'signal'; sig: RunSignal } | { kind: 'timeout'; seconds: number } | { kind: 'lock-lost'; why: string };

export interface SessionOptions {
  line: string;
  cwd: string;
  env: NodeJS.ProcessEnv;
  nonce: string;
  /** Written before the handshake: the supervisor script for the session's bootstrap (./remote.ts framedScript). */
  preface?: Buffer;
  list: Buffer;
  forwardStdin: boolean;
  graceMs: number;
  timeoutMs?: number;
  stdout: (chunk: Buffer) => void;
  stderr: (chunk: Buffer) => void;
  signals: SignalHub;
  /** Registers a callback for a lost lock. */
  onLockLost?: (fn: (why: string) => void) => void;
  /** Sends a signal to the command's group from a new session (--stdin mode). */
  remoteSignal?: (sig: string) => Promise<void>;
  /** How long to wait for the local ssh to end after the VM said the command ended. */
  lingerMs?: number;
  /** Told once when the VM says `go` (the command starts), and once when its exit line arrives (run --debug). */
  progress?: (what: 'go' | 'exit') => void;
}

export interface SessionResult {
  preamble: Preamble;
  manifest: string;
  /** The command's status as the VM script reported it; null when it never arrived. */
  status: number | null;
  /** Processes it left outside its group (PID:NAME), and those that could not be stopped. */
  strays: { found: string[]; unstopped: string[] };
  local: { code: number | null; signal: string | null };
  stop: StopReason | null;
  /** The local ssh had to be killed (the session did not end by itself). */
  killedLocally: boolean;
  stderrHead: string;
}

const HEAD_MAX = 64 * 1024;

type SessionEvent = 'stdout' | 'stderr' | 'stdoutClose' | 'stderrClose' | 'error' | 'exit';

/**
 * A session's local process, started before its input is ready (a session opened early: ./remote.ts
 * bootstrapScript). What it says and does until `runSession` takes it over is kept and replayed then;
 * `dispose` ends one that is never taken over (its VM side exits at the end of its input, having run nothing).
 */
export interface StartedSession {
  readonly child: ChildProcessWithoutNullStreams;
  /** Takes the events over: those so far are replayed at once, in order. */
  attach(sink: (ev: SessionEvent, ...args: unknown[]) => void): void;
  dispose(): void;
}

export function startSession(line: string, cwd: string, env: NodeJS.ProcessEnv): StartedSession {
  const child = spawn('bash', ['-c', line], { cwd, env, stdio: ['pipe', 'pipe', 'pipe'], detached: true });
  const kept: Array<[SessionEvent, unknown[]]> = [];
  let sink: ((ev: SessionEvent, ...args: unknown[]) => void) | null = null;
  let exited = false;
  const relay =
    (ev: SessionEvent) =>
    (...args: unknown[]) => {
      if (ev === 'exit' || ev === 'error') exited = true;
      if (sink) sink(ev, ...args);
      else kept.push([ev, args]);
    };
  child.stdin.on('error', () => undefined); // the session ended first: nothing more to say to it
  child.stdout.on('data', relay('stdout'));
  child.stderr.on('data', relay('stderr'));
  child.stdout.on('close', relay('stdoutClose'));
  child.stderr.on('close', relay('stderrClose'));
  child.on('error', relay('error'));
  child.on('exit', relay('exit'));
  return {
    child,
    attach(fn) {
      sink = fn;
      for (const [ev, args] of kept.splice(0)) fn(ev, ...args);
    },
    dispose() {
      if (sink) return;
      sink = () => undefined;
      kept.length = 0;
      if (!child.stdin.destroyed) child.stdin.end();
      if (!exited && child.pid !== undefined) {
        try {
          process.kill(-child.pid, 'SIGTERM');
        } catch {
          /* gone */
        }
      }
      child.stdout.destroy();
      child.stderr.destroy();
    },
  };
}

export function runSession(o: SessionOptions, started?: StartedSession): Promise<SessionResult> {
  return new Promise((resolve) => {
    const session = started ?? startSession(o.line, o.cwd, o.env);
    const child = session.child;
    let stderrHead = '';
    let stop: StopReason | null = null;
    let killedLocally = false;
    let exited = false;
    let lingerArmed = false;
    const timers: NodeJS.Timeout[] = [];
    const reader = new StreamReader(o.nonce, o.stdout);

    const killLocal = (sig: NodeJS.Signals) => {
      if (exited || child.pid === undefined) return;
      killedLocally = true;
      try {
        process.kill(-child.pid, sig);
      } catch {
        /* gone */
      }
    };
    const send = (word: string) => {
      if (o.forwardStdin) {
        void o.remoteSignal?.(word).catch(() => undefined);
        return;
      }
      if (!child.stdin.destroyed && child.stdin.writable) child.stdin.write(`${word}\n`);
    };
    const requestStop = (why: StopReason, now = false) => {
      stop ??= why;
      if (reader.preamble.end !== 'go') {
        // The command has not started: end the session (the VM script stops at end of input).
        killLocal('SIGTERM');
        return;
      }
      const sig = why.kind === 'signal' ? why.sig.slice(3) : 'TERM';
      send(now ? 'KILL' : sig);
      if (timers.length === 0) {
        timers.push(setTimeout(() => send('KILL'), o.graceMs));
        // The session should end soon after KILL; if it does not, the connection is gone: end it here.
        timers.push(
          setTimeout(() => {
            killLocal('SIGTERM');
            timers.push(setTimeout(() => killLocal('SIGKILL'), 2000));
          }, o.graceMs * 2 + 5000),
        );
      }
    };

    o.signals.listen((sig, count) => requestStop({ kind: 'signal', sig }, count > 1));
    if (o.signals.first) requestStop({ kind: 'signal', sig: o.signals.first });
    o.onLockLost?.((why) => requestStop({ kind: 'lock-lost', why }));
    // --timeout counts from the command's start (`go`), not from the connection and the verification.
    let timeoutArmed = false;
    const armTimeout = () => {
      if (timeoutArmed || o.timeoutMs === undefined || reader.preamble.end !== 'go') return;
      timeoutArmed = true;
      const seconds = Math.round(o.timeoutMs / 1000);
      timers.push(setTimeout(() => requestStop({ kind: 'timeout', seconds }), o.timeoutMs));
    };

    if (o.preface) child.stdin.write(o.preface);
    child.stdin.write(`${HANDSHAKE}\n`);
    child.stdin.write(o.list);
    if (o.forwardStdin) process.stdin.pipe(child.stdin);
    // Otherwise stdin stays open: its end is how the VM learns that offhost has gone.

    let wentOn = false;
    const onStdout = (d: Buffer) => {
      reader.push(d);
      armTimeout();
      if (!wentOn && reader.preamble.end === 'go') {
        wentOn = true;
        o.progress?.('go');
      }
      if (reader.exitStatus !== null && !lingerArmed) {
        o.progress?.('exit');
        // The command ended; a process it left outside its group may still hold the stream open.
        lingerArmed = true;
        timers.push(setTimeout(() => killLocal('SIGTERM'), o.lingerMs ?? 3000));
      }
    };
    const onStderr = (d: Buffer) => {
      if (stderrHead.length < HEAD_MAX) stderrHead += d.toString('utf8').slice(0, HEAD_MAX - stderrHead.length);
      o.stderr(d);
    };
    let code: number | null = null;
    let signal: string | null = null;
    const finish = () => {
      for (const t of timers) clearTimeout(t);
      o.signals.listen(null);
      if (o.forwardStdin) process.stdin.unpipe(child.stdin);
      reader.end();
      resolve({
        preamble: reader.preamble,
        manifest: reader.manifestText,
        status: reader.exitStatus,
        strays: reader.strays,
        local: { code, signal },
        stop,
        killedLocally,
        stderrHead,
      });
    };
    let pending = 3;
    const done = () => {
      if (--pending === 0) finish();
    };
    const onError = (e: Error) => {
      stderrHead += `offhost: cannot start bash: ${e.message}\n`;
      exited = true;
      pending = 1;
      done();
    };
    const onExit = (c: number | null, s: string | null) => {
      exited = true;
      code = c;
      signal = s;
      if (!child.stdin.destroyed) child.stdin.end();
      // Streams may be held by a leftover local process: do not wait for them for long.
      timers.push(
        setTimeout(() => {
          child.stdout.destroy();
          child.stderr.destroy();
        }, 1000),
      );
      done();
    };
    session.attach((ev, ...args) => {
      if (ev === 'stdout') onStdout(args[0] as Buffer);
      else if (ev === 'stderr') onStderr(args[0] as Buffer);
      else if (ev === 'stdoutClose' || ev === 'stderrClose') done();
      else if (ev === 'error') onError(args[0] as Error);
      else onExit(args[0] as number | null, args[1] as string | null);
    });
  });
}
