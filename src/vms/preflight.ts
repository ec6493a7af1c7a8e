// Preflight of one VM (seed 001: inspect before touching VM state): the backend's tool is here, the host
// answers, its host key is the pinned one, the instance exists and runs, is what the catalogue says it is,
// the source mount is there and read-only or writable as configured, the guest disk has room above a
// floor, the declared tools are on the guest's PATH. Each failure says what to do and carries its own
// exit status. A full disk is reported, never cleaned: offhost never stops, deletes or wipes a VM to
// make room.
//
// `cheap` (what `offhost run` does before taking a lock): one round trip to the host, no host-key scan,
// no tool lookup. `full` (`offhost vm status`): everything.
import { spawnSync } from 'node:child_process';
import { EXIT } from '../errors.js';
import { BACKENDS, probeBackend, renderJob } from '../routes/index.js';
import { quote } from '../routes/quote.js';
import type { VmSpec } from '../routes/types.js';
import { HOST_KEY_FAILURE } from '../routes/hostkey.js';
import { masterControl, masterSocketPresent } from '../routes/multiplex.js';
import { firstLine, hostScriptArgv, runOnHostAsync, sshFailed, type HostResult } from './host.js';
import { diskAt, findInstance, incusType } from './incus.js';
import { describeVm } from './isolation.js';
import { probeRsync, rsyncProblem, type RsyncInfo } from '../routes/rsync-probe.js';
import { guestCopy } from '../routes/guest-copy.js';
import { DEFAULT_GUEST_DIR, syncMode } from '../routes/sync.js';

export interface Check {
  name: string;
  ok: boolean;
  detail: string;
  /** What to do about a failure. */
  fix?: string;
  /** Exit status of a failure. */
  status?: number;
  /** Something a check that passed had to do, said to the user of a run (the gate's notes). */
  note?: string;
}

export interface PreflightReport {
  vm: string;
  checks: Check[];
  /** 0, or the status of the first failed check. */
  status: number;
}

export const DEFAULT_DISK_FLOOR_MB = 1024;

/** A recent answer of the cheap probe, kept by the caller (src/vms/probe-reuse.ts). */
export interface ProbeReuse {
  /** The free space (KB) a probe or run saw on a shared connection that is still up, recently enough; else null. */
  recent(vm: VmSpec): Promise<number | null>;
  /** What a probe or a run's session just read of the guest's /tmp. */
  remember(vm: VmSpec, availKb: number): void;
  /** The laptop's rsync, as probeRsync says, asked again only when the program on PATH is another file. */
  rsync(env: NodeJS.ProcessEnv): RsyncInfo;
}
/** Where the guest's build outputs go (POLICY R6: VM-local /tmp, /srv/test-out): the disk that must have room. */
const SCRATCH = '/tmp';
/** Separates the host's answer from the guest's; `offhost-probe` also marks the probe in stand-in logs. */
const MARK = '@@offhost-probe@@';

function report(vm: VmSpec, checks: Check[]): PreflightReport {
  const failed = checks.find((c) => !c.ok);
  return { vm: vm.id, checks, status: failed ? (failed.status ?? EXIT.preflightFailed) : EXIT.ok };
}

/**
 * The POSIX sh probe run inside the guest; prints `df …`, `mnt …`, `tool NAME ok|missing` lines, and for a
 * Lima or Tart guest (`hostTree`: the laptop tree it mounts) `arch …`, `hmnt …` (that tree's mount) and
 * `copydir ok|no DIR` (the nearest existing parent of the copy's directory is writable: nothing is made).
 */
