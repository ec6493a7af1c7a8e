// Reading a justfile (just, the command runner): its recipes with their dependencies and lines, aliases,
// string variables, backtick assignments, imports and modules, and the settings that change where or how
// lines run. Pure text in, data out; src/shell/programs/just.ts walks what an invocation runs.
//
// What is not followed is made unknown, never dropped: an interpolation `{{ … }}` that is not a plain
// string variable becomes an unknown variable (`$__offhost_just`), so `make -C x {{target}}` is judged
// with an unknown target, and a line bash cannot parse is an unknown command.

export interface JustRecipe {
  name: string;
  params: string[];
  /** Prior dependencies (run first) and subsequent ones (after `&&`), by name. */
  before: string[];
  after: string[];
  /** The body's lines, prefixes (`@`, `-`) removed, interpolations resolved or made unknown. */
  lines: string[];
  /** `#!/usr/bin/env python3`: the body is one script for that interpreter (its words), null for lines. */
  shebang: string[] | null;
  /** `[no-cd]`: runs where just was invoked; `[working-directory: 'x']`: there, from the justfile's folder. */
  noCd: boolean;
  workingDirectory: string | null;
  /** `[private]` / a name starting with `_`: not the default recipe. */
  private: boolean;
}

export interface Justfile {
  recipes: Map<string, JustRecipe>;
  /** Recipe names in file order (the first is the default recipe). */
  order: string[];
  aliases: Map<string, string>;
  /** Commands of backtick assignments (`` x := `git rev-parse HEAD` ``): just runs them when it starts. */
  backticks: string[];
  imports: string[];
  /** `mod web` / `mod web 'apps/web/justfile'`: name -> explicit path or null. */
  mods: Map<string, string | null>;
  /** `set working-directory := 'x'`. */
  workingDirectory: string | null;
}

/** The placeholder an interpolation offhost does not follow becomes: a variable nothing sets. */
export const UNKNOWN_INTERPOLATION = '${__offhost_just}';

