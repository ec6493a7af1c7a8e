// The guard for a directory, as the doors load it: its configuration found and layered (this folder), its
// role resolved, the policy core made (src/policy/guard.ts).
import type { Role } from '../types.js';
import { makeGuard, type Guard } from '../policy/guard.js';
import { loadConfig } from './load-config.js';
import type { ResolvedConfig } from './resolve.js';
import { resolveRole } from './role.js';
import { makeCanonicalizer, physicalPath } from './physical-paths.js';

export interface GuardOptions {
  cwd: string;
  env: NodeJS.ProcessEnv;
  role?: Role;
  configFile?: string;
}

export function loadGuard(opts: GuardOptions): Guard<ResolvedConfig> {
  // The project config is looked for from the physical directory: a symlink to the engine
  // (~/koda -> ~/dev/koder/engines/lang/koda) finds the monorepo's offhost.config.yaml like the real path.
  const config = loadConfig(opts.cwd.startsWith('/') ? { ...opts, cwd: physicalPath(opts.cwd) } : opts);
  const role = resolveRole(opts.role, opts.env, config.role);
  // Every directory is judged canonical (physical, then in the configuration's spelling): docs/SHIMS.md.
  return makeGuard(config, role, { cwd: opts.cwd, env: opts.env, canonicalize: makeCanonicalizer(config) });
}