export function guestProbe(vm: VmSpec, full: boolean, hostTree?: string): string {
  const parts = [': offhost-probe', `echo "df $(df -Pk ${SCRATCH} 2>/dev/null | tail -n 1)"`];
  if (hostTree !== undefined) {
    const dir = (vm.guest_dir ?? DEFAULT_GUEST_DIR).replace(/\/+$/, '') || '/';
    parts.push(
      'echo "arch $(uname -m)"',
      `echo "hmnt $(findmnt -n -o TARGET,OPTIONS -T ${quote(hostTree)} 2>/dev/null)"`,
      `d=${quote(dir)}; while [ ! -e "$d" ]; do d=$(dirname "$d"); done; if [ -d "$d" ] && [ -w "$d" ]; then echo "copydir ok $d"; else echo "copydir no $d"; fi`,
    );
  }
  if (full && vm.mount) parts.push(`echo "mnt $(findmnt -n -o TARGET,OPTIONS -T ${quote(vm.mount.path)} 2>/dev/null)"`);
  if (full) for (const t of vm.tools ?? []) parts.push(`if command -v ${quote(t)} >/dev/null 2>&1; then echo ${quote(`tool ${t} ok`)}; else echo ${quote(`tool ${t} missing`)}; fi`);
  return parts.join('; ');
}

/** A Lima or Tart guest: its architecture as declared, the laptop tree mounted read-only, the copy's directory writable. */
function guestCopyChecks(vm: VmSpec, lines: string[], hostTree: string): Check[] {
  const checks: Check[] = [];
  const arch = lines.find((l) => l.startsWith('arch '))?.slice(5).trim() ?? '';
  const norm = (a: string) => (a === 'arm64' ? 'aarch64' : a === 'amd64' ? 'x86_64' : a);
  if (arch && vm.arch && norm(arch) !== norm(vm.arch)) {
    checks.push({ name: 'arch', ok: false, detail: `the guest is ${arch}; the catalogue says ${vm.arch}${norm(arch) === 'aarch64' ? ' (an arm64 guest is no x86_64 evidence)' : ''}`, fix: `declare arch: ${arch} for ${vm.id} (routes that require ${vm.arch} then refuse it), or point them at a ${vm.arch} guest` });
  } else checks.push({ name: 'arch', ok: true, detail: `the guest is ${arch || 'of an architecture uname did not print'}${vm.arch ? ' as declared' : ' (declare `arch:` so that routes can require one)'}` });
  const [target = '', opts = ''] = (lines.find((l) => l.startsWith('hmnt '))?.slice(5).trim() ?? '').split(/\s+/);
  const ro = opts.split(',').includes('ro');
  if (target === '' || target === '/') checks.push({ name: 'host tree', ok: true, detail: `${hostTree} is not mounted from the laptop in the guest${target === '' ? ' (findmnt printed nothing)' : ''}` });
  else if (!ro)
    checks.push({ name: 'host tree', ok: false, detail: `${hostTree} is mounted writable in the guest (${target})`, fix: vm.backend === 'lima' ? `mount it read-only: \`writable: false\` for that mount in \`limactl edit ${vm.instance ?? ''}\` (builds run in the guest-local copy, never in the mount: seed 001)` : 'share it read-only (`tart run --dir=NAME:PATH:ro`): builds run in the guest-local copy, never in the mount (seed 001)' });
  else checks.push({ name: 'host tree', ok: true, detail: `${hostTree} is mounted read-only (${target}); builds run in the guest-local copy` });
  const copy = lines.find((l) => l.startsWith('copydir '))?.split(' ') ?? [];
  const dir = (vm.guest_dir ?? DEFAULT_GUEST_DIR).replace(/\/+$/, '') || '/';
  if (copy[1] === 'ok') checks.push({ name: 'copy dir', ok: true, detail: `${dir} can be written in the guest (${copy.slice(2).join(' ')} is writable)` });
  else checks.push({ name: 'copy dir', ok: false, detail: `${dir} cannot be made in the guest: ${copy.slice(2).join(' ') || 'its parent'} is not writable`, fix: `set \`guest_dir\` for ${vm.id} to a guest-local directory the guest user can write (default ${DEFAULT_GUEST_DIR})` });
  return checks;
}

