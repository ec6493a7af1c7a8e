// `offhost run` from a checkout the VM cannot see (issue 20). A VM with `sync: shared` runs the tree it sees
// through its bind mount (the catalogue's `mount`: the laptop's `source` shown at `path`, R6). A worktree
// beside the canonical checkout, or a second clone, is not under that source: sent there, the VM would
// find no directory, or worse a stale one, and run another checkout's files. Such a VM is refused before
// any lock is taken, with the fix. (The fingerprint check in the session stays the last word: a VM without
// a declared mount is verified there.)
import type { VmSpec } from '../routes/index.js';
import { isUnderPath, physicalPath } from '../config/physical-paths.js';

/** Why `vm` (sync: shared) cannot see the checkout at `repoRoot` (physical), or null when it can or cannot be told. */
export function unseenCheckout(vm: VmSpec, repoRoot: string, mappings: { from: string }[]): string | null {
  if (!vm.mount) return null;
  const top = physicalPath(repoRoot);
  const sources = [vm.mount.source, ...mappings.map((m) => m.from)].filter((s) => s.startsWith('/'));
  if (sources.some((s) => isUnderPath(top, physicalPath(s)) || isUnderPath(repoRoot, s))) return null;
  return (
    `${vm.id} cannot see this checkout: its shared mount shows ${vm.mount.source} at ${vm.mount.path}, and ${repoRoot} is not under it ` +
    `(a worktree or clone elsewhere), so the VM would run another checkout's files. Nothing was run. ` +
    `Fix: give ${vm.id} \`sync: rsync\` (or \`sync: git\`) in your config, so offhost copies this checkout's exact tree to the VM; ` +
    `or run from ${vm.mount.source}, or make the worktree inside it (git worktree add ${vm.mount.source}/.claude/worktrees/NAME)`
  );
}
