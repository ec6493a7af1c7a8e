// just, the command runner: `just e2e` runs the recipe's dependencies, its lines (each by a shell, in the
// justfile's folder unless the recipe says otherwise) and its subsequent dependencies; `just` alone runs
// the first recipe; `just web::e2e`, `just web e2e` a module's; `just apps/web/e2e` the justfile of that
// folder. The justfile is read from disk (src/shell/justfiles.ts) when the guard reads files; without the
// disk, or from a justfile the line writes, the recipes are unknown.
import { posix } from 'node:path';
import type { Field } from '../expand.js';
import { readJustfile, type JustRecipe, type Justfile } from '../justfiles.js';
import { CODE_INTERPRETERS, SHELL_INTERPRETERS, emitCode, lineMayWrite, nearest, searchFrom, unknownScript } from '../script-files.js';
import { resolveDir, withVia, type Call, type Walker } from '../walk-state.js';
import type { ProgramModule } from './types.js';

const VALUE_OPTS = new Set(['-f', '--justfile', '-d', '--working-directory', '--shell', '--shell-arg', '--dotenv-filename', '--dotenv-path', '-E', '--color', '--dump-format', '--list-heading', '--list-prefix', '--chooser', '--command-color', '--timestamp-format', '--alias-style', '--list-submodules', '--show', '-s', '--usage', '--completions', '--request']);
/** Options after which just runs no recipe: it lists, shows, formats, edits or prints. */
const NO_RUN = new Set(['-l', '--list', '--summary', '--show', '-s', '--dump', '--evaluate', '--variables', '--groups', '--fmt', '--edit', '-e', '--init', '--completions', '--help', '-h', '--version', '-V', '--man', '--changelog', '-n', '--dry-run', '--usage', '--json']);
const JUSTFILE_NAMES = ['justfile', 'Justfile', 'JUSTFILE', '.justfile'];

interface Loaded {
  file: string;
  dir: string;
  just: Justfile;
}

/** The justfile at `path`, with its imports' recipes merged in (the importer's win); null: not a text file. */
function load(path: string, call: Call, depth = 0): Loaded | 'unknown' | null {
  const { ctx } = call;
  if (lineMayWrite(path, ctx, false)) return 'unknown';
  const r = ctx.files!.read(path);
  if (r.kind === 'missing' || r.kind === 'directory') return null;
  if (r.kind !== 'text') return 'unknown';
  const just = readJustfile(r.text);
  const dir = posix.dirname(path);
  for (const imp of just.imports) {
    if (depth > 8 || imp.includes('${')) return 'unknown';
    const inner = load(posix.resolve(dir, imp.replace(/^~(?=\/)/, ctx.home ?? '~')), call, depth + 1);
    if (inner === 'unknown') return 'unknown';
    if (inner === null) continue; // `import?` of a missing file; a missing `import` stops just
    for (const name of inner.just.order) {
      if (just.recipes.has(name)) continue;
      just.recipes.set(name, inner.just.recipes.get(name)!);
      just.order.push(name);
    }
    for (const [a, t] of inner.just.aliases) if (!just.aliases.has(a)) just.aliases.set(a, t);
    just.backticks.push(...inner.just.backticks);
  }
  return { file: path, dir, just };
}

/** The nearest justfile at or above `dir` (just searches upwards; the usual spellings of the name). */
function find(dir: string, call: Call): Loaded | 'unknown' | null {
  return nearest(dir, JUSTFILE_NAMES, (path) => load(path, call));
}

/** A module's justfile: the path `mod` gives, else NAME.just, NAME/mod.just, NAME/justfile. */
function loadModule(parent: Loaded, name: string, call: Call): Loaded | 'unknown' | null {
  const given = parent.just.mods.get(name);
  if (given === undefined) return null;
  if (given !== null) return given.includes('${') ? 'unknown' : load(posix.resolve(parent.dir, given), call);
  for (const rel of [`${name}.just`, `${name}/mod.just`, `${name}/justfile`, `${name}/Justfile`, `${name}/.justfile`]) {
    const got = load(posix.join(parent.dir, rel), call);
    if (got !== null) return got;
  }
  return null;
}

