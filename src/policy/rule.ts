// Rules as data. A RuleSpec is what a YAML pack says; a CompiledRule has its globs turned into regular
// expression sources (so the built-in pack can be compiled once at build time and start-up needs no
// glob library); `hydrate` turns one into a Rule ready to match, substituting path variables.
import type { Decision, Role } from '../types.js';
import { sharedGrammar, sharedList } from '../shell/programs/shared.js';

export type UnknownPolicy = 'deny' | 'match' | 'ignore';

/** An option test: any of `names` present (in any spelling), with a value matching `values` if given. */
export interface FlagSpec {
  names: string[];
  values?: string[];
  /** The value is a case-insensitive, non-empty prefix of one of these (Flutter's device matching). */
  values_prefix_of?: string[];
}

export interface MatchSpec {
  /** Globs on the program's basename; `<unknown>` matches a program that cannot be known statically. */
  program?: string[];
  /** Globs on the effective working directory; `{var}` path variables are substituted. */
  cwd?: string[];
  /** Options that take a value (so that the value is not taken for a positional argument). */
  value_options?: string[];
  /** A shared option grammar (src/shell/programs: `make`): its value options are added to value_options. */
  grammar?: string;
  /** Every entry must be present. */
  flags?: FlagSpec[];
  /** At least one entry must be present. */
  any_flag?: FlagSpec[];
  /** None may be present (`make -n` runs no recipe). */
  not_flags?: string[];
  /** Leading positional arguments, in order (`flutter test`, `xcrun simctl boot`), each a glob list. */
  subcommands?: string[][];
  /** Positional arguments after the subcommands. */
  positional?: {
    /** Globs of positionals to leave out (`V=1` on a make command line). */
    ignore?: string[];
    /** At least one positional must match... */
    any?: string[];
    /** ...or there may be none at all (make's default goal). */
    or_none?: boolean;
  };
  /** Some argument (option or positional, any position) matches one of these globs. */
  args_contain?: string[];
  /** For a program that cannot be known: the whole line matches one of these globs. */
  line_contains?: string[];
  /** The command's own environment (inline assignments, env/sudo assignments): name -> globs. */
  env?: Record<string, string[]>;
  /** Alternatives: at least one must match (in addition to the fields above). */
  any_of?: MatchSpec[];
}

export interface ExampleSpec {
  line: string;
  cwd?: string;
}

export interface RuleSpec {
  id: string;
  description: string;
  /** POLICY.md section this rule implements: R1, R2, R5... */
  policy: string;
  decision: Decision;
  /** Route name, for reroute. */
  route?: string;
  /** What the user is told (deny: the instruction to follow). */
  message: string;
  /** Roles the rule acts in; default laptop only (on a VM or in CI heavy work is the point). */
  roles?: Role[];
  /** What a match that depends on something unknown (`make "$T"`, `cd "$D" && make`) means. */
  unknown?: UnknownPolicy;
  match: MatchSpec;
  /** What the VM a reroute lands on must be (seed 002: refused, never downgraded); see src/vms/isolation.ts. */
  require?: { kind?: ('container' | 'vm' | 'microvm')[]; arch?: string[]; where?: 'laptop' | 'remote' };
  examples: { match: (string | ExampleSpec)[]; not_match: (string | ExampleSpec)[] };
  /** Where it was defined, for messages. */
  source?: { file: string; line?: number };
}

/**
 * A glob as the engine runs it: a word without any wildcard is kept as the word itself (matched by
 * comparison, no regular expression, and a smaller embedded pack); any other glob is compiled to a
 * regular expression source, whose `{name}` placeholders are replaced when the pack is hydrated.
 */
export type CompiledGlob =
  | { literal: string }
  | {
      source: string;
      flags: string;
      /** For a glob `LITERAL*`: LITERAL (an unknown word with that static prefix matches it). */
      prefix?: string;
    };

/** `@*`, `integration_test*`: a literal followed by one trailing star. */
export function literalPrefixOf(glob: string): string | undefined {
  // No `(` is allowed in the literal, so no extglob (`@(a|b)*`) can be taken for one.
  return /^([^*?[\]{}()!\\]+)\*$/.exec(glob)?.[1];
}

