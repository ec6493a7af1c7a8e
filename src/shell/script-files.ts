// Scripts a line runs, read through the walker's file access (the guard gives it the disk): script files
// given to a shell or sourced, files run by path (by their `#!` line), code files given to an interpreter,
// and package.json scripts. Part of the walk in commands.ts, kept apart for size: what is read is walked
// with the same machinery as `bash -c` strings.
import { PYTHON_NAMES, READ_CODE_NAMES } from './inline/names.js';
import { posix } from 'node:path';
import type { Span } from './ast.js';
import type { Field } from './expand.js';
import type { Unwrapped } from './unwrapped.js';
import type { FileAccess, FileRead } from './file-access.js';
export type { FileAccess, FileRead } from './file-access.js';
import { emit, NO_STDIN, resolveDir, UnreadableScriptError, withVia, type Ctx, type State } from './walk-state.js';
import { positionAt } from '../errors.js';
import { quote } from '../routes/quote.js';

/** Where a tool's upward search for its file (package.json, justfile, Taskfile…) starts from `dir`. */
export function searchFrom(dir: string, ctx: Ctx): string {
  return ctx.files?.physical?.(dir) ?? dir;
}

/** A script whose text cannot be known here: an unknown program, for the rules to judge. */
export function unknownScript(file: Field, label: string, env: Record<string, string>, cwd: string | null, st: State, ctx: Ctx, span: Span): void {
  withVia(ctx, label, () => emit(ctx, [{ value: file.value, known: false }], env, cwd, span, st));
}

/**
 * Whether the line may change the file before running it (`echo make build > run.sh; bash run.sh`): its
 * name is a redirection target or an argument of a command that writes files, or something writes to a
 * name made at run time (`> "$f"`). Then what is on disk now is not what will run.
 */
export function lineMayWrite(path: string, ctx: Ctx, dynamicToo = true): boolean {
  if (writtenByName(path, ctx)) return true;
  if (!dynamicToo) return false;
  ctx.writesUnseen ??= writesUnseenIn(ctx.text);
  return ctx.writesUnseen;
}

/**
 * What the line wrote to `path` before now (`cat > run.sh <<'EOF' … EOF`), when that write is the only
 * one the line makes to that name: the text it wrote (unknown when it was not static); undefined when the
 * line did not write it in a way offhost followed (then lineMayWrite decides).
 */
export function writtenText(path: string, ctx: Ctx): Field | undefined {
  const w = ctx.written?.get(path) ?? underCopiedDir(path, ctx);
  if (w === undefined) return undefined;
  ctx.writesUnseen ??= writesUnseenIn(ctx.text);
  const followed = ctx.writeCounts?.get(path) ?? 0;
  if (ctx.writesUnseen || writeSites(path, ctx, followed + 1) !== followed) return { value: '', known: false };
  return w;
}

/**
 * A file under a directory the line copied whole (`cp -r tools/quiet q && bash q/build`): what the same
 * name under the source holds (what the line wrote there, else the disk, else unknown); undefined when
 * the path is under no such copy. The latest copy onto a place wins.
 */
function underCopiedDir(path: string, ctx: Ctx): Field | undefined {
  const dirs = ctx.copiedDirs;
  if (!dirs) return undefined;
  for (let i = dirs.length - 1; i >= 0; i--) {
    const { target, source } = dirs[i]!;
    if (!path.startsWith(`${target}/`)) continue;
    const from = `${source}/${path.slice(target.length + 1)}`;
    const before = ctx.written?.get(from) ?? underCopiedDir(from, { ...ctx, copiedDirs: dirs.slice(0, i) });
    if (before) return before;
    const r = ctx.files?.read(from);
    return r?.kind === 'text' ? { value: r.text, known: true } : { value: '', known: false };
  }
  return undefined;
}

