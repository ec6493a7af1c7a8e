// Redefinitions of built-in routes (issue 24), for `offhost doctor`: each override, and what the route
// requires of its VM now. A redefinition keeps the built-in `require` (src/config/resolve.ts) unless it
// says `weaken_builtin_require: true`; that opt-in is reported as a problem to look at, not hidden.
import type { ResolvedConfig } from '../config/resolve.js';
import type { RouteConfig } from '../routes/types.js';

export interface RouteOverrideItem {
  ok: boolean;
  detail: string;
  fix?: string;
}

function req(r: RouteConfig['require'] | undefined): string {
  if (!r || Object.keys(r).length === 0) return 'nothing';
  return Object.entries(r)
    .map(([k, v]) => `${k}: ${Array.isArray(v) ? v.join('|') : v}`)
    .join(', ');
}

export function routeOverrideItems(config: ResolvedConfig): RouteOverrideItem[] {
  return (config.routeOverrides ?? []).map((o) =>
    o.weakened
      ? {
          ok: false,
          detail: `${o.file} redefines the built-in route ${o.route} with weaken_builtin_require: it requires ${req(o.require)} instead of the built-in ${req(o.builtinRequire)}`,
          fix: `make sure that is meant (heavy work may then run where the built-in policy forbids it); remove weaken_builtin_require to keep the built-in demand`,
        }
      : { ok: true, detail: `${o.file} redefines the built-in route ${o.route}; it still requires ${req(o.require)} (the built-in ${req(o.builtinRequire)} is kept)` },
  );
}
