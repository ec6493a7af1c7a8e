// A `git update-ref --stdin` started ahead of a ref move that is coming (the lock an `offhost run` takes,
// then releases), so that the move itself is a few lines on a pipe instead of a process started at that
// moment: starting a process costs a Node process of ~70 MB 2-4 ms of its main thread, and git's own start
// a few more, on the run's critical path (issue 24).
//
// - Exactly what `git update-ref -m REASON REF NEW OLD` does: one transaction per move (start, update with
//   the old value, prepare, commit), the compare-and-swap and the reflog message git's own. The message is
//   given when the process starts, so a writer serves one reason; a move with no writer ready for its
//   reason starts git as before.
// - Any doubt goes back to the caller: a writer that died, could not be written to, or failed for a reason
//   other than "the ref is not at OLD" answers 'unknown' and is dropped; the caller then looks at the ref
//   (a move git made before it died is made) and else runs its usual `git update-ref`, which handles a
//   stale `.lock` left by a killed git (ref-tree.ts casRef).
// - Never outlives offhost, like the batch readers (./batch.ts): unref'd, in its own process group, killed at
//   exit, and at EOF on its stdin (offhost gone by a signal) git ends with nothing started.
// - Needs git 2.28 (transactions on --stdin); an older git refuses `start`, which is a null as above.
import { spawn, type ChildProcess } from 'node:child_process';
import { gitEnv, type GitCall } from './run.js';

const ZERO = /^0+$/;

/** What a writer says of a move: null when no writer was ready (nothing was tried). */
export type WriterAnswer = 'ok' | 'moved' | 'unknown' | null;

interface Move {
  line: string;
  resolve: (r: WriterAnswer) => void;
  acks: number;
}

class RefWriter {
  private child: ChildProcess;
  dead = false;
  private out = '';
  private err = '';
  private current: Move | null = null;

  constructor(call: GitCall, reason: string, private readonly onDead: (w: RefWriter) => void) {
    this.child = spawn('git', ['update-ref', '--stdin', '-m', reason], { cwd: call.cwd, env: gitEnv(call), stdio: ['pipe', 'pipe', 'pipe'], detached: true });
    this.child.unref();
    for (const s of [this.child.stdin, this.child.stdout, this.child.stderr] as (NodeJS.ReadableStream & { unref?: () => void })[]) s?.unref?.();
    this.child.stdin!.on('error', () => this.end());
    this.child.stdout!.on('data', (d: Buffer) => this.onOut(d.toString('utf8')));
    this.child.stderr!.on('data', (d: Buffer) => (this.err += d.toString('utf8')));
    this.child.on('error', () => this.end());
    this.child.on('close', () => this.end());
  }

  /** One move; 'ok', 'moved' (the ref was not at the old value: nothing changed), or 'unknown'. */
  move(ref: string, next: string, old: string): Promise<WriterAnswer> {
    if (this.dead || this.current || /[\s\0]/.test(ref + next + old)) return Promise.resolve(null);
    return new Promise((resolve) => {
      this.current = { line: `update ${ref} ${next} ${old}`, resolve, acks: 0 };
      this.err = '';
      // A ref'd timer keeps node alive while git answers (the child and its pipes are unref'd); a git that
      // does not answer is stopped, and the caller's own update-ref decides.
      const timer = setTimeout(() => this.end(), 30_000);
      const done = this.current.resolve;
      this.current.resolve = (r) => {
        clearTimeout(timer);
        done(r);
      };
      this.child.stdin!.write(`start\n${this.current.line}\nprepare\ncommit\n`);
    });
  }

  private onOut(text: string): void {
    this.out += text;
    let nl: number;
    while ((nl = this.out.indexOf('\n')) >= 0) {
      const line = this.out.slice(0, nl);
      this.out = this.out.slice(nl + 1);
      const m = this.current;
      if (!m) continue;
      if (!/^(start|prepare|commit): ok$/.test(line)) {
        this.end();
        return;
      }
      if (++m.acks === 3) {
        this.current = null;
        m.resolve('ok');
      }
    }
  }

  private end(): void {
    if (this.dead) return;
    this.dead = true;
    this.onDead(this);
    const m = this.current;
    this.current = null;
    this.close();
    if (!m) return;
    // git died mid-move: "is at X but expected Y" (and "already exists" for a ref that must be new) is a
    // compare-and-swap git refused, nothing written; anything else, including no word at all, is for the
    // caller's own update-ref to find out.
    m.resolve(/is at [0-9a-f]+ but expected|reference already exists/.test(this.err) ? 'moved' : 'unknown');
  }

  close(): void {
    this.dead = true;
    try {
      if (this.child.exitCode === null && this.child.signalCode === null) process.kill(-this.child.pid!, 'SIGKILL');
    } catch {
      /* gone */
    }
    this.child.stdin?.destroy();
    this.child.stdout?.destroy();
    this.child.stderr?.destroy();
  }

  get pid(): number | undefined {
    return this.child.pid;
  }
}

/** Ready writers, by environment object, then working directory and reason. */
const pool = new WeakMap<object, Map<string, RefWriter>>();
const live = new Set<RefWriter>();
let exitHook = false;

function keyOf(call: GitCall, reason: string): string {
  return `${call.repoEnv ?? 'drop'}\0${call.cwd}\0${reason}`;
}

/** Starts a writer for moves of the repository of `call` with `reason`, unless one is ready. */
export function prepareRefWriter(call: GitCall, reason: string): void {
  const env = call.env ?? process.env;
  let byKey = pool.get(env);
  if (!byKey) pool.set(env, (byKey = new Map()));
  const key = keyOf(call, reason);
  const have = byKey.get(key);
  if (have && !have.dead) return;
  let w: RefWriter;
  try {
    w = new RefWriter(call, reason, (dead) => {
      live.delete(dead);
      if (byKey!.get(key) === dead) byKey!.delete(key);
    });
  } catch {
    return; // no git to start: the move starts its own, and says why
  }
  byKey.set(key, w);
  live.add(w);
  if (!exitHook) {
    exitHook = true;
    process.on('exit', closeRefWriters);
  }
}

/**
 * Moves `ref` from `old` (all zeros: must not exist) to `next` through a writer made ready for `reason`:
 * 'ok', 'moved', 'unknown' (it died on the way), or null when none was ready.
 */
export function moveWithWriter(call: GitCall, reason: string, ref: string, next: string, old: string): Promise<WriterAnswer> {
  const w = pool.get(call.env ?? process.env)?.get(keyOf(call, reason));
  if (!w || w.dead || ZERO.test(next)) return Promise.resolve(null);
  return w.move(ref, next, old);
}

/** Stops every writer of this process (at exit; tests). */
export function closeRefWriters(): void {
  for (const w of [...live]) w.close();
  live.clear();
}

/** The process ids of the writers running now (tests). */
export function refWriterPids(): number[] {
  return [...live].filter((w) => !w.dead).map((w) => w.pid!).filter(Boolean);
}
