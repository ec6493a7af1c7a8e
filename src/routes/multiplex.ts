// One ssh connection per run (issue 24): every ssh offhost renders for a VM (the preflight, the session,
// rsync's and git's transport, the checks from a new session) shares one master connection through
// OpenSSH's ControlMaster, in a private socket directory, kept for ten minutes after the run so that the
// next runs reuse it too. The socket's name carries a hash of the host-key pinning options, so a pinned
// connection never rides on a master that was opened without the pin. OFFHOST_SSH_MULTIPLEX=0 turns it off.
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { lstatSync, mkdirSync, readdirSync } from 'node:fs';
import { connectionSshOptions, pinnedSshOptions } from './hostkey.js';
import type { VmSpec } from './types.js';

/**
 * How long a master outlives its last client. An agent's builds are minutes apart: with a minute, most runs
 * paid a whole ssh handshake (on loopback 2.2x plain ssh instead of 1.3x: docs/PERFORMANCE.md). Ten
 * minutes is the window in which a run also trusts the kept answer about the remote (src/run/lock-context.ts
 * REMOTE_PROBE_STALE_MS). A master whose connection died unseen (the laptop slept, its network changed) is
 * replaced by the preflight (src/vms/preflight.ts, STALE_MASTER_MS).
 */
export const PERSIST_SECONDS = 600;
/**
 * A unix socket's path is limited (104 bytes on macOS, 108 on Linux), and ssh binds the master at the
 * path plus 17 characters of its own before renaming it: a longer path fails every connection.
 */
const SOCKET_PATH_MAX = 103;
/** `%C` (40 hex digits), `-`, the tag (8), ssh's temporary suffix (`.` and 16). */
const SOCKET_NAME_LENGTH = 40 + 1 + 8 + 17;

/**
 * `${OFFHOST_SSH_CONTROL_DIR:-/tmp}/offhost-ssh-<uid>`, mode 0700 and ours, or why it cannot be used (then no
 * multiplexing: nobody else may share it, and a path too long for a socket would fail every connection).
 */
export function controlFolder(env: NodeJS.ProcessEnv): { dir: string } | { problem: string } {
  const uid = process.getuid?.();
  if (uid === undefined) return { problem: 'this system has no user ids' };
  // Short on purpose: a unix socket path is limited to about 104 bytes.
  const parent = env.OFFHOST_SSH_CONTROL_DIR || '/tmp';
  const dir = `${parent}/offhost-ssh-${uid}`;
  const room = SOCKET_PATH_MAX - 1 - SOCKET_NAME_LENGTH;
  if (Buffer.byteLength(dir) > room) return { problem: `${dir} is ${Buffer.byteLength(dir)} bytes, too long for ssh's control sockets in it (at most ${room}): set OFFHOST_SSH_CONTROL_DIR to a shorter folder` };
  try {
    mkdirSync(parent, { recursive: true });
    mkdirSync(dir, { mode: 0o700 });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') return { problem: `${dir} cannot be made (${(err as Error).message})` };
  }
  try {
    const st = lstatSync(dir);
    if (!st.isDirectory() || st.uid !== uid || (st.mode & 0o077) !== 0) return { problem: `${dir} is not a folder of this user's alone (mode 0700): remove it, or set OFFHOST_SSH_CONTROL_DIR to another folder` };
  } catch (err) {
    return { problem: `${dir} cannot be read (${(err as Error).message})` };
  }
  return { dir };
}

/** The folder of controlFolder, or null. */
export function controlDir(env: NodeJS.ProcessEnv): string | null {
  const f = controlFolder(env);
  return 'dir' in f ? f.dir : null;
}

/**
 * Why a run's ssh connections are not shared, when multiplexing is on and its folder cannot be used (said
 * once by the run: every connection then pays its own handshake); null otherwise.
 */
export function multiplexProblem(env: NodeJS.ProcessEnv): string | null {
  if (env.OFFHOST_SSH_MULTIPLEX === '0') return null;
  const f = controlFolder(env);
  return 'problem' in f ? `ssh connections are not shared (each pays its own handshake): ${f.problem}` : null;
}

