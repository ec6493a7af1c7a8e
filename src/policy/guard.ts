// The guard: configuration loaded once, then `classify(line)` -> Verdict. This is the one core every
// door (check, explain, run, hooks, shell wrapper, scan, ci) calls.
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { parse } from '../shell/parser.js';
import { commandsOf, UnreadableScriptError, type FileAccess } from '../shell/commands.js';
import { diskFiles } from './disk-files.js';
import { ConfigError, ParseError } from '../errors.js';
import type { Role, RouteRef, SimpleCommand, Verdict } from '../types.js';
import { resolveLayers, type Layer, type ResolvedConfig } from '../config/resolve.js';
import { decide, type LineDecision } from './engine.js';
import { matchRule, type Rule } from './match.js';
import { loadLayer, builtinLayerFromSource } from './layer-loader.js';
import { mapPath, renderLine } from '../routes/index.js';
import { runRewrite } from '../cli/run-rewrite.js';
import { makeCanonicalizer, physicalPath, type Canonicalize } from './physical-paths.js';

export interface GuardOptions {
  cwd: string;
  env: NodeJS.ProcessEnv;
  role?: Role;
  configFile?: string;
}

export interface Guard {
  role: Role;
  config: ResolvedConfig;
  classify(line: string, at?: ClassifyAt): Verdict;
  /** classify, plus the per-command detail `explain` prints. */
  explain(line: string, at?: ClassifyAt): { verdict: Verdict; decision: LineDecision | null };
}

/**
 * Where a line runs. `files`: how the scripts it runs are read (`bash run.sh`, `./build.sh`, `npm run x`):
 * the disk by default, `false` to judge them by their names only (rule examples, tests of pure lines).
 */
export interface ClassifyAt {
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  files?: FileAccess | false;
}

declare const __OFFHOST_BUILTIN__: Layer | undefined;

