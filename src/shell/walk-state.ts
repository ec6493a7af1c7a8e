// What the walker carries while it walks a line: the shell's state (cwd, variables, directory stack,
// aliases...), the walk's context (output, limits, file access) and the small pure helpers every part of
// the walk uses. Program modules (programs/*) and script-files.ts reach the walker only through
// `ctx.w` (the Walker interface below), so none of them imports commands.ts: no import cycle.
import { posix } from 'node:path';
import type { Command, Span } from './ast.js';
import type { Field, Scope, VarValue } from './expand.js';
import { ParseError, positionAt } from '../errors.js';
import type { SimpleCommand } from '../types.js';
import type { FileAccess } from './file-access.js';
import type { Unwrapped } from './unwrapped.js';
import type { Grammar } from './programs/grammar.js';
import { laptopPath, type ContainerView } from './container-view.js';

export interface State extends Scope {
  cwd: string | null;
  /**
   * Other directories the shell may be in: a `cd` that can fail leaves bash where it was (`cd /x; make`),
   * so after it the shell is in `cwd` or in one of these. Empty almost always.
   */
  altCwds: (string | null)[];
  oldpwd: string | null;
  dirStack: (string | null)[];
  /** Variables exported in this shell: they reach the environment of every later command. */
  exported: Set<string> | null;
  /** `alias name=value` definitions (expanded whether or not expand_aliases is on: fail closed). */
  aliases: Map<string, string> | null;
  /** `shopt -s expand_aliases` was seen (bash -c does not expand aliases otherwise). */
  expandAliases: boolean;
  /** `hash -p /usr/bin/make b`: the name runs that file. */
  hashed: Map<string, Field> | null;
  /** `set -e` is on: a failing command (a `cd` that fails) ends the shell. */
  errexit: boolean;
  /** `git config alias.b '!make build'` and friends set earlier in the line: key (lowercase) -> value. */
  gitConfig: Map<string, Field> | null;
  /**
   * Functions defined earlier in the line: a definition runs nothing, a call runs the body. Child shells
   * get them too (as `export -f` would give them: fail closed).
   */
  functions: Map<string, Command> | null;
}

/** What the walker offers the parts it calls (program modules, script files). */
export interface Walker {
  /** Walks an argv as a command run here (wrappers looked through, modules applied). */
  runFields(fields: Field[], env: Record<string, string>, cwd: string | null, st: State, ctx: Ctx, span: Span, stdin: Stdin, wrapDepth: number): void;
  /** Parses a string a shell (or eval) runs and walks it. */
  runScript(text: Field, via: string, cwd: string | null, env: Record<string, string>, st: State, ctx: Ctx, span: Span, label?: string, opts?: ScriptOptions): void;
  /** Walks what a program module says a call runs. */
  apply(u: Unwrapped, call: Call, emitSelf?: boolean): void;
  /** Emits the call itself (with the program's grammar: help/version/list calls run nothing). */
  emitSelf(call: Call, cwd?: string | null, fields?: Field[]): void;
  /** The static text a command writes to standard output (`echo make build | bash`), or null. */
  outputOf(fields: Field[], st: State, ctx: Ctx, span: Span): Field | null;
}

export interface ScriptOptions {
  /** Run in this shell (eval, trap, source) rather than a new one. */
  shared?: boolean;
  /** $1, $2, ... of the new shell. */
  positional?: Field[];
  /** The script file being read (so that a script running itself is walked once). */
  file?: string;
}

/** One call of a program, as a program module sees it. */
/**
 * An inline assignment whose value expansion cannot know (`MAKEFLAGS=$(…) make`, `BASH_ENV=<(…) bash`)
 * is kept in a call's `env` as its raw text after this mark (a NUL: no real environment value holds one),
 * so that every reader sees it is unknown instead of taking the raw text for the value.
 */
export const UNKNOWN_VALUE = '\u0000';

export function isUnknownValue(v: string): boolean {
  return v.charCodeAt(0) === 0;
}

/** A variable in a call's environment: from the call's own assignments, else exported earlier in the line. */
export function envField(call: Pick<Call, 'env' | 'st'>, key: string): Field | undefined {
  const own = call.env[key];
  if (own !== undefined) return isUnknownValue(own) ? { value: `$${key}`, known: false } : { value: own, known: true };
  if (call.st.exported?.has(key)) {
    const v = call.st.vars.get(key);
    if (v !== undefined) return v === null ? { value: `$${key}`, known: false } : { value: v, known: true };
  }
  return undefined;
}

export interface Call {
  /** The program's basename. */
  name: string;
  fields: Field[];
  env: Record<string, string>;
  cwd: string | null;
  st: State;
  ctx: Ctx;
  span: Span;
  stdin: Stdin;
  wrapDepth: number;
  /** Run by this shell itself (directly or through `builtin`/`command`): a builtin changes its state. */
  direct: boolean;
  /** The program's grammar (from its module), when it has one. */
  grammar?: Grammar;
}