/** The `Available` column of the probe's `df -Pk` line, in KB. */
export function freeKb(out: string): number | null {
  const df = out.split('\n').find((l) => l.startsWith('df '));
  const kb = Number(df?.slice(3).trim().split(/\s+/)[3]);
  return df && Number.isFinite(kb) ? kb : null;
}

function guestChecks(vm: VmSpec, out: string, full: boolean, provision: string, hostTree?: string): Check[] {
  const checks: Check[] = [];
  const lines = out.split('\n');
  if (hostTree !== undefined) checks.push(...guestCopyChecks(vm, lines, hostTree));
  const df = lines.find((l) => l.startsWith('df '));
  const floor = vm.disk_floor_mb ?? DEFAULT_DISK_FLOOR_MB;
  const cols = df?.slice(3).trim().split(/\s+/) ?? [];
  const availKb = Number(cols[3]);
  if (!df || cols.length < 4 || !Number.isFinite(availKb)) {
    checks.push({ name: 'disk', ok: false, detail: `could not read the free space of ${SCRATCH} in the guest (\`df -Pk ${SCRATCH}\` printed ${JSON.stringify(df ?? '')})`, fix: 'check that df works in the guest' });
  } else {
    const mb = Math.floor(availKb / 1024);
    checks.push(
      mb >= floor
        ? { name: 'disk', ok: true, detail: `${mb} MB free on ${SCRATCH} (floor ${floor} MB)` }
        : {
            name: 'disk',
            ok: false,
            status: EXIT.diskFull,
            detail: `the guest disk is full: ${mb} MB free on ${SCRATCH} (${cols[4] ?? '?'} used), under the floor of ${floor} MB`,
            fix: 'report it and ask before reclaiming space; remove only files your own runs left (build outputs under /tmp, /srv/test-out). offhost never stops, deletes or cleans a VM to make room (seed 001)',
          },
    );
  }
  // In the guest (full preflight only; the cheap one trusts the host's device list): really mounted, ro/rw as configured.
  if (full && vm.mount) {
    const mnt = lines.find((l) => l.startsWith('mnt '))?.slice(4).trim() ?? '';
    const [target, opts = ''] = mnt.split(/\s+/);
    const ro = opts.split(',').includes('ro');
    if (target !== vm.mount.path) {
      checks.push({
        name: 'mount',
        ok: false,
        detail: `${vm.mount.path} is not a mount point in the guest (it is under ${target || 'nothing'}): the source is not mounted`,
        fix: `mount it (R6): ${provision} adds the disk device; or \`incus config device add ${vm.instance ?? '<instance>'} ${vm.mount.device ?? 'koder'} disk source=${vm.mount.source} path=${vm.mount.path} readonly=${vm.mount.readonly}\` on the host`,
      });
    } else if (ro !== vm.mount.readonly) {
      checks.push({
        name: 'mount',
        ok: false,
        detail: `${vm.mount.path} is mounted ${ro ? 'read-only' : 'writable'} in the guest; the catalogue says ${vm.mount.readonly ? 'read-only' : 'writable'}`,
        fix: vm.mount.readonly ? 'remount it read-only (readonly=true on the disk device): a writable mount lets a build write into the monorepo (R6)' : 'set readonly=false on the disk device, or mount: readonly: true in the catalogue',
      });
    } else checks.push({ name: 'mount', ok: true, detail: `${vm.mount.path} mounted ${ro ? 'read-only' : 'writable'} as configured` });
  }
  if (full && (vm.tools ?? []).length > 0) {
    const missing = (vm.tools ?? []).filter((t) => !lines.includes(`tool ${t} ok`));
    checks.push(
      missing.length === 0
        ? { name: 'tools', ok: true, detail: `on the guest's PATH: ${vm.tools!.join(' ')}` }
        : {
            name: 'tools',
            ok: false,
            detail: `missing in the guest: ${missing.join(' ')}`,
            fix: vm.packages?.length ? `${provision} installs the VM's packages (${vm.packages.join(' ')})` : `install them in the guest, or list their packages under the VM's \`packages\``,
          },
    );
  }
  return checks;
}