const HEADER = /^(@?)([A-Za-z_][A-Za-z0-9_-]*)((?:\s+[+*$]?[A-Za-z_][A-Za-z0-9_-]*(?:=(?:'[^']*'|"(?:[^"\\]|\\.)*"|[^\s:]+))?)*)\s*:(?!=)(.*)$/;
const STRING = /^(?:'([^']*)'|"((?:[^"\\]|\\.)*)")$/;

function stripComment(s: string): string {
  // A `#` outside quotes starts a comment in justfile syntax (not in recipe bodies, which are shell).
  let q: string | null = null;
  for (let i = 0; i < s.length; i++) {
    const c = s[i]!;
    if (q) {
      if (c === q) q = null;
    } else if (c === "'" || c === '"' || c === '`') q = c;
    else if (c === '#') return s.slice(0, i);
  }
  return s;
}

/** `a (b "x") && c d` -> before [a, b], after [c, d]. */
function dependencies(text: string): { before: string[]; after: string[] } {
  const [pre, post = ''] = text.split('&&', 2) as [string, string?];
  const names = (t: string) => [...t.matchAll(/\(\s*([A-Za-z_][\w-]*(?:::[A-Za-z_][\w-]*)*)[^)]*\)|([A-Za-z_][\w-]*(?:::[A-Za-z_][\w-]*)*)/g)].map((m) => (m[1] ?? m[2])!);
  return { before: names(pre), after: names(post) };
}

/** `{{ x }}`: the value of a plain string variable, else the unknown placeholder. */
function interpolate(line: string, vars: Map<string, string>): string {
  // `{{{{` is a literal `{{`; any other `{{ … }}` is an expression.
  return line.replace(/\{\{\{\{|\{\{([\s\S]*?)\}\}/g, (_m, expr: string | undefined) => (expr === undefined ? '{{' : (vars.get(expr.trim()) ?? UNKNOWN_INTERPOLATION)));
}

export function readJustfile(text: string): Justfile {
  const out: Justfile = { recipes: new Map(), order: [], aliases: new Map(), backticks: [], imports: [], mods: new Map(), workingDirectory: null };
  const vars = new Map<string, string>();
  const lines = text.replace(/\r\n?/g, '\n').split('\n');
  let attrs: string[] = [];
  // Variables first: a recipe may use one defined below it.
  for (const raw of lines) {
    if (/^\s/.test(raw)) continue;
    const m = /^(?:export\s+)?([A-Za-z_][A-Za-z0-9_-]*)\s*:=\s*(.*)$/.exec(stripComment(raw).trim());
    if (!m) continue;
    const value = m[2]!.trim();
    const lit = STRING.exec(value);
    if (lit) vars.set(m[1]!, lit[1] ?? lit[2]!.replace(/\\(.)/g, '$1'));
    for (const b of value.matchAll(/```([\s\S]*?)```|`([^`]*)`/g)) out.backticks.push((b[1] ?? b[2]!).trim());
  }
  for (let i = 0; i < lines.length; i++) {
    const raw = lines[i]!;
    if (raw.trim() === '' || /^\s/.test(raw)) continue;
    const line = stripComment(raw).trim();
    if (line === '') continue;
    if (line.startsWith('[')) {
      attrs.push(...line.slice(1, line.lastIndexOf(']')).split(/,(?![^(]*\))/).map((a) => a.trim()));
      continue;
    }
    let m: RegExpExecArray | null;
    if ((m = /^alias\s+([A-Za-z_][\w-]*)\s*:=\s*([A-Za-z_][\w-]*(?:::[A-Za-z_][\w-]*)*)$/.exec(line))) {
      out.aliases.set(m[1]!, m[2]!);
    } else if ((m = /^set\s+working-directory\s*:=\s*(.*)$/.exec(line))) {
      const lit = STRING.exec(m[1]!.trim());
      out.workingDirectory = lit ? (lit[1] ?? lit[2]!) : UNKNOWN_INTERPOLATION;
    } else if ((m = /^import(\?)?\s+(.*)$/.exec(line))) {
      const lit = STRING.exec(m[2]!.trim());
      out.imports.push(lit ? (lit[1] ?? lit[2]!) : UNKNOWN_INTERPOLATION);
    } else if ((m = /^mod(\?)?\s+([A-Za-z_][\w-]*)(?:\s+(.*))?$/.exec(line))) {
      const lit = m[3] ? STRING.exec(m[3].trim()) : null;
      out.mods.set(m[2]!, m[3] ? (lit ? (lit[1] ?? lit[2]!) : UNKNOWN_INTERPOLATION) : null);
    } else if (/^(set|export|unexport)\b/.test(line) || /^[A-Za-z_][\w-]*\s*:=/.test(line)) {
      // settings and variables (read above)
    } else if ((m = HEADER.exec(line))) {
      const name = m[2]!;
      const params = [...m[3]!.matchAll(/[+*$]?([A-Za-z_][A-Za-z0-9_-]*)(?:=(?:'[^']*'|"(?:[^"\\]|\\.)*"|\S+))?/g)].map((p) => p[1]!);
      const body: string[] = [];
      let j = i + 1;
      for (; j < lines.length; j++) {
        const b = lines[j]!;
        if (b.trim() === '') {
          body.push('');
          continue;
        }
        if (!/^\s/.test(b)) break;
        body.push(b);
      }
      i = j - 1;
      while (body.length && body.at(-1) === '') body.pop();
      const indent = Math.min(...body.filter((b) => b !== '').map((b) => /^\s*/.exec(b)![0].length));
      const own = new Map(vars);
      for (const p of params) own.delete(p); // a parameter's value comes from the invocation
      const texts = body.map((b) => interpolate(b.slice(Number.isFinite(indent) ? indent : 0), own));
      const shebang = texts[0]?.startsWith('#!') ? texts[0].slice(2).trim().split(/\s+/) : null;
      const wd = attrs.find((a) => /^working-directory\s*[:(]/.test(a));
      const wdLit = wd ? STRING.exec(wd.replace(/^working-directory\s*[:(]\s*/, '').replace(/\)\s*$/, '').trim()) : null;
      const recipe: JustRecipe = {
        name,
        params,
        ...dependencies(m[4]!),
        lines: shebang ? texts : texts.filter((t) => t.trim() !== '' && !t.trimStart().startsWith('#')).map((t) => t.replace(/^\s*[@-]{1,2}/, '')),
        shebang,
        noCd: attrs.includes('no-cd'),
        workingDirectory: wd ? (wdLit ? (wdLit[1] ?? wdLit[2]!) : UNKNOWN_INTERPOLATION) : null,
        private: attrs.includes('private') || name.startsWith('_'),
      };
      if (!out.recipes.has(name)) out.order.push(name);
      out.recipes.set(name, recipe);
    }
    attrs = [];
  }
  return out;
}
