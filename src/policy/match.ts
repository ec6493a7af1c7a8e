// Matching one simple command against one rule, in three values: yes, no, or maybe (the answer
// depends on a word or directory that cannot be known statically). Linear in the argv length.
import { ruleCwdOf, type SimpleCommand } from '../types.js';
import { compiledMatch, varToken, type CompiledGlob, type CompiledMatch, type CompiledRule } from './rule.js';

export type Tri = 'yes' | 'no' | 'maybe';

type Test = ((s: string) => boolean) & { prefix?: string };

interface FlagTest {
  names: Set<string>;
  values?: Test[];
}

export interface Matcher {
  program?: { literal: Set<string>; globs: Test[]; unknown: boolean };
  cwd?: Test[];
  valueOptions: Set<string>;
  /** The value options as one string: the key under which a command's parsed argv is cached. */
  valueKey: string;
  flags?: FlagTest[];
  anyFlag?: FlagTest[];
  notFlags?: Set<string>;
  subcommands?: Test[][];
  positional?: { ignore?: Test[]; any?: Test[]; orNone: boolean };
  argsContain?: Test[];
  lineContains?: Test[];
  env?: [string, Test[]][];
  anyOf?: Matcher[];
}

export interface Rule extends Omit<CompiledRule, 'match'> {
  matcher: Matcher;
}

const escapeRe = (s: string): string => s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');

function hydrateGlob(g: CompiledGlob, vars: Record<string, string>): Test {
  if ('literal' in g) {
    const lit = g.literal;
    return (s) => s === lit;
  }
  let src = g.source;
  if (src.includes('__OFFHOST_VAR_')) {
    for (const [k, v] of Object.entries(vars)) src = src.split(varToken(k)).join(escapeRe(v));
  }
  const re = new RegExp(src, g.flags);
  const t: Test = (s) => re.test(s);
  if (g.prefix) t.prefix = g.prefix;
  return t;
}

export function hydrate(rule: CompiledRule, vars: Record<string, string>): Rule {
  const h = (g: CompiledGlob) => hydrateGlob(g, vars);
  const flag = (f: { names: string[]; values?: CompiledGlob[] }): FlagTest => ({
    names: new Set(f.names),
    ...(f.values ? { values: f.values.map(h) } : {}),
  });
  const m = (c: CompiledMatch): Matcher => ({
    ...(c.program
      ? {
          program: {
            literal: new Set(c.program.globs.flatMap((g) => ('literal' in g ? [g.literal] : []))),
            globs: c.program.globs.filter((g) => !('literal' in g)).map(h),
            unknown: c.program.unknown,
          },
        }
      : {}),
    ...(c.cwd ? { cwd: c.cwd.map(h) } : {}),
    valueOptions: new Set(c.valueOptions),
    valueKey: [...c.valueOptions].sort().join('\u0000'),
    ...(c.flags ? { flags: c.flags.map(flag) } : {}),
    ...(c.anyFlag ? { anyFlag: c.anyFlag.map(flag) } : {}),
    ...(c.notFlags ? { notFlags: new Set(c.notFlags) } : {}),
    ...(c.subcommands ? { subcommands: c.subcommands.map((l) => l.map(h)) } : {}),
    ...(c.positional
      ? {
          positional: {
            ...(c.positional.ignore ? { ignore: c.positional.ignore.map(h) } : {}),
            ...(c.positional.any ? { any: c.positional.any.map(h) } : {}),
            orNone: c.positional.orNone,
          },
        }
      : {}),
    ...(c.argsContain ? { argsContain: c.argsContain.map(h) } : {}),
    ...(c.lineContains ? { lineContains: c.lineContains.map(h) } : {}),
    ...(c.env ? { env: c.env.map(([k, v]) => [k, v.map(h)] as [string, Test[]]) } : {}),
    ...(c.anyOf ? { anyOf: c.anyOf.map(m) } : {}),
  });
  const { match: _match, ...rest } = rule;
  return { ...rest, matcher: m(compiledMatch(rule)) };
}

