// The hold: a run holds the VM for exactly as long as it works there (issue 11 item 2). One small module
// over the lock store (src/locks, refs/offhost/locks, docs/LOCKS.md), so the rest of `offhost run` does
// not know how locks are kept:
//
//   acquireHold(...)  -> { held: Hold } | { busy: who } | { interrupted }
//   hold.lost         set (with why) when the lock or the run's claim was lost while the run went on
//   hold.release()    drops the run's claim with the run's record; the store archives the lock when no
//                     claim remains and the session did not hold it explicitly (`offhost lock acquire`)
//
// Every run has its own claim (id, pid, host, exact command): a second run of the same session on the
// same VM is refused (`busy`) or, with --wait, waits and says so; it never rides along.
import { hostname } from 'node:os';
import * as life from '../locks/lifecycle.js';
import { isLockLost } from '../locks/holder.js';
import { startHeartbeats } from '../locks/schedule.js';
import type { LockStore } from '../locks/store.js';
import { describeHolder } from '../report/locks.js';
import type { Clock } from '../types.js';

export interface HoldContext {
  store: LockStore;
  clock: Clock;
  session: string;
  ai: string;
}

export interface HoldRequest {
  candidates: string[];
  runId: string;
  reason: string;
  /** The exact command, for the lock body and the claim while it runs (R3). */
  command: string;
  /** The run's job on the VM (its marker), recorded in the claim. */
  job?: string;
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
  /** This run took the lock (it was not held by the session before). */
  took: boolean;
  claim: string | null;
  lost: string | null;
  onLost(fn: (why: string) => void): void;
  /** Drops the claim with the record; says what happened to the lock. */
  release(recordText: string): Promise<string>;
}

export type HoldResult = { kind: 'held'; hold: Hold } | { kind: 'busy'; who: string } | { kind: 'interrupted' };

function lockBody(req: HoldRequest): string {
  return [`Running \`offhost run\` ${req.runId} on ${hostname()} (pid ${process.pid}):`, '', '```sh', req.command, '```', ''].join('\n');
}

class Cancelled extends Error {}

export async function acquireHold(ctx: HoldContext, req: HoldRequest): Promise<HoldResult> {
  let announced = '';
  const whoOf = (r: life.AcquireResult): string => {
    if (r.status === 'busy') {
      return `another run of this session is on ${r.target}: ${r.claims.map((c) => `${c.id} (pid ${c.pid} on ${c.host}, since ${c.started.toISOString()}): ${c.command}`).join('; ')}`;
    }
    if (r.status === 'held') return describeHolder(r.holder, ctx.clock.now());
    return '';
  };
  let r: life.AcquireResult;
  try {
    r = await life.acquireFirstFree(
      ctx.store,
      req.candidates.map((vm) => ({ vm })),
      { session: ctx.session, ai: ctx.ai, reason: req.reason, ttlMinutes: req.ttlMinutes, claim: { command: req.command, pid: process.pid, host: hostname(), ...(req.job ? { job: req.job } : {}) }, body: lockBody(req) },
      req.wait && {
        ...req.wait,
        onWait: (last) => {
          const who = whoOf(last);
          if (who !== announced) req.progress(`${who}\nwaiting (checking every ${Math.max(1, Math.round(req.wait!.pollMs / 1000))} s)...`);
          announced = who;
        },
        // A signal while waiting ends the wait.
        sleep: async (ms) => {
          const until = Date.now() + ms;
          while (Date.now() < until) {
            if (req.cancelled()) throw new Cancelled();
            await new Promise((res) => setTimeout(res, Math.min(100, until - Date.now())));
          }
        },
      },
    );
  } catch (err) {
    if (err instanceof Cancelled) return { kind: 'interrupted' };
    throw err;
  }
  if (r.status === 'held' || r.status === 'busy') return { kind: 'busy', who: whoOf(r) };
  return { kind: 'held', hold: makeHold(ctx, req, r.target, r.file, r.status === 'acquired', r.claim) };
}

function makeHold(ctx: HoldContext, req: HoldRequest, vm: string, file: string, took: boolean, claim: string | null): Hold {
  const lostFns: ((why: string) => void)[] = [];
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
        await life.heartbeat(ctx.store, { vm, session: ctx.session, ...(claim ? { claim } : {}) });
      } catch (err) {
        if (isLockLost(err)) lose(err.message);
        else req.progress(`heartbeat failed (will retry): ${(err as Error).message}`);
      }
    },
  });
  const hold: Hold = {
    vm,
    file,
    took,
    claim,
    lost: null,
    onLost: (fn) => void lostFns.push(fn),
    release: async (recordText) => {
      await beats.stop();
      if (hold.lost) return `not released: the lock was lost (${hold.lost})`;
      const r = await life.release(ctx.store, { vm, session: ctx.session, ai: ctx.ai, ...(claim ? { claim } : {}), record: recordText });
      switch (r.status) {
        case 'released':
          return `released ${vm} (archived as ${r.archive}, with this run's record)`;
        case 'kept':
          return r.why === 'explicit'
            ? `the session's own lock on ${vm} stays (held with \`offhost lock acquire\`); this run's record is in it`
            : `${vm} stays locked: another run of this session still holds a claim on it`;
        case 'held':
          return `not released, the lock is another session's now: ${describeHolder(r.holder, ctx.clock.now())}`;
        case 'absent':
          return `the lock ${r.file} was already gone`;
        default:
          return `not released (${r.status})`;
      }
    },
  };
  return hold;
}
