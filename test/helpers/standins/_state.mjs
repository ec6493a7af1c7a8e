// State of the stand-in VM hosts, kept in $OFFHOST_STANDIN_STATE (test-only): instances with their status,
// devices, snapshots, installed packages and disk usage, so that provisioning is real work on real files
// and a second run can see what the first did. One JSON file per tool, written atomically.
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { HERE } from './_lib.mjs';

export function stateDir() {
  return process.env.OFFHOST_STANDIN_STATE || null;
}

export function readState(tool) {
  const dir = stateDir();
  try {
    return JSON.parse(readFileSync(join(dir, `${tool}.json`), 'utf8'));
  } catch {
    return { instances: {} };
  }
}

export function writeState(tool, state) {
  const dir = stateDir();
  mkdirSync(dir, { recursive: true });
  const tmp = join(dir, `.${tool}.json.${process.pid}`);
  writeFileSync(tmp, JSON.stringify(state, null, 2));
  renameSync(tmp, join(dir, `${tool}.json`));
}

/** Programs a package puts on the guest's PATH. */
export const PACKAGE_BINARIES = {
  nasm: ['nasm'],
  gcc: ['gcc', 'cc'],
  binutils: ['ld', 'as', 'objdump', 'ar'],
  make: ['make'],
  git: ['git'],
  rsync: ['rsync'],
};
/** Megabytes a package install takes on the guest disk. */
export const PACKAGE_MB = 60;

/** What a fresh image has on its PATH (a minimal Debian: no compiler, no make, no git). */
const BASE_TOOLS = ['sh', 'bash', 'env', 'cat', 'ls', 'echo', 'test', '[', 'mkdir', 'rm', 'cp', 'mv', 'grep', 'sed', 'uname', 'id',
  'true', 'false', 'printf', 'dirname', 'basename', 'wc', 'head', 'tail', 'sort', 'tr', 'cut', 'touch', 'sleep', 'date', 'pwd', 'stat', 'tee', 'xargs'];

function which(tool) {
  const r = spawnSync('sh', ['-c', 'command -v "$1"', 'sh', tool], { encoding: 'utf8', env: { PATH: '/usr/local/bin:/usr/bin:/bin' } });
  const p = r.stdout.trim();
  return r.status === 0 && p.startsWith('/') ? p : null;
}

export function guestDir(tool, name) {
  return join(stateDir(), `${tool}-guests`, name);
}

/** Creates the guest's root: base/ (the image's programs) and bin/ (what packages add). */
export function createGuest(tool, name) {
  const root = guestDir(tool, name);
  rmSync(root, { recursive: true, force: true });
  mkdirSync(join(root, 'base'), { recursive: true });
  mkdirSync(join(root, 'bin'), { recursive: true });
  for (const t of BASE_TOOLS) {
    const p = which(t);
    if (p) symlinkSync(p, join(root, 'base', t));
  }
}

export function removeGuest(tool, name) {
  rmSync(guestDir(tool, name), { recursive: true, force: true });
}

/** Puts a package's programs on the guest's PATH: the real program when this machine has it, else a stub. */
export function installBinaries(tool, name, pkg) {
  const bin = join(guestDir(tool, name), 'bin');
  mkdirSync(bin, { recursive: true });
  for (const b of PACKAGE_BINARIES[pkg] ?? [pkg]) {
    const target = join(bin, b);
    if (existsSync(target)) continue;
    const real = which(b);
    if (real) symlinkSync(real, target);
    else {
      writeFileSync(target, `#!/bin/sh\necho "${b} (stand-in from package ${pkg}) $*"\n`);
      chmodSync(target, 0o755);
    }
  }
}

/** PATH inside the guest: installed packages, then the guest tools (apt-get, df, findmnt...), then the image. */
export function guestPath(tool, name) {
  const root = guestDir(tool, name);
  return [join(root, 'bin'), join(HERE, 'guest'), join(root, 'base')].join(':');
}
