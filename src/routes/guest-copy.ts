// How rsync reaches a Lima or Tart guest (issue 26, seed 001): the host's tree is mounted read-only in
// the guest, so a build runs in a guest-local copy of the laptop's exact source (`sync: rsync`, the default
// for these backends), one directory per repository and branch (./sync.ts guestTreeDir). rsync runs its
// remote end through the backend's own command instead of ssh:
//   lima   `limactl shell INSTANCE rsync --server …`  (limactl quotes every argument itself, so the remote
//          end is the single word `rsync`; the directory is made by a `limactl shell INSTANCE mkdir -p DIR`
//          first, where ssh backends fold it into --rsync-path)
//   tart   `tart exec -i VM rsync --server …`        (-i: the guest agent attaches standard input)
import type { VmSpec } from './types.js';

export interface GuestCopy {
  /** rsync's `-e`: the words before the host (rsync appends the host, then the remote rsync's argv). */
  rsh: string;
  /** What rsync takes for the host part of `HOST:DIR`. */
  dest: string;
  /** The argv that makes `dir` in the guest (run before rsync). */
  mkdir(dir: string): string[];
}

/** The rsync transport of a Lima or Tart VM; null for the other backends (they use ssh: ./sync.ts). */
export function guestCopy(vm: VmSpec): GuestCopy | null {
  const instance = vm.instance ?? '';
  if (vm.backend === 'lima') return { rsh: 'limactl shell', dest: instance, mkdir: (dir) => ['limactl', 'shell', instance, 'mkdir', '-p', dir] };
  if (vm.backend === 'tart') return { rsh: 'tart exec -i', dest: instance, mkdir: (dir) => ['tart', 'exec', instance, 'mkdir', '-p', dir] };
  return null;
}
