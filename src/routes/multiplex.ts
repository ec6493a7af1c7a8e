// One ssh connection per run (issue 24): every ssh offhost renders for a VM (the preflight, the session,
// rsync's and git's transport, the checks from a new session) shares one master connection through
// OpenSSH's ControlMaster, in a private socket directory, kept for a minute after the run so that the
// next run reuses it too. The socket's name carries a hash of the host-key pinning options, so a pinned
// connection never rides on a master that was opened without the pin. OFFHOST_SSH_MULTIPLEX=0 turns it off.
import { createHash } from 'node:crypto';
import { lstatSync, mkdirSync } from 'node:fs';
import { connectionSshOptions, pinnedSshOptions } from './hostkey.js';
import type { VmSpec } from './types.js';

const PERSIST_SECONDS = 60;

/** `/tmp/offhost-ssh-<uid>`, mode 0700 and ours, or null (then no multiplexing: nobody else may share it). */
export function controlDir(env: NodeJS.ProcessEnv): string | null {
  const uid = process.getuid?.();
  if (uid === undefined) return null;
  // Short on purpose: a unix socket path is limited to about 104 bytes.
  const dir = `${env.OFFHOST_SSH_CONTROL_DIR || '/tmp'}/offhost-ssh-${uid}`;
  try {
    mkdirSync(dir, { mode: 0o700 });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') return null;
  }
  try {
    const st = lstatSync(dir);
    if (!st.isDirectory() || st.uid !== uid || (st.mode & 0o077) !== 0) return null;
  } catch {
    return null;
  }
  return dir;
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
