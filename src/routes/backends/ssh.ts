// ssh: `ssh [-l USER] <host> -- 'cd -- DIR && exec [env -- K=V …] argv…'`.
// ssh(1) joins every word after the destination with spaces and the remote side runs the string with
// the user's shell (`$SHELL -c`), so the script is built once (quoted for that one shell) and passed
// as one word. cwd and env are applied remotely: ssh has no cwd and forwards no environment.
import { checkName, need, shScript } from '../script.js';
import type { Backend, VmSpec } from '../types.js';

function host(vm: VmSpec): string {
  if (vm.host) {
    checkName(vm, 'host', vm.host);
    return vm.host;
  }
  return need(vm, 'instance', 'or `host`: the ssh destination');
}

export const ssh: Backend = {
  name: 'ssh',
  layers: 1,
  layersFor: () => 1,
  render(vm, job) {
    const dest = host(vm);
    const user = vm.user !== undefined && vm.user !== '' ? vm.user : undefined;
    if (user) checkName(vm, 'user', user);
    return ['ssh', ...(vm.sshOptions ?? []), ...(user ? ['-l', user] : []), dest, '--', shScript(job)];
  },
  tools: () => ['ssh'],
};