/** Fingerprints the host presents (`ssh -G` for the real name and port, `ssh-keyscan`, `ssh-keygen -lf -`). */
function hostKeyCheck(vm: VmSpec, env: NodeJS.ProcessEnv): Check {
  const host = vm.host!;
  const pinned = vm.host_key!;
  const g = spawnSync('ssh', ['-G', host], { env, encoding: 'utf8' });
  const conf = new Map((g.stdout ?? '').split('\n').map((l) => [l.split(' ')[0]!, l.slice(l.indexOf(' ') + 1)] as [string, string]));
  const hostname = conf.get('hostname') ?? host.replace(/^.*@/, '');
  const port = conf.get('port') ?? '22';
  const scan = spawnSync('ssh-keyscan', ['-T', '10', '-p', port, hostname], { env, encoding: 'utf8' });
  const keys = (scan.stdout ?? '').split('\n').filter((l) => l.trim() !== '' && !l.startsWith('#'));
  if (keys.length === 0) {
    return { name: 'host key', ok: false, detail: `could not read the host key of ${host} (${hostname}:${port}): ${firstLine(scan.stderr ?? '') || 'no answer'}`, fix: `check that ${host} is up and runs sshd` };
  }
  const fp = spawnSync('ssh-keygen', ['-lf', '-'], { env, encoding: 'utf8', input: keys.join('\n') + '\n' });
  const prints = (fp.stdout ?? '').split('\n').map((l) => l.split(/\s+/)[1]).filter((x): x is string => !!x);
  if (prints.includes(pinned)) return { name: 'host key', ok: true, detail: `${host} presents the pinned key ${pinned}` };
  return {
    name: 'host key',
    ok: false,
    status: EXIT.hostKeyMismatch,
    detail: `${host} (${hostname}:${port}) presents ${prints.join(', ') || 'no key'}, not the pinned ${pinned}: nothing was sent to it`,
    fix: `do not connect. If ${host} was reinstalled, confirm its new key out of band (on its console: ssh-keygen -lf /etc/ssh/ssh_host_ed25519_key.pub) and update host_key in the catalogue; otherwise someone may be in the way`,
  };
}

/**
 * ssh refused the host's key (its banner, or "Host key verification failed"): the same check, status
 * (248) and words as `vm status`, whichever command met it. With a pinned key, the host is scanned for
 * what it presents now; without one, the key ssh knows for it (known_hosts) is not the one offered.
 */
export function hostKeyRefused(vm: VmSpec, sshStderr: string, env: NodeJS.ProcessEnv): Check {
  if (vm.host && vm.host_key) {
    const c = hostKeyCheck(vm, env);
    if (!c.ok && c.status === EXIT.hostKeyMismatch) return c;
  }
  const host = vm.host ?? vm.instance ?? vm.id;
  return {
    name: 'host key',
    ok: false,
    status: EXIT.hostKeyMismatch,
    detail: `${host} presents ${vm.host_key ? 'a host key that is not the pinned ' + vm.host_key : 'a host key that is not the one ssh knows for it (known_hosts)'}: nothing was sent to it (ssh: ${firstLine(sshStderr.replace(/^@+.*\n/gm, '')) || 'Host key verification failed'})`,
    fix: `do not connect. If ${host} was reinstalled, confirm its new key out of band (on its console: ssh-keygen -lf /etc/ssh/ssh_host_ed25519_key.pub) and update ${vm.host_key ? 'host_key in the catalogue' : 'known_hosts (ssh-keygen -R)'}; otherwise someone may be in the way`,
  };
}

