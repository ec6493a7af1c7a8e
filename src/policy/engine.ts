// decide: the verdict for the simple commands of one line. For each command, every rule that acts in
// the current role is tried; the strictest decision wins (deny > reroute > allow), the earlier rule on
// a tie. Across the commands of the line, the strictest again; two reroutes to different routes deny.
import type { Decision, Role, SimpleCommand } from '../types.js';
import { matchRule, type Rule } from './match.js';

const RANK: Record<Decision, number> = { allow: 0, reroute: 1, deny: 2 };

export interface CommandDecision {
  command: SimpleCommand;
  rule: Rule | null;
  decision: Decision;
  reason: string;
  /** The match depended on something unknown (and the rule's `unknown: deny` turned it into deny). */
  unknown: boolean;
}

export interface LineDecision {
  decision: Decision;
  rule: string | null;
  reason: string;
  route: string | null;
  commands: CommandDecision[];
}

function describe(cmd: SimpleCommand): string {
  const text = cmd.argv.join(' ');
  return text.length > 80 ? text.slice(0, 77) + '...' : text;
}

interface RuleIndex {
  /** The rules for this role, in their order. */
  eligible: Rule[];
  /** Rules that can match a program that cannot be known. */
  unknown: Rule[];
  /** program name -> the rules worth trying for it. */
  cache: Map<string, Rule[]>;
}

const indexes = new WeakMap<Rule[], Map<Role, RuleIndex>>();

/**
 * The rules worth trying for `program`, in their original order (ties go to the earlier rule): those that
 * name it, and those whose program globs can match it. Worked out per program name when first asked (a
 * command line names a few), not indexed for every name the rules list (hundreds: the browsers alone are
 * fifty), which cost a quarter of a millisecond at every start.
 */
function candidates(rules: Rule[], role: Role, program: string | null): Rule[] {
  let perRole = indexes.get(rules);
  if (!perRole) indexes.set(rules, (perRole = new Map()));
  let idx = perRole.get(role);
  if (!idx) {
    const eligible = rules.filter((r) => r.roles.includes(role));
    idx = { eligible, unknown: eligible.filter((r) => r.programs.unknown || r.programs.any), cache: new Map() };
    perRole.set(role, idx);
  }
  if (program === null) return idx.unknown;
  let c = idx.cache.get(program);
  if (!c) {
    // A rule with wildcard program globs (or none) is kept for this program only if its globs can match
    // it; their literal prefixes rule most programs out without hydrating the rule.
    c = idx.eligible.filter(
      (r) => r.programs.literal.includes(program) || ((r.programs.any || r.programs.patterns) && prefixAllows(r.programs, program) && mayMatchProgram(r.matcher, program)),
    );
    if (idx.cache.size < 10_000) idx.cache.set(program, c);
  }
  return c;
}

function prefixAllows(p: Rule['programs'], program: string): boolean {
  if (p.any || !p.prefixes) return true;
  for (const prefix of p.prefixes) if (program.startsWith(prefix)) return true;
  return false;
}

function mayMatchProgram(m: Rule['matcher'], program: string): boolean {
  if (m.program) return m.program.literal.has(program) || m.program.globs.some((t) => t(program));
  if (m.anyOf) return m.anyOf.some((alt) => mayMatchProgram(alt, program));
  return true;
}

const named = new WeakMap<Rule[], Map<string, boolean>>();

/**
 * Whether a rule that does more than allow names `program` (literally or by a glob): an unknown program's
 * argument that does is read as the command it may start (src/shell/guess.ts). Rules without a program
 * condition do not count (they would make every word one).
 */
export function namedByRules(rules: Rule[], program: string): boolean {
  let memo = named.get(rules);
  if (!memo) named.set(rules, (memo = new Map()));
  let hit = memo.get(program);
  if (hit === undefined) {
    hit = rules.some((r) => r.decision !== 'allow' && !r.programs.any && (r.programs.literal.includes(program) || (r.programs.patterns && prefixAllows(r.programs, program) && mayMatchProgram(r.matcher, program))));
    if (memo.size < 10_000) memo.set(program, hit);
  }
  return hit;
}

