// Where offhost is running (laptop, VM or CI), which decides what the rules allow.
import { ConfigError } from '../errors.js';
import type { Role } from '../types.js';

const ROLES: Role[] = ['laptop', 'vm', 'ci'];

/**
 * `--role`, else OFFHOST_ROLE, else config, else (only when `ciFromEnv`: the CI commands ask for it) `ci`
 * when CI=true|1, else laptop. Many people export CI=1 on their laptop to make tools non-interactive; the
 * doors and `check` must still judge as laptop there.
 */
export function resolveRole(flag: string | undefined, env: NodeJS.ProcessEnv, configRole: Role | undefined, ciFromEnv = false): Role {
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
  if (ciFromEnv && /^(true|1)$/i.test(env.CI ?? '')) return 'ci';
  return 'laptop';
}

/** Where resolveRole took the role from, in the same order (for `--debug`). */
export function roleSource(flag: string | undefined, env: NodeJS.ProcessEnv, configRole: Role | undefined, ciFromEnv = false): string {
  if (flag !== undefined) return '--role';
  if (env.OFFHOST_ROLE !== undefined && env.OFFHOST_ROLE !== '') return 'OFFHOST_ROLE';
  if (configRole) return "the config's role";
  if (ciFromEnv && /^(true|1)$/i.test(env.CI ?? '')) return 'CI=true';
  return 'the default: no --role, OFFHOST_ROLE or config role';
}