function runRecipe(loaded: Loaded, name: string, invokedIn: string, call: Call, w: Walker, done: Set<string>, depth: number): void {
  const target = loaded.just.aliases.get(name) ?? name;
  const key = `${loaded.file}\u0000${target}`;
  if (done.has(key) || depth > 32) return;
  done.add(key);
  if (target.includes('::')) {
    const [mod, ...rest] = target.split('::');
    const inner = loadModule(loaded, mod!, call);
    if (inner === 'unknown') return unknownScript({ value: target, known: false }, `just ${target}`, call.env, invokedIn, call.st, call.ctx, call.span);
    if (inner) runRecipe(inner, rest.join('::'), invokedIn, call, w, done, depth + 1);
    return;
  }
  const recipe = loaded.just.recipes.get(target);
  if (!recipe) return;
  for (const d of recipe.before) runRecipe(loaded, d, invokedIn, call, w, done, depth + 1);
  runLines(loaded, recipe, invokedIn, call, w);
  for (const d of recipe.after) runRecipe(loaded, d, invokedIn, call, w, done, depth + 1);
}

function runLines(loaded: Loaded, recipe: JustRecipe, invokedIn: string, call: Call, w: Walker): void {
  const { ctx, env, st, span } = call;
  const base = loaded.just.workingDirectory ? resolveDir(loaded.dir, { value: loaded.just.workingDirectory, known: !loaded.just.workingDirectory.includes('${') }) : loaded.dir;
  const dir = recipe.noCd ? invokedIn : recipe.workingDirectory ? (base === null ? null : resolveDir(base, { value: recipe.workingDirectory, known: !recipe.workingDirectory.includes('${') })) : base;
  const label = `just ${recipe.name} (${posix.basename(loaded.file)})`;
  if (recipe.shebang) {
    const words = recipe.shebang[0]?.endsWith('/env') ? recipe.shebang.slice(1).filter((x) => !x.startsWith('-')) : recipe.shebang;
    const interp = posix.basename(words[0] ?? '');
    const body = recipe.lines.slice(1).join('\n');
    if (SHELL_INTERPRETERS.has(interp)) w.runScript({ value: body, known: true }, label, dir, env, st, ctx, span);
    else if (CODE_INTERPRETERS.test(interp)) emitCode(interp, body, label, env, dir, st, ctx, span);
    else unknownScript({ value: `${interp} script`, known: false }, label, env, dir, st, ctx, span);
    return;
  }
  for (const line of recipe.lines) w.runScript({ value: line, known: true }, label, dir, env, st, ctx, span);
}

