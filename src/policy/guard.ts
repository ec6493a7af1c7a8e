// The guard: the policy core every door (check, explain, run, hooks, shell wrapper, scan, ci) calls. Given
// a configuration and a role, `classify(line)` gives the decision and, for a reroute, the route. It reads
// no configuration itself (src/config/load-guard.ts loads it) and writes no door's answer: each door turns
// a reroute into its own rewrite (src/adapters/run-rewrite.ts `withRunRewrite`).
import { resolve } from 'node:path';
import { parse } from '../shell/parser.js';
import { commandsOf, UnreadableScriptError, type FileAccess, type WalkPolicy } from '../shell/commands.js';
import { diskFiles } from './disk-files.js';
import { ConfigError, ParseError } from '../errors.js';
import type { Role, RouteRef, SimpleCommand, Verdict } from '../types.js';
import { allowedAsItIs, decide, namedByRules, type LineDecision } from './engine.js';
import { matchRule, type Rule } from './match.js';
import { mapPath, renderLine } from '../routes/index.js';
import type { PathMapping, RouteConfig, VmSpec } from '../routes/types.js';
import { protectCatalogue } from '../vms/protect.js';

/** What the guard reads of a configuration (src/config/resolve.ts ResolvedConfig has it all). */
export interface GuardConfig {
  home: string | null;
  /** The monorepo root, when configured. */
  root: string | null;
  /** `{name}` variables for cwd globs. */
  vars: Record<string, string>;
  vms: Map<string, VmSpec>;
  routes: Map<string, RouteConfig>;
  pathMap: PathMapping[];
  rules: Rule[];
}

/** The guard's answer: a Verdict without the rewrite, which each door adds in its own terms. */
export type GuardVerdict = Omit<Verdict, 'rewrite'>;

