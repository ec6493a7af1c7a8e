// What `make e2e` runs: the recipes of the requested targets (or the default goal) and of their
// prerequisites, from the Makefile, as shell lines. A reader for the common shape of project Makefiles
// (rules, tab recipes, simple variables, `$(MAKE)`, automatic variables), not a make: conditionals count
// both ways, pattern rules and functions are left as they are (what is left unknown, the rules judge), and
// a target that is not found where the Makefile includes others is unknown.

export interface MakeRecipes {
  /** Recipe lines (make syntax removed), with the target each belongs to. */
  lines: { target: string; text: string }[];
  /** Some requested target could be defined where this reader cannot see (an `include`d file). */
  unknown: boolean;
  /** The goals (requested targets, or the default goal) and every target make reaches from them, in order. */
  goals: string[];
  reached: string[];
}

interface Rule {
  prereqs: string[];
  recipes: string[];
}

const ASSIGNMENT = /^(?:(?:override|export|private)\s+)*([A-Za-z_][A-Za-z0-9_.-]*)\s*(\?=|:::=|::=|:=|\+=|!=|=)\s*(.*)$/s;
const RULE = /^([^:=#\t][^:=#]*?)\s*(::?)(?!=)\s*(.*)$/s;
const DIRECTIVE = /^\s*(-?include|sinclude|ifeq|ifneq|ifdef|ifndef|else|endif|vpath|unexport|undefine|\.[A-Z_]+\s*:)/;
const MAX_TARGETS = 200;

/** Logical lines: backslash-newline joins lines (recipe lines keep it, as make hands them to the shell). */
function logicalLines(text: string): string[] {
  const raw = text.split('\n');
  const out: string[] = [];
  for (let i = 0; i < raw.length; i++) {
    let line = raw[i]!.replace(/\r$/, '');
    const recipe = line.startsWith('\t');
    while (line.endsWith('\\') && i + 1 < raw.length) {
      const next = raw[++i]!.replace(/\r$/, '');
      line = recipe ? `${line}\n${next.replace(/^\t/, '')}` : `${line.slice(0, -1)} ${next.trimStart()}`;
    }
    out.push(line);
  }
  return out;
}

/** make's built-in variables that recipes use most (GNU make's defaults). */
const BUILTIN_VARS: [string, string][] = [
  ['RM', 'rm -f'], ['CC', 'cc'], ['CXX', 'g++'], ['CPP', '$(CC) -E'], ['AR', 'ar'], ['AS', 'as'], ['LD', 'ld'], ['FC', 'f77'],
  ['LEX', 'lex'], ['YACC', 'yacc'], ['SHELL', '/bin/sh'], ['MAKEFLAGS', ''], ['MFLAGS', ''],
];

export function makeRecipes(text: string, requested: string[], dir: string | null): MakeRecipes {
  const vars = new Map<string, string>(BUILTIN_VARS);
  const rules = new Map<string, Rule>();
  let defaultGoal: string | null = null;
  let includes = false;
  let current: Rule[] = [];
  let inDefine = false;

  for (const line of logicalLines(text)) {
    if (inDefine) {
      if (/^\s*endef\b/.test(line)) inDefine = false;
      continue;
    }
    if (line.startsWith('\t')) {
      for (const r of current) r.recipes.push(line.slice(1));
      continue;
    }
    const bare = line.replace(/(^|[^\\])#.*$/, '$1').trim();
    if (bare === '') continue;
    if (/^(override\s+)?define\b/.test(bare)) {
      inDefine = true;
      current = [];
      continue;
    }
    if (/^(-?include|sinclude)\b/.test(bare)) includes = true;
    const a = ASSIGNMENT.exec(bare);
    if (a) {
      const [, name, op, value] = a as unknown as [string, string, string, string];
      if (name === '.DEFAULT_GOAL') defaultGoal = value.trim();
      else if (op === '+=') vars.set(name, `${vars.get(name) ?? ''} ${value}`.trim());
      else if (op === '?=') {
        if (!vars.has(name)) vars.set(name, value);
      } else if (op === '!=') vars.delete(name); // a shell command's output: unknown
      else vars.set(name, value);
      current = [];
      continue;
    }
    if (DIRECTIVE.test(bare) && !/^\.(PHONY|DEFAULT_GOAL)/.test(bare)) {
      current = [];
      continue;
    }
    const m = RULE.exec(bare);
    if (!m) {
      current = [];
      continue;
    }
    const targets = m[1]!.split(/\s+/).filter(Boolean);
    let rest = m[3]!;
    // `target: VAR = value` is a target-specific variable, not prerequisites.
    if (/^[A-Za-z_][A-Za-z0-9_]*\s*[:+?]?=/.test(rest)) {
      current = [];
      continue;
    }
    let inline: string | null = null;
    const semi = rest.indexOf(';');
    if (semi >= 0) {
      inline = rest.slice(semi + 1).trim();
      rest = rest.slice(0, semi);
    }
    const prereqs = rest.split(/\s+/).filter((p) => p && p !== '|');
    current = [];
    for (const t of targets) {
      if (t.startsWith('.') && t !== '.DEFAULT') continue; // .PHONY, .SUFFIXES...: special targets
      if (t.includes('%')) continue; // pattern rules: not followed
      let r = rules.get(t);
      if (!r) rules.set(t, (r = { prereqs: [], recipes: [] }));
      r.prereqs.push(...prereqs);
      if (inline) r.recipes.push(inline);
      current.push(r);
      defaultGoal ??= t;
    }
  }

  const goals = requested.length ? requested : defaultGoal ? [defaultGoal] : [];
  const lines: MakeRecipes['lines'] = [];
  let unknown = false;
  const seen = new Set<string>();
  const queue = goals.map((g) => expandVars(g, vars, null, [], dir));
  while (queue.length && seen.size < MAX_TARGETS) {
    const t = queue.shift()!;
    if (seen.has(t)) continue;
    seen.add(t);
    const r = rules.get(t);
    if (!r) {
      // A requested target with no rule here: defined in an included file, or a file make has no recipe for.
      if (goals.includes(t) && includes) unknown = true;
      continue;
    }
    const prereqs = r.prereqs.flatMap((p) => expandVars(p, vars, null, [], dir).split(/\s+/)).filter(Boolean);
    queue.push(...prereqs);
    for (const raw of r.recipes) {
      const text = expandVars(raw.replace(/^[\s@+-]+/, ''), vars, t, prereqs, dir);
      if (text.trim()) lines.push({ target: t, text });
    }
  }
  if (seen.size >= MAX_TARGETS) unknown = true;
  // Targets with a rule here: the ones make builds (a name with no rule is a file, or unknown).
  const reached = [...seen].filter((t) => rules.has(t));
  return { lines, unknown, goals, reached };
}

/**
 * Make's expansion for what this reader knows: `$(VAR)`/`${VAR}`/`$V` from simple assignments, `$(MAKE)`,
 * `$(CURDIR)`, `$@ $< $^ $+ $*`; `$$` is the shell's `$`. The rest stays as `${NAME}`: unknown in the shell.
 */
function expandVars(text: string, vars: Map<string, string>, target: string | null, prereqs: string[], dir: string | null, depth = 0): string {
  return text.replace(/\$(?:\$|\(([^()$]*)\)|\{([^{}$]*)\}|([@<^+*?%|A-Za-z]))/g, (whole, paren?: string, brace?: string, single?: string) => {
    if (whole === '$$') return '\u0000';
    const name = (paren ?? brace ?? single ?? '').trim();
    if (name === 'MAKE') return 'make';
    if (name === 'CURDIR' && dir) return dir;
    if (target !== null) {
      if (name === '@') return target;
      if (name === '<') return prereqs[0] ?? '';
      if (name === '^' || name === '+') return prereqs.join(' ');
      if (name === '*') return target.replace(/\.[^.]*$/, '');
    }
    const v = vars.get(name);
    if (v !== undefined && depth < 8) return expandVars(v, vars, target, prereqs, dir, depth + 1);
    return /^[A-Za-z_][A-Za-z0-9_]*$/.test(name) ? `\${${name}}` : '${__OFFHOST_MAKE_EXPR}';
  }).replace(/\u0000/g, '$');
}
