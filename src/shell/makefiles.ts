// The one Makefile reader of offhost: rules, tab recipes (with their file positions), simple variables,
// make's built-in variables, `$(MAKE)`, automatic variables. The walker uses it to know what `make e2e`
// runs (the recipes of the targets and of their prerequisites); `offhost scan` uses its position-keeping
// mode to check every recipe line of a Makefile and point at the exact column. Not a make: conditionals
// count both ways, functions are left unknown (`${__OFFHOST_MAKE_EXPR}`: a word whose value is unknown, so the rules
// judge what is known), and a target that is not found where the Makefile includes others is unknown.

export interface MakeRecipes {
  /** Recipe lines (make syntax removed), with the target each belongs to. */
  lines: { target: string; text: string }[];
  /** Some requested target could be defined where this reader cannot see (an `include`d file). */
  unknown: boolean;
  /** The goals (requested targets, or the default goal) and every target make reaches from them, in order. */
  goals: string[];
  reached: string[];
  /** What make runs while it reads the file (`$(shell …)`, `!=`), make references expanded; an unknown one left out. */
  parseTime: string[];
}

/** A physical piece of a recipe line: its text and its offset in the file. */
export interface Piece {
  text: string;
  start: number;
}

/** One logical recipe line (continuations kept: make hands `\`-newline to the shell), in file order. */
export interface Recipe {
  target: string;
  parts: Piece[];
}

export interface Makefile {
  vars: Map<string, string>;
  /** Explicit targets (not pattern rules, not special targets) -> prerequisites and recipes. */
  rules: Map<string, { prereqs: string[]; recipes: Recipe[] }>;
  defaultGoal: string | null;
  includes: boolean;
  /** Every recipe line of the file, pattern rules' included, in order. */
  recipes: Recipe[];
  /** Shell commands make runs while it reads the file: `$(shell …)` outside recipes, `NAME != …`. */
  parseTime: string[];
}

/** The commands of the `$(shell …)` calls in `t` (parentheses balanced). */
export function shellCalls(t: string): string[] {
  const out: string[] = [];
  for (let i = t.indexOf('$(shell'); i >= 0; i = t.indexOf('$(shell', i + 1)) {
    if (!/\s/.test(t[i + 7] ?? '')) continue;
    const end = matching(t, i + 1);
    if (end < 0) break;
    out.push(t.slice(i + 8, end).trim());
  }
  return out;
}

/** GNU make's built-in values (`make -p`) for the variables recipes use as programs. */
export const MAKE_DEFAULTS: readonly [string, string][] = [
  ['MAKE', 'make'], ['CC', 'cc'], ['CXX', 'g++'], ['CPP', '$(CC) -E'], ['AR', 'ar'], ['AS', 'as'], ['LD', 'ld'], ['RM', 'rm -f'],
  ['FC', 'f77'], ['LEX', 'lex'], ['YACC', 'yacc'], ['MAKEINFO', 'makeinfo'], ['TEX', 'tex'], ['CO', 'co'], ['GET', 'get'],
  ['PC', 'pc'], ['M2C', 'm2c'], ['CWEAVE', 'cweave'], ['CTANGLE', 'ctangle'], ['WEAVE', 'weave'], ['TANGLE', 'tangle'],
  ['LINT', 'lint'], ['ECHO', 'echo'], ['SHELL', '/bin/sh'], ['MAKEFLAGS', ''], ['MFLAGS', ''],
];

const ASSIGN = /^(?:(?:override|export|private)\s+)*([A-Za-z_][A-Za-z0-9_.-]*)\s*(\?=|:::=|::=|:=|\+=|!=|=)\s*(.*)$/s;
const CONDITIONAL = /^(ifeq|ifneq|ifdef|ifndef|else|endif)\b/;
const OTHER_DIRECTIVE = /^(vpath|unexport|undefine|export\s*$)/;
const SHELL_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const MAX_TARGETS = 200;

function endsWithContinuation(s: string): boolean {
  const m = /\\+$/.exec(s);
  return !!m && m[0].length % 2 === 1;
}

function stripComment(s: string): string {
  for (let i = 0; i < s.length; i++) {
    if (s[i] === '\\') i++;
    else if (s[i] === '#') return s.slice(0, i);
  }
  return s;
}

/** Offset of the rule's `:` (not `:=`), outside `$(…)`; -1 if the line is not a rule. */
function ruleColon(s: string): number {
  let depth = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if (c === '$' && (s[i + 1] === '(' || s[i + 1] === '{')) {
      depth++;
      i++;
    } else if ((c === ')' || c === '}') && depth > 0) depth--;
    else if (c === ':' && depth === 0 && s[i + 1] !== '=') return i;
    else if (c === '=' && depth === 0) return -1;
  }
  return -1;
}