/** Options and positionals of an argv, as a rule with these value options sees them. */
interface ParsedArgs {
  /** option name -> values (null for a flag without value); an unknown value is `undefined`. */
  options: Map<string, (string | null | undefined)[]>;
  positionals: { value: string; known: boolean; prefix?: string }[];
  /** Some option-looking word was unknown (could be any option). */
  unknownOption: boolean;
}

function parseArgs(cmd: SimpleCommand, valueOptions: Set<string>): ParsedArgs {
  const options = new Map<string, (string | null | undefined)[]>();
  const positionals: ParsedArgs['positionals'] = [];
  const unknown = cmd.unknown;
  const add = (name: string, v: string | null | undefined) => {
    const l = options.get(name);
    if (l) l.push(v);
    else options.set(name, [v]);
  };
  let onlyPositional = false;
  const argv = cmd.argv;
  for (let i = 1; i < argv.length; i++) {
    const a = argv[i]!;
    const known = unknown.length === 0 || !unknown.includes(i);
    if (!known) {
      const prefix = cmd.prefixes?.[i];
      positionals.push(prefix ? { value: a, known: false, prefix } : { value: a, known: false });
      continue;
    }
    if (onlyPositional || a.length < 2 || a[0] !== '-') {
      positionals.push({ value: a, known: true });
      continue;
    }
    if (a === '--') {
      onlyPositional = true;
      continue;
    }
    const eq = a.indexOf('=');
    const head = eq > 0 ? a.slice(0, eq) : a;
    if (eq > 0) {
      add(head, a.slice(eq + 1));
      continue;
    }
    if (valueOptions.has(a)) {
      const next = i + 1 < argv.length ? argv[++i] : null;
      add(a, next === null ? null : unknown.includes(i) ? undefined : next);
      continue;
    }
    // As written (`-avd`, `-no-window`), and as a short-option cluster (`-dchrome`, `-j8`, `-nB`).
    add(a, null);
    if (a[1] !== '-') {
      for (let j = 1; j < a.length; j++) {
        const s = '-' + a[j];
        if (valueOptions.has(s)) {
          if (j + 1 < a.length) add(s, a.slice(j + 1));
          else {
            const next = i + 1 < argv.length ? argv[++i] : null;
            add(s, next === null ? null : unknown.includes(i) ? undefined : next);
          }
          break;
        }
        add(s, null);
      }
    }
  }
  return { options, positionals, unknownOption: false };
}

const and = (a: Tri, b: Tri): Tri => (a === 'no' || b === 'no' ? 'no' : a === 'maybe' || b === 'maybe' ? 'maybe' : 'yes');
const any = (tests: Test[], s: string): boolean => tests.some((t) => t(s));

function flagTri(f: FlagTest, p: ParsedArgs): Tri {
  let result: Tri = 'no';
  for (const name of f.names) {
    const vals = p.options.get(name);
    if (!vals) continue;
    if (!f.values) return 'yes';
    for (const v of vals) {
      if (v === undefined) result = 'maybe';
      else if (v !== null && any(f.values, v)) return 'yes';
    }
  }
  // An option given with an unknown name could be this one only through an unknown word; we do not
  // guess that far (the unknown positional rules cover `make "$T"`).
  return result;
}

/** Parsed argv of one command per value-option set (rules with the same options share one parse). */
export type ParsedCache = Map<string, ParsedArgs>;

