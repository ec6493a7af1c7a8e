// incus: `incus exec <instance> --cwd DIR --env K=V … -- argv…`.
// incus exec sends argv to the server as a list and the instance execs it directly (no shell; see
// `incus exec --help`: "The command is executed directly using exec"); --cwd and --env (a string
// array, one K=V each, split on the first '=') are flags of `incus exec`. With `vm.host` set, the
// whole command runs on the VM host behind `ssh <host> -- …` (one shell layer, quoted once).
import { ConfigError } from '../../errors.js';
import { need, viaSsh, checkName } from '../script.js';
import type { Backend, Job, VmSpec } from '../types.js';

function incusArgv(vm: VmSpec, job: Job): string[] {
  const instance = need(vm, 'instance', 'the incus instance name, e.g. dev-linux-koda');
  const argv = ['incus', 'exec', instance];
  if (vm.user !== undefined && vm.user !== '') {
    if (!/^[0-9]+$/.test(vm.user)) {
      throw new ConfigError(`route ${vm.id}: incus exec --user takes a numeric uid, got ${JSON.stringify(vm.user)}`);
    }
    argv.push('--user', vm.user);
  }
  argv.push('--cwd', job.cwd);
  for (const [k, v] of Object.entries(job.env)) argv.push('--env', `${k}=${v}`);
  argv.push('--', ...job.argv);
  return argv;
}

export const incus: Backend = {
  name: 'incus',
  layers: 0,
  layersFor: (vm) => (vm.host ? 1 : 0),
  render(vm, job) {
    const argv = incusArgv(vm, job);
    if (vm.host) {
      checkName(vm, 'host', vm.host);
      return viaSsh(vm.host, argv, undefined, vm.sshOptions);
    }
    return argv;
  },
  tools: (vm) => (vm.host ? ['ssh'] : ['incus']),
};