export interface Guard<C extends GuardConfig = GuardConfig> {
  role: Role;
  config: C;
  classify(line: string, at?: ClassifyAt): GuardVerdict;
  /** classify, plus the per-command detail `explain` prints. */
  explain(line: string, at?: ClassifyAt): { verdict: GuardVerdict; decision: LineDecision | null };
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

export function routeFor(config: GuardConfig, routeName: string, line: string, cwd: string, inCheckout = false): RouteRef {
  const route = config.routes.get(routeName);
  if (!route) throw new ConfigError(`no route named '${routeName}'`);
  const vmId = route.vms[0]!;
  const mappings = [...route.pathMap, ...config.pathMap];
  // The VM sees the monorepo (R6), not the rest of the laptop: a line started outside it (say in /tmp)
  // starts at the monorepo root on the VM, where its absolute `cd`s still work. A line started in another
  // checkout (a worktree, a clone) keeps its own directory: sent to the canonical checkout it would build
  // another checkout's files (`offhost run` then syncs that checkout, or refuses when the VM cannot see it).
  const under = (p: string, dir: string) => p === dir || p.startsWith(dir.endsWith('/') ? dir : `${dir}/`);
  const seen = inCheckout || config.root === null || under(cwd, config.root) || mappings.some((m) => under(cwd, m.from));
  const vmCwd = mapPath(seen ? cwd : config.root!, mappings);
  return { name: routeName, vm: vmId, cwd: vmCwd, command: lineOnVm(config, route, vmId, line, vmCwd) };
}

/**
 * The command that runs `line` on one VM of a route (the route's first for the guard; the one a pool
 * gave for `offhost run`), in `vmCwd`, with `~` meaning the same directory there as here (R6).
 */
export function lineOnVm(config: GuardConfig, route: RouteConfig, vmId: string, line: string, vmCwd: string): string {
  const vm = config.vms.get(vmId);
  if (!vm) throw new ConfigError(`route ${route.name}: VM ${vmId} has no entry in the configuration's vms`);
  return renderLine(vm, line, vmCwd, envOnVm(config, route));
}

/** The environment a line gets on a route's VMs: `~` is the same directory there as here (R6: same paths). */
export function envOnVm(config: GuardConfig, route: Pick<RouteConfig, 'pathMap'>): Record<string, string> {
  return config.home ? { HOME: mapPath(config.home, [...route.pathMap, ...config.pathMap]) } : {};
}

function denied(rule: string, reason: string, commands: Verdict['commands'] = []): GuardVerdict {
  return { decision: 'deny', rule, reason, route: null, commands };
}

/** A directory's canonical spelling (src/config/physical-paths.ts gives the doors' one: physical, then configured). */
export type Canonicalize = (dir: string) => string;

export function makeGuard<C extends GuardConfig>(
  config: C,
  role: Role,
  defaults: { cwd: string; env: NodeJS.ProcessEnv; files?: FileAccess | false; canonicalize?: Canonicalize; ruleSpace?: (dir: string) => string | undefined },
): Guard<C> {
  // Every directory judged is canonical, so a symlinked checkout, an agent's getcwd() and a shell's $PWD
  // get one verdict, and the VM gets the configured spelling. The core does no I/O: the doors' loader
  // passes the canonicalizer (identity when none is given).
  const canon: Canonicalize = defaults.canonicalize ?? ((d) => d);
  // A directory in another checkout of the monorepo, as the rules name it (src/config/checkout.ts).
  const ruleSpace = defaults.ruleSpace;
  // How the walker reads an unknown program's arguments (src/shell/guess.ts): from a word a rule names,
  // unless the policy keeps the program here as it is (an allow rule, or a catalogue VM's template script
  // such as `win.sh sh "…"`, which runs its argument on the VM).
  const templates = new Set<string>();
  for (const vm of config.vms.values()) {
    const first = vm.template?.trim().split(/\s+/)[0];
    if (first) templates.add(first.slice(first.lastIndexOf('/') + 1));
  }
  const policy: WalkPolicy = {
    names: (program) => namedByRules(config.rules, program),
    keeps: (cmd) => (cmd.program !== null && templates.has(cmd.program)) || allowedAsItIs(config.rules, role, cmd),
  };
  const explain: Guard<C>['explain'] = (line, at) => {
    const given = at?.cwd ?? defaults.cwd;
    const cwd = given.startsWith('/') && !given.includes('/.') && !given.includes('//') ? given : resolve(given);
    const env = at?.env ?? defaults.env;
    let commands: SimpleCommand[];
    try {
      const script = parse(line);
      const files = at?.files ?? defaults.files ?? diskFiles();
      commands = commandsOf(script, line, { cwd, env: { HOME: config.home ?? env.HOME, OLDPWD: env.OLDPWD }, policy, ...(files ? { files } : {}) });
      for (const c of commands) {
        if (c.cwd === null || !c.cwd.startsWith('/')) continue;
        if (ruleSpace) c.ruleSpace = { dir: c.cwd, of: ruleSpace };
        c.cwd = canon(c.cwd);
      }
    } catch (err) {
      if (err instanceof UnreadableScriptError) return { verdict: denied('unreadable-script', `${err.reason}.`), decision: null };
      if (err instanceof ParseError) return { verdict: denied('parse-error', `the command line cannot be parsed: ${err.message}`), decision: null };
      return { verdict: denied('internal-error', `offhost could not judge this line: ${String((err as Error)?.message ?? err)}`), decision: null };
    }
    const d = decide(commands, config.rules, role);
    const cmds = d.commands.map((c) => ({ command: c.command, rule: c.rule?.id ?? null, decision: c.decision }));
    // A catalogue VM another session holds, or one stopped/deleted/reset without its lock (src/vms/protect.ts).
    // Lock state is disk state: a static judgement (`files: false`: scan, ci, rule examples) leaves it out.
    const held = d.decision === 'deny' || (at?.files ?? defaults.files) === false ? null : protectCatalogue(commands, config, { cwd, env });
    if (held) return { verdict: denied(held.rule, held.reason, cmds), decision: d };
    if (d.decision !== 'reroute') {
      return { verdict: { decision: d.decision, rule: d.rule, reason: d.reason, route: null, commands: cmds }, decision: d };
    }
    let route: RouteRef;
    try {
      route = routeFor(config, d.route!, line, canon(cwd), ruleSpace?.(cwd) !== undefined);
    } catch (err) {
      // A route that cannot be rendered must never let the heavy command run here.
      return { verdict: denied(d.rule ?? 'route-error', `${d.reason} But its route cannot be used: ${(err as Error).message}`, cmds), decision: d };
    }
    return {
      verdict: { decision: 'reroute', rule: d.rule, reason: d.reason, route, commands: cmds },
      decision: d,
    };
  };
  return { role, config, classify: (line, at) => explain(line, at).verdict, explain };
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
export function selfTest(config: GuardConfig, rules: Rule[] = config.rules): SelfTestFailure[] {
  const failures: SelfTestFailure[] = [];
  const sub = (s: string) => s.replace(/\{([a-z][a-z0-9_]*)\}/g, (m, n: string) => (Object.hasOwn(config.vars, n) ? config.vars[n]! : m));
  for (const rule of rules) {
    const check = (kind: 'match' | 'not_match', ex: string | { line: string; cwd?: string }) => {
      const line = sub(typeof ex === 'string' ? ex : ex.line);
      const cwd = sub(typeof ex === 'string' || !ex.cwd ? (config.root ?? config.home ?? '/') : ex.cwd);
      let hit = false;
      try {
        const cmds = commandsOf(parse(line), line, { cwd, env: { HOME: config.home ?? undefined }, policy: { names: (p: string) => namedByRules(rules, p), keeps: () => false } });
        hit = cmds.some((c) => !(c.infoOnly && rule.decision !== 'allow') && matchRule(rule, c) === 'yes');
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
