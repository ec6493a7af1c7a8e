// When this machine first saw a version of a lock, on its own monotonic clock (docs/LOCKS.md "Time").
//
// Another machine's timestamps cannot be trusted to judge its lock: a clock running ahead makes a live lock
// look expired. So before a lock of another host is taken over, this machine must have seen that exact
// version (its blob id: any heartbeat changes it) unchanged for a while by a clock no one else sets, as
// Kubernetes' leader election judges a lease by when the observer last saw it change. The first sighting
// of each version is a small file, created once (O_EXCL: the first process to see it wins, later ones
// read it), holding the boot id and the monotonic time. CLOCK_MONOTONIC (process.hrtime) is shared by every
// process of one boot; a sighting from another boot counts from now.
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { uptime } from 'node:os';
import { join } from 'node:path';

export interface Monotonic {
  /** Milliseconds on a clock that only moves forward and that no one sets (not the wall clock). */
  nowMs(): number;
  /** Which boot that clock counts from (its zero). */
  bootId(): string;
}

let bootCache: string | null = null;

/** The system's monotonic clock (CLOCK_MONOTONIC through libuv) and the kernel's boot id. */
export const systemMonotonic: Monotonic = {
  nowMs: () => Number(process.hrtime.bigint() / 1_000_000n),
  bootId: () => {
    if (bootCache) return bootCache;
    try {
      bootCache = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
    } catch {
      // No boot id (not Linux): the boot instant to the minute, from the uptime.
      bootCache = `boot-${Math.round((Date.now() - uptime() * 1000) / 60_000)}`;
    }
    return bootCache;
  },
};

export interface Sighting {
  /** When this machine first saw the version, on its monotonic clock (ms). */
  firstMs: number;
  /** How long ago that was (ms). */
  agoMs: number;
}

/** Sightings older than this are removed when a new one is written (a lock version rarely lives a day). */
const KEEP_MS = 3 * 24 * 3_600_000;

/**
 * The first sighting of `version` of the lock at `path` in the store `store`, recording it now when this is
 * the first (or the recorded one is from another boot). Never throws: when the folder cannot be written,
 * the sighting counts from now (so nothing is taken over early).
 */
export function firstSighting(dir: string, store: string, path: string, version: string, mono: Monotonic): Sighting {
  const now = mono.nowMs();
  const boot = mono.bootId();
  const key = createHash('sha1').update(`${store}\0${path}\0${version}`).digest('hex');
  const file = join(dir, key);
  const read = (): number | null => {
    try {
      const o = JSON.parse(readFileSync(file, 'utf8')) as { boot?: unknown; mono?: unknown };
      return o.boot === boot && typeof o.mono === 'number' && o.mono <= now ? o.mono : null;
    } catch {
      return null;
    }
  };
  const seen = read();
  if (seen !== null) return { firstMs: seen, agoMs: now - seen };
  const text = `${JSON.stringify({ boot, mono: now, wall: new Date().toISOString(), store, path, version })}\n`;
  try {
    mkdirSync(dir, { recursive: true });
    try {
      writeFileSync(file, text, { flag: 'wx' });
      prune(dir);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const other = read();
      if (other !== null) return { firstMs: other, agoMs: now - other };
      // Another boot's sighting (or a torn file): replaced whole.
      const tmp = `${file}.${process.pid}.tmp`;
      writeFileSync(tmp, text);
      renameSync(tmp, file);
    }
  } catch {
    /* unwritable: counts from now */
  }
  return { firstMs: now, agoMs: 0 };
}

function prune(dir: string): void {
  // Cheap enough to do on every new sighting: the folder holds the versions of the last few days.
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return;
  }
  const cutoff = Date.now() - KEEP_MS;
  for (const n of names) {
    try {
      if (statSync(join(dir, n)).mtimeMs < cutoff) rmSync(join(dir, n), { force: true });
    } catch {
      /* gone */
    }
  }
}
