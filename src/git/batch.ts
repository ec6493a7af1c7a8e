// One long-lived `git cat-file --batch` per repository (per working directory and environment) and per
// process, for the object reads of the lock store: refs, trees, blobs, "does this object exist". A lock
// command used to start a cat-file, ls-tree or rev-parse for each of them (issue 23/25's cost: ~15-25 ms a
// process); one process answers them all, in order, over its pipes.
//
// - Started on first use, under the one environment policy (run.ts gitEnv), in its own process group (a
//   Ctrl-C at the terminal is offhost's to handle: `offhost run` still releases its lock through it).
// - Never outlives offhost: its handles are unref'd (only a pending request keeps node alive, through its
//   timeout timer), it is killed on process exit, and when offhost dies by a signal its stdin closes and
//   git ends at EOF. A process that died or timed out is dropped; the next request starts a new one.
// - Requests are served one after another (a request's names are pipelined in one write). git flushes each
//   answer (no --buffer), and its stderr goes to an unlinked temporary file read synchronously when a
//   request's last answer arrives: git writes a warning ("ignoring broken ref") before the answer it is
//   about, so every warning of a request is in the file by then, and only that request's (inspectRef needs them).
// - Reads only: refs are re-read by git on every lookup and a missing object makes git look for new packs,
//   so answers are as fresh as a new process's. The index is never asked through it (git would keep the
//   first one it read): ls-files stays a process of its own.
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, readSync, unlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GitError } from '../errors.js';
import { DEFAULT_GIT_TIMEOUT_MS, gitEnv, type GitCall } from './run.js';

/** An object as `cat-file --batch` gives it, or null when git says `missing` (or `ambiguous`). */
export type BatchObject = { id: string; type: string; data: Buffer } | null;

export interface BatchReply {
  objects: BatchObject[];
  /** What git wrote to stderr while answering (null: not known, stderr could not be captured). */
  warnings: string | null;
}

interface Request {
  names: string[];
  objects: BatchObject[];
  resolve: (r: BatchReply) => void;
  reject: (e: Error) => void;
  timer?: NodeJS.Timeout;
  errFrom: number;
}

const ARGS = ['cat-file', '--batch'];
const HEADER = /^([0-9a-f]{40,64}) (\S+) (\d+)$/;

class CatFileBatch {
  private child: ChildProcess;
  private errFd: number | null = null;
  private errPos = 0;
  private pending: Buffer[] = [];
  private pendingLen = 0;
  private queue: Request[] = [];
  private current: Request | null = null;
  dead = false;

  constructor(
    readonly key: string,
    private readonly call: GitCall,
    private readonly onDead: (b: CatFileBatch) => void,
  ) {
    let errPath: string | null = null;
    try {
      errPath = join(tmpdir(), `offhost-git-batch-${process.pid}-${Math.random().toString(36).slice(2, 10)}.err`);
      this.errFd = openSync(errPath, 'wx+', 0o600);
    } catch {
      errPath = null;
      this.errFd = null;
    }
    this.child = spawn('git', ARGS, { cwd: call.cwd, env: gitEnv(call), stdio: ['pipe', 'pipe', this.errFd ?? 'ignore'], detached: true });
    if (errPath) {
      try {
        unlinkSync(errPath); // git holds it open; nothing is left behind whatever happens next
      } catch {
        /* removed at close */
      }
    }
    this.child.unref();
    for (const s of [this.child.stdin, this.child.stdout] as (NodeJS.ReadableStream & { unref?: () => void })[]) s?.unref?.();
    this.child.stdin!.on('error', () => undefined);
    this.child.stdout!.on('data', (d: Buffer) => this.onData(d));
    this.child.on('error', (e) => this.fail(new GitError(`cannot run git (git cat-file --batch): ${e.message}`)));
    // 'close', not 'exit': every answer git wrote before it ended has been read by then.
    this.child.on('close', (code, signal) => this.fail(new GitError(`git cat-file --batch failed: ${this.stderrTail() || (signal ? `killed by ${signal}` : `exit ${code}`)}`)));
  }

  /** The first lines git wrote to stderr since the current request began, as gitOk reports them. */
  private stderrTail(): string {
    return (this.readErr(this.current?.errFrom ?? 0) ?? '').trim().split('\n').slice(0, 4).join(' / ');
  }

  private readErr(from: number): string | null {
    if (this.errFd === null) return null;
    const chunks: Buffer[] = [];
    let pos = from;
    const buf = Buffer.alloc(4096);
    for (;;) {
      let n = 0;
      try {
        n = readSync(this.errFd, buf, 0, buf.length, pos);
      } catch {
        break;
      }
      if (n <= 0) break;
      chunks.push(Buffer.from(buf.subarray(0, n)));
      pos += n;
    }
    this.errPos = pos;
    return Buffer.concat(chunks).toString('utf8');
  }

  ask(names: string[], timeoutMs: number): Promise<BatchReply> {
    for (const n of names) if (/[\r\n]/.test(n)) return Promise.reject(new GitError(`git cat-file --batch cannot be asked for a name holding a newline: ${JSON.stringify(n)}`));
    if (names.length === 0) return Promise.resolve({ objects: [], warnings: '' });
    return new Promise((resolve, reject) => {
      const req: Request = { names, objects: [], resolve, reject, errFrom: 0 };
      if (this.dead) return reject(new GitError('git cat-file --batch is not running'));
      this.queue.push(req);
      this.next(timeoutMs);
    });
  }

