// The checks of what offhost sees in this project: which checkout and root (src/config/standing.ts), the
// built-in routes a config redefines (src/vms/route-overrides.ts), and whether this clone's VM locks are
// shared with the others that reach the same VMs (src/locks/sharing-check.ts).
import type { DoctorCheck, DoctorItem } from './check.js';
import { loadConfig } from '../config/load-config.js';
import { checkoutCheck as standingCheck } from '../config/standing.js';
import { routeOverrideItems } from '../vms/route-overrides.js';
import { lockSharingCheck } from '../locks/sharing-check.js';

/** The config, or null when it does not load (the config check reports that). */
function configOrNull(cwd: string, env: NodeJS.ProcessEnv): ReturnType<typeof loadConfig> | null {
  try {
    return loadConfig({ cwd, env });
  } catch {
    return null;
  }
}

export const checkoutCheck: DoctorCheck = {
  id: 'checkout',
  summary: 'which checkout of the monorepo offhost sees here and its {root}; a checkout that looks like the monorepo while the policy does not apply is a problem',
  run({ cwd, env }) {
    const c = configOrNull(cwd, env);
    if (!c) return [{ check: 'checkout', ok: true, note: true, detail: 'not judged: the config does not load (see the config check)' }];
    const { area: _area, ...item } = standingCheck(cwd, env, c);
    return [{ check: 'checkout', ...item }];
  },
};

export const routesCheck: DoctorCheck = {
  id: 'routes',
  summary: 'built-in routes a config redefines, and whether that weakens the isolation they require',
  run({ cwd, env }) {
    const c = configOrNull(cwd, env);
    if (!c) return [];
    return routeOverrideItems(c).map((o): DoctorItem => ({ check: 'routes', ...o }));
  },
};

export const locksCheck: DoctorCheck = {
  id: 'locks',
  summary: "whether this clone's VM locks are shared with every clone and machine that reaches the same VMs",
  async run({ cwd, env }) {
    const f = await lockSharingCheck(cwd, env).catch((err: Error) => ({ ok: false, detail: `locks: ${err.message}`, fix: 'see `offhost lock status`' }));
    return f ? [{ check: 'locks', ...f }] : [];
  },
};