/** Whether `text` may write to a name made at run time (`> "$f"`, `cp x "$d"`, `git … $X`). */
export function writesUnseenIn(text: string): boolean {
  return /(>|\b(tee|cp|mv|install|ln|dd|sed|perl|curl|wget|git|tar|unzip|patch|rsync|truncate)\b)[^;&|\n]*[$`]/.test(text);
}

const NAME_CHAR = /[A-Za-z0-9_.+-]/;
/** Commands that write files named in their arguments (git only with the subcommands that change files). */
const WRITERS = /(^|[\s(])(tee|cp|mv|ln|install|sed|perl|patch|curl|wget|dd|rsync|tar|unzip|truncate|touch|git\s+(?:\S+\s+)*?(?:checkout|restore|apply|am|cherry-pick|merge|pull|reset|stash|switch|rebase))\s/;
const WRITERS_ANY_CASE = new RegExp(WRITERS.source, 'i');

/** Whether the file's name (as a whole name) appears in the line where something writes it. */
function writtenByName(path: string, ctx: Ctx): boolean {
  return writeSites(path, ctx, 1) > 0;
}

/** How many places in the line write the file's name (counting stops at `max`). */
function writeSites(path: string, ctx: Ctx, max = 2): number {
  // Most lines write nothing: no redirection and no writing command (any case: a Mac's volume may fold it).
  ctx.writeSyntax ??= ctx.text.includes('>') || WRITERS_ANY_CASE.test(ctx.text);
  if (!ctx.writeSyntax) return 0;
  let sites = 0;
  const slash = path.lastIndexOf('/');
  const key = ctx.files?.nameKey?.(slash > 0 ? path.slice(0, slash) : '/') ?? null;
  // Keyed, the text keeps its positions (a name key keeps each character's length).
  const text = key ? key(ctx.text) : ctx.text;
  const base = key ? key(path.slice(slash + 1)) : path.slice(slash + 1);
  for (let at = text.indexOf(base); at >= 0; at = text.indexOf(base, at + 1)) {
    const before = text[at - 1];
    const after = text[at + base.length];
    if ((before !== undefined && NAME_CHAR.test(before)) || (after !== undefined && (after === '/' || NAME_CHAR.test(after)))) continue;
    // Back over the rest of the word (`./dir/`, a quote), then the command it belongs to.
    let w = at;
    while (w > 0 && !/[\s;&|<>()]/.test(text[w - 1]!)) w--;
    const lead = text.slice(0, w).replace(/\s+$/, '');
    const segment = lead.slice(Math.max(lead.lastIndexOf(';'), lead.lastIndexOf('&'), lead.lastIndexOf('|'), lead.lastIndexOf('\n')) + 1);
    if ((/>[>|]?$/.test(lead) && !/<>$/.test(lead)) || WRITERS.test(` ${segment} `)) if (++sites >= max) return sites;
  }
  return sites;
}

/**
 * A script a shell would run but offhost cannot read (too large, a FIFO, no permission, NUL bytes in it):
 * refused, with the file and the reason, since whatever it runs would otherwise pass unjudged.
 */
function unreadable(path: string, label: string, why: string, ctx: Ctx, span: Span): never {
  throw new UnreadableScriptError(`offhost cannot judge \`${label}\`: ${path} cannot be read (${why}). Run what it runs directly, or through \`offhost run\``, positionAt(ctx.text, span.start));
}