/** The policy's answers the walker asks when it reads an unknown program's arguments (src/shell/guess.ts). */
export interface WalkPolicy {
  /** A rule that does more than allow names this program: a word naming it starts a guessed command. */
  names(program: string): boolean;
  /** The policy keeps this command here as it is (an allow rule matches it): its arguments are not read. */
  keeps(cmd: SimpleCommand): boolean;
}

export interface Ctx {
  w: Walker;
  home: string | null;
  out: SimpleCommand[];
  via: string[];
  /** Span of the outermost command in the top-level line (for commands found in re-parsed strings). */
  outerSpan: Span | null;
  shellDepth: number;
  maxShellDepth: number;
  nodes: number;
  maxNodes: number;
  text: string;
  files: FileAccess | null;
  /** Script files being walked (a script that runs itself is not walked again). */
  reading: string[];
  /** Whether the line has a redirection or a writing command at all (computed on first need). */
  writeSyntax?: boolean;
  /** Whether the line may write files through a name offhost cannot see (computed on first need). */
  writesUnseen?: boolean;
  /** Commands found now come from a file read only in part (Makefile recipes): see SimpleCommand.certainOnly. */
  certainOnly?: boolean;
  /** `ln -s TARGET LINK` earlier in the line: link path -> what it points to (the filesystem outlives subshells). */
  links: Map<string, string> | null;
  /** What the policy says of programs the registry does not know (WalkOptions.policy). */
  policy?: WalkPolicy;
  /** Walking a guess at an unknown program's arguments (src/shell/guess.ts): no guesses inside it. */
  guessing?: boolean;
  /** Functions whose body is being walked (a function that calls itself is walked once). */
  calling?: string[];
  /**
   * Files the line wrote so far with content offhost can follow (`cat > run.sh <<'EOF'`, `printf … >
   * run.sh`, `… | tee run.sh`): path -> the text (unknown when the writer's output is not static).
   */
  written?: Map<string, Field>;
  /**
   * Directories the line copied whole (`cp -r SRC DST`, `mv SRC DST`), latest last: a file under `target`
   * holds what the same name under `source` holds (script-files.ts writtenText).
   */
  copiedDirs?: { target: string; source: string }[];
  /** How many writes of each path `written` followed (all of the line's writes of it, or its text is unknown). */
  writeCounts?: Map<string, number>;
  /** `ln [-s] TARGET LINK`, `cp FILE COPY` earlier in the line: the program a name or path runs (never a directory mapping). */
  renamed?: Map<string, string>;
  /** Walking a command inside a container on this laptop: directories are the container's (container-view.ts). */
  container?: ContainerView;
}

/** Standard input of a command, computed only if something reads it as a script. */
export type Stdin = () => Field | null;
export const NO_STDIN: Stdin = () => null;

/** Thrown when a string handed to a shell or eval cannot be parsed, or a limit is passed. */
export class NestedParseError extends ParseError {}

/** A script a shell would run that offhost cannot read (refused with the file and the reason). */
export class UnreadableScriptError extends NestedParseError {}

export function fail(ctx: Ctx, span: Span, message: string): never {
  throw new NestedParseError(message, positionAt(ctx.text, span.start));
}

export function clone(st: State): State {
  // exported/aliases stay null (empty) until a line uses them: most lines never do.
  return {
    cwd: st.cwd,
    altCwds: st.altCwds.length ? [...st.altCwds] : [],
    oldpwd: st.oldpwd,
    dirStack: st.dirStack.length ? [...st.dirStack] : [],
    vars: new Map(st.vars),
    exported: st.exported && new Set(st.exported),
    aliases: st.aliases && new Map(st.aliases),
    expandAliases: st.expandAliases,
    hashed: st.hashed && new Map(st.hashed),
    errexit: st.errexit,
    gitConfig: st.gitConfig && new Map(st.gitConfig),
    functions: st.functions && new Map(st.functions),
  };
}

/** After branches that may or may not run, what differs between them becomes unknown. */
export function merge(into: State, branches: State[]): void {
  for (const b of branches) {
    if (b.cwd !== into.cwd) into.cwd = null;
    for (const a of b.altCwds) addAlt(into, a);
    if (b.oldpwd !== into.oldpwd) into.oldpwd = null;
    if (b.dirStack.length !== into.dirStack.length || b.dirStack.some((d, i) => d !== into.dirStack[i])) {
      into.dirStack = Array.from({ length: Math.max(b.dirStack.length, into.dirStack.length) }, () => null);
    }
    for (const [k, v] of b.vars) if (into.vars.get(k) !== v) into.vars.set(k, null);
    // What a branch may have exported, aliased or configured counts afterwards (fail closed).
    if (b.exported) for (const k of b.exported) (into.exported ??= new Set()).add(k);
    if (b.aliases) for (const [k, v] of b.aliases) (into.aliases ??= new Map()).set(k, v);
    if (b.hashed) for (const [k, v] of b.hashed) (into.hashed ??= new Map()).set(k, v);
    if (b.gitConfig) for (const [k, v] of b.gitConfig) (into.gitConfig ??= new Map()).set(k, v);
    // A function a branch may have defined can be called afterwards (a second definition of one name: the last one).
    if (b.functions) for (const [k, v] of b.functions) (into.functions ??= new Map()).set(k, v);
    if (b.expandAliases) into.expandAliases = true;
  }
}

