// Option grammars, declared once per program: which options take a value, which are flags, which only
// print (help, version, list), and how GNU getopt_long reads an abbreviated long option (`--dir=x` is
// `--directory=x` when no other long option starts with `--dir`). Used by the program modules to find the
// inner command of a wrapper (scan), by the walker to write a call's options in their canonical names
// (normalize: what the rules then read), and by the rule compiler (`grammar: make` in a rule).
import type { Field } from '../expand.js';

export interface Grammar {
  /** Options that take a value (`-C dir`, `-Cdir`, `--directory dir`, `--directory=dir`). */
  value: string[];
  /** Options that take no value; long ones are needed to resolve abbreviations. */
  flags?: string[];
  /** Long options whose value is optional and only attached (`--jobs[=N]`, `--debug[=FLAGS]`). */
  optional?: string[];
  /** Options with which the program only prints (help, version, a list) and runs nothing. */
  info?: string[];
  /** A first positional that makes the call informational (`flutter help test`, `virsh help`). */
  infoWords?: string[];
  /** An option value that makes the call informational (`qemu-system-x86_64 -machine help`). */
  infoValues?: string[];
  /** Long options are spelled with one dash (`-avd`, `-version`): no short-option clusters. */
  singleDash?: boolean;
  /** Only exact long names (programs whose parser takes no abbreviation: commander, yargs, clap). */
  exactLong?: boolean;
}

export interface Spec extends Grammar {
  /** Options that set the working directory of the inner command. */
  chdir?: string[];
  /** Options after which no inner command runs. */
  noCommand?: string[];
  /** Leading positionals to skip before the command (timeout's DURATION, taskset's mask...). */
  skip?: number;
  /** NAME=VALUE words before the command are environment. */
  assignments?: boolean;
  /** A value option whose value is a script string for a shell. */
  scriptOption?: string[];
  /** A value option naming an output file, which is a shell command to pipe to when it starts with `|` or `!` (strace -o). */
  pipeOption?: string[];
  /** The inner command's remaining words are joined and run by `sh -c` (watch). */
  joinAsScript?: boolean;
}

export function isOpt(f: Field): boolean {
  return f.known && f.value.length > 1 && (f.value.startsWith('-') || f.value.startsWith('+'));
}

export const ASSIGN = /^[A-Za-z_][A-Za-z0-9_]*=/s;

interface Compiled {
  values: Set<string>;
  longs: string[];
  info: Set<string>;
}
const compiled = new WeakMap<Grammar, Compiled>();

function compile(g: Grammar): Compiled {
  let c = compiled.get(g);
  if (!c) {
    const s = g as Spec;
    const all = [...g.value, ...(g.flags ?? []), ...(g.optional ?? []), ...(g.info ?? []), ...(s.chdir ?? []), ...(s.noCommand ?? []), ...(s.scriptOption ?? [])];
    c = { values: new Set(g.value), longs: [...new Set(all.filter((o) => o.startsWith('--')))], info: new Set(g.info ?? []) };
    compiled.set(g, c);
  }
  return c;
}

/**
 * The long option `name` (`--dir`) stands for, as getopt_long reads it: itself when it is one, else the
 * one long option it is a prefix of. Ambiguous or unknown: itself (getopt fails on an ambiguous one, and
 * then nothing runs; an unknown one the grammar does not know either).
 */
export function canonicalLong(g: Grammar, name: string): string {
  const c = compile(g);
  if (g.exactLong || c.longs.includes(name) || name.length < 3) return name;
  let found: string | null = null;
  for (const l of c.longs) {
    if (!l.startsWith(name)) continue;
    if (found !== null) return name;
    found = l;
  }
  return found ?? name;
}

/**
 * The call's words with every abbreviated long option written out (`--dir=x` -> `--directory=x`,
 * `--just-p` -> `--just-print`), up to `--`. Returns the same array when nothing changes.
 */
export function normalize(g: Grammar, argv: Field[]): Field[] {
  let out: Field[] | null = null;
  const c = compile(g);
  for (let i = 1; i < argv.length; i++) {
    const f = argv[i]!;
    if (!f.known || !f.value.startsWith('--')) continue;
    if (f.value === '--') break;
    const eq = f.value.indexOf('=');
    const name = eq < 0 ? f.value : f.value.slice(0, eq);
    const full = canonicalLong(g, name);
    if (full !== name) {
      out ??= argv.slice();
      out[i] = { value: full + (eq < 0 ? '' : f.value.slice(eq)), known: true };
    }
    if (eq < 0 && c.values.has(full)) i++;
  }
  return out ?? argv;
}

/** Whether the call only prints (help, version, list): an info option, info word or info value. */
export function isInfo(g: Grammar, argv: Field[]): boolean {
  if (!g.info && !g.infoWords && !g.infoValues) return false;
  const c = compile(g);
  const info = c.info;
  let positional = 0;
  for (let i = 1; i < argv.length; i++) {
    const f = argv[i]!;
    if (!f.known) {
      positional++;
      continue;
    }
    const v = f.value;
    if (v === '--') return false;
    if (v.startsWith('-') && v.length > 1) {
      if (info.has(v)) return true;
      const eq = v.indexOf('=');
      const name = v.charCodeAt(1) === 45 ? canonicalLong(g, eq < 0 ? v : v.slice(0, eq)) : eq < 0 || g.singleDash ? v : v.slice(0, eq);
      if (info.has(name)) return true;
      if (eq >= 0 && g.infoValues?.includes(v.slice(eq + 1))) return true;
      if (c.values.has(name) && eq < 0) {
        const next = argv[i + 1];
        if (next?.known && g.infoValues?.includes(next.value)) return true;
        i++;
      }
      continue;
    }
    if (positional === 0 && g.infoWords?.includes(v)) return true;
    positional++;
  }
  return false;
}

