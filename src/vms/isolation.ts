// Honest isolation (seed 002): what a VM is (container, vm, microvm), its architecture, and where it
// runs (this laptop or a remote host); a route or rule may require any of these, and a VM that cannot
// provide it is refused, never silently downgraded. Nothing is assumed: a requirement on something the
// VM does not declare (and the backend does not imply) is not met. Pure.
import type { VmSpec } from '../routes/types.js';

export type VmKind = 'container' | 'vm' | 'microvm';
export interface Requirement {
  kind?: VmKind[];
  arch?: string[];
  where?: 'laptop' | 'remote';
}

/** `where`, declared or implied: behind a host is remote; incus, docker, lima, tart, multipass without one run here. */
export function whereOf(vm: VmSpec): 'laptop' | 'remote' | undefined {
  if (vm.where) return vm.where;
  if (vm.host) return 'remote';
  if (vm.backend === 'ssh') return undefined; // an ssh destination may be anything, even this machine
  if (vm.backend === 'template') return undefined;
  return 'laptop';
}

/** `kind`, declared or implied by the backend (docker: container; lima, tart, multipass: vm). */
export function kindOf(vm: VmSpec): VmKind | undefined {
  if (vm.kind) return vm.kind;
  if (vm.backend === 'docker') return 'container';
  if (vm.backend === 'lima' || vm.backend === 'tart' || vm.backend === 'multipass') return 'vm';
  return undefined;
}

/** Architectures that name the same thing (`uname -m` says aarch64 on Linux, arm64 on macOS). */
function sameArch(a: string, b: string): boolean {
  const n = (x: string) => (x === 'arm64' ? 'aarch64' : x === 'amd64' ? 'x86_64' : x);
  return n(a) === n(b);
}

/** Why `vm` does not meet `req` (one sentence per unmet demand), empty when it does. */
export function unmet(vm: VmSpec, req: Requirement | undefined): string[] {
  if (!req) return [];
  const out: string[] = [];
  const kind = kindOf(vm);
  if (req.kind && !(kind && req.kind.includes(kind))) {
    out.push(`it must be a ${req.kind.join(' or ')}, and ${vm.id} is ${kind ? `a ${kind}` : 'of no declared kind'}`);
  }
  if (req.arch && !(vm.arch && req.arch.some((a) => sameArch(a, vm.arch!)))) {
    out.push(`it must run on ${req.arch.join(' or ')}, and ${vm.id} is ${vm.arch ? vm.arch : 'of no declared architecture'}${vm.arch && /^(aarch64|arm64)$/.test(vm.arch) ? ' (an arm64 guest is no x86_64 evidence)' : ''}`);
  }
  const where = whereOf(vm);
  if (req.where && where !== req.where) {
    out.push(
      req.where === 'remote'
        ? `it must run on a remote host, and ${vm.id} ${where === 'laptop' ? 'runs on this laptop (a local container is not "on the VM", POLICY R1)' : 'does not say where it runs (set where: remote)'}`
        : `it must run on this laptop, and ${vm.id} ${where ? `runs ${where === 'remote' ? 'on a remote host' : 'here'}` : 'does not say where it runs'}`,
    );
  }
  return out;
}

export function describeVm(vm: VmSpec): string {
  const where = whereOf(vm);
  return `${kindOf(vm) ?? 'undeclared kind'}, ${vm.arch ?? 'undeclared arch'}, ${where === 'laptop' ? 'on this laptop' : where === 'remote' ? `on ${vm.host ?? 'a remote host'}` : 'undeclared place'}`;
}