/** Runs the preflight of one VM (`abort`: its probe is ended at once, and the report says so: the caller was interrupted). */
export async function preflight(vm: VmSpec, env: NodeJS.ProcessEnv, opts: { full: boolean; reuse?: ProbeReuse; abort?: AbortSignal }): Promise<PreflightReport> {
  const checks: Check[] = [];
  const provision = `\`offhost vm provision ${vm.id}\``;
  const hint = probeBackend(vm, env);
  if (hint) {
    checks.push({ name: 'laptop tool', ok: false, status: EXIT.backendMissing, detail: `\`${hint.tool}\` is not on this machine's PATH`, fix: hint.message });
    return report(vm, checks);
  }
  checks.push({ name: 'laptop tool', ok: true, detail: `on PATH here: ${BACKENDS[vm.backend].tools(vm).join(' ') || '(none needed)'}` });
  if (guestCopy(vm) && syncMode(vm) === 'shared') {
    // Seed 001: the host tree is mounted read-only in a Lima/Tart guest; never build in it.
    checks.push({ name: 'sync', ok: false, detail: `${vm.id} is a ${vm.backend} guest with sync: shared: its builds would run in the laptop's tree mounted in the guest (never build in /Users/**: seed 001)`, fix: `remove \`sync: shared\` from ${vm.id}: the default for ${vm.backend} is a guest-local copy (sync: rsync), or set sync: git` });
    return report(vm, checks);
  }
  if (syncMode(vm) === 'rsync') {
    // Before any connection: a Mac's openrsync may refuse options the copy needs (src/routes/rsync-probe.ts).
    const info = opts.reuse ? opts.reuse.rsync(env) : probeRsync(env);
    const problem = rsyncProblem(info);
    if (problem) {
      checks.push({ name: 'rsync', ok: false, status: EXIT.backendMissing, detail: problem.replace(/; install GNU rsync.*$/, ''), fix: problem.slice(problem.indexOf('install GNU rsync')) });
      return report(vm, checks);
    }
    checks.push({ name: 'rsync', ok: true, detail: `${info.describe} takes the options sync: rsync uses` });
  }
  if (opts.full && vm.host && vm.host_key) {
    const c = hostKeyCheck(vm, env);
    checks.push(c);
    if (!c.ok) return report(vm, checks);
  }

  if (vm.backend === 'incus') {
    const inst = vm.instance ?? '';
    const script = `incus list --format json ${quote(inst)} && echo ${MARK} && incus exec ${quote(inst)} -- sh -c ${quote(guestProbe(vm, opts.full))}`;
    const r = await runOnHostAsync(hostScriptArgv(vm, script), env, 120_000, opts.abort);
    if (sshFailed(vm, r)) return report(vm, [...checks, unreachable(vm, r, env)]);
    checks.push({ name: 'host', ok: true, detail: vm.host ? `${vm.host} answers over ssh` : 'incus runs here' });
    const [listOut = '', guestOut = ''] = r.stdout.split(`${MARK}\n`);
    let found;
    try {
      found = findInstance(listOut, inst);
    } catch (err) {
      checks.push({ name: 'instance', ok: false, detail: `${(err as Error).message}; stderr: ${firstLine(r.stderr)}`, fix: `check \`${vm.host ? `ssh ${vm.host} -- ` : ''}incus list\` works (the remote user needs the incus-admin group)` });
      return report(vm, checks);
    }
    if (!found) {
      checks.push({
        name: 'instance',
        ok: false,
        status: EXIT.vmMissing,
        detail: `instance ${inst} does not exist${vm.host ? ` on ${vm.host}` : ''}`,
        fix: `provision it (POLICY R8): ${provision}`,
      });
      return report(vm, checks);
    }
    if (found.status !== 'Running') {
      checks.push({ name: 'instance', ok: false, detail: `instance ${inst} is ${found.status}`, fix: `start it: \`${vm.host ? `ssh ${vm.host} -- ` : ''}incus start ${inst}\` (offhost does not change VM state during a preflight)` });
      return report(vm, checks);
    }
    checks.push({ name: 'instance', ok: true, detail: `${inst} is Running (${found.type}, ${found.architecture || 'arch unknown'})` });
    const kindWrong = vm.kind !== undefined && vm.kind !== 'microvm' && found.type !== incusType(vm.kind);
    const archWrong = vm.arch !== undefined && found.architecture !== '' && found.architecture !== vm.arch;
    if (kindWrong || archWrong) {
      checks.push({
        name: 'isolation',
        ok: false,
        status: EXIT.isolationRefused,
        detail: `${inst} is a ${found.type} on ${found.architecture}; the catalogue says ${describeVm(vm)}`,
        fix: 'fix the catalogue entry, or recreate the instance as declared; offhost never treats one as the other (seed 002)',
      });
    }
    if (vm.mount) {
      const d = diskAt(found, vm.mount.path);
      if (!d) {
        checks.push({
          name: 'mount',
          ok: false,
          detail: `${inst} has no disk device at ${vm.mount.path}: the source is not mounted (R6)`,
          fix: `${provision} adds it; or \`${vm.host ? `ssh ${vm.host} -- ` : ''}incus config device add ${inst} ${vm.mount.device ?? 'koder'} disk source=${vm.mount.source} path=${vm.mount.path} readonly=${vm.mount.readonly}\``,
        });
        return report(vm, checks);
      }
      if (d.source !== vm.mount.source) {
        checks.push({ name: 'mount', ok: false, detail: `the disk device ${d.name} at ${vm.mount.path} shows ${d.source}, not ${vm.mount.source}`, fix: 'fix the device (incus config device set) or the catalogue' });
        return report(vm, checks);
      }
    }
    if (r.status !== 0) {
      checks.push({ name: 'guest', ok: false, detail: `the probe in ${inst} failed (exit ${r.status}): ${firstLine(r.stderr)}`, fix: `try \`${vm.host ? `ssh ${vm.host} -- ` : ''}incus exec ${inst} -- true\`` });
      return report(vm, checks);
    }
    checks.push(...guestChecks(vm, guestOut, opts.full, provision));
    return report(vm, checks);
  }

  // Any other backend: the probe runs in the guest through the route's own command. A Lima or Tart guest
  // mounts the laptop's tree (the home, by default): the copy's checks look at it.
  const hostTree = guestCopy(vm) && syncMode(vm) === 'rsync' ? (vm.mount?.path ?? env.HOME ?? '/Users') : undefined;
  const reused = !opts.full && hostTree === undefined ? ((await opts.reuse?.recent(vm)) ?? null) : null;
  if (reused !== null) {
    checks.push({ name: 'guest', ok: true, detail: `${vm.id} answered on this laptop's open connection to ${vm.host} within the last minute` });
    checks.push({ name: 'disk', ok: true, detail: `${Math.floor(reused / 1024)} MB free on ${SCRATCH} within the last minute (floor ${vm.disk_floor_mb ?? DEFAULT_DISK_FLOOR_MB} MB; the run's session checks it again before it builds)` });
    return report(vm, checks);
  }
  const line = renderJob(vm, { argv: ['sh', '-c', guestProbe(vm, opts.full, hostTree)], cwd: '/', env: {} });
  const { r, replaced } = await probeOnMaster(vm, line, env, opts.abort);
  if (r.status !== 0) {
    if (HOST_KEY_FAILURE.test(r.stderr)) {
      checks.push(hostKeyRefused(vm, r.stderr, env));
      return report(vm, checks);
    }
    checks.push({
      name: 'guest',
      ok: false,
      detail: `could not run a probe in ${vm.id} (exit ${r.status}): ${firstLine(r.stderr) || 'no message'}`,
      fix: vm.backend === 'template' ? `run the driver by hand (\`${line}\`) and follow its setup guidance (docs/VMS.md)` : `check that the ${vm.backend} instance ${vm.instance ?? ''} exists and runs`,
    });
    return report(vm, checks);
  }
  const renewed = replaced ? `the open ssh connection to ${vm.host ?? vm.instance} did not answer (${replaced}): a new one was opened` : null;
  checks.push({ name: 'guest', ok: true, detail: `${vm.id} runs commands${renewed ? ` (${renewed})` : ''}`, ...(renewed ? { note: `${vm.id}: ${renewed}` } : {}) });
  checks.push(...guestChecks(vm, r.stdout, opts.full, provision, hostTree));
  const done = report(vm, checks);
  if (done.status === EXIT.ok && opts.reuse && hostTree === undefined) {
    const kb = freeKb(r.stdout);
    if (kb !== null) opts.reuse.remember(vm, kb);
  }
  return done;
}

