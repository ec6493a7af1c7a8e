// `offhost vm provision ID` and `offhost vm status [ID…]`: the VMs themselves (docs/VMS.md).
//   provision: the bootstrap of a catalogue VM on its host (POLICY R8), idempotent, each step printed,
//              recorded in meta/context/runbooks/test-vm-provisioning.md and committed alone.
//   status:    the preflight of seed 001 for each VM (all of the catalogue without an ID).
// Exit statuses (src/errors.ts EXIT, docs/VMS.md): 0 ready / provisioned; 243 instance missing; 232 a
// preflight check failed; 233 guest disk full; 234 not the declared kind/arch; 248 host key not as pinned;
// 69 a laptop tool missing; 1 held by another session; 2 error.
import { outputFormat } from '../common.js';
import { Command } from 'commander';
import { parseWith } from '../commander.js';
import { formatHelp } from '../help.js';
import { EXIT, isOffhostError, type OffhostError, UsageError, VmError } from '../../errors.js';
import type { Io } from '../../io.js';
import { loadConfig } from '../../config/load-config.js';
import type { ResolvedConfig } from '../../config/resolve.js';
import type { VmSpec } from '../../routes/types.js';
import { hostsOf, isVmId, parseVmId, vmIdProblem } from '../../vms/id.js';
import { formatReport, preflight } from '../../vms/preflight.js';
import { pinnedSshOptions } from '../../routes/hostkey.js';
import { stateDir } from '../../run/record.js';
import { provisionIncus } from '../../vms/provision.js';
import { repoRoot, runbookEntry, writeRunbook, RUNBOOK_PATH, type RunbookStep } from '../../vms/runbook.js';
import { contextFor, settingsFrom } from '../../run/lock-context.js';
import { acquireFirstFree, release } from '../../locks/lifecycle.js';
import { describeHolder } from '../../report/locks.js';
import { describeVm } from '../../vms/isolation.js';

const PROVISION = `Creates the catalogue VM on its host if it is missing (incus launch of its image), adds the monorepo disk device (read-only), installs its packages, runs its smoke command and takes a snapshot to reset to; a second run changes nothing and says so. Appends what it did to ${RUNBOOK_PATH} and commits that file alone. A numbered id (s.khost1.dev-linux-koda-2) provisions a new VM of a pool like its base.`;
const STATUS = 'Preflights each VM (all of the catalogue without an ID): laptop tool, host reachable, host key as pinned, instance present and running, source mount, free disk above the floor, tools.';
const VM_EXIT = '0 ready (provision: done or nothing to do); else the first failed check\'s status (69 a laptop tool missing, 232 preflight failed, 233 disk full, 243 VM missing, 248 host key mismatch); 1 held by another session; 2 usage or config error.';
const VM_OPTIONS: [string, string][] = [
  ['--config <file>', 'configuration file'],
  ['--no-commit', 'provision: write the runbook but do not commit it'],
  ['-f, --format <kind>', 'status: stylish (the default) or json'],
  ['--json', 'status: one JSON report per VM (the same as --format json)'],
  ['--session <tag>', 'provision: this session (default $OFFHOST_SESSION), for the lock check'],
];
const USAGE = formatHelp({
  usage: ['offhost vm provision ID [--no-commit] [--config FILE]', 'offhost vm status [ID...] [--format json] [--config FILE]'],
  description: 'Provisions the test VMs of the catalogue and checks that they are ready. `offhost vm SUBCOMMAND --help` shows one subcommand.',
  subcommands: [
    ['provision ID', 'create the VM if missing, mount the source, install its packages, smoke-test, snapshot'],
    ['status [ID...]', 'preflight each VM (all of the catalogue without an ID)'],
  ],
  options: VM_OPTIONS,
  exit: VM_EXIT,
  examples: ['offhost vm status', 'offhost vm status s.khost1.dev-linux-koda --json', 'offhost vm provision s.khost1.dev-linux-koda-2'],
});

interface Opts {
  config?: string;
  commit?: boolean;
  json?: boolean;
  session?: string;
}