/** Reads a file the line runs; null when there is nothing to judge (or it was reported as unknown). */
function readRunFile(path: string | null, file: Field, label: string, env: Record<string, string>, cwd: string | null, st: State, ctx: Ctx, span: Span): string | null {
  if (path === null) {
    unknownScript(file, label, env, cwd, st, ctx, span);
    return null;
  }
  if (ctx.reading.includes(path)) return null; // a script that runs itself: its commands are counted already
  const written = writtenText(path, ctx);
  if (written) {
    // What the line wrote there is what runs (`cat > run.sh <<'EOF' … EOF; bash run.sh`).
    if (written.known) return written.value;
    unknownScript(file, label, env, cwd, st, ctx, span);
    return null;
  }
  if (lineMayWrite(path, ctx)) {
    // What is on disk now may not be what will run: that is unknown. But it is what runs when the line
    // leaves the file as it is (a name that only looks written: `rsync -e ./b.sh a host:`), so it is
    // judged too, and a heavy script is not let through because the line might have changed it.
    unknownScript(file, label, env, cwd, st, ctx, span);
    const now = ctx.files!.read(path);
    return now.kind === 'text' ? now.text : null;
  }
  const r = ctx.files!.read(path);
  // Nothing runs from a missing file or a directory, and a binary is judged by its name.
  if (r.kind === 'missing' || r.kind === 'directory' || r.kind === 'binary') return null;
  if (r.kind === 'unreadable') unreadable(path, label, r.why, ctx, span);
  return r.text;
}

/**
 * The text of a file a program reads its commands from (`psql -f x.sql`, sqlite3's `.read x.sql`), as a
 * script run by its path is read: what the line wrote there, or unknown when the line may change it; null
 * when the guard does not read files or nothing can be read.
 */
export function readCommandFile(file: Field, label: string, env: Record<string, string>, cwd: string | null, st: State, ctx: Ctx, span: Span): string | null {
  if (!ctx.files) return null;
  return readRunFile(file.known ? resolveDir(cwd, file) : null, file, label, env, cwd, st, ctx, span);
}

/**
 * A file's text as standard input (`bash < run.sh`, `cat run.sh | sh`): known only when the guard reads
 * files and the line does not write it; a missing file gives nothing (the redirection fails).
 */
export function stdinFromFile(file: Field, reader: string, cwd: string | null, ctx: Ctx, span: Span): Field {
  const unknown = { value: '', known: false };
  if (!ctx.files || !file.known) return unknown;
  const path = resolveDir(cwd, file);
  if (path === null) return unknown;
  const written = writtenText(path, ctx);
  if (written) return written;
  if (lineMayWrite(path, ctx)) return unknown;
  const r = ctx.files.read(path);
  if (r.kind === 'text') return { value: r.text, known: true };
  // Only a shell reading it as a script asks for this text: a file it cannot read is refused as above.
  if (r.kind === 'unreadable') unreadable(path, `${reader} ${file.value}`, r.why, ctx, span);
  return r.kind === 'missing' || r.kind === 'directory' ? { value: '', known: true } : unknown;
}

/** `bash run.sh a b`, `. ./env.sh`: the script file's commands, run in a new shell or in this one. */
export function scriptFile(file: Field, args: Field[], via: string, sourced: boolean, env: Record<string, string>, cwd: string | null, st: State, ctx: Ctx, span: Span): void {
  if (!ctx.files) return;
  const label = `${via} ${file.value}`;
  const text = readRunFile(file.known ? resolveDir(cwd, file) : null, file, label, env, cwd, st, ctx, span);
  if (text === null) return;
  ctx.w.runScript({ value: text, known: true }, label, cwd, env, st, ctx, span, label, { shared: sourced, positional: sourced ? undefined : args, file: resolveDir(cwd, file)! });
}

/** Interpreters whose script files are judged like their inline code (`python3 -c`). */
export const CODE_INTERPRETERS = /^((python|pypy|ipython)[0-9.]*|node|nodejs|perl|ruby|php|deno|bun)$/;
export const SHELL_INTERPRETERS = new Set(['sh', 'bash', 'zsh', 'dash', 'ksh', 'mksh', 'ash', 'yash', 'posh', 'rbash']);

