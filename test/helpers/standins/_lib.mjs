// Shared by the stand-in executables in this directory (test-only; see ../standins.ts).
// A stand-in plays a VM tool (ssh, incus, docker, limactl, multipass, tart, and the seeds' helper
// scripts) as far as argv, working directory, environment and exit status go: it runs the command on
// this machine, in a clean environment (a VM does not inherit the laptop's), and appends one JSON line
// to $OFFHOST_STANDIN_LOG so a test can prove the command went through it ("ran on the VM").
import { appendFileSync, statSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { constants } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const HERE = dirname(fileURLToPath(import.meta.url));

export function fail(tool, message, status = 1) {
  process.stderr.write(`${tool}: ${message}\n`);
  process.exit(status);
}

/** The "VM user's" home: where a remote command starts when nothing sets a directory. */
export function vmHome() {
  return process.env.OFFHOST_STANDIN_HOME || process.env.HOME || '/';
}

/** A fresh VM-side environment: PATH, HOME, locale, and the stand-ins' own OFFHOST_STANDIN_* settings. */
export function cleanEnv(extra = {}) {
  const env = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (k.startsWith('OFFHOST_STANDIN_')) env[k] = v;
  }
  env.PATH = process.env.PATH ?? '/usr/bin:/bin';
  env.HOME = vmHome();
  env.LANG = 'C.UTF-8';
  return Object.assign(env, extra);
}

/** Refuses an instance not in $OFFHOST_STANDIN_INSTANCES (comma-separated) when that is set. */
export function checkInstance(tool, name) {
  const list = process.env.OFFHOST_STANDIN_INSTANCES;
  if (list && !list.split(',').includes(name)) fail(tool, `Error: Instance not found: ${name}`, 1);
}

/**
 * Appends to $OFFHOST_STANDIN_LOG; offhost's own VM probes (preflight, marked `offhost-probe`, or run
 * under an ssh that carried one) go to $OFFHOST_STANDIN_PROBE_LOG instead, so a log shows what the
 * user's command did and a test can still prove the probe ran.
 */
export function log(entry) {
  const line = JSON.stringify({ ...entry, pid: process.pid });
  const probe = process.env.OFFHOST_STANDIN_PROBE === '1' || line.includes('offhost-probe');
  const file = probe ? process.env.OFFHOST_STANDIN_PROBE_LOG : process.env.OFFHOST_STANDIN_LOG;
  if (file) appendFileSync(file, line + '\n');
}

export function requireDir(tool, dir) {
  try {
    if (statSync(dir).isDirectory()) return;
  } catch {}
  fail(tool, `Error: cannot change directory to ${JSON.stringify(dir)}: no such directory`, 1);
}

/** Runs argv (execvp-style lookup on env.PATH), passing stdio through; exits with its status. */
export function execAndExit(tool, argv, { cwd, env, cleanup }) {
  const r = spawnSync(argv[0], argv.slice(1), { cwd, env, stdio: 'inherit' });
  if (cleanup) cleanup();
  if (r.error) {
    const code = r.error.code;
    if (code === 'ENOENT') fail(tool, `exec: ${argv[0]}: not found`, 127);
    if (code === 'EACCES') fail(tool, `exec: ${argv[0]}: permission denied`, 126);
    fail(tool, `exec: ${argv[0]}: ${r.error.message}`, 126);
  }
  if (r.signal) process.exit(128 + (constants.signals[r.signal] ?? 0));
  process.exit(r.status ?? 1);
}

/** The shell a "remote" side runs a command string with (`$SHELL -c` on the other end of ssh). */
export function remoteShell(defaultShell = '/bin/sh') {
  return process.env.OFFHOST_STANDIN_REMOTE_SHELL || defaultShell;
}

/** Name the stand-in was invoked as. */
export function me() {
  return basename(process.argv[1] ?? 'standin');
}

export const loginShellWrapper = join(HERE, '_login-shell');
