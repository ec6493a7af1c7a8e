// The guard for a directory, as the doors load it: its configuration found and layered (this folder), its
// role resolved, the policy core made (src/policy/guard.ts).
import type { Role } from '../types.js';
import { makeGuard, type Guard } from '../policy/guard.js';
import { loadConfig } from './load-config.js';
import { resolveLayers, type ResolvedConfig } from './resolve.js';
import { builtinLayer } from './builtin.js';
import { resolveRole } from './role.js';
import { makeCanonicalizer, memoPhysical } from './physical-paths.js';
import { makeRuleSpace } from './checkout.js';

export interface GuardOptions {
  cwd: string;
  env: NodeJS.ProcessEnv;
  role?: Role;
  configFile?: string;
  /** Let a bare `CI=true|1` pick role `ci` when nothing else did (the CI commands only; role.ts). */
  ciFromEnv?: boolean;
}

export function loadGuard(opts: GuardOptions): Guard<ResolvedConfig> {
  // The project config is looked for from the physical directory: a symlink to the engine
  // (~/koda -> ~/dev/koder/engines/lang/koda) finds the monorepo's offhost.config.yaml like the real path.
  // One resolution per directory for this guard (each costs a readlink per path component).
  const physical = memoPhysical();
  const config = loadConfig(opts.cwd.startsWith('/') ? { ...opts, cwd: physical(opts.cwd) } : opts);
  const role = resolveRole(opts.role, opts.env, config.role, opts.ciFromEnv === true);
  // Every directory is judged canonical (physical, then in the configuration's spelling): docs/SHIMS.md.
  // Every checkout of the monorepo is judged as the same place under {root} (src/config/checkout.ts).
  return makeGuard(config, role, { cwd: opts.cwd, env: opts.env, canonicalize: makeCanonicalizer(config, physical), ruleSpace: makeRuleSpace(config, physical) });
}

/**
 * The built-in pack alone, no config file: what the interactive shell falls back on while a config file is
 * broken, so that the heavy lines it knows are still refused (src/cli/commands/shell.ts `--check`).
 */
export function loadBuiltinGuard(opts: { cwd: string; env: NodeJS.ProcessEnv }): Guard<ResolvedConfig> {
  let role: Role = 'laptop';
  try {
    role = resolveRole(undefined, opts.env, undefined);
  } catch {
    /* a bad OFFHOST_ROLE: judge as laptop */
  }
  const config = resolveLayers([builtinLayer()], opts.env);
  const physical = memoPhysical();
  return makeGuard(config, role, { cwd: opts.cwd, env: opts.env, canonicalize: makeCanonicalizer(config, physical), ruleSpace: makeRuleSpace(config, physical) });
}