/** `#!/usr/bin/env -S bash -e` → ['bash', '-e']; null without a `#!` line. */
function shebang(text: string): string[] | null {
  if (!text.startsWith('#!')) return null;
  const end = text.indexOf('\n');
  const words = text.slice(2, end < 0 ? undefined : end).trim().split(/[ \t]+/).filter(Boolean);
  if (words.length === 0) return null;
  words[0] = words[0]!.slice(words[0]!.lastIndexOf('/') + 1);
  if (words[0] === 'env') {
    words.shift();
    while (words[0]?.startsWith('-')) words.shift(); // env -S, env -i
    while (words[0] && /^[A-Za-z_][A-Za-z0-9_]*=/.test(words[0])) words.shift();
  }
  return words.length ? words : null;
}

/** `./build.sh`, `scripts/e2e`, `/opt/x/run`: a file run by path; its `#!` line says what reads it. */
export function executableFile(fields: Field[], env: Record<string, string>, cwd: string | null, st: State, ctx: Ctx, span: Span): void {
  const prog = fields[0]!;
  const label = prog.value;
  const path = resolveDir(cwd, prog);
  const text = readRunFile(path, prog, label, env, cwd, st, ctx, span);
  if (text === null) return;
  const interp = shebang(text);
  const name = interp?.[0];
  if (!interp || SHELL_INTERPRETERS.has(name!)) {
    // No `#!`: the shell runs it as a shell script (what execve's ENOEXEC leads to).
    ctx.w.runScript({ value: text, known: true }, label, cwd, env, st, ctx, span, label, { positional: fields.slice(1), file: path! });
  } else if (name === 'fish') {
    unknownScript(prog, label, env, cwd, st, ctx, span);
  } else if (CODE_INTERPRETERS.test(name!)) {
    emitCode(name!, text, label, env, cwd, st, ctx, span);
  } else {
    // `#!/usr/bin/make -f`: the interpreter runs with the file as its argument.
    const argv = [...interp.map((w) => ({ value: w, known: true })), { value: path!, known: true }, ...fields.slice(1)];
    withVia(ctx, label, () => ctx.w.runFields(argv, env, cwd, st, ctx, span, NO_STDIN, 1));
  }
}

/**
 * A code file, as the inline code it amounts to (`python3 -c '<the file>'`, `node -e …`), on one line: the inline-code
 * rule looks for a spawn call and a heavy command in one argument, and calls span lines.
 */
export function emitCode(interpreter: string, text: string, label: string, env: Record<string, string>, cwd: string | null, st: State, ctx: Ctx, span: Span): void {
  const flag = PYTHON_NAMES.test(interpreter) ? '-c' : '-e';
  if (READ_CODE_NAMES.test(interpreter)) {
    // Through the interpreters family, which reads what the code spawns (src/shell/inline/).
    withVia(ctx, label, () => ctx.w.runFields([{ value: interpreter, known: true }, { value: flag, known: true }, { value: text, known: true }], env, cwd, st, ctx, span, NO_STDIN, 1));
    return;
  }
  const code = text.replace(/\s+/g, ' ');
  withVia(ctx, label, () => emit(ctx, [{ value: interpreter, known: true }, { value: flag, known: true }, { value: code, known: true }], env, cwd, span, st));
}


/** Options of code interpreters that take the next word as their value. */
const INTERPRETER_VALUE_OPTS = new Set(['-W', '-X', '-Q', '-r', '--require', '--import', '--loader', '--experimental-loader', '-C', '--conditions', '--input-type', '-I']);
/** Options after which the interpreter runs no file (inline code, a module, stdin). */
const INTERPRETER_NO_FILE = new Set(['-c', '-e', '-E', '--eval', '-p', '--print', '-m', '-', '--test', '--run', '-v', '--version', '-h', '--help']);