export function readMakefile(text: string): Makefile {
  const lines: Piece[] = [];
  for (let start = 0; start <= text.length; ) {
    const nl = text.indexOf('\n', start);
    const end = nl < 0 ? text.length : nl;
    lines.push({ text: text.slice(start, end).replace(/\r$/, ''), start });
    if (nl < 0) break;
    start = nl + 1;
  }
  const mf: Makefile = { vars: new Map(MAKE_DEFAULTS), rules: new Map(), defaultGoal: null, includes: false, recipes: [], parseTime: [] };
  let current: { name: string; rule: { prereqs: string[]; recipes: Recipe[] } | null }[] = [];
  let inDefine = false;
  for (let i = 0; i < lines.length; i++) {
    const l = lines[i]!;
    if (inDefine) {
      if (/^\s*endef\b/.test(l.text)) inDefine = false;
      continue;
    }
    if (l.text.startsWith('\t') && current.length) {
      const parts: Piece[] = [{ text: l.text.slice(1), start: l.start + 1 }];
      while (endsWithContinuation(parts[parts.length - 1]!.text) && i + 1 < lines.length) {
        const n = lines[++i]!;
        const drop = n.text.startsWith('\t') ? 1 : 0;
        parts.push({ text: n.text.slice(drop), start: n.start + drop });
      }
      const recipe = { target: current[0]!.name, parts };
      mf.recipes.push(recipe);
      for (const c of current) c.rule?.recipes.push(recipe);
      continue;
    }
    let logical = l.text;
    while (endsWithContinuation(logical) && i + 1 < lines.length) logical = `${logical.slice(0, -1)} ${lines[++i]!.text.trim()}`;
    const bare = stripComment(logical).trim();
    if (bare === '' || l.text.startsWith('\t')) continue;
    // Run while make reads the file, whatever targets are asked for: every $(shell …) outside a recipe (in
    // a conditional, an include, an unused recursive variable's too: failing closed), and `NAME != cmd`.
    mf.parseTime.push(...shellCalls(bare));
    if (/^(override\s+)?define\b/.test(bare)) {
      inDefine = true;
      current = [];
      continue;
    }
    if (/^(-?include|sinclude)\b/.test(bare)) {
      mf.includes = true;
      current = [];
      continue;
    }
    if (CONDITIONAL.test(bare)) continue; // both branches count
    if (OTHER_DIRECTIVE.test(bare)) continue;
    const a = ASSIGN.exec(bare);
    const colon = ruleColon(bare);
    if (a && (colon < 0 || colon > bare.indexOf(a[2]!))) {
      const [, name, op, value] = a as unknown as [string, string, string, string];
      if (name === '.DEFAULT_GOAL') mf.defaultGoal = value.trim();
      else if (op === '+=') mf.vars.set(name, `${mf.vars.get(name) ?? ''} ${value}`.trim());
      else if (op === '?=') {
        if (!mf.vars.has(name)) mf.vars.set(name, value);
      } else if (op === '!=') {
        mf.vars.delete(name); // a shell command's output: unknown
        mf.parseTime.push(value.trim());
      }
      else mf.vars.set(name, value);
      current = [];
      continue;
    }
    if (colon < 0) {
      current = [];
      continue;
    }
    const targets = bare.slice(0, colon).split(/\s+/).filter(Boolean);
    let rest = bare.slice(colon + 1).replace(/^:/, '');
    // `target: VAR = value` is a target-specific variable, not prerequisites.
    if (/^\s*[A-Za-z_][A-Za-z0-9_]*\s*[:+?]?=/.test(rest)) {
      current = [];
      continue;
    }
    let inline: Piece | null = null;
    const semi = rest.indexOf(';');
    if (semi >= 0) {
      const at = l.text.indexOf(';', l.text.indexOf(':'));
      if (rest.slice(semi + 1).trim() && at >= 0) inline = { text: l.text.slice(at + 1), start: l.start + at + 1 };
      rest = rest.slice(0, semi);
    }
    const prereqs = rest.split(/\s+/).filter((p) => p && p !== '|');
    current = targets.map((t) => {
      // Special targets (.PHONY...) and pattern rules have no place in the target graph.
      if ((t.startsWith('.') && t !== '.DEFAULT') || t.includes('%')) return { name: t, rule: null };
      let r = mf.rules.get(t);
      if (!r) mf.rules.set(t, (r = { prereqs: [], recipes: [] }));
      r.prereqs.push(...prereqs);
      mf.defaultGoal ??= t;
      return { name: t, rule: r };
    });
    if (inline && current.length) {
      const recipe = { target: current[0]!.name, parts: [inline] };
      mf.recipes.push(recipe);
      for (const c of current) c.rule?.recipes.push(recipe);
    }
  }
  return mf;
}

/** Where expanded text goes: a string (the walker) or a position-keeping snippet (scan). */
export interface Sink {
  /** `literal`: the text is the file's own characters (positions map one to one); false: expansion output. */
  add(text: string, offset: number, literal?: boolean): void;
}

export interface ExpandOptions {
  /** Automatic variables (`$@ $< $^ $+ $*`) are known: the target and its prerequisites. */
  target?: string;
  prereqs?: string[];
  /** What `$(CURDIR)` is (the directory make runs in); `.` when not known. */
  dir?: string | null;
}

