// The hold: a run holds the VM for exactly as long as it works there (issue 11 item 2). One small module
// over the lock store, so the rest of `offhost run` does not know how locks are kept:
//
//   acquireHold(...)  -> { held: Hold } | { busy: who } | { interrupted }
//   hold.lost         set (with why) when the lock was taken over or vanished while the run went on
//   hold.release()    archives the lock when this run took it (a lock the session held before the run
//                     stays, the session releases it), with the run's record
//
// Every run has its own claim: a second run of the same session on the same VM is refused (or, with
// --wait, waits and says so), never rides along on the first one's lock.
//
// Over the current lock lifecycle (src/locks/lifecycle.ts: the lock file in the working tree) a claim is
// a file beside the git directory's offhost state, `<git-dir>/offhost/claims/<vm>.json`, made with
// O_EXCL (one winner) and naming the run, its pid and host; a claim whose process is gone is stale and
// taken over.
import { closeSync, mkdirSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import {
  acquireFirstFree,
  describeHolder,
  heartbeat,
  release,
  startHeartbeats,
  type LifecycleContext,
  type LockTarget,
} from '../locks/lifecycle.js';

export interface HoldRequest {
  candidates: string[];
  runId: string;
  reason: string;
  /** The exact command, for the lock body while it runs (R3). */
  command: string;
  ttlMinutes: number;
  heartbeatMs: number;
  /** Wait while held (by another session or another run of this one). */
  wait?: { limitMs?: number; pollMs: number };
  /** Stop waiting when this says so (a signal). */
  cancelled: () => boolean;
  progress: (line: string) => void;
}

export interface Hold {
  vm: string;
  file: string;
  /** This run took the lock (and so releases it). */
  took: boolean;
  lost: string | null;
  onLost(fn: (why: string) => void): void;
  release(recordText: string): Promise<string>;
}

export type HoldResult = { kind: 'held'; hold: Hold } | { kind: 'busy'; who: string } | { kind: 'interrupted' };

interface Claim {
  run: string;
  pid: number;
  host: string;
  started: string;
  command: string;
}

function claimsDir(ctx: LifecycleContext): string {
  return join(ctx.repo.gitDir, 'offhost', 'claims');
}

function alive(c: Claim): boolean {
  if (c.host !== hostname()) return true; // cannot tell from here: assume it runs
  try {
    process.kill(c.pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Takes the run's claim on `vm`, or returns the live claim that is in the way. */
function takeClaim(ctx: LifecycleContext, vm: string, mine: Claim): Claim | null {
  const dir = claimsDir(ctx);
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `${vm}.json`);
  for (let i = 0; i < 3; i++) {
    try {
      const fd = openSync(file, 'wx');
      writeSync(fd, JSON.stringify(mine));
      closeSync(fd);
      return null;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    let other: Claim | null = null;
    try {
      other = JSON.parse(readFileSync(file, 'utf8')) as Claim;
    } catch {
      other = null; // half-written or gone: retry
    }
    if (other && alive(other)) return other;
    if (other) rmSync(file, { force: true }); // its process is gone: stale
  }
  throw new Error(`cannot take the run claim ${file}`);
}

function dropClaim(ctx: LifecycleContext, vm: string, runId: string): void {
  const file = join(claimsDir(ctx), `${vm}.json`);
  try {
    const c = JSON.parse(readFileSync(file, 'utf8')) as Claim;
    if (c.run === runId) rmSync(file, { force: true });
  } catch {
    /* gone */
  }
}

function lockBody(req: HoldRequest): string {
  return [
    `Running \`offhost run\` ${req.runId} on ${hostname()} (pid ${process.pid}):`,
    '',
    '```sh',
    req.command,
    '```',
    '',
  ].join('\n');
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function acquireHold(ctx: LifecycleContext, req: HoldRequest): Promise<HoldResult> {
  const targets: LockTarget[] = req.candidates.map((vm) => ({ kind: 'vm', vm }));
  const start = Date.now();
  let announced = '';
  for (;;) {
    if (req.cancelled()) return { kind: 'interrupted' };
    const got = await acquireFirstFree(ctx, targets, { reason: req.reason, ttlMinutes: req.ttlMinutes, body: lockBody(req) });
    let who: string;
    if (got.status === 'held') who = describeHolder(got.holder, ctx.clock.now());
    else {
      const vm = got.target;
      const claim: Claim = { run: req.runId, pid: process.pid, host: hostname(), started: new Date().toISOString(), command: req.command };
      const other = takeClaim(ctx, vm, claim);
      if (!other) return { kind: 'held', hold: makeHold(ctx, req, vm, got.file, got.status === 'acquired') };
      // This session's lock, but another of its runs is on the VM: never ride along.
      if (got.status === 'acquired') await release(ctx, { kind: 'vm', vm });
      who = `another run of this session (${other.run}, pid ${other.pid} on ${other.host}, since ${other.started}) is running on ${vm}: ${other.command}`;
    }
    if (!req.wait) return { kind: 'busy', who };
    const left = req.wait.limitMs === undefined ? Infinity : req.wait.limitMs - (Date.now() - start);
    if (left <= 0) return { kind: 'busy', who };
    if (who !== announced) {
      req.progress(`${who}\nwaiting (checking every ${Math.max(1, Math.round(req.wait.pollMs / 1000))} s)...`);
      announced = who;
    }
    const until = Date.now() + Math.min(req.wait.pollMs, left);
    while (Date.now() < until) {
      if (req.cancelled()) return { kind: 'interrupted' };
      await sleep(Math.min(100, until - Date.now()));
    }
  }
}

function makeHold(ctx: LifecycleContext, req: HoldRequest, vm: string, file: string, took: boolean): Hold {
  const target: LockTarget = { kind: 'vm', vm };
  const lostFns: ((why: string) => void)[] = [];
  const hold: Hold = {
    vm,
    file,
    took,
    lost: null,
    onLost: (fn) => void lostFns.push(fn),
    release: async () => {
      await beats.stop();
      dropClaim(ctx, vm, req.runId);
      if (!took) return `the session's own lock on ${vm} stays (it was held before this run)`;
      if (hold.lost) return `not released: the lock was lost (${hold.lost})`;
      const r = await release(ctx, target);
      if (r.status === 'released') return `released ${vm} (archived as ${r.archive})`;
      if (r.status === 'held') return `not released, the lock is another session's now: ${describeHolder(r.holder, ctx.clock.now())}`;
      return r.status === 'absent' ? `the lock file ${r.file} was already gone` : `not released (${r.status})`;
    },
  };
  const lose = (why: string) => {
    if (hold.lost) return;
    hold.lost = why;
    for (const fn of lostFns) fn(why);
  };
  const beats = startHeartbeats({
    clock: ctx.clock,
    intervalMs: req.heartbeatMs,
    beat: async () => {
      try {
        const r = await heartbeat(ctx, target);
        if (r.status === 'held') lose(`the lock was taken over: ${describeHolder(r.holder, ctx.clock.now())}`);
        else if (r.status === 'absent') lose(`the lock file ${r.file} is gone`);
      } catch (err) {
        req.progress(`heartbeat failed (will retry): ${(err as Error).message}`);
      }
    },
  });
  return hold;
}