let builtinCache: Layer | null = null;
export function builtinLayer(): Layer {
  builtinCache ??= typeof __OFFHOST_BUILTIN__ !== 'undefined' ? __OFFHOST_BUILTIN__ : builtinLayerFromSource();
  return builtinCache;
}

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
export function configFiles(opts: { cwd: string; env: NodeJS.ProcessEnv; configFile?: string }): string[] {
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

export function loadConfig(opts: { cwd: string; env: NodeJS.ProcessEnv; configFile?: string }): ResolvedConfig {
  const userLayers = configFiles(opts).map((f) => loadLayer(f));
  const config = resolveLayers([builtinLayer(), ...userLayers], opts.env);
  if (userLayers.length > 0) {
    // A pack cannot ship a rule that misses its own example: user rules are checked as they load (the
    // built-in ones when offhost is built).
    const ids = new Set(userLayers.flatMap((l) => l.rules.map((r) => r.id)));
    const failures = selfTest(config, config.rules.filter((r) => ids.has(r.id)));
    const f = failures[0];
    if (f) {
      throw new ConfigError(`rule '${f.rule}': ${f.problem}: ${f.kind} example \`${f.line}\` (cwd ${f.cwd})`, f.source?.file, f.source?.line);
    }
  }
  return config;
}

export function routeFor(config: ResolvedConfig, routeName: string, line: string, cwd: string): RouteRef {
  const route = config.routes.get(routeName);
  if (!route) throw new ConfigError(`no route named '${routeName}'`);
  const vmId = route.vms[0]!;
  const vm = config.vms.get(vmId)!;
  const mappings = [...route.pathMap, ...config.pathMap];
  // The VM sees the monorepo (R6), not the rest of the laptop: a line started outside it (say in /tmp)
  // starts at the monorepo root on the VM, where its absolute `cd`s still work.
  const under = (p: string, dir: string) => p === dir || p.startsWith(dir.endsWith('/') ? dir : `${dir}/`);
  const seen = config.root === null || under(cwd, config.root) || mappings.some((m) => under(cwd, m.from));
  const vmCwd = mapPath(seen ? cwd : config.root!, mappings);
  // `~` in the line must mean the same directory on the VM as here (R6: same paths).
  const env: Record<string, string> = config.home ? { HOME: mapPath(config.home, mappings) } : {};
  return { name: routeName, vm: vmId, cwd: vmCwd, command: renderLine(vm, line, vmCwd, env) };
}

function denied(rule: string, reason: string, commands: Verdict['commands'] = []): Verdict {
  return { decision: 'deny', rule, reason, route: null, rewrite: null, commands };
}

export function makeGuard(
  config: ResolvedConfig,
  role: Role,
  defaults: { cwd: string; env: NodeJS.ProcessEnv; files?: FileAccess | false; canonicalize?: Canonicalize | false },
): Guard {
  // Every directory judged is the canonical one (src/policy/physical-paths.ts): a symlinked checkout, an
  // agent's getcwd() and a shell's $PWD get one verdict, and the VM gets the configured spelling.
  const canon: Canonicalize = defaults.canonicalize === false ? (d) => d : (defaults.canonicalize ?? makeCanonicalizer(config));
  const explain: Guard['explain'] = (line, at) => {
    const given = at?.cwd ?? defaults.cwd;
    const cwd = given.startsWith('/') && !given.includes('/.') && !given.includes('//') ? given : resolve(given);
    const env = at?.env ?? defaults.env;
    let commands: SimpleCommand[];
    try {
      const script = parse(line);
      const files = at?.files ?? defaults.files ?? diskFiles();
      commands = commandsOf(script, line, { cwd, env: { HOME: config.home ?? env.HOME, OLDPWD: env.OLDPWD }, ...(files ? { files } : {}) });
      for (const c of commands) if (c.cwd !== null && c.cwd.startsWith('/')) c.cwd = canon(c.cwd);
    } catch (err) {
      if (err instanceof UnreadableScriptError) return { verdict: denied('unreadable-script', `${err.reason}.`), decision: null };
      if (err instanceof ParseError) return { verdict: denied('parse-error', `the command line cannot be parsed: ${err.message}`), decision: null };
      return { verdict: denied('internal-error', `offhost could not judge this line: ${String((err as Error)?.message ?? err)}`), decision: null };
    }
    const d = decide(commands, config.rules, role);
    const cmds = d.commands.map((c) => ({ command: c.command, rule: c.rule?.id ?? null, decision: c.decision }));
    if (d.decision !== 'reroute') {
      return { verdict: { decision: d.decision, rule: d.rule, reason: d.reason, route: null, rewrite: null, commands: cmds }, decision: d };
    }
    let route: RouteRef;
    try {
      route = routeFor(config, d.route!, line, canon(cwd));
    } catch (err) {
      // A route that cannot be rendered must never let the heavy command run here.
      return { verdict: denied(d.rule ?? 'route-error', `${d.reason} But its route cannot be used: ${(err as Error).message}`, cmds), decision: d };
    }
    return {
      verdict: { decision: 'reroute', rule: d.rule, reason: d.reason, route, rewrite: runRewrite(line), commands: cmds },
      decision: d,
    };
  };
  return { role, config, classify: (line, at) => explain(line, at).verdict, explain };
}

export function loadGuard(opts: GuardOptions): Guard {
  // The project config is looked for from the physical directory: a symlink to the engine
  // (~/koda -> ~/dev/koder/engines/lang/koda) finds the monorepo's offhost.config.yaml like the real path.
  const config = loadConfig(opts.cwd.startsWith('/') ? { ...opts, cwd: physicalPath(opts.cwd) } : opts);
  const role = resolveRole(opts.role, opts.env, config.role);
  return makeGuard(config, role, { cwd: opts.cwd, env: opts.env });
}

export interface SelfTestFailure {
  rule: string;
  kind: 'match' | 'not_match';
  line: string;
  cwd: string;
  problem: string;
  source?: { file: string; line?: number };
}

/**
 * Runs every rule's own examples against that rule alone (as execpolicy does): each `match` line must
 * have a command the rule matches, no `not_match` line may have one. Returns the failures.
 */
export function selfTest(config: ResolvedConfig, rules: Rule[] = config.rules): SelfTestFailure[] {
  const failures: SelfTestFailure[] = [];
  const sub = (s: string) => s.replace(/\{([a-z][a-z0-9_]*)\}/g, (m, n: string) => config.vars[n] ?? m);
  for (const rule of rules) {
    const check = (kind: 'match' | 'not_match', ex: string | { line: string; cwd?: string }) => {
      const line = sub(typeof ex === 'string' ? ex : ex.line);
      const cwd = sub(typeof ex === 'string' || !ex.cwd ? (config.root ?? config.home ?? '/') : ex.cwd);
      let hit = false;
      try {
        const cmds = commandsOf(parse(line), line, { cwd, env: { HOME: config.home ?? undefined } });
        hit = cmds.some((c) => matchRule(rule, c) === 'yes');
      } catch (err) {
        failures.push({ rule: rule.id, kind, line, cwd, problem: `the example does not parse: ${(err as Error).message}`, ...(rule.source ? { source: rule.source } : {}) });
        return;
      }
      if (kind === 'match' && !hit) failures.push({ rule: rule.id, kind, line, cwd, problem: 'the rule does not match its own example', ...(rule.source ? { source: rule.source } : {}) });
      if (kind === 'not_match' && hit) failures.push({ rule: rule.id, kind, line, cwd, problem: 'the rule matches an example it must not match', ...(rule.source ? { source: rule.source } : {}) });
    };
    for (const ex of rule.examples.match) check('match', ex);
    for (const ex of rule.examples.not_match ?? []) check('not_match', ex);
  }
  return failures;
}