function matching(t: string, open: number): number {
  const o = t[open];
  const c = o === '(' ? ')' : '}';
  let depth = 0;
  for (let i = open; i < t.length; i++) {
    if (t[i] === o) depth++;
    else if (t[i] === c && --depth === 0) return i;
  }
  return -1;
}

/** The text a reference (`$(NAME)`, `$@`) stands for, as far as the Makefile says. */
function expandRef(name: string, vars: Map<string, string>, opts: ExpandOptions, depth: number): string {
  name = name.trim();
  if (name === 'CURDIR') return opts.dir ?? '.';
  if (opts.target !== undefined) {
    if (name === '@') return opts.target;
    if (name === '<') return opts.prereqs?.[0] ?? '';
    if (name === '^' || name === '+') return (opts.prereqs ?? []).join(' ');
    if (name === '*') return opts.target.replace(/\.[^.]*$/, '');
  }
  const v = vars.get(name);
  if (v !== undefined && depth < 10) return expandText(v, vars, opts, depth + 1);
  if (SHELL_NAME.test(name)) return `\${${name}}`;
  // A function or computed name: a variable no environment has (unknown to the shell).
  return /^[@<^+*?%|]$/.test(name) ? '${MAKE_AUTO}' : '${__OFFHOST_MAKE_EXPR}';
}

/** A variable's value expanded (no positions). */
function expandText(v: string, vars: Map<string, string>, opts: ExpandOptions, depth: number): string {
  let out = '';
  expandInto({ add: (t) => (out += t) }, v, 0, vars, opts, depth);
  return out;
}

/** Appends `t` (starting at file offset `off`) to `sink`, with `$$` and make references rewritten. */
function expandInto(sink: Sink, t: string, off: number, vars: Map<string, string>, opts: ExpandOptions, depth = 0): void {
  let i = 0;
  let plain = 0;
  const flush = (end: number) => {
    if (end > plain) sink.add(t.slice(plain, end), off + plain);
  };
  while (i < t.length) {
    if (t[i] !== '$') {
      i++;
      continue;
    }
    flush(i);
    const next = t[i + 1];
    if (next === '$') {
      sink.add('$', off + i);
      i += 2;
    } else if (next === '(' || next === '{') {
      const close = matching(t, i + 1);
      sink.add(expandRef(t.slice(i + 2, close < 0 ? t.length : close), vars, opts, depth), off + i, false);
      i = close < 0 ? t.length : close + 1;
    } else if (next !== undefined) {
      sink.add(expandRef(next, vars, opts, depth), off + i, false);
      i += 2;
    } else {
      sink.add('$', off + i);
      i++;
    }
    plain = i;
  }
  flush(t.length);
}

/** A recipe line as the shell gets it (prefixes `@ - +` removed, make references expanded), into `sink`. */
export function expandRecipe(recipe: Recipe, vars: Map<string, string>, opts: ExpandOptions, sink: Sink): void {
  recipe.parts.forEach((p, k) => {
    let t = p.text;
    let off = p.start;
    if (k === 0) {
      const m = /^[\s@+-]*/.exec(t)![0];
      t = t.slice(m.length);
      off += m.length;
    }
    expandInto(sink, t, off, vars, opts);
    if (k < recipe.parts.length - 1) sink.add('\n', p.start + p.text.length);
  });
}

export function makeRecipes(text: string, requested: string[], dir: string | null): MakeRecipes {
  const mf = readMakefile(text);
  const goals = requested.length ? requested : mf.defaultGoal ? [mf.defaultGoal] : [];
  const lines: MakeRecipes['lines'] = [];
  let unknown = false;
  const seen = new Set<string>();
  const queue = goals.map((g) => expandText(g, mf.vars, { dir }, 0));
  while (queue.length && seen.size < MAX_TARGETS) {
    const t = queue.shift()!;
    if (seen.has(t)) continue;
    seen.add(t);
    const r = mf.rules.get(t);
    if (!r) {
      // A requested target with no rule here: defined in an included file, or a file make has no recipe for.
      if (goals.includes(t) && mf.includes) unknown = true;
      continue;
    }
    const prereqs = r.prereqs.flatMap((p) => expandText(p, mf.vars, { dir }, 0).split(/\s+/)).filter(Boolean);
    queue.push(...prereqs);
    for (const recipe of r.recipes) {
      let out = '';
      expandRecipe(recipe, mf.vars, { target: t, prereqs, dir }, { add: (s) => (out += s) });
      if (out.trim()) lines.push({ target: t, text: out });
    }
  }
  if (seen.size >= MAX_TARGETS) unknown = true;
  // Targets with a rule here: the ones make builds (a name with no rule is a file, or unknown).
  const reached = [...seen].filter((t) => mf.rules.has(t));
  const parseTime = mf.parseTime.map((c) => expandText(c, mf.vars, { dir }, 0)).filter((c) => c !== '' && !c.includes('${__OFFHOST_MAKE_EXPR}'));
  return { lines, unknown, goals, reached, parseTime };
}
