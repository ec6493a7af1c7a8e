// Routes: how a rerouted command runs on a test VM. Public entry (see docs/CONTRACTS.md).
//
// A job is kept as argv + cwd + env until the very end and quoted exactly once for every shell that
// re-splits it: the laptop's bash (renderJob's result is a bash command line) plus whatever the
// backend adds (Backend.layersFor). What each backend renders (argv, before the laptop quoting):
//
//   incus      incus exec INST [--user UID] --cwd DIR [--env K=V]… -- argv…          (0 layers)
//   incus+host ssh HOST -- q(incus) q(exec) … q(argv)…                                (1: ssh's remote shell)
//   docker     docker exec [-u U] -w DIR [-e K=V]… CTR argv…   (+host: as incus)     (0 / 1)
//   ssh        ssh [-l U] HOST -- SCRIPT                                             (1)
//   tart       tart exec VM sh -c SCRIPT                                             (1: sh -c)
//   lima       limactl shell --workdir DIR INST -- exec [env -- K=V…] argv…          (0: limactl quotes)
//   multipass  multipass exec INST --working-directory DIR -- exec [env -- K=V…] argv…  (0: multipass quotes)
//   template   the user's bash line with {placeholders} (./backends/template.ts)     (the tool's)
//
// SCRIPT = `cd -- DIR && exec [env -- K=V …] argv…`, each word quoted for one POSIX shell (./script.ts);
// q = quote (./quote.ts). cwd must be absolute (map it first with mapPath), env names portable.
// Remote shells are assumed POSIX (sh, bash, dash, zsh, ksh); fish and csh login shells are not.
import { ConfigError } from '../errors.js';
import { BACKENDS } from './backends/index.js';
import { quoteArgv } from './quote.js';
import { checkJob } from './script.js';
import type { Backend, Job, VmSpec } from './types.js';

export type { Backend, BackendName, Job, SetupHint, VmSpec } from './types.js';
export { mapPath } from './path.js';
export { probeBackend, findOnPath } from './probe.js';
export { quote, quoteArgv } from './quote.js';
export { shScript, execWords } from './script.js';
export { parseTemplate, expandTemplate, TEMPLATE_PLACEHOLDERS } from './backends/template.js';
export { BACKENDS };

/** Built-in VM specs (POLICY R2/R8): test VMs are incus instances on s.khost1, reached as `khost1`. */
export const BUILTIN_VMS: Record<string, VmSpec> = Object.fromEntries(
  ['dev-linux-koda', 'dev-linux-gui', 'dev-android-emulator', 'dev-linux-iso'].map((instance) => [
    `s.khost1.${instance}`,
    // R6/R8: the monorepo is bind-mounted at the same path; offhost run verifies that it is.
    { id: `s.khost1.${instance}`, backend: 'incus', host: 'khost1', instance, sync: 'shared' } satisfies VmSpec,
  ]),
);

export function backendFor(vm: VmSpec): Backend {
  const b = (BACKENDS as Record<string, Backend | undefined>)[vm.backend];
  if (!b) throw new ConfigError(`route ${vm.id}: unknown backend ${JSON.stringify(vm.backend)}; known: ${Object.keys(BACKENDS).join(', ')}`);
  return b;
}

/** argv to run on the laptop (spawn it without a shell). */
export function renderArgv(vm: VmSpec, job: Job): string[] {
  const norm = { argv: job.argv, cwd: job.cwd, env: job.env ?? {} };
  checkJob(norm);
  return backendFor(vm).render(vm, norm);
}

/** One bash command line, run on the laptop, that runs job.argv in job.cwd with job.env on the VM and exits with its status. */
export function renderJob(vm: VmSpec, job: Job): string {
  const norm = { argv: job.argv, cwd: job.cwd, env: job.env ?? {}, ...(job.stdin ? { stdin: true } : {}) };
  checkJob(norm);
  const backend = backendFor(vm);
  return backend.renderCommand ? backend.renderCommand(vm, norm) : quoteArgv(backend.render(vm, norm));
}

/** renderJob with argv ['bash', '-c', line]. */
export function renderLine(vm: VmSpec, line: string, cwd: string, env?: Record<string, string>): string {
  return renderJob(vm, { argv: ['bash', '-c', line], cwd, env: env ?? {} });
}
