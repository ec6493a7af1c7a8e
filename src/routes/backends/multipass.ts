// multipass: `multipass exec <instance> --working-directory DIR -- exec [env -- K=V …] argv…`.
// How multipass passes argv (src/client/cli/cmd/exec.cpp, src/ssh/ssh_client.cpp): it sends
// `cd DIR&&arg1 arg2…` over ssh (libssh exec request, run by the guest user's shell), each piece
// escaped with utils::escape_for_shell (backslash before every special byte, newline as "\n"), so it
// quotes its one layer itself. Quirk: when argv[0] is `sudo` and a working directory is set it joins
// the arguments unquoted (`sudo sh -c "cd DIR && sudo -u USER args…"`); starting with `exec` avoids
// that path and gives argv[0] execvp semantics. Env vars go through env(1) (multipass has no --env).
import { need, refuseUser, execWords } from '../script.js';
import type { Backend } from '../types.js';

export const multipass: Backend = {
  name: 'multipass',
  layers: 0,
  layersFor: () => 0,
  render(vm, job) {
    const instance = need(vm, 'instance', 'the multipass instance name');
    refuseUser(vm, 'multipass exec');
    return ['multipass', 'exec', instance, '--working-directory', job.cwd, '--', 'exec', ...execWords(job.argv, job.env)];
  },
  tools: () => ['multipass'],
};
