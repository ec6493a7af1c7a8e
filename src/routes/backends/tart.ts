// tart: `tart exec <vm> sh -c 'cd -- DIR && exec [env -- K=V …] argv…'`.
// `tart exec` (Sources/tart/Commands/Exec.swift) sends the command's name and args to the Tart Guest
// Agent over gRPC and the guest runs them directly, no shell; it has no cwd or env option. So we run
// `sh -c <script>` there: the script is quoted once, for that one sh. The command is captured for
// passthrough, so no `--` (it would be taken for the program's name).
import { need, refuseUser, shScript } from '../script.js';
import type { Backend } from '../types.js';

export const tart: Backend = {
  name: 'tart',
  layers: 1,
  layersFor: () => 1,
  render(vm, job) {
    const instance = need(vm, 'instance', 'the Tart VM name');
    refuseUser(vm, 'tart exec');
    return ['tart', 'exec', instance, 'sh', '-c', shScript(job)];
  },
  tools: () => ['tart'],
};
