// Is the backend's tool on the laptop's PATH? Looked up in env.PATH with fs checks only (no
// spawning), and when it is not: exact setup guidance (POLICY, seed 003: missing tooling prints setup
// guidance and exits with a distinct status, EXIT.backendMissing).
import { accessSync, constants, statSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import { BACKENDS } from './backends/index.js';
import type { SetupHint, VmSpec } from './types.js';

function isExecutableFile(p: string): boolean {
  try {
    if (!statSync(p).isFile()) return false;
    accessSync(p, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** Absolute path of `tool` on env.PATH (or the tool itself when it is a path), null when absent. */
export function findOnPath(tool: string, env: NodeJS.ProcessEnv): string | null {
  if (tool.includes('/')) return isAbsolute(tool) ? (isExecutableFile(tool) ? tool : null) : tool; // relative: cannot judge without a cwd
  for (const dir of (env.PATH ?? '').split(':')) {
    if (dir === '' || !isAbsolute(dir)) continue; // an empty or relative PATH entry depends on the cwd
    const p = join(dir, tool);
    if (isExecutableFile(p)) return p;
  }
  return null;
}

function setupMessage(vm: VmSpec, tool: string): string {
  const route = `route ${vm.id} (backend ${vm.backend})`;
  switch (tool) {
    case 'ssh': {
      const dest = vm.host ?? vm.instance ?? '<host>';
      const why =
        vm.backend === 'ssh' ? `to reach ${dest}` : vm.backend === 'lima' ? 'limactl reaches the guest with it' : `${vm.backend} runs on ${dest} behind ssh`;
      return [
        `${route} needs \`ssh\` (the OpenSSH client) on PATH: ${why}.`,
        'Install it: Debian/Ubuntu `sudo apt install openssh-client`; Fedora `sudo dnf install openssh-clients`; Arch `sudo pacman -S openssh`; macOS ships it.',
        ...(vm.backend === 'lima'
          ? []
          : [
              `Then make \`ssh ${dest} true\` work without a prompt: a \`Host ${dest}\` entry in ~/.ssh/config (HostName, User, IdentityFile) and your public key in the remote ~/.ssh/authorized_keys (\`ssh-copy-id ${dest}\`).`,
            ]),
        ...(vm.backend === 'incus' || vm.backend === 'docker'
          ? [`Check: \`ssh ${dest} -- ${vm.backend === 'incus' ? 'incus list' : 'docker ps'}\` lists ${vm.instance ?? 'the instance'} (your remote user needs ${vm.backend === 'incus' ? 'the incus-admin' : 'the docker'} group).`]
          : []),
      ].join('\n');
    }
    case 'incus':
      return [
        `${route} needs \`incus\` on PATH to run \`incus exec ${vm.instance ?? '<instance>'}\` on this machine.`,
        'Install it: Debian 13 / Ubuntu 24.04+ `sudo apt install incus` (https://linuxcontainers.org/incus/docs/main/installing/), then `sudo adduser $USER incus-admin` and log in again.',
        `Or, if the instance lives on a VM host (POLICY R2: test VMs live on s.khost1), set \`host: khost1\` on the route: incus then runs there behind \`ssh khost1 -- incus exec …\` and only ssh is needed here.`,
      ].join('\n');
    case 'docker':
      return [
        `${route} needs \`docker\` on PATH to run \`docker exec ${vm.instance ?? '<container>'}\` on this machine.`,
        'Install it: https://docs.docker.com/engine/install/ (Debian/Ubuntu `sudo apt install docker.io` and `sudo adduser $USER docker`; macOS: Docker Desktop or `brew install colima docker`).',
        'Or set `host:` on the route to run docker on a remote host behind ssh (then only ssh is needed here).',
      ].join('\n');
    case 'limactl':
      return [
        `${route} needs \`limactl\` (Lima) on PATH to run \`limactl shell ${vm.instance ?? '<instance>'}\`.`,
        'Install it: macOS `brew install lima`; Linux: the release tarball from https://github.com/lima-vm/lima/releases (extract into /usr/local).',
        `Then create and start the instance: \`limactl start --name=${vm.instance ?? '<instance>'} template://default\`.`,
      ].join('\n');
    case 'multipass':
      return [
        `${route} needs \`multipass\` on PATH to run \`multipass exec ${vm.instance ?? '<instance>'}\`.`,
        'Install it: Linux `sudo snap install multipass`; macOS `brew install --cask multipass`; https://canonical.com/multipass/install.',
        `Then launch the instance: \`multipass launch --name ${vm.instance ?? '<instance>'}\`.`,
      ].join('\n');
    case 'tart':
      return [
        `${route} needs \`tart\` on PATH to run \`tart exec ${vm.instance ?? '<vm>'}\` (macOS 14+ on Apple silicon).`,
        'Install it: `brew install cirruslabs/cli/tart`; the guest needs the Tart Guest Agent running (preinstalled in Cirrus Labs images) for `tart exec`.',
        `Then start the VM: \`tart run ${vm.instance ?? '<vm>'} --no-graphics &\`.`,
      ].join('\n');
    default:
      return [
        `${route}: its template runs \`${tool}\`, which is not on PATH.`,
        `Install it or put its directory on PATH, or write its absolute path at the start of the route's \`template\` (now: ${JSON.stringify(vm.template ?? '')}).`,
        'How to set up the built-in drivers (the Windows VM s.khost1.dev-win10 and its win.sh, vmbox, the Tart helper): docs/VMS.md.',
      ].join('\n');
  }
}

/** null when every tool the route needs on the laptop is on env.PATH; else the first missing one. */
export function probeBackend(vm: VmSpec, env: NodeJS.ProcessEnv): SetupHint | null {
  const backend = BACKENDS[vm.backend];
  if (!backend) return { tool: String(vm.backend), message: `route ${vm.id}: unknown backend ${JSON.stringify(vm.backend)}` };
  for (const tool of backend.tools(vm)) {
    if (findOnPath(tool, env) === null) return { tool, message: setupMessage(vm, tool) };
  }
  return null;
}