const MAX_ALTS = 4;

/** Adds a possible directory; past a few, the directory is unknown (fail closed). */
export function addAlt(st: State, dir: string | null): void {
  if (dir === st.cwd || st.altCwds.includes(dir)) return;
  if (st.altCwds.length >= MAX_ALTS) {
    st.cwd = null;
    st.altCwds = [];
    return;
  }
  st.altCwds.push(dir);
}

/** Already normal: no `.`/`..` segment, no `//`, no trailing `/`. */
const PLAIN_PATH = /^(?!.*(?:^|\/)\.\.?(?:\/|$))(?!.*\/\/)[^]*[^/]$/;

export function resolveDir(base: string | null, target: Field): string | null {
  if (!target.known) return null;
  const t = target.value;
  if (t.startsWith('/')) return PLAIN_PATH.test(t) ? t : posix.normalize(t).replace(/(.)\/$/, '$1');
  if (base === null) return null;
  if (t !== '' && PLAIN_PATH.test(t)) return base === '/' ? `/${t}` : `${base}/${t}`;
  return posix.normalize(posix.join(base, t)).replace(/(.)\/$/, '$1');
}

/** A path through the symbolic links the line made (`ln -s ~/dev/koder/engines/lang/koda /tmp/k`). */
export function physical(ctx: Ctx, path: string | null): string | null {
  if (path === null || !ctx.links) return path;
  for (let hops = 0; hops < 8; hops++) {
    let changed = false;
    for (const [link, target] of ctx.links) {
      if (path === link || path.startsWith(`${link}/`)) {
        path = target + path.slice(link.length);
        changed = true;
        break;
      }
    }
    if (!changed) break;
  }
  return path;
}

export function basenameOf(f: Field): string | null {
  const slash = f.value.lastIndexOf('/');
  if (!f.known && (f.unknownEnd === undefined || slash < f.unknownEnd)) return null;
  const base = slash >= 0 ? f.value.slice(slash + 1) : f.value;
  return base === '' ? null : base;
}

export function withVia<T>(ctx: Ctx, via: string, fn: () => T): T {
  ctx.via.push(via);
  try {
    return fn();
  } finally {
    ctx.via.pop();
  }
}

export function joinFields(fields: Field[]): Field {
  return { value: fields.map((f) => f.value).join(' '), known: fields.every((f) => f.known) };
}

export const UNKNOWN: Field = { value: '', known: false };

export interface EmitExtra {
  /** The call only prints help, a version or a list: it runs nothing (see Grammar.info). */
  infoOnly?: boolean;
}

export function emit(ctx: Ctx, fields: Field[], env: Record<string, string>, cwd: string | null, span: Span, st?: State, extra?: EmitExtra): void {
  const prog = fields[0]!;
  let unknownEnv: string[] | undefined;
  const ownEnv = env;
  if (st?.exported && st.exported.size > 0) {
    const exported: Record<string, string> = {};
    for (const k of st.exported) {
      const v = st.vars.get(k);
      if (v !== undefined && v !== null) exported[k] = v;
      else if (v === null && !(k in env)) (unknownEnv ??= []).push(k);
    }
    env = { ...exported, ...env };
  }
  for (const k in env) {
    if (!isUnknownValue(env[k]!)) continue;
    if (env === ownEnv) env = { ...env };
    delete env[k];
    (unknownEnv ??= []).push(k);
  }
  const n = fields.length;
  const argv = new Array<string>(n);
  const unknown: number[] = [];
  let prefixes: Record<number, string> | undefined;
  for (let i = 0; i < n; i++) {
    const f = fields[i]!;
    argv[i] = f.value;
    if (f.known) continue;
    unknown.push(i);
    if (f.knownPrefix) (prefixes ??= {})[i] = f.value.slice(0, f.knownPrefix);
  }
  let hasEnv = false;
  for (const _ in env) {
    hasEnv = true;
    break;
  }
  const program = basenameOf(prog);
  // From a file read only in part (Makefile recipes), a program that cannot be known is not a finding.
  if (program === null && ctx.certainOnly) return;
  const alts = st && st.altCwds.length && cwd === st.cwd ? st.altCwds : null;
  for (let d = -1; d < (alts ? alts.length : 0); d++) {
    const dir = d < 0 ? cwd : alts![d]!;
    // One object shape for every command (optional fields present as undefined): the matcher reads these
    // objects in its hot loop, and same-shaped objects keep its property accesses monomorphic.
    const cmd: SimpleCommand = {
      program,
      argv,
      unknown,
      prefixes,
      env: hasEnv ? { ...env } : {},
      unknownEnv,
      line: program === null ? ctx.text : undefined,
      cwd: ctx.container ? laptopPath(ctx.container, dir) : physical(ctx, dir),
      via: ctx.via.length ? ctx.via.slice() : [],
      span,
      certainOnly: ctx.certainOnly || undefined,
      infoOnly: extra?.infoOnly || undefined,
      guessed: ctx.guessing || undefined,
      ruleCwd: undefined,
      ruleSpace: undefined,
    };
    ctx.out.push(cmd);
  }
}