/**
 * Whether an allow rule matches `cmd` for sure in this role (r1-inspection's `rg …`, r1-talk-to-vm's
 * `incus exec VM -- …`): the policy keeps it here as it is, so its arguments are not read as a command.
 */
export function allowedAsItIs(rules: Rule[], role: Role, cmd: SimpleCommand): boolean {
  for (const r of candidates(rules, role, cmd.program)) if (r.decision === 'allow' && matchRule(r, cmd) === 'yes') return true;
  return false;
}

export function decideCommand(cmd: SimpleCommand, rules: Rule[], role: Role): CommandDecision {
  let best: CommandDecision | null = null;
  for (const rule of candidates(rules, role, cmd.program)) {
    if (!rule.roles.includes(role)) continue;
    // `make --help`, `npx playwright test --list`: the program only prints; only an allow rule applies.
    if (cmd.infoOnly && rule.decision !== 'allow') continue;
    // A guess at an unknown program's words (`xcodebuild test …` read as the `test` builtin) is never
    // allowed by a rule about another program: it may add a refusal, never an allowance.
    if (cmd.guessed && rule.decision === 'allow') continue;
    const tri = matchRule(rule, cmd);
    if (tri === 'no' || (tri === 'maybe' && cmd.certainOnly)) continue;
    let d: CommandDecision;
    if (tri === 'yes' || rule.unknown === 'match') {
      d = { command: cmd, rule, decision: rule.decision, reason: rule.message, unknown: tri === 'maybe' };
    } else if (rule.unknown === 'deny' && rule.decision !== 'allow') {
      const what = cmd.cwd === null ? 'the working directory' : 'an argument';
      d = {
        command: cmd,
        rule,
        decision: 'deny',
        reason: `offhost cannot tell statically whether \`${describe(cmd)}\` is ${rule.description.replace(/\.$/, '').replace(/^A /, 'a ')}: ${what} comes from a variable or a substitution. Spell it out, or run it with \`offhost run\`. (${rule.message})`,
        unknown: true,
      };
    } else continue;
    if (!best || RANK[d.decision] > RANK[best.decision]) best = d;
  }
  return best ?? { command: cmd, rule: null, decision: 'allow', reason: 'no rule matched: nothing heavy runs here', unknown: false };
}

/**
 * A wrapper that is itself heavy (`xvfb-run`) yields its route to a heavy command it runs (`xvfb-run -a
 * emulator -avd x` goes where the emulator goes): the inner command has the wrapper in its `via`, at the
 * same place in the line.
 */
function yieldsToInner(outer: CommandDecision, all: CommandDecision[]): boolean {
  const name = outer.command.program;
  if (name === null) return false;
  const depth = outer.command.via.length;
  return all.some((d) => d !== outer && d.decision === 'reroute' && d.command.span === outer.command.span && d.command.via.length > depth && d.command.via[depth] === name);
}

export function decide(commands: SimpleCommand[], rules: Rule[], role: Role): LineDecision {
  const decided = commands.map((c) => decideCommand(c, rules, role));
  let top: CommandDecision | null = null;
  // Strictest wins; on a tie, a command some rule decided explains the verdict better than one no rule
  // knew (`npx vitest` is allowed by r1-unit-tests, not by npx having no rule).
  for (const d of decided) {
    if (!top || RANK[d.decision] > RANK[top.decision] || (RANK[d.decision] === RANK[top.decision] && !top.rule && d.rule)) top = d;
  }
  if (!top) return { decision: 'allow', rule: null, reason: 'the line runs no command', route: null, commands: decided };
  if (top.decision === 'reroute') {
    const rerouted = decided.filter((d) => d.decision === 'reroute' && !yieldsToInner(d, decided));
    const routes = new Set(rerouted.map((d) => d.rule!.route));
    if (routes.size === 1 && yieldsToInner(top, decided)) top = rerouted[0]!;
    if (routes.size > 1) {
      return {
        decision: 'deny',
        rule: 'multiple-routes',
        reason: `this line needs more than one VM (routes ${[...routes].join(', ')}); split it into one command line per route`,
        route: null,
        commands: decided,
      };
    }
  }
  return {
    decision: top.decision,
    rule: top.rule?.id ?? null,
    reason: top.reason,
    route: top.decision === 'reroute' ? (top.rule!.route ?? null) : null,
    commands: decided,
  };
}