  private timeoutMs = DEFAULT_GIT_TIMEOUT_MS;

  private next(timeoutMs?: number): void {
    if (timeoutMs !== undefined) this.timeoutMs = timeoutMs;
    if (this.current || this.dead) return;
    const req = this.queue.shift();
    if (!req) return;
    this.current = req;
    req.errFrom = this.errPos;
    // A ref'd timer: the one thing that keeps node alive while git answers (the child and its pipes are unref'd).
    req.timer = setTimeout(() => {
      this.fail(new GitError(`git cat-file --batch did not answer within ${Math.round(this.timeoutMs / 1000)} s and was stopped`));
    }, this.timeoutMs);
    this.child.stdin!.write(`${req.names.join('\n')}\n`);
  }

  private onData(d: Buffer): void {
    this.pending.push(d);
    this.pendingLen += d.length;
    let buf = this.pending.length === 1 ? this.pending[0]! : Buffer.concat(this.pending, this.pendingLen);
    let pos = 0;
    while (this.current) {
      const req = this.current;
      const nl = buf.indexOf(10, pos);
      if (nl < 0) break;
      const header = buf.toString('utf8', pos, nl);
      const name = req.names[req.objects.length]!;
      const m = HEADER.exec(header);
      if (m) {
        const size = Number(m[3]);
        if (buf.length < nl + 1 + size + 1) break; // the rest of the object is still coming
        req.objects.push({ id: m[1]!, type: m[2]!, data: Buffer.from(buf.subarray(nl + 1, nl + 1 + size)) });
        pos = nl + 1 + size + 1;
      } else if (header === `${name} missing` || header === `${name} ambiguous` || / missing$/.test(header)) {
        req.objects.push(null);
        pos = nl + 1;
      } else {
        this.fail(new GitError(`git cat-file --batch answered ${JSON.stringify(header.slice(0, 200))} for ${JSON.stringify(name)}`));
        return;
      }
      if (req.objects.length === req.names.length) {
        clearTimeout(req.timer);
        this.current = null;
        req.resolve({ objects: req.objects, warnings: this.readErr(req.errFrom) });
        this.next();
      }
    }
    const rest = buf.subarray(pos);
    this.pending = rest.length ? [Buffer.from(rest)] : [];
    this.pendingLen = rest.length;
  }

  private fail(err: GitError): void {
    if (this.dead) return;
    this.dead = true;
    this.onDead(this);
    const reqs = [...(this.current ? [this.current] : []), ...this.queue];
    this.current = null;
    this.queue = [];
    for (const r of reqs) {
      clearTimeout(r.timer);
      r.reject(err);
    }
    this.close();
  }

  close(): void {
    this.dead = true;
    try {
      if (this.child.exitCode === null && this.child.signalCode === null) process.kill(-this.child.pid!, 'SIGKILL');
    } catch {
      try {
        this.child.kill('SIGKILL');
      } catch {
        /* gone */
      }
    }
    this.child.stdin?.destroy();
    this.child.stdout?.destroy();
    if (this.errFd !== null) {
      try {
        closeSync(this.errFd);
      } catch {
        /* closed */
      }
      this.errFd = null;
    }
  }

  get pid(): number | undefined {
    return this.child.pid;
  }
}

/** The live processes, by working directory, per environment object (the same env, the same process). */
const pool = new WeakMap<object, Map<string, CatFileBatch>>();
const live = new Set<CatFileBatch>();
let exitHook = false;

function batchFor(call: GitCall): CatFileBatch {
  const env = call.env ?? process.env;
  let byCwd = pool.get(env);
  if (!byCwd) pool.set(env, (byCwd = new Map()));
  const key = `${call.repoEnv ?? 'drop'}\0${call.cwd}`;
  let b = byCwd.get(key);
  if (!b || b.dead) {
    b = new CatFileBatch(key, { cwd: call.cwd, env, ...(call.repoEnv ? { repoEnv: call.repoEnv } : {}) }, (dead) => {
      live.delete(dead);
      if (byCwd!.get(key) === dead) byCwd!.delete(key);
    });
    byCwd.set(key, b);
    live.add(b);
    if (!exitHook) {
      exitHook = true;
      process.on('exit', closeGitBatches);
    }
  }
  return b;
}

/**
 * The objects `names` name (`<sha>`, `<rev>:<path>`, `<ref>^{tree}`...), in order, from the repository of
 * `call` (its cwd and env; `extra` and `input` are not used). GitError when git cannot answer (it died: a
 * corrupt object, a timeout), with git's first lines.
 */
export function catFile(call: GitCall, names: string[]): Promise<BatchReply> {
  return batchFor(call).ask(names, call.timeoutMs ?? DEFAULT_GIT_TIMEOUT_MS);
}

/** Stops every batch process of this process (at exit; tests). */
export function closeGitBatches(): void {
  for (const b of [...live]) b.close();
  live.clear();
}

/** The process ids of the batch processes running now (tests). */
export function gitBatchPids(): number[] {
  return [...live].filter((b) => !b.dead).map((b) => b.pid!).filter(Boolean);
}
