// `offhost vm provision ID` (POLICY R8 and the phase note): the bootstrap of a catalogue VM on its host,
// one idempotent step at a time: launch the image, the monorepo disk device (R6, read-only bind at the
// same path), the declared packages, a smoke command, a snapshot to reset to. Each step first looks, then
// changes only what is missing, and says which; a second run changes nothing and says so. Anything that
// differs from the catalogue in a way offhost will not repair by itself (a device with another source, an
// instance of another kind) stops with what to do: provisioning never deletes, stops or overwrites.
import { EXIT, VmError } from '../errors.js';
import type { VmSpec } from '../routes/types.js';
import { firstLine, hostArgv, runOnHost, sshFailed, type HostResult } from './host.js';
import { diskAt, findInstance, incusType, type IncusInstance } from './incus.js';
import type { RunbookStep } from './runbook.js';

export interface ProvisionOptions {
  env: NodeJS.ProcessEnv;
  /** Each step as it finishes. */
  onStep: (s: RunbookStep) => void;
  now: () => Date;
}

const NOT_ENOUGH_SPACE = /enough free space|No space left on device/i;

export function provisionIncus(vm: VmSpec, o: ProvisionOptions): RunbookStep[] {
  const steps: RunbookStep[] = [];
  const step = (s: RunbookStep) => {
    steps.push(s);
    o.onStep(s);
  };
  const inst = vm.instance;
  if (!inst) throw new VmError(`${vm.id}: the catalogue entry has no \`instance\` (the incus instance name)`, EXIT.error);
  const on = (argv: string[]) => runOnHost(hostArgv(vm, argv), o.env);
  const shown = (argv: string[]) => `${vm.host ? `ssh ${vm.host} -- ` : ''}${argv.join(' ')}`;
  const must = (r: HostResult, what: string, argv: string[]): void => {
    if (sshFailed(vm, r)) {
      throw new VmError(
        `cannot reach ${vm.host} over ssh: ${firstLine(r.stderr) || `ssh exited ${r.status}`}. Nothing more was done.\nMake \`ssh ${vm.host} true\` work without a prompt (a Host ${vm.host} entry in ~/.ssh/config, your key in its authorized_keys), then run this again.`,
        EXIT.preflightFailed,
      );
    }
    if (r.status !== 0) {
      if (NOT_ENOUGH_SPACE.test(r.stderr + r.stdout)) {
        throw new VmError(
          `${what} failed: the guest disk of ${inst} is full (${firstLine(r.stderr)}).\nReport it and ask before reclaiming space; offhost never stops, deletes or cleans a VM to make room (seed 001). Then run this again.`,
          EXIT.diskFull,
        );
      }
      throw new VmError(`${what} failed (exit ${r.status}): \`${shown(argv)}\`\n${(r.stderr || r.stdout).trim()}`, EXIT.preflightFailed);
    }
  };
  const list = (): IncusInstance | null => {
    const argv = ['incus', 'list', '--format', 'json', inst];
    const r = on(argv);
    must(r, 'listing the instances', argv);
    return findInstance(r.stdout, inst);
  };

  // 1. The instance.
  let found = list();
  if (!found) {
    if (!vm.image) throw new VmError(`${vm.id}: the catalogue entry has no \`image\` to launch (e.g. image: images:debian/13)`, EXIT.error);
    const argv = ['incus', 'launch', vm.image, inst, ...(vm.kind === 'vm' ? ['--vm'] : [])];
    must(on(argv), `launching ${inst}`, argv);
    step({ name: 'instance', result: 'done', detail: `launched ${inst} from ${vm.image}`, command: shown(argv) });
    found = list();
    if (!found) throw new VmError(`incus launched ${inst} but does not list it`, EXIT.preflightFailed);
  } else {
    const want = incusType(vm.kind);
    if (vm.kind && vm.kind !== 'microvm' && found.type !== want) {
      throw new VmError(
        `${inst} exists as a ${found.type}; the catalogue declares a ${vm.kind}. Nothing was changed: fix the catalogue, or recreate it deliberately (under the VM's lock: incus delete, then provision); offhost never treats one as the other (seed 002).`,
        EXIT.isolationRefused,
      );
    }
    step({ name: 'instance', result: 'unchanged', detail: `${inst} exists (${found.type}, ${found.status})` });
  }
  if (found.status !== 'Running') {
    const argv = ['incus', 'start', inst];
    must(on(argv), `starting ${inst}`, argv);
    step({ name: 'start', result: 'done', detail: `started ${inst} (was ${found.status})`, command: shown(argv) });
  }

  // 2. The monorepo (R6): a disk device at the same path, read-only unless configured otherwise.
  if (vm.mount) {
    const m = vm.mount;
    const dev = m.device ?? 'koder';
    const d = diskAt(found, m.path);
    if (!d) {
      if (found.devices[dev]) {
        throw new VmError(`${inst} has a device named ${dev} that is not a disk at ${m.path}; nothing was changed. Name the mount's device otherwise (mount.device) or remove that device under the VM's lock.`, EXIT.preflightFailed);
      }
      const argv = ['incus', 'config', 'device', 'add', inst, dev, 'disk', `source=${m.source}`, `path=${m.path}`, `readonly=${m.readonly}`];
      const r = on(argv);
      if (r.status !== 0 && /Missing source path/i.test(r.stderr)) {
        throw new VmError(`the mount source ${m.source} does not exist on ${vm.host ?? 'this machine'}: ${firstLine(r.stderr)}\nPut the monorepo there (an NFS export of the laptop's ~/dev/koder, or a clone), or set mount.source in the catalogue; then run this again.`, EXIT.preflightFailed);
      }
      must(r, `adding the disk device ${dev}`, argv);
      step({ name: 'mount', result: 'done', detail: `${m.source} at ${m.path} (${m.readonly ? 'read-only' : 'writable'})`, command: shown(argv) });
    } else if (d.source !== m.source || d.readonly !== m.readonly) {
      throw new VmError(
        `${inst} already has a disk device ${d.name} at ${m.path} showing ${d.source} ${d.readonly ? 'read-only' : 'writable'}; the catalogue says ${m.source} ${m.readonly ? 'read-only' : 'writable'}. Nothing was changed: fix the device (\`incus config device set ${inst} ${d.name} source=… readonly=…\`) or the catalogue.`,
        EXIT.preflightFailed,
      );
    } else step({ name: 'mount', result: 'unchanged', detail: `${m.source} at ${m.path} (${m.readonly ? 'read-only' : 'writable'})` });
  }

  // 3. Packages (R8: nasm gcc binutils make git for Koda).
  const pkgs = vm.packages ?? [];
  if (pkgs.length > 0) {
    const q = on(['incus', 'exec', inst, '--', 'dpkg-query', '-W', '-f=${Package} ${Status}\\n', ...pkgs]);
    if (sshFailed(vm, q)) must(q, 'querying packages', []);
    const installed = new Set(
      q.stdout
        .split('\n')
        .filter((l) => / install ok installed$/.test(l))
        .map((l) => l.split(' ')[0]!),
    );
    const missing = pkgs.filter((p) => !installed.has(p));
    if (missing.length > 0) {
      const upd = ['incus', 'exec', inst, '--', 'env', 'DEBIAN_FRONTEND=noninteractive', 'apt-get', 'update', '-q'];
      must(on(upd), 'apt-get update', upd);
      const argv = ['incus', 'exec', inst, '--', 'env', 'DEBIAN_FRONTEND=noninteractive', 'apt-get', 'install', '-y', '-q', '--no-install-recommends', ...missing];
      must(on(argv), `installing ${missing.join(' ')}`, argv);
      step({ name: 'packages', result: 'done', detail: `installed ${missing.join(' ')}${installed.size ? ` (already there: ${[...installed].join(' ')})` : ''}`, command: shown(argv) });
    } else step({ name: 'packages', result: 'unchanged', detail: `already installed: ${pkgs.join(' ')}` });
  }

  // 4. Smoke: the toolchain answers and the source is readable. Runs every time; changes nothing.
  if (vm.smoke) {
    const argv = ['incus', 'exec', inst, ...(vm.mount ? ['--cwd', vm.mount.path] : []), '--', 'bash', '-c', vm.smoke];
    const r = on(argv);
    if (r.status !== 0) {
      must(r, 'the smoke command', argv);
    }
    step({ name: 'smoke', result: 'unchanged', detail: `ok: ${vm.smoke}`, command: shown(argv) });
  }

  // 5. A snapshot to reset to, taken once everything above is in place (a new one when something changed).
  const snap = vm.snapshot ?? 'provisioned';
  const changed = steps.some((s) => s.result === 'done');
  const current = list() ?? found;
  if (!current.snapshots.includes(snap) || changed) {
    let name = current.snapshots.includes(snap) ? `${snap}-${o.now().toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z')}` : snap;
    for (let n = 2; current.snapshots.includes(name); n++) name = `${name.replace(/-\d+$/, '')}-${n}`;
    const argv = ['incus', 'snapshot', 'create', inst, name];
    must(on(argv), `taking the snapshot ${name}`, argv);
    step({ name: 'snapshot', result: 'done', detail: `${name}: reset with incus snapshot restore ${inst} ${name}`, command: shown(argv) });
  } else step({ name: 'snapshot', result: 'unchanged', detail: `${snap} exists`, command: shown(['incus', 'snapshot', 'create', inst, snap]) });
  return steps;
}