/** `python3 build.py`, `node scripts/e2e.js`: the file's code, judged like inline code. */
export function interpreterFile(name: string, fields: Field[], env: Record<string, string>, cwd: string | null, st: State, ctx: Ctx, span: Span): void {
  let i = 1;
  while (i < fields.length) {
    const f = fields[i]!;
    if (!f.known) return; // an option or file from a variable: the inline-code rule sees the command as it is
    if (INTERPRETER_NO_FILE.has(f.value)) return;
    if (!f.value.startsWith('-') || f.value === '--') break;
    i += INTERPRETER_VALUE_OPTS.has(f.value) ? 2 : 1;
  }
  if (fields[i]?.known && fields[i]!.value === '--') i++;
  const file = fields[i];
  if (!file) return;
  const label = `${name} ${file.value}`;
  const text = readRunFile(file.known ? resolveDir(cwd, file) : null, file, label, env, cwd, st, ctx, span);
  if (text === null) return;
  emitCode(name, text, label, env, cwd, st, ctx, span);
}

/**
 * A tool's upward search: `take` is asked for each of `names` in `dir`, then in each folder above it,
 * until it returns something (null: not here, go on). npm, deno, just, task and nx look for their files so.
 */
export function nearest<T>(dir: string, names: readonly string[], take: (path: string, dir: string, name: string) => T | null): T | null {
  for (let d = dir; ; d = posix.dirname(d)) {
    for (const n of names) {
      const got = take(d === '/' ? `/${n}` : `${d}/${n}`, d, n);
      if (got !== null) return got;
    }
    if (d === '/') return null;
  }
}

/** The package.json that npm, pnpm, yarn and bun use from `dir`: the nearest one up the tree. */
function nearestPackage(dir: string, ctx: Ctx): { dir: string; read: FileRead } | null {
  return nearest(dir, ['package.json'], (path, d) => {
    const read = ctx.files!.read(path);
    // A package.json the line writes counts even where there is none yet.
    return read.kind !== 'missing' || ctx.written?.has(path) || lineMayWrite(path, ctx, false) ? { dir: d, read } : null;
  });
}

/** A package.json's name and scripts; null when it cannot be parsed (the runner cannot read it either). */
function packageJson(text: string): { name: unknown; scripts: Record<string, unknown> } | null {
  try {
    const j = JSON.parse(text) as { name?: unknown; scripts?: unknown };
    const scripts = typeof j.scripts === 'object' && j.scripts !== null ? (j.scripts as Record<string, unknown>) : {};
    return { name: j.name, scripts };
  } catch {
    return null;
  }
}

/** Runs the script `name` of a package (pre, main with the arguments, post) in its directory. */
function runPackageScripts(u: Extract<Unwrapped, { kind: 'package-script' }>, dir: string, scripts: Record<string, unknown>, label: string, env: Record<string, string>, st: State, ctx: Ctx, span: Span): void {
  const name = u.script.value;
  const args = u.args.length ? ` ${u.args.map((a) => quote(a.value)).join(' ')}` : '';
  for (const [key, text] of [[`pre${name}`, scripts[`pre${name}`]], [name, `${scripts[name] as string}${args}`], [`post${name}`, scripts[`post${name}`]]] as const) {
    if (typeof text !== 'string') continue;
    const known = key !== name || u.args.every((a) => a.known);
    const at = `${label} (package.json "${key}")`;
    // `--script-shell X`: X runs the script (`X -c SCRIPT`), judged as the command it is (a shell reads the
    // script as ever; a script file by what it holds).
    if (u.shell) withVia(ctx, at, () => ctx.w.runFields([u.shell!, { value: '-c', known: true }, { value: text, known }], env, dir, st, ctx, span, NO_STDIN, 1));
    else ctx.w.runScript({ value: text, known }, at, dir, env, st, ctx, span);
  }
}

