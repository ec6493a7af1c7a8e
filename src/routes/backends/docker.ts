// docker: `docker exec [-u USER] -w DIR -e K=V … <container> argv…`.
// docker exec runs argv directly in the container (no shell); option parsing stops at the container
// name, so argv needs no `--` (and must not get one: docker would run a program called `--`).
// With `vm.host` set it runs on that host behind `ssh <host> -- …` (one shell layer).
import { need, viaSsh, checkName } from '../script.js';
import type { Backend, Job, VmSpec } from '../types.js';

function dockerArgv(vm: VmSpec, job: Job): string[] {
  const container = need(vm, 'instance', 'the container name');
  // -i: docker exec forwards stdin only when asked (offhost run's VM script reads its file list there).
  const argv = ['docker', 'exec', ...(job.stdin ? ['-i'] : [])];
  if (vm.user !== undefined && vm.user !== '') {
    checkName(vm, 'user', vm.user);
    argv.push('-u', vm.user);
  }
  argv.push('-w', job.cwd);
  for (const [k, v] of Object.entries(job.env)) argv.push('-e', `${k}=${v}`);
  argv.push(container, ...job.argv);
  return argv;
}

export const docker: Backend = {
  name: 'docker',
  layers: 0,
  layersFor: (vm) => (vm.host ? 1 : 0),
  render(vm, job) {
    const argv = dockerArgv(vm, job);
    if (vm.host) {
      checkName(vm, 'host', vm.host);
      return viaSsh(vm.host, argv, undefined, vm.sshOptions);
    }
    return argv;
  },
  tools: (vm) => (vm.host ? ['ssh'] : ['docker']),
};