function walk(call: Call, w: Walker): void {
  w.emitSelf(call);
  const { fields, ctx } = call;
  let file: Field | undefined;
  let workDir: Field | undefined;
  let i = 1;
  const positionals: Field[] = [];
  for (; i < fields.length; i++) {
    const f = fields[i]!;
    if (!f.known) {
      positionals.push(f);
      continue;
    }
    const v = f.value;
    if (v === '--') {
      positionals.push(...fields.slice(i + 1));
      break;
    }
    if (NO_RUN.has(v) || /^--(show|dump-format|completions)=/.test(v)) return;
    if (v === '--command' || v === '-c') {
      // `just --command make build`: the command, run with the justfile's variables exported.
      const rest = fields.slice(i + 1);
      if (rest.length) withVia(ctx, 'just --command', () => w.runFields(rest, call.env, call.cwd, call.st, ctx, call.span, call.stdin, call.wrapDepth + 1));
      return;
    }
    if (v === '--choose') return unknownScript({ value: 'just --choose', known: false }, 'just --choose', call.env, call.cwd, call.st, ctx, call.span);
    if (v === '--set') {
      i += 2;
      continue;
    }
    if (v === '-f' || v === '--justfile') file = fields[++i];
    else if (v.startsWith('--justfile=')) file = { value: v.slice(11), known: true };
    else if (v === '-d' || v === '--working-directory') workDir = fields[++i];
    else if (v.startsWith('--working-directory=')) workDir = { value: v.slice(20), known: true };
    else if (VALUE_OPTS.has(v)) i++;
    else if (!v.startsWith('-') || v === '-') positionals.push(f);
  }
  if (!ctx.files || call.cwd === null) return;
  const unknown = (why: string) => unknownScript({ value: positionals.map((p) => p.value).join(' '), known: false }, `just (${why})`, call.env, call.cwd, call.st, ctx, call.span);
  let start = call.cwd;
  // `just apps/web/e2e`: the justfile of that folder, and the recipe after the last slash.
  const first = positionals[0];
  if (!file && first?.known && first.value.includes('/')) {
    const cut = first.value.lastIndexOf('/');
    const at = resolveDir(start, { value: first.value.slice(0, cut) || '/', known: true });
    if (at === null) return unknown('a folder offhost cannot resolve');
    start = at;
    positionals[0] = { value: first.value.slice(cut + 1), known: true };
    if (positionals[0].value === '') positionals.shift();
  }
  let loaded: Loaded | 'unknown' | null;
  if (file) {
    const path = file.known ? resolveDir(call.cwd, file) : null;
    loaded = path === null ? 'unknown' : load(path, call);
  } else loaded = find(searchFrom(start, ctx), call);
  if (loaded === 'unknown') return unknown('a justfile offhost cannot read');
  if (loaded === null) return; // no justfile: just stops
  const invokedIn = workDir ? resolveDir(call.cwd, workDir) : call.cwd;
  if (workDir) loaded = { ...loaded, dir: invokedIn ?? loaded.dir };
  if (invokedIn === null) return unknown('a working directory offhost cannot resolve');
  // Backtick assignments run when just starts.
  for (const b of loaded.just.backticks) w.runScript({ value: b, known: true }, `just (${posix.basename(loaded.file)}: backtick)`, loaded.dir, call.env, call.st, ctx, call.span);
  const done = new Set<string>();
  const names = positionals.filter((p) => p.known).map((p) => p.value);
  if (positionals.some((p) => !p.known)) return unknown('a recipe named at run time');
  let ran = false;
  for (let k = 0; k < names.length; k++) {
    const n = names[k]!;
    if (loaded.just.mods.has(n) && names[k + 1] !== undefined) {
      // `just web e2e`: the module's recipe (the rest are its recipes and arguments).
      const inner = loadModule(loaded, n, call);
      if (inner === 'unknown') return unknown(`module ${n}`);
      if (inner) for (const r of names.slice(k + 1)) runRecipe(inner, r, invokedIn, call, w, done, 0);
      return;
    }
    if (loaded.just.recipes.has(n) || loaded.just.aliases.has(n) || n.includes('::')) {
      runRecipe(loaded, n, invokedIn, call, w, done, 0);
      ran = true;
    }
    // anything else is an argument of the recipe before it
  }
  if (!ran && names.length === 0) {
    const def = loaded.just.order.find((r) => !loaded.just.recipes.get(r)!.private) ?? loaded.just.order[0];
    if (def) runRecipe(loaded, def, invokedIn, call, w, done, 0);
  }
}

export const just: ProgramModule = {
  family: 'just',
  names: ['just'],
  walk,
  examples: {
    // The recipes come from a justfile on disk: test/policy/script-files.test.ts. Here, what needs none.
    match: [{ line: 'just --command make build', runs: 'make build' }],
    not_match: [{ line: 'just --list', runs: 'make build' }],
  },
};
