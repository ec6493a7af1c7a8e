// Which programs get an exec-time shim, and when a shim may skip the judge (its fast path).
//
// Every program a deny or reroute rule names gets one (make, gmake, emulator, flutter, dart, lb,
// qemu-system-*, xvfb-run, Xvfb, weston, the browsers, chromedriver, playwright, cypress, karma, ...). Not
// shimmed: language runtimes a rule names only for the inline code they run (python -c, node -e, java -jar
// selenium: the heavy program that code starts is shimmed itself, and a shim in front of every python or
// node start would cost more than it sees), shells, and `<unknown>`.
//
// The fast path: a shim starts the real program without starting node when no deny/reroute rule for that
// program can match in this directory. That is known from the rules alone when every such rule requires a
// working directory under a fixed directory (koda-make: `{koda}/**`): outside those directories, with no
// argument that could name another directory (`-C`, `--directory`, a path), and with the configuration the
// shims were made from still the one in force, the answer is allow. Everything else asks the judge.
import { readdirSync, statSync } from 'node:fs';
import { delimiter, dirname } from 'node:path';
import type { ResolvedConfig } from '../config/resolve.js';
import { compiledMatch, type CompiledGlob, type CompiledMatch, type CompiledRule } from '../policy/rule.js';
import { varToken } from '../policy/rule.js';
import { builtinLayer } from '../config/builtin.js';
import { configFiles } from '../config/discover.js';
import { loadConfig } from '../config/load-config.js';
import { loadLayer } from '../config/layer-loader.js';
import { isUnderPath, physicalPath } from '../config/physical-paths.js';
import { programFor } from '../shell/programs/index.js';

/** Runtimes, shells and general launchers: named by rules for what they run, never shimmed. */
export const NOT_SHIMMED = new Set([
  'python', 'python2', 'python3', 'node', 'nodejs', 'perl', 'ruby', 'php', 'deno', 'bun', 'java', 'osascript', 'lua', 'luajit', 'Rscript', 'R', 'julia', 'tclsh', 'wish',
  'bash', 'sh', 'dash', 'zsh', 'ksh', 'fish', 'env', 'sudo', 'doas', 'nice', 'timeout', 'xargs', 'offhost',
]);
export const NOT_SHIMMED_PATTERN = /^(python[0-9.]*|pypy[0-9.]*|node[0-9.]*|perl[0-9.]*|ruby[0-9.]*|php[0-9.]*)$/;

/** Names a wildcard program glob is known to stand for, shimmed even when not installed yet. */
const KNOWN_NAMES = [
  'qemu-system-x86_64', 'qemu-system-i386', 'qemu-system-aarch64', 'qemu-system-arm', 'qemu-system-riscv64',
  'qemu-system-ppc64', 'qemu-system-s390x', 'emulator64-x86', 'emulator64-arm', 'emulator64-crash-service',
];

export interface FastDir {
  /** The directory as the configuration spells it. */
  spelled: string;
  /** Its physical path when the shims were made. */
  physical: string;
  /** It existed then (a later `-ef` check notices a symlink moved; a missing one must still be missing). */
  existed: boolean;
  /**
   * Its path under `{root}` (`engines/lang/koda`): every other checkout of the monorepo has it too
   * (src/config/checkout.ts), so a working directory ending in it, or under one, goes to the judge as well.
   */
  inCheckout?: string;
}

/**
 * When a shim may skip the judge: none of these holds (each is a necessary condition of some deny/reroute
 * rule alternative for the program, so when none holds no rule can match and the answer is allow).
 * Matching is case-insensitive (more starts go to the judge, never fewer).
 */
export interface FastPath {
  /** The working directory is under one of these, or an argument could name another directory. */
  dirs: FastDir[];
  /** An argument is one of these words (a subcommand: `test`, `build`, `run`). */
  words: string[];
  /** An argument is this long option, with `=VALUE`, or an abbreviation of it (`--headl`). */
  longFlags: string[];
  /** A short option letter: an argument starts with `-X` or is a cluster holding X (`-vd`). */
  shortFlags: string[];
  /** A single-dash option of several letters (`-avd`, `-headless`): as written or with `=VALUE`. */
  dashWords: string[];
  /** An argument contains this text (a positional or args_contain glob's fixed part: `AndroidTest`). */
  contains: string[];
  /** This environment variable is set and not empty (`WLR_BACKENDS`, `MOZ_HEADLESS`). */
  env: string[];
}