export interface CompiledMatch {
  program?: { globs: CompiledGlob[]; unknown: boolean };
  cwd?: CompiledGlob[];
  valueOptions: string[];
  flags?: { names: string[]; values?: CompiledGlob[] }[];
  anyFlag?: { names: string[]; values?: CompiledGlob[] }[];
  notFlags?: string[];
  subcommands?: CompiledGlob[][];
  positional?: { ignore?: CompiledGlob[]; any?: CompiledGlob[]; orNone: boolean };
  argsContain?: CompiledGlob[];
  lineContains?: CompiledGlob[];
  env?: [string, CompiledGlob[]][];
  anyOf?: CompiledMatch[];
}

export interface CompiledRule extends Omit<RuleSpec, 'match' | 'roles' | 'unknown'> {
  roles: Role[];
  unknown: UnknownPolicy;
  /**
   * The compiled conditions. The hot bundle embeds the built-in pack with each rule's conditions as their
   * JSON text (scripts/build.mjs): a command meets a few rules, and parsing every rule's at every start
   * cost a quarter of a millisecond. Read it with `compiledMatch`.
   */
  match: CompiledMatch | string;
  /** The path variables (`{koda}`) its cwd conditions use, which the configuration must define. */
  cwdVars: string[];
  /** Which programs the rule can match at all, so the engine tries only the rules that can apply. */
  programs: ProgramIndex;
}

/** A compiled rule's conditions (parsed from their JSON text in the hot bundle's embedded pack). */
export function compiledMatch(rule: Pick<CompiledRule, 'match'>): CompiledMatch {
  return typeof rule.match === 'string' ? (JSON.parse(rule.match) as CompiledMatch) : rule.match;
}

/** The path variables the cwd conditions of `m` and of its alternatives use. */
function cwdVarsOf(m: CompiledMatch, names: string[] = []): string[] {
  for (const g of m.cwd ?? []) if ('source' in g) names.push(...varNamesIn(g.source));
  for (const a of m.anyOf ?? []) cwdVarsOf(a, names);
  return names;
}

/**
 * literal: exact basenames; patterns: the rule also has wildcard globs; any: no program condition;
 * prefixes: when every wildcard glob starts with a literal part (`qemu-system-*`), those parts: a program
 * that starts with none of them cannot match a pattern, and the rule is not even hydrated for it.
 */
export interface ProgramIndex {
  literal: string[];
  patterns: boolean;
  unknown: boolean;
  any: boolean;
  prefixes?: string[];
}

/** The literal part before a glob's first wildcard (empty when it starts with one). */
const leadingLiteral = (glob: string): string => glob.slice(0, glob.search(GLOB_CHARS));

export const GLOB_CHARS = /[*?[\]{}()!+@\\]/;

function programIndex(m: MatchSpec): ProgramIndex {
  if (m.program) {
    const globs = m.program.filter((p) => p !== '<unknown>');
    const patterns = globs.filter((g) => GLOB_CHARS.test(g));
    const prefixes = patterns.map(leadingLiteral);
    return {
      literal: globs.filter((g) => !GLOB_CHARS.test(g)),
      patterns: patterns.length > 0,
      unknown: m.program.includes('<unknown>'),
      any: false,
      ...(patterns.length > 0 && prefixes.every((p) => p !== '') ? { prefixes: [...new Set(prefixes)] } : {}),
    };
  }
  if (m.any_of && m.any_of.length > 0) {
    const alts = m.any_of.map(programIndex);
    const patterned = alts.filter((a) => a.patterns);
    const prefixes = patterned.every((a) => a.prefixes) ? patterned.flatMap((a) => a.prefixes!) : undefined;
    return {
      literal: alts.flatMap((a) => a.literal),
      patterns: patterned.length > 0,
      unknown: alts.some((a) => a.unknown),
      any: alts.some((a) => a.any),
      ...(patterned.length > 0 && prefixes ? { prefixes: [...new Set(prefixes)] } : {}),
    };
  }
  return { literal: [], patterns: false, unknown: true, any: true };
}

/** The placeholder a `{var}` becomes inside a compiled glob, replaced when the pack is hydrated. */
export const varToken = (name: string): string => `__OFFHOST_VAR_${name}__`;

/**
 * The `{name}` placeholders left in a compiled glob source: what /__OFFHOST_VAR_([a-z][a-z0-9_]*)__/g
 * finds, as a scan (it runs at every start, and a regular expression's first use costs its compilation).
 */
const isNameChar = (c: number): boolean => (c >= 97 && c <= 122) || (c >= 48 && c <= 57) || c === 95;

