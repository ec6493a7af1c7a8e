// The cheap preflight's one round trip, not paid twice a minute (issue 24: one connection per run). For a
// VM reached by `backend: ssh`, a run's preflight is "the host answers with the pinned key, and the guest's
// /tmp has room above the floor". When this laptop's shared ssh master for the VM (src/routes/multiplex.ts,
// opened with the same host-key pinning) is still up and a probe or a run on it saw enough room within the
// minute, that answer stands: the host answered on that very connection, whose
// key was checked when it opened. The free space is checked again by the run's own session before it
// touches anything (src/run/remote.ts, `diskfull`), so a disk that filled meanwhile still stops the build.
// Anything else (another backend, no master, an old or low reading) runs the probe as before.
// The laptop's rsync (src/routes/rsync-probe.ts: two rsync processes) is asked again only when the program
// `rsync` on PATH is another file (path, inode, size, times), or after a day.
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import type { VmSpec } from '../routes/types.js';
import { DEFAULT_DISK_FLOOR_MB, type ProbeReuse } from './preflight.js';
import { probeRsyncKept } from '../routes/rsync-probe.js';
import { masterControl } from '../routes/multiplex.js';

/**
 * A minute, though the master lives ten (multiplex.ts PERSIST_SECONDS): past it, the probe's one round trip
 * on the open master (about 15 ms on loopback) also shows that its connection still carries (a laptop that
 * slept may hold a master whose connection died: src/vms/preflight.ts STALE_MASTER_MS).
 */
export const PROBE_REUSE_MS = 60_000;

interface Reading {
  at: number;
  availKb: number;
  /** The ssh options the reading was made with (pinning and control path): another set is another connection. */
  options: string;
}

function reusable(vm: VmSpec): boolean {
  const opts = vm.sshOptions ?? [];
  return vm.backend === 'ssh' && vm.host !== undefined && opts.some((o) => o.startsWith('ControlPath=') && o !== 'ControlPath=none');
}

function fileOf(dir: string, vm: VmSpec): string {
  return join(dir, 'probe', `${createHash('sha256').update(`${vm.id}\0${vm.host ?? ''}`).digest('hex').slice(0, 16)}.json`);
}

function optionsKey(vm: VmSpec): string {
  return createHash('sha256').update((vm.sshOptions ?? []).join('\0')).digest('hex');
}

/** The guest /tmp free space above the VM's floor? */
export function aboveFloor(vm: VmSpec, availKb: number): boolean {
  return Math.floor(availKb / 1024) >= (vm.disk_floor_mb ?? DEFAULT_DISK_FLOOR_MB);
}

function writeAtomic(f: string, text: string): void {
  const tmp = `${f}.${process.pid}.tmp`;
  writeFileSync(tmp, text);
  renameSync(tmp, f);
}

/** Readings kept under the state directory (`probe/`), one small JSON file per VM. */
export function probeReuse(stateDir: string, env: NodeJS.ProcessEnv, now: () => number = Date.now): ProbeReuse {
  return {
    async recent(vm) {
      if (!reusable(vm) || env.OFFHOST_SSH_MULTIPLEX === '0') return null;
      let r: Reading;
      try {
        r = JSON.parse(readFileSync(fileOf(stateDir, vm), 'utf8')) as Reading;
      } catch {
        return null;
      }
      const age = now() - r.at;
      if (!(age >= 0 && age <= PROBE_REUSE_MS) || r.options !== optionsKey(vm) || !Number.isFinite(r.availKb) || !aboveFloor(vm, r.availKb)) return null;
      return (await masterControl(vm, 'check', env)) ? r.availKb : null;
    },
    remember(vm, availKb) {
      if (!reusable(vm) || !Number.isFinite(availKb)) return;
      const f = fileOf(stateDir, vm);
      try {
        mkdirSync(join(stateDir, 'probe'), { recursive: true });
        writeAtomic(f, JSON.stringify({ at: now(), availKb, options: optionsKey(vm) } satisfies Reading));
      } catch {
        /* a reading not kept only costs the next run a probe */
      }
    },
    rsync: (env2) => probeRsyncKept(env2, stateDir, now),
  };
}
