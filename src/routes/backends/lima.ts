// lima: `limactl shell --workdir DIR <instance> -- exec [env -- K=V …] argv…`.
// How limactl passes argv (cmd/limactl/shell.go): it builds
//   cd <shellescape(DIR)> || exit 1 ; exec "$SHELL" --login -c <shellescape(join(args quoted))>
// and hands that to ssh, i.e. it quotes every layer itself, with one quirk: leading arguments that
// contain '=' are taken for `K=V` assignments and only their value is quoted. So we never start the
// command with such a word: it starts with `exec` (which also gives argv[0] execvp semantics instead
// of the guest login shell's builtins and keywords); env vars go through env(1) and an argv[0] with
// '=' through a trampoline (see execWords). Flags must precede the instance (flags are not
// interspersed); limactl drops the `--` after the instance.
import { need, refuseUser, execWords } from '../script.js';
import type { Backend } from '../types.js';

export const lima: Backend = {
  name: 'lima',
  layers: 0,
  layersFor: () => 0,
  render(vm, job) {
    const instance = need(vm, 'instance', 'the Lima instance name, e.g. default');
    refuseUser(vm, 'limactl shell');
    return ['limactl', 'shell', '--workdir', job.cwd, instance, '--', 'exec', ...execWords(job.argv, job.env)];
  },
  // limactl runs the system ssh client to reach the guest.
  tools: () => ['limactl', 'ssh'],
};