/** `packages:` globs of a pnpm-workspace.yaml (its list items; anything fancier is not YAML offhost reads here). */
function pnpmWorkspaceGlobs(text: string): string[] {
  const out: string[] = [];
  let inPackages = false;
  for (const line of text.split('\n')) {
    if (/^packages:\s*$/.test(line)) inPackages = true;
    else if (/^\S/.test(line)) inPackages = false;
    else if (inPackages) {
      const m = /^\s+-\s*['"]?([^'"#]+?)['"]?\s*(#.*)?$/.exec(line);
      if (m) out.push(m[1]!);
    }
  }
  return out;
}

const WORKSPACE_LISTINGS = 500;

/** Directories matching workspace globs (`apps/*`, `packages/**`, `tools/cli`) under `root`; null if they cannot be listed. */
export function expandWorkspaceGlobs(root: string, globs: string[], ctx: Ctx): string[] | null {
  const files = ctx.files!;
  const out = new Set<string>();
  let listings = 0; // a bound on directory listings (a hook must answer fast): past it, unknown
  const walk = (dir: string, segs: string[], depth: number): boolean => {
    if (segs.length === 0) {
      out.add(dir);
      return true;
    }
    const [seg, ...rest] = segs as [string, ...string[]];
    if (!/[*?[\]{}]/.test(seg)) return walk(`${dir}/${seg}`, rest, depth);
    if (!files.list || ++listings > WORKSPACE_LISTINGS) return false;
    const names = files.list(dir);
    if (names === null) return true; // no such directory: nothing matches there
    if (seg === '**') {
      if (!walk(dir, rest, depth)) return false;
      if (depth >= 4) return true;
      for (const n of names) if (!n.startsWith('.') && n !== 'node_modules' && !walk(`${dir}/${n}`, segs, depth + 1)) return false;
      return true;
    }
    if (/[[\]{}]/.test(seg)) return false;
    const re = new RegExp(`^${seg.replace(/[.+^$()|\\]/g, '\\$&').replace(/\*/g, '[^/]*').replace(/\?/g, '[^/]')}$`);
    for (const n of names) if (re.test(n) && n !== 'node_modules' && !walk(`${dir}/${n}`, rest, depth)) return false;
    return true;
  };
  for (const g of globs) {
    if (g.startsWith('!')) continue; // exclusions only narrow the set: keeping them in is fail-closed
    const segs = g.replace(/^\.\//, '').replace(/\/+$/, '').split('/').filter(Boolean);
    if (!walk(root, segs, 0)) return null;
  }
  return [...out];
}

/** The workspace root at or above `start` and its package directories; null: none; 'unknown': cannot tell. */
function workspaceOf(start: string, ctx: Ctx): { root: string; dirs: string[] } | 'unknown' | null {
  for (let d = start; ; d = posix.dirname(d)) {
    const base = d === '/' ? '' : d;
    let globs: string[] | null = null;
    const pnpm = ctx.files!.read(`${base}/pnpm-workspace.yaml`);
    if (pnpm.kind === 'text') globs = pnpmWorkspaceGlobs(pnpm.text);
    else {
      const pkg = ctx.files!.read(`${base}/package.json`);
      if (pkg.kind === 'text') {
        try {
          const w = (JSON.parse(pkg.text) as { workspaces?: unknown }).workspaces;
          const list = Array.isArray(w) ? w : (w as { packages?: unknown } | undefined)?.packages;
          if (Array.isArray(list)) globs = list.filter((x): x is string => typeof x === 'string');
        } catch {
          /* not this one */
        }
      }
    }
    if (globs) {
      const dirs = expandWorkspaceGlobs(d, globs, ctx);
      return dirs === null ? 'unknown' : { root: d, dirs };
    }
    if (d === '/') return null;
  }
}

/** A selector that is a plain package name or path (not a pnpm filter pattern like `web...` or `./apps/*`). */
const PLAIN_SELECTOR = /^(\.{0,2}\/)?(@[A-Za-z0-9._-]+\/)?[A-Za-z0-9._/-]+$/;

/** Workspace packages: the script in each selected package that has it. */
function workspaceScripts(u: Extract<Unwrapped, { kind: 'package-script' }>, start: string, env: Record<string, string>, cwd: string | null, st: State, ctx: Ctx, span: Span): void {
  const ws = workspaceOf(searchFrom(start, ctx), ctx);
  if (ws === null || ws === 'unknown') {
    unknownScript(u.script, u.via, env, cwd, st, ctx, span);
    return;
  }
  const sel = u.workspaces!;
  // Names that are patterns (or unknown) select all packages: fail closed.
  const all = sel.all || sel.names.some((n) => !n.known || !PLAIN_SELECTOR.test(n.value) || n.value.includes('..'));
  for (const dir of ws.dirs) {
    const read = ctx.files!.read(`${dir}/package.json`);
    if (read.kind !== 'text') continue;
    const pkg = packageJson(read.text);
    if (!pkg || typeof pkg.scripts[u.script.value] !== 'string') continue;
    const rel = dir.slice(ws.root.length + 1);
    const picked = all || sel.names.some((n) => n.value === pkg.name || n.value.replace(/^\.\//, '').replace(/\/+$/, '') === rel || resolveDir(start, n) === dir);
    if (picked) runPackageScripts(u, dir, pkg.scripts, `${u.via} [${rel}]`, env, st, ctx, span);
  }
}

/**
 * `npm run e2e` and friends: the package.json script (with its pre/post scripts, the arguments appended),
 * run by a shell in the package's directory; across workspaces, in each selected package that has it. False
 * when the package has no such script (then the runner's fallback applies: yarn, pnpm and bun run a binary
 * of that name).
 */
export function packageScript(u: Extract<Unwrapped, { kind: 'package-script' }>, env: Record<string, string>, cwd: string | null, st: State, ctx: Ctx, span: Span): boolean {
  if (!ctx.files) return false;
  const start = u.dir ? resolveDir(cwd, u.dir) : cwd;
  if (!u.script.known || start === null) {
    unknownScript(u.script, u.via, env, cwd, st, ctx, span);
    return true;
  }
  if (u.workspaces) {
    workspaceScripts(u, start, env, cwd, st, ctx, span);
    return true;
  }
  const found = nearestPackage(searchFrom(start, ctx), ctx);
  if (!found) return false;
  const pkgPath = `${found.dir === '/' ? '' : found.dir}/package.json`;
  const written = writtenText(pkgPath, ctx);
  if (written?.known) found.read = { kind: 'text', text: written.value };
  else if (written || lineMayWrite(pkgPath, ctx)) {
    // `jq … package.json > p.tmp && mv p.tmp package.json && npm run lint`: the script that runs is not the one on disk.
    unknownScript(u.script, `${u.via} (${pkgPath}, written by the line)`, env, cwd, st, ctx, span);
    return true;
  }
  if (found.read.kind !== 'text') {
    unknownScript(u.script, `${u.via} (${found.dir}/package.json)`, env, cwd, st, ctx, span);
    return true;
  }
  const pkg = packageJson(found.read.text);
  if (!pkg) return true; // the runner cannot read it either: nothing runs
  if (typeof pkg.scripts[u.script.value] !== 'string') return false;
  runPackageScripts(u, found.dir, pkg.scripts, u.via, env, st, ctx, span);
  return true;
}

/** deno.json(c) text as JSON: comments and trailing commas (outside strings) taken out. */
export function jsoncToJson(text: string): string {
  const pass = (src: string, other: (i: number, emit: (s: string) => void) => number): string => {
    let out = '';
    const put = (s: string) => void (out += s);
    for (let i = 0; i < src.length; i++) {
      if (src[i] === '"') {
        const start = i;
        for (i++; i < src.length && src[i] !== '"'; i++) if (src[i] === '\\') i++;
        out += src.slice(start, i + 1);
      } else i = other(i, put);
    }
    return out;
  };
  const noComments = pass(text, (i, put) => {
    if (text[i] === '/' && text[i + 1] === '/') {
      while (i < text.length && text[i] !== '\n') i++;
      put('\n');
      return i;
    }
    if (text[i] === '/' && text[i + 1] === '*') {
      const end = text.indexOf('*/', i + 2);
      put(' ');
      return end < 0 ? text.length : end + 1;
    }
    put(text[i]!);
    return i;
  });
  return pass(noComments, (i, put) => {
    if (noComments[i] === ',') {
      let j = i + 1;
      while (j < noComments.length && /\s/.test(noComments[j]!)) j++;
      if (noComments[j] === '}' || noComments[j] === ']') return i;
    }
    put(noComments[i]!);
    return i;
  });
}

type DenoTasks = Record<string, unknown>;

/** The `tasks` of a deno.json(c); null when it cannot be parsed (deno cannot read it either). */
function denoTasks(text: string): DenoTasks | null {
  try {
    const j = JSON.parse(jsoncToJson(text)) as { tasks?: unknown };
    return typeof j.tasks === 'object' && j.tasks !== null ? (j.tasks as DenoTasks) : {};
  } catch {
    return null;
  }
}

/** The deno.json or deno.jsonc that `deno task` uses from `dir`: the nearest one up the tree. */
function nearestDenoConfig(dir: string, ctx: Ctx): { dir: string; file: string; read: FileRead } | null {
  return nearest(dir, ['deno.json', 'deno.jsonc'], (path, d, file) => {
    const read = ctx.files!.read(path);
    return read.kind !== 'missing' ? { dir: d, file, read } : null;
  });
}

export interface DenoTaskCall {
  via: string;
  task: Field;
  args: Field[];
  /** `deno task --cwd DIR`. */
  dir?: Field;
}

/**
 * `deno task e2e a b`: the task of the nearest deno.json(c), its `dependencies` first (each once), then
 * its command with the arguments, run by a shell in that file's directory; a name the file does not have
 * (or no file) is a package.json script, as deno runs it.
 */
export function denoTask(u: DenoTaskCall, env: Record<string, string>, cwd: string | null, st: State, ctx: Ctx, span: Span): void {
  if (!ctx.files) return;
  const start = u.dir ? resolveDir(cwd, u.dir) : cwd;
  if (!u.task.known || start === null) {
    unknownScript(u.task, u.via, env, cwd, st, ctx, span);
    return;
  }
  const found = nearestDenoConfig(searchFrom(start, ctx), ctx);
  if (found) {
    if (found.read.kind !== 'text') {
      unknownScript(u.task, `${u.via} (${found.dir}/${found.file})`, env, cwd, st, ctx, span);
      return;
    }
    const tasks = denoTasks(found.read.text);
    if (tasks === null) return; // deno cannot read it either: nothing runs
    if (Object.hasOwn(tasks, u.task.value)) {
      const done = new Set<string>();
      const run = (name: string, args: Field[]): void => {
        if (done.has(name)) return;
        done.add(name);
        const t = tasks[name];
        const command = typeof t === 'string' ? t : typeof t === 'object' && t !== null ? (t as { command?: unknown }).command : undefined;
        const deps = typeof t === 'object' && t !== null ? (t as { dependencies?: unknown }).dependencies : undefined;
        if (Array.isArray(deps)) for (const d of deps) if (typeof d === 'string' && Object.hasOwn(tasks, d)) run(d, []);
        if (typeof command !== 'string') return;
        const text = args.length ? `${command} ${args.map((a) => quote(a.value)).join(' ')}` : command;
        ctx.w.runScript({ value: text, known: args.every((a) => a.known) }, `${u.via} (${found.file} "${name}")`, found.dir, env, st, ctx, span);
      };
      run(u.task.value, u.args);
      return;
    }
  }
  packageScript({ kind: 'package-script', via: u.via, script: u.task, args: u.args, ...(u.dir ? { dir: u.dir } : {}), fallback: { kind: 'none' } }, env, cwd, st, ctx, span);
}