/** The ControlMaster options for a VM whose other ssh options are `pinning`; [] when turned off or unsafe. */
export function multiplexSshOptions(pinning: readonly string[], env: NodeJS.ProcessEnv): string[] {
  if (env.OFFHOST_SSH_MULTIPLEX === '0') return [];
  const dir = controlDir(env);
  if (!dir) return [];
  const tag = createHash('sha256').update(pinning.join('\0')).digest('hex').slice(0, 8);
  return ['-o', 'ControlMaster=auto', '-o', `ControlPath=${dir}/%C-${tag}`, '-o', `ControlPersist=${PERSIST_SECONDS}`];
}

/** Every ssh option offhost gives a VM's connections: the host-key pin, keepalives, the shared master. */
export async function vmSshOptions(vm: VmSpec, env: NodeJS.ProcessEnv, stateDir: string): Promise<string[]> {
  const pinning = await pinnedSshOptions(vm, env, stateDir);
  return [...pinning, ...connectionSshOptions(vm), ...multiplexSshOptions(pinning, env)];
}

/**
 * The VM with its own connection, not the shared master: for the checks after a connection was lost or
 * hung (the master may be the thing that hangs), where being right matters more than being quick.
 */
export function ownConnection(vm: VmSpec): VmSpec {
  const opts = vm.sshOptions ?? [];
  const out: string[] = [];
  for (let i = 0; i < opts.length; i++) {
    if (opts[i] === '-o' && /^Control(Master|Path|Persist)=/.test(opts[i + 1] ?? '')) {
      i++;
      continue;
    }
    out.push(opts[i]!);
  }
  return { ...vm, sshOptions: [...out, '-o', 'ControlPath=none'] };
}

/** The control path in a VM's ssh options, or null (no shared master). */
function controlPathOf(opts: readonly string[]): string | null {
  for (const o of opts) if (o.startsWith('ControlPath=') && o !== 'ControlPath=none') return o.slice('ControlPath='.length);
  return null;
}

/**
 * Whether a master for these options may be open: a socket in the control folder with their tag (a look
 * at the folder, no process). `%C` is not known without asking ssh (`ssh -G`), so a master to another
 * host with the same pinning counts too: the caller only waits less for a probe (src/vms/preflight.ts).
 */
export function masterSocketPresent(opts: readonly string[]): boolean {
  const path = controlPathOf(opts);
  if (!path) return false;
  const slash = path.lastIndexOf('/');
  const suffix = path.slice(slash + 1).replace(/^%C/, '');
  try {
    return readdirSync(path.slice(0, slash)).some((f) => f.endsWith(suffix) && f.length === suffix.length + 40);
  } catch {
    return false;
  }
}

/**
 * `ssh -O check` (whether the shared master for this VM's options answers: local, no round trip) or
 * `ssh -O stop` (it takes no new clients: it removes its socket, so the next ssh opens a master of its own,
 * and what runs on the old one goes on until it ends; never `-O exit`, which would cut the channels of other
 * runs to the same host). True when ssh said yes. Asynchronous: a run's other work goes on meanwhile, and a
 * signal is handled at once. An answer that does not come within 5 s is no.
 */
export function masterControl(vm: VmSpec, op: 'check' | 'stop', env: NodeJS.ProcessEnv): Promise<boolean> {
  return new Promise((resolve) => {
    const dest = vm.host ?? vm.instance;
    if (!dest || !controlPathOf(vm.sshOptions ?? [])) return resolve(false);
    const user = vm.user !== undefined && vm.user !== '' ? ['-l', vm.user] : [];
    let child: ReturnType<typeof spawn>;
    try {
      child = spawn('ssh', [...(vm.sshOptions ?? []), ...user, '-O', op, dest], { env, stdio: 'ignore' });
    } catch {
      return resolve(false);
    }
    const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
    child.on('error', () => (clearTimeout(timer), resolve(false)));
    child.on('close', (code) => (clearTimeout(timer), resolve(code === 0)));
  });
}
