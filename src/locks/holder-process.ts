// Is a claim's process still there? (issue 24.) A run's claim records what proves its process gone on its
// own host: the pid, the process's start time and the host's boot id. A pid that no longer exists, one
// that now names another process (another start time: the pid was reused), or another boot all mean the
// run has ended, however it ended (SIGKILL, the OOM killer, a closed terminal, a crash): the VM comes free
// at once instead of at the end of the lock's ttl. Claims from other hosts cannot be probed and keep
// expiring by heartbeat (claims.ts).
//
// A run's remote job can outlive the laptop process for a moment (the VM's watcher stops it when the
// connection ends). So a dead claim that names a remote job (`job`) is treated as ended only once some
// offhost command on this host made sure that job is gone on the VM (reapEndedRuns, with a reaper that
// knows how to reach the VM: src/run/reap.ts). Until then it holds, and if nothing can confirm it, it
// expires by heartbeat like another host's.
//
// The probe is an interface: Linux reads /proc/PID/stat (field 22, start time in clock ticks since boot)
// and /proc/sys/kernel/random/boot_id; macOS asks `ps -o lstart= -p PID` and `sysctl -n kern.boottime`.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import type { Claim } from './lock-types.js';

export interface ProcessProbe {
  readonly name: string;
  /** The process's start time (opaque text, compared for equality); null: no such process; undefined: cannot tell. */
  startTime(pid: number): string | null | undefined;
  /** This boot of the host (changes on reboot); null when unknown. */
  bootId(): string | null;
}

export const linuxProbe: ProcessProbe = {
  name: 'linux /proc',
  startTime(pid) {
    let stat: string;
    try {
      stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    } catch (err) {
      return (err as NodeJS.ErrnoException).code === 'ENOENT' || (err as NodeJS.ErrnoException).code === 'ESRCH' ? null : undefined;
    }
    // The command name is in parentheses and may hold spaces or ')': the fields start after the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (fields[0] === 'Z' || fields[0] === 'X') return null; // a zombie has ended; only its entry remains
    return fields[19] ?? undefined;
  },
  bootId() {
    try {
      return readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim() || null;
    } catch {
      return null;
    }
  },
};

type Run = (file: string, args: string[]) => string;
const runSync: Run = (file, args) => execFileSync(file, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'], timeout: 5000 });

/** macOS (and the BSDs): `ps` prints nothing and exits 1 for a pid that does not exist. */
export function macosProbe(run: Run = runSync): ProcessProbe {
  return {
    name: 'macOS ps/sysctl',
    startTime(pid) {
      try {
        const out = run('ps', ['-o', 'lstart=', '-p', String(pid)]).trim();
        return out === '' ? null : out;
      } catch (err) {
        // ps exits 1 when no process matched; anything else (no ps) is "cannot tell".
        return (err as { status?: number }).status === 1 ? null : undefined;
      }
    },
    bootId() {
      try {
        // `{ sec = 1764612345, usec = 123456 } Mon Dec  1 ...`
        const m = /sec\s*=\s*(\d+)/.exec(run('sysctl', ['-n', 'kern.boottime']));
        return m ? m[1]! : null;
      } catch {
        return null;
      }
    },
  };
}

/** Without /proc or ps: only whether the pid exists (kill 0); a reused pid cannot be told apart. */
export const killZeroProbe: ProcessProbe = {
  name: 'kill 0',
  startTime(pid) {
    try {
      process.kill(pid, 0);
      return undefined;
    } catch (err) {
      return (err as NodeJS.ErrnoException).code === 'EPERM' ? undefined : null;
    }
  },
  bootId: () => null,
};

function platformProbe(): ProcessProbe {
  if (process.platform === 'linux') return linuxProbe;
  if (process.platform === 'darwin' || process.platform.endsWith('bsd')) return macosProbe();
  return killZeroProbe;
}

let probe: ProcessProbe | null = null;

/** The probe in use (the platform's, unless a test or a caller set another). */
export function processProbe(): ProcessProbe {
  return (probe ??= platformProbe());
}

export function setProcessProbe(p: ProcessProbe | null): void {
  probe = p;
}

/** What a new claim records about this process (or `pid`). */
export function holderIdentity(pid: number = process.pid, p: ProcessProbe = processProbe()): { start?: string; boot?: string } {
  const start = p.startTime(pid);
  const boot = p.bootId();
  return { ...(start ? { start } : {}), ...(boot ? { boot } : {}) };
}

/** Why the claim's process (on this host) is gone, or null when it may still run. */
export function holderGone(c: Pick<Claim, 'pid' | 'start' | 'boot'>, host: string = hostname(), p: ProcessProbe = processProbe()): string | null {
  if (!Number.isInteger(c.pid) || c.pid <= 0) return `its pid ${c.pid} is not a process id`;
  if (c.boot) {
    const b = p.bootId();
    if (b && b !== c.boot) return `${host} has rebooted since it started (boot ${b}, not ${c.boot})`;
  }
  const st = p.startTime(c.pid);
  if (st === null) return `its process ${c.pid} on ${host} no longer runs`;
  if (c.start && st !== undefined && st !== c.start) return `pid ${c.pid} on ${host} is another process now (started at ${st}, not ${c.start})`;
  return null;
}

// ---------------------------------------------------------------------------------------------------
// Remote jobs of ended runs

/** Claims (by id) whose remote job an offhost command of this process confirmed gone on the VM. */
const jobsGone = new Map<string, string>();

export function jobConfirmedGone(claimId: string): string | undefined {
  return jobsGone.get(claimId);
}

/** Stops a claim's remote job if it still runs; says whether it is gone now (and how it knows). */
export type JobReaper = (vm: string, claim: Claim) => Promise<{ gone: boolean; detail: string }>;

/** A claim that held its lock and is now to be looked at: same host, process gone, remote job not confirmed. */
export interface EndedRun {
  vm: string;
  claim: Claim;
  why: string;
}

/**
 * For each ended run found (`found`: read from the store by the caller), makes sure its remote job is gone
 * (the reaper stops it when it still runs). Confirmed ones are remembered, so the next store operation
 * of this process drops their claims and frees a lock they alone held. Returns what was done, one line each.
 */
export async function reapEndedRuns(found: EndedRun[], reaper: () => Promise<JobReaper>): Promise<string[]> {
  const todo = found.filter((e) => e.claim.job && !jobsGone.has(e.claim.id));
  if (todo.length === 0) return [];
  const reap = await reaper();
  const out: string[] = [];
  for (const e of todo) {
    let r: { gone: boolean; detail: string };
    try {
      r = await reap(e.vm, e.claim);
    } catch (err) {
      r = { gone: false, detail: (err as Error).message };
    }
    if (r.gone) {
      jobsGone.set(e.claim.id, r.detail);
      out.push(`run ${e.claim.id} on ${e.vm} has ended (${e.why}); ${r.detail}`);
    } else out.push(`run ${e.claim.id} on ${e.vm}: ${e.why}, but its job on the VM could not be confirmed gone (${r.detail}); the lock stays until its heartbeat is older than its ttl`);
  }
  return out;
}

/** Same-host claims whose process is gone and whose remote job is not confirmed gone yet. */
export function endedRunsIn(vm: string, claims: readonly Claim[], host: string = hostname()): EndedRun[] {
  const out: EndedRun[] = [];
  for (const c of claims) {
    if (c.host !== host || jobsGone.has(c.id)) continue;
    const why = holderGone(c, host);
    if (why) out.push({ vm, claim: c, why });
  }
  return out;
}
