// Layering: the built-in pack, then the user file, then the project file (or --config). Later layers
// override scalars, add or replace VMs and routes by id, append rules and turn rules off by id.
import type { Role } from '../types.js';
import type { PathMapping, RouteConfig, VmSpec } from '../routes/types.js';
import type { ConfigFile } from './schema.js';
import type { CompiledRule } from '../policy/rule.js';
import { hydrate, type Rule } from '../policy/match.js';
import { ConfigError } from '../errors.js';
import { dirname as posixDirname, resolve as posixResolve } from 'node:path';

/** One config file (or the built-in pack) with its rules compiled. JSON-serialisable. */
export type Layer = Omit<ConfigFile, 'rules'> & { file: string; rules: CompiledRule[] };

export type { PathMapping, RouteConfig };

export interface ResolvedConfig {
  /** Role set by a config file (the role resolution order is in src/config/role.ts). */
  role?: Role;
  home: string | null;
  /** The canonical checkout of the monorepo (`{root}` in rules; R6: the VMs see it at this path). */
  root: string | null;
  /** Every checkout the policy applies to whatever it holds: root first, then the `roots:` entries (absolute). */
  roots: string[];
  /** Files (relative to a checkout's top) whose presence makes a checkout the monorepo's (src/config/checkout.ts). */
  markers: string[];
  /** `{name}` variables for cwd globs: home, root and every `paths` entry, expanded. */
  vars: Record<string, string>;
  vms: Map<string, VmSpec>;
  routes: Map<string, RouteConfig>;
  /** Config files' redefinitions of built-in routes, and what each route requires now (`doctor`). */
  routeOverrides?: RouteOverride[];
  pathMap: PathMapping[];
  rules: Rule[];
  hook: { mode?: 'rewrite' | 'suggest'; allowRewrite?: boolean };
  scan: { vmGlobs?: string[]; ignore?: string[]; markdownGlobs?: string[]; laptopRunners?: string[]; laptopRoot?: string; dockerfileIsLaptop?: boolean };
  locks: { noticesDir: string; push: boolean; skewSeconds: number; pollSeconds: number; remote?: string; commitMessage?: string };
  audit: { path?: string; maxBytes?: number; record?: 'decisions' | 'all' };
  /** The files that contributed, lowest layer first (`<built-in>` for the pack). */
  sources: string[];
}

function expandHome(p: string, home: string | null, file: string): string {
  if (p === '~' || p.startsWith('~/')) {
    if (home === null) throw new ConfigError(`'${p}' needs HOME to be set`, file);
    return home + p.slice(1);
  }
  return p;
}

/**
 * A checkout path from a config file: `~` expanded; a relative one is taken from the file's folder (a
 * project config committed in the repository says `root: .`, and means the worktree it is read from).
 */
function checkoutPath(p: string, home: string | null, file: string): string {
  const e = expandHome(p, home, file);
  if (e.startsWith('/')) return trimSlashes(e);
  if (!file.startsWith('/')) throw new ConfigError(`'${p}' must be an absolute path or start with ~/`, file);
  return trimSlashes(posixResolve(posixDirname(file), e));
}

// Start-up note: resolveLayers runs at every start, and a regular expression's first use costs its
// compilation; the common cases below are plain string tests.

/**
 * `p` without its trailing slashes, one kept when nothing else is left (`/` stays `/`): what
 * `p.replace(/(.)\/+$/, '$1')` gives, line terminators included (test/config/resolve.test.ts).
 */
export function trimSlashes(p: string): string {
  let end = p.length;
  while (end > 0 && p.charCodeAt(end - 1) === 47) end--;
  if (end === p.length) return p;
  const before = end > 0 ? p.charCodeAt(end - 1) : -1;
  const lineTerminator = before === 10 || before === 13 || before === 0x2028 || before === 0x2029;
  return before === -1 || lineTerminator ? p.slice(0, end + 1) : p.slice(0, end);
}