/**
 * How long a probe on an open shared master may take before the master is taken for dead. A master whose
 * connection died unseen (the laptop slept, its network changed) takes its keepalives' 45 s to notice
 * (hostkey.ts connectionSshOptions), and every new channel on it waits meanwhile; on a live one the probe
 * is one round trip and a `df`.
 */
export const STALE_MASTER_MS = 10_000;

/**
 * The probe; when it goes through an open shared master (src/routes/multiplex.ts) and that master does not
 * answer within STALE_MASTER_MS, or ssh ends it with 255 (not a host-key refusal: ssh's own failure, e.g.
 * the master lost its connection), the master is asked to take no new clients (`-O stop`) and the probe
 * runs once more, on a master of its own.
 */
async function probeOnMaster(vm: VmSpec, line: string, env: NodeJS.ProcessEnv, abort?: AbortSignal): Promise<{ r: HostResult; replaced: string | null }> {
  const argv = ['bash', '-c', line];
  if (env.OFFHOST_SSH_MULTIPLEX === '0' || !masterSocketPresent(vm.sshOptions ?? [])) return { r: await runOnHostAsync(argv, env, 120_000, abort), replaced: null };
  const first = await runOnHostAsync(argv, env, STALE_MASTER_MS, abort);
  if (abort?.aborted || !(first.status === 124 || (first.status === 255 && !HOST_KEY_FAILURE.test(first.stderr)))) return { r: first, replaced: null };
  await masterControl(vm, 'stop', env);
  const why = first.status === 124 ? `no answer within ${STALE_MASTER_MS / 1000} s` : `ssh: ${firstLine(first.stderr) || 'exit 255'}`;
  return { r: await runOnHostAsync(argv, env, 120_000, abort), replaced: why };
}

function unreachable(vm: VmSpec, r: HostResult, env: NodeJS.ProcessEnv): Check {
  if (HOST_KEY_FAILURE.test(r.stderr)) return hostKeyRefused(vm, r.stderr, env);
  return {
    name: 'host',
    ok: false,
    detail: `cannot reach ${vm.host} over ssh: ${firstLine(r.stderr) || `ssh exited ${r.status}`}`,
    fix: `make \`ssh ${vm.host} true\` work without a prompt: a \`Host ${vm.host}\` entry in ~/.ssh/config (HostName, User, IdentityFile), your key in its authorized_keys, the host up and on the network`,
  };
}

/** Text for a report: one line per check, the fix under each failure. */
export function formatReport(r: PreflightReport): string {
  const lines = [`${r.vm}: ${r.status === 0 ? 'ready' : 'NOT READY'}`];
  for (const c of r.checks) {
    lines.push(`  ${c.ok ? 'ok  ' : 'FAIL'} ${c.name.padEnd(11)} ${c.detail}`);
    if (!c.ok && c.fix) lines.push(...c.fix.split('\n').map((l) => `       fix: ${l}`));
  }
  return lines.join('\n') + '\n';
}