function matchTri(m: Matcher, cmd: SimpleCommand): Tri {
  let r: Tri = 'yes';
  if (m.program) {
    if (cmd.program === null) {
      if (!m.program.unknown) return 'no';
    } else if (!m.program.literal.has(cmd.program) && !any(m.program.globs, cmd.program)) return 'no';
  }
  if (m.cwd) {
    if (cmd.cwd === null) r = 'maybe';
    else if (!any(m.cwd, cmd.cwd)) {
      const rc = cmd.ruleSpace === undefined ? cmd.ruleCwd : ruleCwdOf(cmd);
      if (rc === undefined || !any(m.cwd, rc)) return 'no';
    }
  }
  if (m.env) {
    for (const [k, tests] of m.env) {
      const v = cmd.env[k];
      if (v === undefined) {
        if (cmd.unknownEnv?.includes(k)) r = 'maybe';
        else return 'no';
      } else if (!any(tests, v)) return 'no';
    }
  }
  if (m.lineContains) {
    // On one line: a glob's `*` does not cross newlines, and a heredoc spreads a command over several.
    if (cmd.line === undefined || !any(m.lineContains, cmd.line.replace(/\s+/g, ' '))) return 'no';
  }
  if (m.argsContain) {
    let t: Tri = 'no';
    const unknown = cmd.unknown;
    for (let i = 0; i < cmd.argv.length; i++) {
      if (any(m.argsContain, cmd.argv[i]!)) {
        t = 'yes';
        break;
      }
      if (i > 0 && unknown.includes(i)) t = 'maybe';
    }
    r = and(r, t);
    if (r === 'no') return r;
  }
  const needsArgs = m.flags || m.anyFlag || m.notFlags || m.subcommands || m.positional;
  if (needsArgs) {
    const p = parsedFor(cmd, m);
    if (m.notFlags) for (const n of m.notFlags) if (p.options.has(n)) return 'no';
    for (const f of m.flags ?? []) {
      r = and(r, flagTri(f, p));
      if (r === 'no') return r;
    }
    if (m.anyFlag) {
      let t: Tri = 'no';
      for (const f of m.anyFlag) {
        const x = flagTri(f, p);
        if (x === 'yes') {
          t = 'yes';
          break;
        }
        if (x === 'maybe') t = 'maybe';
      }
      r = and(r, t);
      if (r === 'no') return r;
    }
    let pos = p.positionals;
    if (m.subcommands) {
      for (let i = 0; i < m.subcommands.length; i++) {
        const a = pos[i];
        if (!a) return 'no';
        if (!a.known) r = and(r, 'maybe');
        else if (!any(m.subcommands[i]!, a.value)) return 'no';
      }
      pos = pos.slice(m.subcommands.length);
    }
    if (m.positional) {
      const { ignore, any: anyOf, orNone } = m.positional;
      const rest = ignore ? pos.filter((a) => !a.known || !any(ignore, a.value)) : pos;
      if (anyOf) {
        let t: Tri = orNone && rest.length === 0 ? 'yes' : 'no';
        for (const a of rest) {
          if (!a.known) {
            // `@$NAME` matches `@*` whatever the name is.
            if (a.prefix && anyOf.some((g) => g.prefix !== undefined && a.prefix!.startsWith(g.prefix))) {
              t = 'yes';
              break;
            }
            t = t === 'yes' ? 'yes' : 'maybe';
          } else if (any(anyOf, a.value)) {
            t = 'yes';
            break;
          }
        }
        r = and(r, t);
      } else if (orNone && rest.length > 0) {
        r = and(r, rest.some((a) => !a.known) ? 'maybe' : 'no');
      }
      if (r === 'no') return r;
    }
  }
  if (m.anyOf) {
    let t: Tri = 'no';
    for (const alt of m.anyOf) {
      const x = matchTri(alt, cmd);
      if (x === 'yes') {
        t = 'yes';
        break;
      }
      if (x === 'maybe') t = 'maybe';
    }
    r = and(r, t);
  }
  return r;
}

/**
 * Whether `rule` matches `cmd`: yes, no, or maybe (depends on something unknown). Pass the same `cache`
 * for every rule tried on one command.
 */
export function matchRule(rule: Rule, cmd: SimpleCommand): Tri {
  return matchTri(rule.matcher, cmd);
}

/** The parsed argv of a command per value-option set, kept on the command (symbol key: not in JSON). */
const PARSED = Symbol('offhost.parsedArgs');

function parsedFor(cmd: SimpleCommand, m: Matcher): ParsedArgs {
  const holder = cmd as SimpleCommand & { [PARSED]?: ParsedCache };
  const cache = (holder[PARSED] ??= new Map());
  let p = cache.get(m.valueKey);
  if (!p) {
    p = parseArgs(cmd, m.valueOptions);
    cache.set(m.valueKey, p);
  }
  return p;
}