/**
 * Generic option walk of a wrapper: the index of the inner command and the options seen (by canonical
 * name), or null when the wrapper runs no command.
 */
export function scan(argv: Field[], spec: Spec): { index: number; opts: [string, Field | null][]; env: [string, Field][] } | null {
  const opts: [string, Field | null][] = [];
  const env: [string, Field][] = [];
  let i = 1;
  let skip = spec.skip ?? 0;
  const valueSet = compile(spec).values;
  while (i < argv.length) {
    const f = argv[i]!;
    if (f.known && f.value === '--') {
      i++;
      break;
    }
    if (spec.assignments && f.known && f.value === '-') {
      // `env -` is `env -i`.
      opts.push(['-i', null]);
      i++;
      continue;
    }
    if (isOpt(f)) {
      const v = f.value;
      if (v.startsWith('--') || spec.singleDash) {
        const eq = v.indexOf('=');
        const name = v.startsWith('--') ? canonicalLong(spec, eq < 0 ? v : v.slice(0, eq)) : eq < 0 ? v : v.slice(0, eq);
        if (eq >= 0) opts.push([name, { value: v.slice(eq + 1), known: true }]);
        else if (valueSet.has(name)) {
          opts.push([name, argv[i + 1] ?? null]);
          i++;
        } else opts.push([name, null]);
        i++;
        continue;
      }
      // Short cluster: -Eu root, -uroot, -n19.
      let j = 1;
      while (j < v.length) {
        const name = v[0] + v[j]!;
        if (valueSet.has(name)) {
          if (j + 1 < v.length) opts.push([name, { value: v.slice(j + 1), known: true }]);
          else {
            opts.push([name, argv[i + 1] ?? null]);
            i++;
          }
          break;
        }
        opts.push([name, null]);
        j++;
      }
      i++;
      continue;
    }
    if (spec.assignments && f.known && ASSIGN.test(f.value)) {
      const eq = f.value.indexOf('=');
      env.push([f.value.slice(0, eq), { value: f.value.slice(eq + 1), known: true }]);
      i++;
      continue;
    }
    if (spec.assignments && !f.known && /^[A-Za-z_][A-Za-z0-9_]*=/.test(f.value)) {
      i++;
      continue;
    }
    if (skip > 0) {
      skip--;
      i++;
      continue;
    }
    break;
  }
  if (spec.noCommand && opts.some(([n]) => spec.noCommand!.includes(n))) return null;
  return { index: i, opts, env };
}

/** Options (by canonical name) and positionals of a call, as a grammar reads them. */
export function parseOptions(g: Grammar, argv: Field[], from = 1): { opts: [string, Field | null][]; positionals: Field[]; afterDashDash: Field[] } {
  const c = compile(g);
  const opts: [string, Field | null][] = [];
  const positionals: Field[] = [];
  for (let i = from; i < argv.length; i++) {
    const f = argv[i]!;
    if (f.known && f.value === '--') return { opts, positionals, afterDashDash: argv.slice(i + 1) };
    if (!isOpt(f) || f.value.startsWith('+')) {
      positionals.push(f);
      continue;
    }
    const v = f.value;
    if (v.startsWith('--') || g.singleDash) {
      const eq = v.indexOf('=');
      const name = v.startsWith('--') ? canonicalLong(g, eq < 0 ? v : v.slice(0, eq)) : eq < 0 ? v : v.slice(0, eq);
      if (eq >= 0) opts.push([name, { value: v.slice(eq + 1), known: true }]);
      else if (c.values.has(name)) opts.push([name, argv[++i] ?? null]);
      else opts.push([name, null]);
      continue;
    }
    for (let j = 1; j < v.length; j++) {
      const name = `-${v[j]}`;
      if (c.values.has(name)) {
        opts.push([name, j + 1 < v.length ? { value: v.slice(j + 1), known: true } : (argv[++i] ?? null)]);
        break;
      }
      opts.push([name, null]);
    }
  }
  return { opts, positionals, afterDashDash: [] };
}

/**
 * Every value of one option, read without the program's whole grammar: `--name=V`, `--name V`, a unique
 * prefix of --name (as getopt_long takes it), and `-s V` / `-sV` for its short form.
 */
export function optionValues(fields: readonly Field[], long: string, short?: string): Field[] {
  const out: Field[] = [];
  for (let i = 1; i < fields.length; i++) {
    const f = fields[i]!;
    if (!f.known) continue;
    if (f.value === '--') break;
    const eq = f.value.indexOf('=');
    const name = eq > 0 ? f.value.slice(0, eq) : f.value;
    const isLong = name.length >= 4 && name.startsWith('--') && long.startsWith(name);
    if (isLong || (short !== undefined && name === short)) {
      const v = eq > 0 ? { value: f.value.slice(eq + 1), known: true } : fields[++i];
      if (v) out.push(v);
    } else if (short !== undefined && f.value.startsWith(short) && f.value.length > short.length) out.push({ value: f.value.slice(short.length), known: true });
  }
  return out;
}
