// From syntax to what actually runs: walks a parsed line and lists every simple command that would
// execute, with its program, argv, inline env and effective working directory. Wrappers are looked
// through, strings given to shells and eval are parsed again, `cd`/`pushd`/`make -C` move the cwd, and
// text that is only data (arguments of echo, a quoted heredoc fed to cat) never counts as a command.
import { posix } from 'node:path';
import type { Command, List, Redirect, Script, SimpleCommandNode, Span, Word, WordPart } from './ast.js';
import { expandWord, visitSubstitutions, type Field, type Scope, type VarValue } from './expand.js';
import { unwrap, isWrapper, type Unwrapped } from './wrappers.js';
import { parse } from './parser.js';
import { ParseError, positionAt } from '../errors.js';
import { packageScript, scriptFile, stdinFromFile, unknownScript, type FileAccess } from './script-files.js';
import { emitSpecial } from './special-commands.js';
import type { SimpleCommand } from '../types.js';

export type { FileAccess, FileRead } from './script-files.js';

export interface WalkOptions {
  /** Working directory the line starts in (absolute); null if unknown. */
  cwd: string | null;
  /** The environment the line starts with: HOME (for `~`), OLDPWD. Other variables stay unknown. */
  env: Record<string, string | undefined>;
  /** Nesting of shells/eval re-parsed from strings (`bash -c "bash -c '…'"`); past it: fail closed. */
  maxShellDepth?: number;
  /** Upper bound on nodes visited (loops are unrolled over their known items). */
  maxNodes?: number;
  /** Files the line runs are read through this; without it they are judged by the program's name only. */
  files?: FileAccess;
}

export interface State extends Scope {
  cwd: string | null;
  oldpwd: string | null;
  dirStack: (string | null)[];
  /** Variables exported in this shell: they reach the environment of every later command. */
  exported: Set<string> | null;
  /** `alias name=value` definitions (expanded whether or not expand_aliases is on: fail closed). */
  aliases: Map<string, string> | null;
  /** `shopt -s expand_aliases` was seen (bash -c does not expand aliases otherwise). */
  expandAliases: boolean;
}

export interface Ctx {
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
  /** Whether the line may write files through a name offhost cannot see (computed on first need). */
  writesUnseen?: boolean;
  /** Commands found now come from a file read only in part (Makefile recipes): see SimpleCommand.certainOnly. */
  certainOnly?: boolean;
}

const LOOP_UNROLL_LIMIT = 32;

/** Thrown when a string handed to a shell or eval cannot be parsed, or a limit is passed. */
export class NestedParseError extends ParseError {}

/** A script a shell would run that offhost cannot read (refused with the file and the reason). */
export class UnreadableScriptError extends NestedParseError {}

function clone(st: State): State {
  // exported/aliases stay null (empty) until a line uses them: most lines never do.
  return {
    cwd: st.cwd,
    oldpwd: st.oldpwd,
    dirStack: st.dirStack.length ? [...st.dirStack] : [],
    vars: new Map(st.vars),
    exported: st.exported && new Set(st.exported),
    aliases: st.aliases && new Map(st.aliases),
    expandAliases: st.expandAliases,
  };
}