/** The staging or production environment a VM id names (`s.<host>.stg-…`, `s.<host>.prd-…`), if any. */
function scenarioEnvOf(id: string): 'stg' | 'prd' | undefined {
  if (!id.includes('.stg-') && !id.includes('.prd-')) return undefined;
  return /^s\.[^.]+\.(stg|prd)-/.exec(id)?.[1] as 'stg' | 'prd' | undefined;
}

const isLowerLetter = (c: number): boolean => c >= 97 && c <= 122;
const isNameChar = (c: number): boolean => isLowerLetter(c) || (c >= 48 && c <= 57) || c === 95;

/**
 * `p` with each `{name}` (a lowercase letter, then letters, digits or `_`) replaced by its variable: what
 * `p.replace(/\{([a-z][a-z0-9_]*)\}/g, …)` gave (test/config/resolve.test.ts), as a scan, except that
 * only the configuration's own variables count (that expression took `{constructor}` for a variable).
 */
export function substitute(p: string, vars: Record<string, string>, file: string): string {
  let at = p.indexOf('{');
  if (at < 0) return p;
  let out = '';
  let from = 0;
  while (at >= 0) {
    let end = at + 1;
    if (end < p.length && isLowerLetter(p.charCodeAt(end))) {
      end++;
      while (end < p.length && isNameChar(p.charCodeAt(end))) end++;
      if (p.charCodeAt(end) === 125) {
        const name = p.slice(at + 1, end);
        // Own variables only: `{constructor}` is not Object.prototype's.
        const v = Object.hasOwn(vars, name) ? vars[name] : undefined;
        if (v === undefined) throw new ConfigError(`unknown path variable {${name}} in '${p}'`, file);
        out += p.slice(from, at) + v;
        from = end + 1;
        at = p.indexOf('{', from);
        continue;
      }
    }
    at = p.indexOf('{', at + 1);
  }
  return out + p.slice(from);
}

const BUILTIN_FILE = '<built-in>';

/** A config file's redefinition of a built-in route (`offhost doctor` lists them). */
export interface RouteOverride {
  route: string;
  file: string;
  builtinRequire: RouteConfig['require'] | undefined;
  /** What the route requires now. */
  require: RouteConfig['require'] | undefined;
  /** `weaken_builtin_require: true`: the entry's own require replaced the built-in one. */
  weakened: boolean;
}

/** The built-in demands, each kept as it is; the override may only add what the built-in leaves open. */
function keepRequire(base: RouteConfig['require'] | undefined, mine: RouteConfig['require'] | undefined): RouteConfig['require'] | undefined {
  if (!base) return mine;
  const out = { ...(mine ?? {}), ...base };
  return Object.keys(out).length ? out : undefined;
}

