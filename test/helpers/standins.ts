// Stand-ins for the VM tools (test/helpers/standins/*): put standinPath() first on PATH and a
// bash command line that calls ssh, incus, docker, limactl, multipass, tart (or the seeds' helpers
// vm, win.sh, tart-vm.sh) runs against them. Each stand-in runs the command on this machine the way
// the real tool would run it in the VM (argv, working directory, fresh environment, exit status) and
// appends one JSON line to $OFFHOST_STANDIN_LOG: { tool, instance, argv, cwd, ... }.
//
// Settings (environment of the laptop side):
//   OFFHOST_STANDIN_LOG           file to append the JSON lines to
//   OFFHOST_STANDIN_HOME          the "VM user's" home (default $HOME): where commands start
//   OFFHOST_STANDIN_INSTANCES     comma-separated instance names that exist (default: any)
//   OFFHOST_STANDIN_INCUS_STATE   incus: a JSON state file { NAME: RUNNING|STOPPED } (start/stop keep it)
//   OFFHOST_STANDIN_REMOTE_SHELL  the shell a remote side runs a command string with (default /bin/sh;
//                                 /bin/bash for multipass)
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const DIR = fileURLToPath(new URL('./standins', import.meta.url));

/** The directory to prepend to PATH. */
export function standinPath(): string {
  return DIR;
}

/** The stand-in tools, by name. */
export const STANDIN_TOOLS = ['ssh', 'incus', 'docker', 'limactl', 'multipass', 'tart', 'vm', 'win.sh', 'tart-vm.sh'] as const;

export interface StandinLogEntry {
  tool: string;
  instance?: string;
  host?: string;
  argv: string[];
  cwd: string;
  env?: Record<string, string>;
  [k: string]: unknown;
}

/** The entries appended to a log file so far (an absent file is an empty log). */
export function readStandinLog(file: string): StandinLogEntry[] {
  let text = '';
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return [];
  }
  return text
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as StandinLogEntry);
}

/** An environment for the laptop side: stand-ins first on PATH, then `extraPath`, then the system. */
export function standinEnv(opts: { log?: string; home?: string; extraPath?: string[]; env?: Record<string, string> } = {}): Record<string, string> {
  const env: Record<string, string> = {
    PATH: [DIR, ...(opts.extraPath ?? []), '/usr/local/bin', '/usr/bin', '/bin'].join(':'),
    HOME: opts.home ?? process.env.HOME ?? '/tmp',
    LANG: 'C.UTF-8',
  };
  if (opts.log) env.OFFHOST_STANDIN_LOG = opts.log;
  if (opts.home) env.OFFHOST_STANDIN_HOME = opts.home;
  return Object.assign(env, opts.env ?? {});
}

/** Writes an incus stand-in state file (OFFHOST_STANDIN_INCUS_STATE): instance name -> RUNNING | STOPPED. */
export function writeIncusState(file: string, instances: Record<string, 'RUNNING' | 'STOPPED'>): void {
  writeFileSync(file, JSON.stringify(instances));
}