/** The subcommand's options; null when it printed its help. */
function parseArgs(sub: string, args: string[], io: Io): { o: Opts; ids: string[] } | null {
  const cmd = new Command(`offhost vm ${sub}`).description(sub === 'provision' ? PROVISION : STATUS).argument('[ids...]');
  // Each subcommand's own options (status has no runbook to commit, provision no JSON report).
  for (const [flags, what] of VM_OPTIONS) if (!what.startsWith(sub === 'provision' ? 'status: ' : 'provision: ')) cmd.option(flags, what.replace(/^(provision|status): /, ''));
  const examples = sub === 'provision' ? ['offhost vm provision s.khost1.dev-linux-koda', 'offhost vm provision s.khost1.dev-linux-koda-2 --no-commit'] : ['offhost vm status', 'offhost vm status s.khost1.dev-linux-koda --json'];
  if (parseWith(cmd, args, io, { exit: VM_EXIT, examples }) !== null) return null;
  const o = cmd.opts<Opts & { format?: string }>();
  if (sub !== 'provision') o.json = outputFormat(o) === 'json';
  return { o, ids: cmd.args };
}

/** The catalogue entry for `id`; a numbered id of a pool's VM (`…-koda-2`) is derived from its base. */
export function vmFor(config: ResolvedConfig, id: string): { vm: VmSpec; derived: VmSpec | null } {
  const problem = vmIdProblem(id, hostsOf(config.vms.keys()));
  if (problem) throw new UsageError(`'${id}' ${problem}`);
  const known = config.vms.get(id);
  if (known) return { vm: known, derived: null };
  const m = /^(.*)-(\d+)$/.exec(id);
  const baseVm = m ? config.vms.get(m[1]!) : undefined;
  if (baseVm && m) {
    const instance = `${baseVm.instance ?? parseVmId(baseVm.id)!.instance}-${m[2]}`;
    const vm: VmSpec = { ...baseVm, id, instance };
    return { vm, derived: vm };
  }
  throw new UsageError(`${id} is not in the VM catalogue (known: ${[...config.vms.keys()].join(', ')}); declare it under 'vms' in offhost.config.yaml (docs/VMS.md)`);
}

export async function run(args: string[], io: Io): Promise<number> {
  const [sub, ...rest] = args;
  if (sub === undefined || sub === '--help' || sub === '-h' || sub === 'help') {
    (sub === undefined ? io.stderr : io.stdout)(USAGE);
    return sub === undefined ? EXIT.error : EXIT.ok;
  }
  try {
    if (sub !== 'status' && sub !== 'provision') throw new UsageError(`unknown subcommand '${sub}'\n${USAGE}`);
    const parsed = parseArgs(sub, rest, io);
    if (parsed === null) return EXIT.ok;
    const { o, ids } = parsed;
    const config = loadConfig(o.config !== undefined ? { cwd: io.cwd, env: io.env, configFile: o.config } : { cwd: io.cwd, env: io.env });
    if (sub === 'status') return await status(config, ids, o, io);
    if (sub === 'provision') {
      if (ids.length !== 1) throw new UsageError(`provision takes one VM id\n${USAGE}`);
      return await provision(config, ids[0]!, o, io);
    }
    throw new UsageError(`unknown subcommand '${sub}'\n${USAGE}`);
  } catch (err) {
    if (isOffhostError(err) || (err as { name?: string })?.name === 'VmError') {
      io.stderr(`offhost vm: ${(err as Error).message}\n`);
      return (err as OffhostError).exitCode;
    }
    throw err;
  }
}

async function status(config: ResolvedConfig, ids: string[], o: Opts, io: Io): Promise<number> {
  const vms = ids.length ? ids.map((id) => vmFor(config, id).vm) : [...config.vms.values()];
  let worst = EXIT.ok as number;
  for (const listed of vms) {
    // A pinned host key is how offhost's own connections reach the VM (src/routes/hostkey.ts): the probe uses
    // it too, so a host that presents the pinned key is not refused for missing from known_hosts. A pin that
    // cannot be applied (the host presents another key) is left to the preflight's host-key check to name.
    let vm = listed;
    if (vm.host_key) {
      try {
        vm = { ...vm, sshOptions: [...(await pinnedSshOptions(vm, io.env, stateDir(io.env))), ...(vm.sshOptions ?? [])] };
      } catch {
        // not applied: the preflight's own host-key check says what the host presents instead
      }
    }
    const r = await preflight(vm, io.env, { full: true });
    if (o.json) io.stdout(JSON.stringify(r) + '\n');
    else io.stdout(formatReport(r));
    if (worst === EXIT.ok && r.status !== EXIT.ok) worst = r.status;
  }
  return worst;
}