export function resolveLayers(layers: Layer[], env: NodeJS.ProcessEnv): ResolvedConfig {
  const home = env.HOME && env.HOME.startsWith('/') ? trimSlashes(env.HOME) : null;
  let role: Role | undefined;
  let rootRaw: { value: string; file: string } | null = null;
  const rootsRaw: { value: string; file: string }[] = [];
  const markers: string[] = [];
  const pathsRaw = new Map<string, { value: string; file: string }>();
  const vms = new Map<string, VmSpec>();
  const routesRaw = new Map<string, { vms: string[]; path_map?: PathMapping[]; description?: string; require?: RouteConfig['require']; weaken_builtin_require?: boolean; scenario?: 'staging' | 'production'; file: string }>();
  const builtinRoutes = new Map<string, RouteConfig['require'] | undefined>();
  const routeOverrides: RouteOverride[] = [];
  let pathMap: { list: PathMapping[]; file: string } = { list: [], file: '<built-in>' };
  const rules: CompiledRule[] = [];
  const disabled = new Map<string, string>();
  const hook: ResolvedConfig['hook'] = {};
  const scan: ResolvedConfig['scan'] = {};
  const locks: ResolvedConfig['locks'] = { noticesDir: 'meta/context/notices', push: false, skewSeconds: 120, pollSeconds: 30 };
  const audit: ResolvedConfig['audit'] = {};

  for (const l of layers) {
    if (l.role) role = l.role;
    if (l.root) rootRaw = { value: l.root, file: l.file };
    for (const r of l.roots ?? []) rootsRaw.push({ value: r, file: l.file });
    for (const m of l.markers ?? []) if (!markers.includes(m)) markers.push(trimSlashes(m));
    for (const [k, v] of Object.entries(l.paths ?? {})) pathsRaw.set(k, { value: v, file: l.file });
    for (const vm of l.vms ?? []) vms.set(vm.id, vm as VmSpec);
    for (const [k, r] of Object.entries(l.routes ?? {})) {
      if (l.file === BUILTIN_FILE) builtinRoutes.set(k, r.require);
      else if (builtinRoutes.has(k)) {
        // Overriding a built-in route never weakens the isolation it requires, unless the entry says so.
        const base = builtinRoutes.get(k);
        const kept = r.weaken_builtin_require ? r.require : keepRequire(base, r.require);
        routeOverrides.push({ route: k, file: l.file, builtinRequire: base, require: kept, weakened: r.weaken_builtin_require === true });
        routesRaw.set(k, { ...r, ...(kept ? { require: kept } : {}), file: l.file });
        if (!kept) delete routesRaw.get(k)!.require;
        continue;
      }
      routesRaw.set(k, { ...r, file: l.file });
    }
    if (l.path_map) pathMap = { list: l.path_map, file: l.file };
    for (const id of l.disable ?? []) disabled.set(id, l.file);
    for (const r of l.rules) {
      const at = rules.findIndex((x) => x.id === r.id);
      // A later layer may redefine a rule by id (it replaces the earlier one in place).
      if (at >= 0) rules[at] = r;
      else rules.push(r);
    }
    if (l.hook?.mode) hook.mode = l.hook.mode;
    if (l.hook?.allow_rewrite !== undefined) hook.allowRewrite = l.hook.allow_rewrite;
    if (l.scan?.vm_globs) scan.vmGlobs = l.scan.vm_globs;
    if (l.scan?.ignore) scan.ignore = l.scan.ignore;
    if (l.scan?.dockerfile_is_laptop !== undefined) scan.dockerfileIsLaptop = l.scan.dockerfile_is_laptop;
    if (l.scan?.markdown_globs) scan.markdownGlobs = l.scan.markdown_globs;
    if (l.scan?.laptop_runners) scan.laptopRunners = l.scan.laptop_runners;
    if (l.scan?.laptop_root) scan.laptopRoot = expandHome(l.scan.laptop_root, home, l.file);
    if (l.locks?.notices_dir) locks.noticesDir = l.locks.notices_dir;
    if (l.locks?.push !== undefined) locks.push = l.locks.push;
    if (l.locks?.skew_seconds !== undefined) locks.skewSeconds = l.locks.skew_seconds;
    if (l.locks?.poll_seconds !== undefined) locks.pollSeconds = l.locks.poll_seconds;
    if (l.locks?.remote) locks.remote = l.locks.remote;
    if (l.locks?.commit_message) locks.commitMessage = l.locks.commit_message;
    if (l.audit?.path) audit.path = l.audit.path;
    if (l.audit?.max_bytes) audit.maxBytes = l.audit.max_bytes;
    if (l.audit?.record) audit.record = l.audit.record;
  }

  const vars: Record<string, string> = {};
  if (home !== null) vars.home = home;
  const root = rootRaw ? checkoutPath(rootRaw.value, home, rootRaw.file) : null;
  if (root !== null) vars.root = root;
  const roots: string[] = root !== null ? [root] : [];
  for (const r of rootsRaw) {
    const p = checkoutPath(r.value, home, r.file);
    if (!roots.includes(p)) roots.push(p);
  }
  // Paths may refer to root, home and each other in definition order.
  for (const [k, v] of pathsRaw) vars[k] = trimSlashes(substitute(expandHome(v.value, home, v.file), vars, v.file));

  // R6: a VM's mount and smoke may name path variables ({root}: the monorepo at the same path).
  for (const [id, vm] of vms) {
    if (!vm.mount && !vm.smoke) continue;
    const sub = (t: string) => substitute(expandHome(t, home, '<vms>'), vars, `vms ${id}`);
    vms.set(id, { ...vm, ...(vm.mount ? { mount: { ...vm.mount, source: sub(vm.mount.source), path: sub(vm.mount.path) } } : {}), ...(vm.smoke ? { smoke: sub(vm.smoke) } : {}) });
  }
  for (const id of disabled.keys()) {
    if (!rules.some((r) => r.id === id)) throw new ConfigError(`disable: there is no rule '${id}' to turn off`, disabled.get(id));
  }
  const active = rules.filter((r) => !disabled.has(r.id));

  const routes = new Map<string, RouteConfig>();
  for (const [name, r] of routesRaw) {
    for (const id of r.vms) {
      if (!vms.has(id)) throw new ConfigError(`route '${name}' names VM '${id}', which no 'vms' entry defines`, r.file);
    }
    routes.set(name, {
      name,
      vms: r.vms,
      pathMap: (r.path_map ?? []).map((m) => ({ from: substitute(expandHome(m.from, home, r.file), vars, r.file), to: m.to })),
      ...(r.description ? { description: r.description } : {}),
      ...(r.require ? { require: r.require } : {}),
    });
  }
  // POLICY R2: test VMs are dev; a stg-/prd- VM only where a route declares that scenario explicitly.
  const scenarioOf = { stg: 'staging', prd: 'production' } as const;
  for (const [name, r] of routesRaw) {
    for (const id of r.vms) {
      const env = scenarioEnvOf(id);
      if (env && r.scenario !== scenarioOf[env]) {
        throw new ConfigError(`route '${name}' names ${id}, a ${scenarioOf[env]} VM: test VMs are dev (POLICY R2); declare \`scenario: ${scenarioOf[env]}\` on the route if this really is a ${scenarioOf[env]} scenario`, r.file);
      }
    }
  }
  for (const id of vms.keys()) {
    const env = scenarioEnvOf(id);
    if (env && ![...routesRaw.values()].some((r) => r.vms.includes(id) && r.scenario === scenarioOf[env])) {
      throw new ConfigError(`VM ${id} is a ${scenarioOf[env]} VM, and no route declares a ${scenarioOf[env]} scenario for it: the catalogue holds dev test VMs only (POLICY R2)`);
    }
  }
  for (const r of active) {
    if (r.decision === 'reroute' && r.route && !routes.has(r.route)) {
      throw new ConfigError(`rule '${r.id}' reroutes to '${r.route}', which no 'routes' entry defines`, r.source?.file, r.source?.line);
    }
  }
  for (const r of active) {
    for (const name of r.cwdVars) {
      if (!Object.hasOwn(vars, name)) throw new ConfigError(`rule '${r.id}' uses the path variable {${name}}, which is not defined (set it under 'paths')`, r.source?.file, r.source?.line);
    }
  }
  return {
    ...(role ? { role } : {}),
    home,
    root,
    roots,
    markers,
    vars,
    vms,
    routes,
    ...(routeOverrides.length ? { routeOverrides } : {}),
    pathMap: pathMap.list.map((m) => ({ from: substitute(expandHome(m.from, home, pathMap.file), vars, pathMap.file), to: m.to })),
    rules: active.map((r) => lazyHydrate(r, vars)),
    hook,
    scan,
    locks,
    audit,
    sources: layers.map((l) => l.file),
  };
}

/**
 * A rule whose glob regular expressions are built the first time it is matched: most commands meet only
 * a few rules (the engine indexes them by program), and a hook process classifies one line.
 */
function lazyHydrate(rule: CompiledRule, vars: Record<string, string>): Rule {
  const { match: _match, ...rest } = rule;
  let matcher: Rule['matcher'] | null = null;
  return Object.defineProperty(rest as Rule, 'matcher', {
    enumerable: true,
    get() {
      matcher ??= hydrate(rule, vars).matcher;
      return matcher;
    },
  });
}