/** After branches that may or may not run, what differs between them becomes unknown. */
function merge(into: State, branches: State[]): void {
  for (const b of branches) {
    if (b.cwd !== into.cwd) into.cwd = null;
    if (b.oldpwd !== into.oldpwd) into.oldpwd = null;
    if (b.dirStack.length !== into.dirStack.length || b.dirStack.some((d, i) => d !== into.dirStack[i])) {
      into.dirStack = Array.from({ length: Math.max(b.dirStack.length, into.dirStack.length) }, () => null);
    }
    for (const [k, v] of b.vars) if (into.vars.get(k) !== v) into.vars.set(k, null);
    // What a branch may have exported or aliased counts afterwards (fail closed).
    if (b.exported) for (const k of b.exported) (into.exported ??= new Set()).add(k);
    if (b.aliases) for (const [k, v] of b.aliases) (into.aliases ??= new Map()).set(k, v);
    if (b.expandAliases) into.expandAliases = true;
  }
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

function basenameOf(f: Field): string | null {
  const slash = f.value.lastIndexOf('/');
  if (!f.known && (f.unknownEnd === undefined || slash < f.unknownEnd)) return null;
  const base = slash >= 0 ? f.value.slice(slash + 1) : f.value;
  return base === '' ? null : base;
}

export function commandsOf(script: Script, text: string, opts: WalkOptions): SimpleCommand[] {
  const home = opts.env.HOME ?? null;
  const ctx: Ctx = {
    home,
    out: [],
    via: [],
    outerSpan: null,
    shellDepth: 0,
    maxShellDepth: opts.maxShellDepth ?? 16,
    nodes: 0,
    maxNodes: opts.maxNodes ?? 200_000,
    text,
    files: opts.files ?? null,
    reading: [],
  };
  const st = initialState(opts.cwd, opts.env);
  walkList(script, st, ctx);
  return ctx.out;
}

function initialState(cwd: string | null, env: Record<string, string | undefined>): State {
  const vars = new Map<string, VarValue>();
  if (env.HOME !== undefined) vars.set('HOME', env.HOME);
  if (cwd !== null) vars.set('PWD', cwd);
  if (env.CDPATH !== undefined) vars.set('CDPATH', env.CDPATH);
  // bash sets IFS to space, tab, newline in every non-interactive shell (it does not import it).
  vars.set('IFS', ' \t\n');
  return { cwd, oldpwd: env.OLDPWD ?? null, dirStack: [], vars, exported: null, aliases: null, expandAliases: false };
}

function tick(ctx: Ctx, span: Span): void {
  if (++ctx.nodes > ctx.maxNodes) {
    throw new NestedParseError(`the line is too complex to judge (more than ${ctx.maxNodes} steps)`, positionAt(ctx.text, span.start));
  }
}

function walkList(list: List, st: State, ctx: Ctx): void {
  for (const item of list.items) {
    if (item.separator === '&') walkCommand(item.command, clone(st), ctx);
    else walkCommand(item.command, st, ctx);
  }
}

function walkRedirects(redirects: Redirect[], st: State, ctx: Ctx): void {
  for (const r of redirects) {
    if (r.target) walkWordSubs(r.target, st, ctx);
    if (r.heredoc?.word) walkWordSubs(r.heredoc.word, st, ctx);
  }
}

function walkWordSubs(word: Word, st: State, ctx: Ctx): void {
  walkPartsSubs(word.parts, st, ctx);
}

function walkPartsSubs(parts: WordPart[], st: State, ctx: Ctx): void {
  // Most words are plain text: nothing to visit, nothing to allocate.
  let plain = true;
  for (const p of parts) {
    if (p.type !== 'Literal' && p.type !== 'SingleQuoted' && p.type !== 'AnsiC') {
      plain = false;
      break;
    }
  }
  if (plain) return;
  visitSubstitutions(parts, {
    onSubstitution: (p) => withVia(ctx, p.type === 'ProcessSub' ? p.op + ')' : p.backtick ? '`…`' : '$(…)', () => walkList(p.script, clone(st), ctx)),
  });
}

export function withVia<T>(ctx: Ctx, via: string, fn: () => T): T {
  ctx.via.push(via);
  try {
    return fn();
  } finally {
    ctx.via.pop();
  }
}

/** Standard input of a command, computed only if something reads it as a script. */
type Stdin = () => Field | null;
export const NO_STDIN: Stdin = () => null;

function walkCommand(cmd: Command, st: State, ctx: Ctx, stdin?: Stdin): void {
  tick(ctx, cmd.span);
  switch (cmd.type) {
    case 'Simple':
      walkSimple(cmd, st, ctx, stdin ?? NO_STDIN);
      return;
    case 'Pipeline': {
      if (cmd.commands.length === 1) {
        walkCommand(cmd.commands[0]!, st, ctx, stdin);
        return;
      }
      let feed: Stdin = stdin ?? NO_STDIN;
      for (const c of cmd.commands) {
        walkCommand(c, clone(st), ctx, feed);
        feed = () => producedText(c, st, ctx);
      }
      return;
    }
    case 'AndOr':
      walkCommand(cmd.first, st, ctx, stdin);
      for (const r of cmd.rest) walkCommand(r.command, st, ctx);
      return;
    case 'List':
      walkList(cmd, st, ctx);
      return;
    case 'Subshell':
      walkRedirects(cmd.redirects, st, ctx);
      walkList(cmd.body, clone(st), ctx);
      return;
    case 'Group':
      walkRedirects(cmd.redirects, st, ctx);
      walkList(cmd.body, st, ctx);
      return;
    case 'If': {
      walkRedirects(cmd.redirects, st, ctx);
      const branches: State[] = [];
      const cond = st;
      for (const c of cmd.clauses) {
        walkList(c.condition, cond, ctx);
        branches.push(branch(c.body, cond, ctx));
      }
      if (cmd.elseBody) branches.push(branch(cmd.elseBody, cond, ctx));
      merge(st, branches);
      return;
    }
    case 'While':
    case 'Until': {
      walkRedirects(cmd.redirects, st, ctx);
      const b = clone(st);
      walkList(cmd.condition, b, ctx);
      walkList(cmd.body, b, ctx);
      merge(st, [b]);
      return;
    }
    case 'For':
    case 'Select': {
      walkRedirects(cmd.redirects, st, ctx);
      let items: Field[] | null = null;
      if (cmd.items) {
        items = [];
        for (const w of cmd.items) {
          walkWordSubs(w, st, ctx);
          items.push(...expandWord(w, st, ctx.home));
        }
      }
      const b = clone(st);
      if (cmd.type === 'For' && items && items.length <= LOOP_UNROLL_LIMIT && items.every((i) => i.known)) {
        // Unroll over the known items: `for t in build build-safe; do make $t; done`.
        for (const it of items) {
          b.vars.set(cmd.variable, it.value);
          walkList(cmd.body, b, ctx);
        }
      } else {
        b.vars.set(cmd.variable, null);
        walkList(cmd.body, b, ctx);
      }
      merge(st, [b]);
      st.vars.set(cmd.variable, null);
      return;
    }
    case 'ArithFor': {
      walkRedirects(cmd.redirects, st, ctx);
      walkPartsSubs(cmd.subs, st, ctx);
      const b = clone(st);
      walkList(cmd.body, b, ctx);
      merge(st, [b]);
      return;
    }
    case 'Case': {
      walkRedirects(cmd.redirects, st, ctx);
      walkWordSubs(cmd.word, st, ctx);
      const branches: State[] = [];
      for (const item of cmd.items) {
        for (const p of item.patterns) walkWordSubs(p, st, ctx);
        branches.push(branch(item.body, st, ctx));
      }
      merge(st, branches);
      return;
    }
    case 'Function':
      // The body counts whether or not the function is called: fail closed, and a later call would
      // run it anyway.
      withVia(ctx, `function ${cmd.name}`, () => walkCommand(cmd.body, clone(st), ctx));
      return;
    case 'Coproc':
      withVia(ctx, 'coproc', () => walkCommand(cmd.body, clone(st), ctx));
      return;
    case 'Test':
      walkRedirects(cmd.redirects, st, ctx);
      for (const w of cmd.words) walkWordSubs(w, st, ctx);
      return;
    case 'ArithCommand':
      walkRedirects(cmd.redirects, st, ctx);
      walkPartsSubs(cmd.subs, st, ctx);
      return;
  }
}

/** Walks a body that may or may not run, in a copy of the state; merge() reconciles the copies. */
function branch(body: List, from: State, ctx: Ctx): State {
  const b = clone(from);
  walkList(body, b, ctx);
  return b;
}

/** What a pipeline stage writes to the next one, when it is static text (`echo make build | bash`). */
function producedText(cmd: Command, st: State, ctx: Ctx): Field | null {
  if (cmd.type !== 'Simple' || cmd.words.length === 0) return null;
  const fields = cmd.words.flatMap((w) => expandWord(w, st, ctx.home));
  const prog = fields[0];
  if (!prog?.known) return null;
  const name = basenameOf(prog);
  let args = fields.slice(1);
  if (name === 'echo') {
    while (args[0]?.known && /^-[neE]+$/.test(args[0].value)) args = args.slice(1);
    return { value: args.map((a) => a.value).join(' ') + '\n', known: args.every((a) => a.known) };
  }
  if (name === 'printf' && args.length >= 1) {
    const fmt = args[0]!;
    return { value: fmt.value.replace(/\\n/g, '\n').replace(/%s/g, args[1]?.value ?? ''), known: args.every((a) => a.known) };
  }
  if (name === 'cat' && args.length >= 1 && args.every((a) => !a.known || !a.value.startsWith('-'))) {
    // `cat run.sh | bash`: the files' text, when the guard reads files.
    const parts = args.map((a) => stdinFromFile(a, 'cat', st.cwd, ctx, cmd.span));
    return { value: parts.map((p) => p.value).join(''), known: parts.every((p) => p.known) };
  }
  return { value: '', known: false };
}

/** Standard input given by this command's own redirections (heredoc, here-string, file). */
function stdinOf(node: SimpleCommandNode, st: State, ctx: Ctx): Field | undefined {
  let result: Field | undefined;
  for (const r of node.redirects) {
    if (r.fd !== undefined && r.fd !== 0) continue;
    if (r.heredoc) {
      if (r.heredoc.quoted || !r.heredoc.word) result = { value: r.heredoc.body, known: true };
      else {
        const f = expandWord(r.heredoc.word, st, ctx.home);
        result = f.length === 1 ? f[0]! : { value: r.heredoc.body, known: f.every((x) => x.known) };
        // Expansions inside an unquoted heredoc body are done by the outer shell; what is left is text.
        result = { value: r.heredoc.body, known: result.known };
      }
    } else if (r.op === '<<<' && r.target) {
      const f = expandWord(r.target, st, ctx.home);
      result = { value: f.map((x) => x.value).join(' ') + '\n', known: f.every((x) => x.known) };
    } else if (r.op === '<' && r.target) {
      // `bash < run.sh`: the file's text, when the guard reads files.
      const f = expandWord(r.target, st, ctx.home);
      result = f.length === 1 ? stdinFromFile(f[0]!, '<', st.cwd, ctx, node.span) : { value: '', known: false };
    } else if (r.op === '<' || r.op === '<>' || r.op === '<&') {
      result = { value: '', known: false };
    }
  }
  return result;
}

function walkSimple(node: SimpleCommandNode, st: State, ctx: Ctx, pipedIn: Stdin): void {
  // Substitutions run before the command itself.
  for (const a of node.assignments) {
    if (a.indexWord) walkWordSubs(a.indexWord, st, ctx); // a[$(cmd)]=v
    if (a.value) walkWordSubs(a.value, st, ctx);
    for (const w of a.array ?? []) walkWordSubs(w, st, ctx);
  }
  for (const w of node.words) walkWordSubs(w, st, ctx);
  walkRedirects(node.redirects, st, ctx);

  const env: Record<string, string> = {};
  const assigned: [string, VarValue][] = [];
  for (const a of node.assignments) {
    let v: VarValue = null;
    if (a.value && !a.append && a.index === undefined) {
      const f = expandWord(a.value, st, ctx.home);
      // An assignment is not split: join what expansion gives.
      v = f.every((x) => x.known) ? f.map((x) => x.value).join(' ') : null;
    } else if (!a.value && !a.array) v = '';
    assigned.push([a.name, v]);
    env[a.name] = v ?? (a.value?.raw ?? '');
  }
  const fields: Field[] = [];
  for (const w of node.words) fields.push(...expandWord(w, st, ctx.home));
  if (fields.length === 0) {
    for (const [k, v] of assigned) st.vars.set(k, v);
    return;
  }
  let stdin: Stdin = node.redirects.length ? () => stdinOf(node, st, ctx) ?? pipedIn() : pipedIn;
  // `. <(echo make build)`, `bash <(printf …)`: a script file that is the static output of a command.
  const file = node.words[1];
  const sub = file?.parts.length === 1 ? file.parts[0] : undefined;
  if (sub?.type === 'ProcessSub' && sub.op === '<(' && fields.length >= 2 && fields[0]!.known && SCRIPT_READERS.has(basenameOf(fields[0]!) ?? '')) {
    const only = sub.script.items.length === 1 ? sub.script.items[0]!.command : null;
    const text = only ? producedText(only.type === 'Pipeline' && only.commands.length === 1 ? only.commands[0]! : only, st, ctx) : null;
    if (text?.known) {
      fields[1] = { value: '/dev/stdin', known: true };
      stdin = () => text;
    }
  }
  const span = ctx.outerSpan ?? node.span;
  runFields(fields, env, st.cwd, st, ctx, span, stdin, 0);
}

export function emit(ctx: Ctx, fields: Field[], env: Record<string, string>, cwd: string | null, span: Span, st?: State): void {
  const prog = fields[0]!;
  let unknownEnv: string[] | undefined;
  if (st?.exported && st.exported.size > 0) {
    const exported: Record<string, string> = {};
    for (const k of st.exported) {
      const v = st.vars.get(k);
      if (v !== undefined && v !== null) exported[k] = v;
      else if (v === null && !(k in env)) (unknownEnv ??= []).push(k);
    }
    env = { ...exported, ...env };
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
    cwd,
    via: ctx.via.length ? ctx.via.slice() : [],
    span,
    certainOnly: ctx.certainOnly || undefined,
  };
  ctx.out.push(cmd);
}

const DIR_BUILTINS = new Set(['cd', 'pushd', 'popd']);
/** Programs whose first argument is a script they read and run. */
const SCRIPT_READERS = new Set(['source', '.', 'bash', 'sh', 'zsh', 'dash', 'ksh', 'mksh', 'ash']);
const DECLARE = new Set(['export', 'declare', 'typeset', 'local', 'readonly']);

export function runFields(
  fields: Field[],
  env: Record<string, string>,
  cwd: string | null,
  st: State,
  ctx: Ctx,
  span: Span,
  stdin: Stdin,
  wrapDepth: number,
): void {
  const prog = fields[0]!;
  const name = basenameOf(prog);
  if (wrapDepth > 64) throw new NestedParseError('wrappers nested more than 64 deep', positionAt(ctx.text, span.start));

  // `cd` moves this shell only when run directly or through `builtin`/`command` (not `sudo cd`,
  // which fails and leaves the directory as it was).
  if (name !== null && prog.known && DIR_BUILTINS.has(name) && (wrapDepth === 0 || ctx.via.every((v) => v === 'builtin' || v === 'command'))) {
    changeDir(name, fields.slice(1), st);
    emit(ctx, fields, env, cwd, span, st);
    return;
  }
  if (name !== null && prog.known && DECLARE.has(name)) {
    const exporting = name === 'export' || fields.some((f) => f.known && /^-[a-zA-Z]*x/.test(f.value));
    for (const f of fields.slice(1)) {
      const m = /^([A-Za-z_][A-Za-z0-9_]*)=(.*)$/s.exec(f.value);
      // `declare -a A=(…)` is an array (not modelled): unknown, never the text "(…)".
      if (m) st.vars.set(m[1]!, f.known && !m[2]!.startsWith('(') && !fields.some((x) => x.known && /^-[a-zA-Z]*[aA]/.test(x.value)) ? m[2]! : null);
      else if (/^[A-Za-z_][A-Za-z0-9_]*$/.test(f.value) && !exporting) st.vars.set(f.value, null);
      const n = m ? m[1]! : /^[A-Za-z_][A-Za-z0-9_]*$/.test(f.value) ? f.value : null;
      if (n && exporting) (st.exported ??= new Set()).add(n);
    }
  }
  if (name === 'shopt' && prog.known && fields.some((f) => f.value === '-s') && fields.some((f) => f.value === 'expand_aliases' || !f.known)) {
    st.expandAliases = true;
  }
  if (name === 'alias' && prog.known) {
    for (const f of fields.slice(1)) {
      const m = /^([^=\s]+)=(.*)$/s.exec(f.value);
      if (m) (st.aliases ??= new Map()).set(m[1]!, f.known ? m[2]! : '\u0000unknown');
    }
  }
  if (name !== null && prog.known && wrapDepth === 0 && st.expandAliases && st.aliases?.has(name)) {
    // An alias is text put in place of the word: walk `value args...` in this same shell. Whether it
    // applies depends on where the line breaks (bash reads a whole line first), so the command as
    // written is judged too: fail closed both ways.
    emitSpecial(name, fields, env, cwd, st, ctx, span);
    const aliases = st.aliases!;
    const value = aliases.get(name)!;
    aliases.delete(name); // an alias is not expanded inside itself
    try {
      const rest = fields.slice(1);
      runScript(
        { value: [value, ...rest.map((r) => r.value)].join(' '), known: value !== '\u0000unknown' && rest.every((r) => r.known) },
        'eval',
        cwd,
        env,
        st,
        ctx,
        span,
        `alias ${name}`,
      );
    } finally {
      aliases.set(name, value);
    }
    return;
  }
  if (name !== null && (name === 'unset' || name === 'read' || name === 'mapfile' || name === 'readarray')) {
    for (const f of fields.slice(1)) if (/^[A-Za-z_][A-Za-z0-9_]*$/.test(f.value)) st.vars.set(f.value, null);
  }

  if (name === null || !isWrapper(name)) {
    emitSpecial(name, fields, env, cwd, st, ctx, span);
    return;
  }
  const u = unwrap(name, fields);
  applyUnwrapped(u, name, fields, env, cwd, st, ctx, span, stdin, wrapDepth);
}

function applyUnwrapped(
  u: Unwrapped,
  name: string,
  fields: Field[],
  env: Record<string, string>,
  cwd: string | null,
  st: State,
  ctx: Ctx,
  span: Span,
  stdin: Stdin,
  wrapDepth: number,
  emitSelf = true,
): void {
  switch (u.kind) {
    case 'none':
      emitSpecial(name, fields, env, cwd, st, ctx, span);
      return;
    case 'many':
      emit(ctx, fields, env, cwd, span, st);
      for (const item of u.items) applyUnwrapped(item, name, fields, env, cwd, st, ctx, span, NO_STDIN, wrapDepth, false);
      return;
    case 'run': {
      if (emitSelf) emit(ctx, fields, env, cwd, span, st);
      const innerEnv = { ...env };
      for (const [k, v] of u.env ?? []) innerEnv[k] = v.value;
      let innerCwd = cwd;
      if (u.cwd) innerCwd = resolveDir(cwd, u.cwd);
      if (u.cwdUnknown) innerCwd = null;
      const argv = u.extraUnknownArg ? [...u.argv, { value: '<stdin>', known: false }] : u.argv;
      withVia(ctx, u.via, () => runFields(argv, innerEnv, innerCwd, st, ctx, span, stdin, wrapDepth + 1));
      return;
    }
    case 'script': {
      emit(ctx, fields, env, cwd, span, st);
      const innerCwd = u.cwd ? resolveDir(cwd, u.cwd) : cwd;
      runScript(u.text, u.via, innerCwd, env, st, ctx, span);
      return;
    }
    case 'stdin-script': {
      emit(ctx, fields, env, cwd, span, st);
      const text = stdin() ?? { value: '', known: false };
      runScript(text, `${u.via} <stdin`, cwd, env, st, ctx, span);
      return;
    }
    case 'file-script':
      emit(ctx, fields, env, cwd, span, st);
      if (u.via === 'fish') {
        // fish is not bash: its scripts cannot be read with this parser.
        if (ctx.files) unknownScript(u.file, `fish ${u.file.value}`, env, cwd, st, ctx, span);
        return;
      }
      scriptFile(u.file, u.args, u.via, u.sourced, env, cwd, st, ctx, span);
      return;
    case 'package-script':
      if (emitSelf) emit(ctx, fields, env, cwd, span, st);
      if (!packageScript(u, env, cwd, st, ctx, span)) {
        applyUnwrapped(u.fallback, name, fields, env, cwd, st, ctx, span, stdin, wrapDepth, false);
      }
      return;
  }
}

interface ScriptOptions {
  /** Run in this shell (eval, trap, source) rather than a new one. */
  shared?: boolean;
  /** $1, $2, ... of the new shell. */
  positional?: Field[];
  /** The script file being read (so that a script running itself is walked once). */
  file?: string;
}

/** Parses a string that a shell (or eval) will run, and walks it in its own scope. */
export function runScript(text: Field, via: string, cwd: string | null, env: Record<string, string>, st: State, ctx: Ctx, span: Span, label = via, opts: ScriptOptions = {}): void {
  if (!text.known) {
    // What runs cannot be known: report an unknown program, the rules decide what that means.
    withVia(ctx, label, () => emit(ctx, [{ value: text.value, known: false }], env, cwd, span, st));
    return;
  }
  if (ctx.shellDepth + 1 > ctx.maxShellDepth) {
    throw new NestedParseError(`shells and eval nested more than ${ctx.maxShellDepth} deep`, positionAt(ctx.text, span.start));
  }
  let script: Script;
  try {
    script = parse(text.value);
  } catch (err) {
    if (err instanceof ParseError) {
      throw new NestedParseError(`the script given to ${via} does not parse: ${err.message}`, positionAt(ctx.text, span.start));
    }
    throw err;
  }
  const shared = opts.shared || via === 'eval' || via === 'trap';
  const inner: State = shared ? st : initialState(cwd, { HOME: ctx.home ?? undefined, OLDPWD: st.oldpwd ?? undefined });
  // Exported variables assigned inline reach the child shell.
  for (const [k, v] of Object.entries(env)) inner.vars.set(k, v);
  if (opts.positional) opts.positional.forEach((a, i) => inner.vars.set(String(i + 1), a.known ? a.value : null));
  const savedSpan = ctx.outerSpan;
  ctx.outerSpan = span;
  ctx.shellDepth++;
  if (opts.file) ctx.reading.push(opts.file);
  try {
    withVia(ctx, label, () => walkList(script, inner, ctx));
  } finally {
    if (opts.file) ctx.reading.pop();
    ctx.shellDepth--;
    ctx.outerSpan = savedSpan;
  }
}

function changeDir(name: string, args: Field[], st: State): void {
  let rest = args;
  while (rest[0]?.known && /^-[LPe@]+$/.test(rest[0].value)) rest = rest.slice(1);
  if (rest[0]?.known && rest[0].value === '--') rest = rest.slice(1);
  const prev = st.cwd;
  if (name === 'popd') {
    st.cwd = st.dirStack.length ? (st.dirStack.pop() ?? null) : st.cwd;
  } else if (name === 'pushd') {
    if (rest.length === 0) {
      const top = st.dirStack.pop();
      if (top === undefined) return;
      st.dirStack.push(st.cwd);
      st.cwd = top;
    } else {
      st.dirStack.push(st.cwd);
      st.cwd = rest[0]!.known && /^[+-]\d+$/.test(rest[0]!.value) ? null : resolveDir(st.cwd, rest[0]!);
    }
  } else {
    const target = rest[0];
    const cdpath = st.vars.has('CDPATH') ? st.vars.get('CDPATH') : undefined;
    if (!target) st.cwd = st.vars.has('HOME') ? (st.vars.get('HOME') ?? null) : null;
    else if (target.known && target.value === '-') st.cwd = st.vars.has('OLDPWD') ? (st.vars.get('OLDPWD') ?? null) : st.oldpwd;
    else if (cdpath !== undefined && cdpath !== '' && target.known && !/^(\/|\.\.?(\/|$))/.test(target.value)) {
      // With CDPATH set, `cd dir` may land in any CDPATH entry that has `dir`: offhost does not look
      // at the disk, so the directory is unknown.
      st.cwd = null;
    } else st.cwd = resolveDir(st.cwd, target);
  }
  st.oldpwd = prev;
  st.vars.set('OLDPWD', prev);
  st.vars.set('PWD', st.cwd);
}