export interface ShimProgram {
  name: string;
  /** null: every start asks the judge. */
  fast: FastPath | null;
  /**
   * It can read its program from standard input (make's `-f -`): the shim then copies that input to a
   * file the judge reads and the program reads in its place (src/shims/script.ts).
   */
  stdinProgram?: boolean;
}

export interface ShimPlan {
  programs: ShimProgram[];
  /** The config files in force when the plan was made (physical paths): the fast path needs these unchanged. */
  configs: string[];
}

type Compiled = Pick<CompiledRule, 'id' | 'decision' | 'programs'> & { match: CompiledMatch };

function globTest(g: CompiledGlob, vars: Record<string, string>): (s: string) => boolean {
  if ('literal' in g) return (s) => s === g.literal;
  let src = g.source;
  for (const [k, v] of Object.entries(vars)) src = src.split(varToken(k)).join(v.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&'));
  const re = new RegExp(src, g.flags);
  return (s) => re.test(s);
}

/**
 * The wildcard program globs of a match, leaving out every program list that names a runtime
 * (`[python, python3, "python3.*", node, ...]` of inline-code rules): its patterns stand for runtimes too.
 */
function programPatterns(m: CompiledMatch): CompiledGlob[] {
  const own = m.program?.globs ?? [];
  const runtimeList = own.some((g) => 'literal' in g && (NOT_SHIMMED.has(g.literal) || NOT_SHIMMED_PATTERN.test(g.literal)));
  return [...(runtimeList ? [] : own.filter((g) => !('literal' in g))), ...(m.anyOf ?? []).flatMap(programPatterns)];
}

/** The alternative can match a command whose program is `name` (no program condition counts as yes). */
function mayMatch(m: CompiledMatch, name: string, vars: Record<string, string>): boolean {
  if (m.program && !m.program.globs.some((g) => globTest(g, vars)(name))) return false;
  if (m.anyOf && !m.anyOf.some((a) => mayMatch(a, name, vars))) return false;
  return true;
}

/**
 * The fixed directory a compiled cwd glob requires the working directory to start with, or null. A
 * literal glob is its own directory; a regular expression gives the literal text it must begin with,
 * provided no alternation (`|`) encloses that text.
 */
export function cwdPrefix(g: CompiledGlob, vars: Record<string, string>): string | null {
  if ('literal' in g) return g.literal.startsWith('/') ? g.literal : null;
  let src = g.source;
  for (const [k, v] of Object.entries(vars)) src = src.split(varToken(k)).join(v.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&'));
  let i = 0;
  let depth = 0;
  for (;;) {
    if (src[i] === '^') i++;
    else if (src.startsWith('(?:', i)) {
      i += 3;
      depth++;
    } else break;
  }
  const opened = depth;
  let lit = '';
  while (i < src.length) {
    const c = src[i]!;
    if (c === '\\') {
      const n = src[i + 1];
      if (n === undefined || /[A-Za-z0-9]/.test(n)) break; // \d, \w, \b...: a class, not a character
      lit += n;
      i += 2;
      continue;
    }
    if ('()[]{}*+?.|$^'.includes(c)) break;
    lit += c;
    i++;
  }
  // `x*` and `x?` make the last character optional.
  if (src[i] === '*' || src[i] === '?' || src[i] === '{') lit = lit.slice(0, -1);
  // An alternation at the level of the literal (or outside it) means the literal is not required.
  let inClass = false;
  for (let j = i; j < src.length; j++) {
    const c = src[j]!;
    if (c === '\\') {
      j++;
      continue;
    }
    if (inClass) {
      if (c === ']') inClass = false;
      continue;
    }
    if (c === '[') inClass = true;
    else if (c === '(') depth++;
    else if (c === ')') depth--;
    else if (c === '|' && depth <= opened) return null;
  }
  return lit.startsWith('/') && lit.length > 1 ? lit : null;
}

/** What one rule alternative needs to match: any one of these holding (see FastPath; here a directory is a plain path). */
type Need = Omit<FastPath, 'dirs'> & { dirs: string[] };

const noNeed = (): Need => ({ dirs: [], words: [], longFlags: [], shortFlags: [], dashWords: [], contains: [], env: [] });

function addFlagNames(n: Need, names: string[]): boolean {
  for (const f of names) {
    if (/^--[A-Za-z0-9][A-Za-z0-9_.-]*$/.test(f)) n.longFlags.push(f);
    else if (/^-[A-Za-z0-9]$/.test(f)) n.shortFlags.push(f[1]!);
    else if (/^-[A-Za-z0-9][A-Za-z0-9_.-]+$/.test(f)) n.dashWords.push(f);
    else return false;
  }
  return true;
}

/**
 * A text every string the glob matches contains, or null: the longest run of plain characters of its
 * pattern, provided the pattern has no alternation (`|`) at all. A character followed by a quantifier is
 * optional, and a class (`[...]`) or any other operator ends the run.
 */
export function requiredText(g: CompiledGlob): string | null {
  if ('literal' in g) return g.literal === '' ? null : g.literal;
  // `LITERAL*` (its star's pattern has an alternation of its own): every match starts with LITERAL.
  if (g.prefix) return g.prefix;
  const src = g.source;
  if (src.includes('|')) return null;
  let best = '';
  let run = '';
  const end = () => {
    if (run.length > best.length) best = run;
    run = '';
  };
  for (let i = 0; i < src.length; i++) {
    const c = src[i]!;
    if (c === '\\') {
      const n = src[i + 1];
      if (n === undefined || /[A-Za-z0-9]/.test(n)) {
        end();
        i++;
        continue;
      }
      run += n;
      i++;
    } else if (c === '[') {
      end();
      while (i < src.length && src[i] !== ']') i += src[i] === '\\' ? 2 : 1;
    } else if ('*+?{'.includes(c)) {
      // The character before a quantifier may be absent or repeated: not part of a fixed text.
      run = run.slice(0, -1);
      end();
      if (c === '{') while (i < src.length && src[i] !== '}') i++;
    } else if (c === '(' && src[i + 1] === '?') {
      end();
      if (src[i + 2] === ':') i += 2;
      else {
        // A lookaround (`(?!…)`, `(?=…)`, `(?<=…)`) matches no text: skip it whole.
        let depth = 0;
        for (; i < src.length; i++) {
          if (src[i] === '\\') i++;
          else if (src[i] === '(') depth++;
          else if (src[i] === ')' && --depth === 0) break;
        }
      }
    } else if ('().^$'.includes(c)) end();
    else run += c;
  }
  end();
  return best === '' ? null : best;
}

/** The needs of this node's own conditions, the most selective first, or null when it has none usable. */
function ownNeed(m: CompiledMatch, vars: Record<string, string>): Need | null {
  const first = m.subcommands?.[0];
  if (first && first.every((g) => 'literal' in g)) return { ...noNeed(), words: first.map((g) => (g as { literal: string }).literal) };
  for (const f of m.flags ?? []) {
    const n = noNeed();
    if (addFlagNames(n, f.names)) return n;
  }
  if (m.anyFlag) {
    const n = noNeed();
    if (m.anyFlag.every((f) => addFlagNames(n, f.names))) return n;
  }
  for (const [k] of m.env ?? []) if (/^[A-Za-z_][A-Za-z0-9_]*$/.test(k)) return { ...noNeed(), env: [k] };
  if (m.positional?.any && !m.positional.orNone) {
    const texts = m.positional.any.map(requiredText);
    if (texts.every((t): t is string => t !== null)) return { ...noNeed(), contains: texts };
  }
  if (m.argsContain) {
    const texts = m.argsContain.map(requiredText);
    if (texts.every((t): t is string => t !== null)) return { ...noNeed(), contains: texts };
  }
  if (m.cwd) {
    const ps = m.cwd.map((g) => cwdPrefix(g, vars));
    if (ps.every((p): p is string => p !== null)) return { ...noNeed(), dirs: ps };
  }
  return null;
}

function union(a: Need, b: Need): Need {
  const out = noNeed();
  for (const k of Object.keys(out) as (keyof Need)[]) out[k] = [...new Set([...a[k], ...b[k]])];
  return out;
}

/** What an alternative (with what its parents need) needs to match `name`, null: nothing checkable. */
function needOf(m: CompiledMatch, name: string, vars: Record<string, string>, inherited: Need | null): Need | null | 'cannot' {
  if (!mayMatch(m, name, vars)) return 'cannot';
  const here = ownNeed(m, vars) ?? inherited;
  if (!m.anyOf) return here;
  let out: Need | null = null;
  for (const alt of m.anyOf) {
    const r = needOf(alt, name, vars, here);
    if (r === 'cannot') continue;
    if (r === null) return null;
    out = out ? union(out, r) : r;
  }
  return out ?? noNeed();
}

function fastDir(p: string): FastDir {
  let dir = p.replace(/(.)\/+$/, '$1');
  let existed = false;
  try {
    existed = statSync(dir).isDirectory();
  } catch {
    /* missing */
  }
  // A prefix that is not a directory (`/x/eng` of `/x/eng*`) stands for its parent: conservative.
  if (!existed && !p.endsWith('/')) {
    dir = dirname(dir);
    try {
      existed = statSync(dir).isDirectory();
    } catch {
      /* missing */
    }
  }
  return { spelled: dir, physical: existed ? physicalPath(dir) : dir, existed };
}

/**
 * The fast path of `name`, or null. Programs whose module runs other commands where no shim can see
 * them (docker: inside a container) are always judged; make's recipes start their programs through PATH,
 * through the shims, so make keeps its fast path (its Makefile is not read there). A program the registry
 * does not know is always judged too: the judge reads its arguments as the command it may start
 * (src/shell/guess.ts: `xcrun simctl …`, `colima ssh -- …`), which no rule's own words can tell.
 */
function fastPathFor(rules: Compiled[], name: string, vars: Record<string, string>): FastPath | null {
  const mod = programFor(name);
  if (!mod) return null;
  if ((mod.unwrap || mod.walk) && mod.family !== 'make') return null;
  let need = noNeed();
  for (const r of rules) {
    const n = needOf(r.match, name, vars, null);
    if (n === 'cannot') continue;
    if (n === null) return null;
    need = union(need, n);
  }
  const dirs = need.dirs.map(fastDir);
  const root = vars.root;
  for (const d of dirs) {
    if (root === undefined || !isUnderPath(d.spelled, root)) continue;
    // `{root}/**` itself: any directory may be in some checkout, so no directory is known to be safe.
    if (d.spelled === root) return null;
    d.inCheckout = d.spelled.slice(root.length + 1);
  }
  return { ...need, dirs };
}

function pathNames(env: NodeJS.ProcessEnv): string[] {
  const out: string[] = [];
  for (const d of (env.PATH ?? '').split(delimiter)) {
    if (!d.startsWith('/')) continue;
    try {
      out.push(...readdirSync(d));
    } catch {
      /* not a readable directory */
    }
  }
  return out;
}

/** The shim plan for the configuration in force at `cwd`. */
export function planShims(opts: { cwd: string; env: NodeJS.ProcessEnv; configFile?: string }): ShimPlan {
  const cwd = physicalPath(opts.cwd);
  const files = configFiles({ cwd, env: opts.env, ...(opts.configFile ? { configFile: opts.configFile } : {}) });
  const config: ResolvedConfig = loadConfig({ cwd, env: opts.env, ...(opts.configFile ? { configFile: opts.configFile } : {}) });
  const active = new Set(config.rules.map((r) => r.id));
  const byId = new Map<string, Compiled>();
  for (const layer of [builtinLayer(), ...files.map((f) => loadLayer(f))]) for (const r of layer.rules) byId.set(r.id, { ...r, match: compiledMatch(r) });
  const rules = [...byId.values()].filter((r) => active.has(r.id) && r.decision !== 'allow');

  const names = new Set<string>();
  let onPath: string[] | null = null;
  for (const r of rules) {
    for (const n of r.programs.literal) names.add(n);
    if (r.programs.patterns) {
      onPath ??= [...new Set([...KNOWN_NAMES, ...pathNames(opts.env)])];
      const tests = programPatterns(r.match).map((g) => globTest(g, config.vars));
      for (const n of onPath) if (tests.some((t) => t(n))) names.add(n);
    }
  }
  const programs: ShimProgram[] = [];
  for (const name of [...names].sort()) {
    if (name.includes('/') || name === '<unknown>' || name === '' || name.startsWith('.')) continue;
    if (NOT_SHIMMED.has(name) || NOT_SHIMMED_PATTERN.test(name)) continue;
    if (!/^[A-Za-z0-9_.+-]+$/.test(name)) continue;
    const stdinProgram = programFor(name)?.family === 'make';
    programs.push({ name, fast: fastPathFor(rules, name, config.vars), ...(stdinProgram ? { stdinProgram } : {}) });
  }
  return { programs, configs: files.map((f) => physicalPath(f)) };
}