export function varNamesIn(source: string): string[] {
  const names: string[] = [];
  const open = '__OFFHOST_VAR_';
  let at = source.indexOf(open);
  while (at >= 0) {
    const from = at + open.length;
    let end = from;
    while (end < source.length && isNameChar(source.charCodeAt(end))) end++;
    // The greedy name run ends with the closing `__`: the name is what comes before its last `__`.
    const close = source.lastIndexOf('__', end - 2);
    const first = source.charCodeAt(from);
    if (close > from && first >= 97 && first <= 122) {
      names.push(source.slice(from, close));
      at = source.indexOf(open, close + 2);
    } else {
      at = source.indexOf(open, from);
    }
  }
  return names;
}

export type GlobCompiler = (glob: string) => CompiledGlob;

/** Compiles a rule's globs with `compile` (picomatch, at build time or for user packs). */
/** `@browsers` in a program list: the shared list of that name (src/shell/programs/heavy.ts). */
function expandPrograms(programs: string[]): string[] {
  return programs.flatMap((p) => {
    if (!/^@[a-z][a-z0-9-]*$/.test(p)) return [p];
    const list = sharedList(p.slice(1));
    if (!list) throw new Error(`unknown shared program list '${p}'`);
    return [...list];
  });
}

/** A match with its shared references resolved: program lists expanded, a grammar's value options added. */
export function resolveShared(s: MatchSpec): MatchSpec {
  let out = s;
  if (s.program?.some((p) => p.startsWith('@') && !p.startsWith('@('))) out = { ...out, program: expandPrograms(s.program) };
  if (s.grammar) {
    const g = sharedGrammar(s.grammar);
    if (!g) throw new Error(`unknown shared grammar '${s.grammar}'`);
    out = { ...out, value_options: [...new Set([...g.value, ...(s.value_options ?? [])])] };
  }
  if (s.any_of) out = { ...out, any_of: s.any_of.map(resolveShared) };
  return out;
}

export function compileRule(spec: RuleSpec, compile: GlobCompiler, compilePath: GlobCompiler = compile): CompiledRule {
  spec = { ...spec, match: resolveShared(spec.match) };
  const withVars = (g: string): CompiledGlob => compilePath(g.replace(/\{([a-z][a-z0-9_]*)\}/g, (_, n: string) => varToken(n)));
  const prefixOf = (words: string[]): CompiledGlob => {
    const alts = new Set<string>();
    for (const w of words) for (let i = 1; i <= w.length; i++) alts.add(w.slice(0, i).toLowerCase().replace(/[.*+?^${}()|[\]\\/]/g, '\\$&'));
    return { source: `^(?:${[...alts].join('|')})$`, flags: 'i' };
  };
  const flag = (f: FlagSpec) => {
    const values = [...(f.values ?? []).map(compile), ...(f.values_prefix_of ? [prefixOf(f.values_prefix_of)] : [])];
    return { names: f.names, ...(values.length ? { values } : {}) };
  };
  const m = (s: MatchSpec): CompiledMatch => ({
    ...(s.program
      ? { program: { globs: s.program.filter((p) => p !== '<unknown>').map(compile), unknown: s.program.includes('<unknown>') } }
      : {}),
    ...(s.cwd ? { cwd: s.cwd.map(withVars) } : {}),
    valueOptions: s.value_options ?? [],
    ...(s.flags ? { flags: s.flags.map(flag) } : {}),
    ...(s.any_flag ? { anyFlag: s.any_flag.map(flag) } : {}),
    ...(s.not_flags ? { notFlags: s.not_flags } : {}),
    ...(s.subcommands ? { subcommands: s.subcommands.map((l) => l.map(compile)) } : {}),
    ...(s.positional
      ? {
          positional: {
            ...(s.positional.ignore ? { ignore: s.positional.ignore.map(compile) } : {}),
            ...(s.positional.any ? { any: s.positional.any.map(compile) } : {}),
            orNone: s.positional.or_none ?? false,
          },
        }
      : {}),
    ...(s.args_contain ? { argsContain: s.args_contain.map(compile) } : {}),
    ...(s.line_contains ? { lineContains: s.line_contains.map(compile) } : {}),
    ...(s.env ? { env: Object.entries(s.env).map(([k, v]) => [k, v.map(compile)] as [string, CompiledGlob[]]) } : {}),
    ...(s.any_of ? { anyOf: s.any_of.map(m) } : {}),
  });
  const { match, roles, unknown, ...rest } = spec;
  const compiled = m(match);
  return { ...rest, roles: roles ?? ['laptop'], unknown: unknown ?? 'deny', match: compiled, cwdVars: [...new Set(cwdVarsOf(compiled))], programs: programIndex(match) };
}
