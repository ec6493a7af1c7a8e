// The guard for a directory, as the doors load it: its configuration found and layered (this folder), its
// role resolved, the policy core made (src/policy/guard.ts).
import type { Role } from '../types.js';
import { makeGuard, type Guard } from '../policy/guard.js';
import { loadConfig } from './load-config.js';
import type { ResolvedConfig } from './resolve.js';
import { resolveRole } from './role.js';

export interface GuardOptions {
  cwd: string;
  env: NodeJS.ProcessEnv;
  role?: Role;
  configFile?: string;
}

export function loadGuard(opts: GuardOptions): Guard<ResolvedConfig> {
  const config = loadConfig(opts);
  const role = resolveRole(opts.role, opts.env, config.role);
  return makeGuard(config, role, { cwd: opts.cwd, env: opts.env });
}
