// Which config files are in force for a directory: the user's (~/.config/offhost/config.yaml), then the
// project's (offhost.config.yaml in cwd or the nearest parent) or the one given with --config.
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { ConfigError } from '../errors.js';

export interface ConfigLocation {
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** --config: replaces the project file (relative to cwd). */
  configFile?: string;
}

export function userConfigPath(env: NodeJS.ProcessEnv): string | null {
  const base = env.XDG_CONFIG_HOME || (env.HOME ? join(env.HOME, '.config') : null);
  return base ? join(base, 'offhost', 'config.yaml') : null;
}

/** `offhost.config.yaml` in cwd or the nearest parent directory. */
export function findProjectConfig(cwd: string): string | null {
  let dir = resolve(cwd);
  for (;;) {
    const p = join(dir, 'offhost.config.yaml');
    if (existsSync(p)) return p;
    const up = dirname(dir);
    if (up === dir) return null;
    dir = up;
  }
}

/** The config files in force for `cwd`, lowest layer first (the built-in pack is not listed). */
export function configFiles(opts: ConfigLocation): string[] {
  const files: string[] = [];
  const user = userConfigPath(opts.env);
  if (user && existsSync(user)) files.push(user);
  if (opts.configFile !== undefined) {
    const p = resolve(opts.cwd, opts.configFile);
    if (!existsSync(p)) throw new ConfigError('the config file given with --config does not exist', p);
    files.push(p);
  } else {
    const p = findProjectConfig(opts.cwd);
    if (p) files.push(p);
  }
  return files;
}
