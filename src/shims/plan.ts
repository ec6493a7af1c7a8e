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
import type { CompiledGlob, CompiledMatch, CompiledRule } from '../policy/rule.js';
import { varToken } from '../policy/rule.js';
import { builtinLayer } from '../config/builtin.js';
import { configFiles } from '../config/discover.js';
import { loadConfig } from '../config/load-config.js';
import { loadLayer } from '../config/layer-loader.js';
import { physicalPath } from '../config/physical-paths.js';

/** Runtimes, shells and general launchers: named by rules for what they run, never shimmed. */
export const NOT_SHIMMED = new Set([
  'python', 'python2', 'python3', 'node', 'nodejs', 'perl', 'ruby', 'php', 'deno', 'bun', 'java', 'osascript',
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
}

export interface ShimProgram {
  name: string;
  /** null: every start asks the judge. */
  fast: { dirs: FastDir[] } | null;
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

/**
 * The directories a rule alternative requires (the cwd condition above it, or its own), or null when it
 * can match `name` in any directory.
 */
function requiredDirs(m: CompiledMatch, name: string, vars: Record<string, string>, inherited: string[] | null): string[] | null | 'cannot' {
  if (!mayMatch(m, name, vars)) return 'cannot';
  let here = inherited;
  if (m.cwd) {
    const ps = m.cwd.map((g) => cwdPrefix(g, vars));
    if (ps.every((p): p is string => p !== null)) here = ps;
  }
  if (!m.anyOf) return here;
  const out: string[] = [];
  for (const alt of m.anyOf) {
    const r = requiredDirs(alt, name, vars, here);
    if (r === 'cannot') continue;
    if (r === null) return null;
    out.push(...r);
  }
  return out;
}

function fastDirsFor(rules: Compiled[], name: string, vars: Record<string, string>): FastDir[] | null {
  const dirs = new Set<string>();
  for (const r of rules) {
    const need = requiredDirs(r.match, name, vars, null);
    if (need === 'cannot') continue;
    if (need === null) return null;
    for (const p of need) dirs.add(p);
  }
  return [...dirs].map((p) => {
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
  });
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
  for (const layer of [builtinLayer(), ...files.map((f) => loadLayer(f))]) for (const r of layer.rules) byId.set(r.id, r);
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
    const dirs = fastDirsFor(rules, name, config.vars);
    programs.push({ name, fast: dirs ? { dirs } : null });
  }
  return { programs, configs: files.map((f) => physicalPath(f)) };
}
