// Where offhost is running (laptop, VM or CI), which decides what the rules allow.
import { ConfigError } from '../errors.js';
import type { Role } from '../types.js';

const ROLES: Role[] = ['laptop', 'vm', 'ci'];

/** `--role`, else OFFHOST_ROLE, else config, else `ci` when CI=true, else laptop. */
export function resolveRole(flag: string | undefined, env: NodeJS.ProcessEnv, configRole: Role | undefined): Role {
  if (flag !== undefined) {
    if (!ROLES.includes(flag as Role)) throw new ConfigError(`--role must be one of ${ROLES.join(', ')} (got '${flag}')`);
    return flag as Role;
  }
  const fromEnv = env.OFFHOST_ROLE;
  if (fromEnv !== undefined && fromEnv !== '') {
    if (!ROLES.includes(fromEnv as Role)) throw new ConfigError(`OFFHOST_ROLE must be one of ${ROLES.join(', ')} (got '${fromEnv}')`);
    return fromEnv as Role;
  }
  if (configRole) return configRole;
  if (/^(true|1)$/i.test(env.CI ?? '')) return 'ci';
  return 'laptop';
}
