// Writing, checking and removing a shim directory.
//
// Where: OFFHOST_SHIMS_DIR, else $XDG_DATA_HOME/offhost/shims, else ~/.local/share/offhost/shims.
// Idempotent: `install` writes every shim of the current plan (each file replaced atomically: written
// beside it, then renamed), removes the shims of an earlier plan that the new one no longer has, and
// never touches a file it did not write (the marker lists what it wrote). `remove` deletes exactly the
// files the marker lists, then the marker, then the directory if it is empty.
import { chmodSync, existsSync, mkdirSync, readFileSync, readdirSync, renameSync, rmdirSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { ConfigError } from '../errors.js';
import { planShims, type ShimPlan } from './plan.js';
import { keeperScript, MARKER, PATH_KEEPERS, shimScript, type ShimRuntime } from './script.js';

export interface MarkerData {
  version: 1;
  programs: string[];
  node: string;
  bin: string;
  bash: string;
  configs: string[];
  /** The PATH keepers written beside the shims (script.ts: PATH_KEEPERS); absent in older markers. */
  keepers?: string[];
}

export function defaultShimsDir(env: NodeJS.ProcessEnv): string {
  if (env.OFFHOST_SHIMS_DIR) {
    if (!env.OFFHOST_SHIMS_DIR.startsWith('/')) throw new ConfigError(`OFFHOST_SHIMS_DIR must be an absolute path, not ${JSON.stringify(env.OFFHOST_SHIMS_DIR)}`);
    return env.OFFHOST_SHIMS_DIR;
  }
  const data = env.XDG_DATA_HOME && env.XDG_DATA_HOME.startsWith('/') ? env.XDG_DATA_HOME : env.HOME ? join(env.HOME, '.local', 'share') : null;
  if (!data) throw new ConfigError('cannot tell where to put the shims: HOME is not set (set OFFHOST_SHIMS_DIR)');
  return join(data, 'offhost', 'shims');
}

export function readMarker(dir: string): MarkerData | null {
  try {
    const m = JSON.parse(readFileSync(join(dir, MARKER), 'utf8')) as MarkerData;
    return m && m.version === 1 && Array.isArray(m.programs) ? m : null;
  } catch {
    return null;
  }
}

/** The bash the shims run under: /bin/bash, else the first bash on PATH. */
export function findBash(env: NodeJS.ProcessEnv): string {
  for (const c of ['/bin/bash', '/usr/bin/bash', ...(env.PATH ?? '').split(delimiter).filter((d) => d.startsWith('/')).map((d) => join(d, 'bash'))]) {
    try {
      if (statSync(c).isFile()) return c;
    } catch {
      /* next */
    }
  }
  throw new ConfigError('the shims need bash, and there is none in /bin, /usr/bin or on PATH');
}

export interface InstallResult {
  dir: string;
  written: string[];
  removed: string[];
  plan: ShimPlan;
}

export function installShims(opts: { dir: string; cwd: string; env: NodeJS.ProcessEnv; node: string; bin: string; plan?: ShimPlan }): InstallResult {
  const plan = opts.plan ?? planShims({ cwd: opts.cwd, env: opts.env });
  const dir = opts.dir;
  mkdirSync(dir, { recursive: true });
  const before = readMarker(dir);
  // Another install writing the same folder at this moment leaves only its temporary files (written
  // beside the marker and each shim, then renamed): those are offhost's, not the user's.
  const foreign = () => readdirSync(dir).filter((n) => !/^\..+\.\d+\.tmp$/.test(n));
  if (!before && foreign().length > 0 && !existsSync(join(dir, MARKER))) {
    throw new ConfigError(`${dir} already holds files offhost did not write; choose another shim directory (OFFHOST_SHIMS_DIR)`);
  }
  const rt: ShimRuntime = { bash: findBash(opts.env), node: opts.node, bin: opts.bin, marker: join(dir, MARKER), configs: plan.configs };
  // A rule naming sh or bash itself would get a judging shim of that name, which then wins over the keeper.
  const keepers: string[] = PATH_KEEPERS.filter((k) => !plan.programs.some((p) => p.name === k));
  const marker: MarkerData = { version: 1, programs: plan.programs.map((p) => p.name), node: rt.node, bin: rt.bin, bash: rt.bash, configs: plan.configs, keepers };
  // The marker first: it makes the directory a shim directory (skipped by every shim's PATH search)
  // before any shim in it can run; its mtime is then the stamp the configs are compared with, so it is
  // written again last.
  const writeMarker = () => {
    const tmp = join(dir, `${MARKER}.${process.pid}.tmp`);
    writeFileSync(tmp, `${JSON.stringify(marker, null, 2)}\n`);
    renameSync(tmp, join(dir, MARKER));
  };
  writeMarker();
  const written: string[] = [];
  for (const p of plan.programs) {
    const file = join(dir, p.name);
    const tmp = join(dir, `.${p.name}.${process.pid}.tmp`);
    writeFileSync(tmp, shimScript(p, rt));
    chmodSync(tmp, 0o755);
    renameSync(tmp, file);
    written.push(p.name);
  }
  for (const k of keepers) {
    const tmp = join(dir, `.${k}.${process.pid}.tmp`);
    writeFileSync(tmp, keeperScript(k, dir, rt));
    chmodSync(tmp, 0o755);
    renameSync(tmp, join(dir, k));
  }
  const removed: string[] = [];
  for (const old of [...(before?.programs ?? []), ...(before?.keepers ?? [])]) {
    if (marker.programs.includes(old) || keepers.includes(old)) continue;
    try {
      unlinkSync(join(dir, old));
      removed.push(old);
    } catch {
      /* already gone */
    }
  }
  writeMarker();
  return { dir, written, removed, plan };
}

export function removeShims(dir: string): string[] {
  const m = readMarker(dir);
  if (!m) return [];
  const removed: string[] = [];
  for (const p of [...m.programs, ...(m.keepers ?? [])]) {
    try {
      unlinkSync(join(dir, p));
      removed.push(p);
    } catch {
      /* already gone */
    }
  }
  unlinkSync(join(dir, MARKER));
  try {
    rmdirSync(dir);
  } catch {
    /* not empty: other files stay */
  }
  return removed;
}

/** PATH with `dir` first (and no other copy of it). */
export function pathWithShims(dir: string, path: string | undefined): string {
  const rest = (path ?? '').split(delimiter).filter((d) => d !== '' && d !== dir);
  return [dir, ...rest].join(delimiter);
}

/** PATH without any shim directory (what a VM-side command must never inherit from the laptop). */
export function pathWithoutShims(path: string | undefined): string {
  return (path ?? '')
    .split(delimiter)
    .filter((d) => d === '' || !existsSync(join(d, MARKER)))
    .join(delimiter);
}