async function provision(config: ResolvedConfig, id: string, o: Opts, io: Io): Promise<number> {
  const { vm, derived } = vmFor(config, id);
  if (!isVmId(vm.id)) throw new UsageError(`'${id}' is not a test VM id`);
  if (vm.backend !== 'incus') {
    throw new VmError(
      `${vm.id} uses the ${vm.backend} backend; \`offhost vm provision\` bootstraps incus instances (POLICY R8). Set this one up with its own tool (docs/VMS.md: ${vm.backend === 'template' ? "the driver's provision script" : vm.backend === 'lima' ? 'limactl start' : vm.backend === 'tart' ? 'tart clone + tart run' : `${vm.backend}'s own commands`}), then check it with \`offhost vm status ${vm.id}\`.`,
      EXIT.error,
    );
  }
  const repo = repoRoot(io.cwd, io.env) ?? (config.root && repoRoot(config.root, io.env)) ?? null;
  const me = o.session ?? io.env.OFFHOST_SESSION ?? null;
  // Provisioning changes the VM: it holds the VM's lock while it does (R3, R4), and waits for nobody.
  let unlock: (() => Promise<void>) | null = null;
  if (repo) {
    const session = me ?? `vm-provision-${process.pid}`;
    const { ctx } = await contextFor(io, { settings: settingsFrom(config, io.env), session, ai: io.env.OFFHOST_AI ?? 'human', cwd: repo }, false);
    const got = await acquireFirstFree(ctx.store, [{ vm: vm.id }], { session, ai: ctx.ai, reason: `offhost vm provision ${vm.id}`, ttlMinutes: 60 });
    if (got.status === 'held' || got.status === 'busy') {
      io.stderr(`offhost vm: ${describeHolder(got.holder, io.clock.now())}\noffhost vm: provisioning changes the VM, so it waits for that session (POLICY R4). Nothing was done.\n`);
      return EXIT.held;
    }
    if (got.status === 'acquired') unlock = async () => void (await release(ctx.store, { vm: vm.id, session, ai: ctx.ai }));
  }
  try {
    return provisionHeld(config, vm, derived, repo, me, o, io);
  } finally {
    await unlock?.();
  }
}

function provisionHeld(config: ResolvedConfig, vm: VmSpec, derived: VmSpec | null, repo: string | null, me: string | null, o: Opts, io: Io): number {
  io.stdout(`provisioning ${vm.id} (${describeVm(vm)}) on ${vm.host ?? 'this machine'}\n`);
  const steps: RunbookStep[] = provisionIncus(vm, {
    env: io.env,
    now: () => io.clock.now(),
    onStep: (s) => io.stdout(`  ${s.result === 'done' ? 'done     ' : 'unchanged'} ${s.name.padEnd(9)} ${s.detail}${s.result === 'done' && s.command ? `\n            $ ${s.command}` : ''}\n`),
  });
  if (derived) {
    io.stdout(
      `${vm.id} is a new VM of the pool: add it to the catalogue and to the route's vms in offhost.config.yaml:\n  vms:\n    - { id: ${vm.id}, backend: incus, host: ${vm.host ?? '~'}, instance: ${vm.instance} }\n`,
    );
  }
  if (!steps.some((s) => s.result === 'done')) {
    io.stdout(`${vm.id} is already provisioned: nothing changed (runbook not touched).\n`);
    return EXIT.ok;
  }
  if (!repo) {
    io.stderr(`offhost vm: provisioned, but the runbook was not written: ${io.cwd} is in no git repository (run from the monorepo to record it in ${RUNBOOK_PATH}).\n`);
    return EXIT.error;
  }
  const entry = runbookEntry({ vm: vm.id, where: vm.host ?? 'this machine', when: io.clock.now(), ...(me ? { session: me } : {}), steps });
  if (o.commit === false) {
    writeRunbook(repo, entry, null, io.env);
    io.stdout(`runbook: ${RUNBOOK_PATH} (not committed: --no-commit)\n`);
    return EXIT.ok;
  }
  const r = writeRunbook(repo, entry, `runbook: provisioned ${vm.id} (offhost vm provision)`, io.env);
  if (!r.committed) {
    io.stderr(`offhost vm: provisioned and wrote ${RUNBOOK_PATH}, but ${r.problem}\nCommit that file yourself: git commit -m 'runbook: provisioned ${vm.id}' -- ${RUNBOOK_PATH}\n`);
    return EXIT.error;
  }
  io.stdout(`runbook: ${RUNBOOK_PATH}, committed ${r.committed.slice(0, 12)} (that file only)\n`);
  return EXIT.ok;
}
