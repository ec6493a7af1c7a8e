// From syntax to what actually runs: walks a parsed line and lists every simple command that would
// execute, with its program, argv, inline env and effective working directory. What a program does (a
// wrapper's inner command, a builtin's effect on the shell, make's directory, git's hooks) is the program
// module's (programs/*): the walker asks the registry and names no program. Strings given to shells and
// eval are parsed again, and text that is only data never counts as a command.
import type { Command, List, Redirect, Script, SimpleCommandNode, Span, Word, WordPart } from './ast.js';
import { expandWord, visitSubstitutions, type Field, type VarValue } from './expand.js';
import { parse } from './parser.js';
import { ParseError, positionAt } from '../errors.js';
import { executableFile, packageScript, scriptFile, stdinFromFile, unknownScript, type FileAccess } from './script-files.js';
import { programFor } from './programs/index.js';
import { guessArguments } from './guess.js';
import { isTransformer, transformed } from './transforms.js';
import { isInfo } from './programs/grammar.js';
import { arithmeticVars } from './programs/builtins.js';
import { containerFiles, nestedView, type ContainerView } from './container-view.js';
import type { Unwrapped } from './programs/types.js';
import {
  basenameOf, clone, emit, isUnknownValue, merge, NestedParseError, NO_STDIN, resolveDir, UNKNOWN_VALUE, withVia,
  type Call, type Ctx, type ScriptOptions, type State, type Stdin, type Walker,
} from './walk-state.js';
import type { SimpleCommand } from '../types.js';
import type { WalkPolicy } from './walk-state.js';

export type { FileAccess, FileRead } from './script-files.js';
export { NestedParseError, UnreadableScriptError, resolveDir, type WalkPolicy } from './walk-state.js';

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
  /** What the policy says of programs the registry does not know (src/shell/guess.ts). */
  policy?: WalkPolicy;
}

const LOOP_UNROLL_LIMIT = 32;

export function commandsOf(script: Script, text: string, opts: WalkOptions): SimpleCommand[] {
  const home = opts.env.HOME ?? null;
  const ctx: Ctx = {
    w: WALKER,
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
    links: null,
    policy: opts.policy,
    guessing: false,
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
  return { cwd, altCwds: [], oldpwd: env.OLDPWD ?? null, dirStack: [], vars, exported: null, aliases: null, expandAliases: false, hashed: null, errexit: false, gitConfig: null, functions: null };
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
  for (const p of parts) if (p.type === 'Arith') arithmetic(p.expr, st, ctx, p.span);
}

/** Variables evaluated as arithmetic whose value holds a subscript with `$(…)`: bash runs it. */
function arithmetic(expr: string, st: State, ctx: Ctx, span: Span): void {
  if (!/[A-Za-z_]/.test(expr)) return;
  arithmeticVars(expr, { st, ctx, span, cwd: st.cwd, env: {} }, WALKER);
}

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
        const into = feed;
        feed = () => producedText(c, st, ctx, into);
      }
      return;
    }
    case 'AndOr': {
      // `cd x && make`: what follows `&&` runs only if the `cd` worked, so not where a failed one stays.
      // Only a simple command's own failure is meant (a group may have forgiven a failing cd inside).
      let before = st.altCwds;
      let prev = cmd.first;
      walkCommand(cmd.first, st, ctx, stdin);
      for (const r of cmd.rest) {
        if (r.op === '&&' && prev.type === 'Simple' && st.altCwds !== before) st.altCwds = st.altCwds.filter((d) => before.includes(d));
        before = st.altCwds;
        prev = r.command;
        walkCommand(r.command, st, ctx);
      }
      return;
    }
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
      // A definition runs nothing; a call runs the body (runFields). The `$(…)` in its body run then too.
      (st.functions ??= new Map()).set(cmd.name, cmd.body);
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
      arithmetic(cmd.expr, st, ctx, cmd.span);
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
function producedText(cmd: Command, st: State, ctx: Ctx, input?: Stdin): Field | null {
  if (cmd.type === 'Pipeline' && cmd.commands.length > 1) {
    // `$(echo … | base64 -d)`: each command's output is the next one's input.
    let feed: Stdin = input ?? NO_STDIN;
    let out: Field | null = null;
    for (const c of cmd.commands) {
      const prev = feed;
      out = producedText(c, st, ctx, prev);
      const now = out;
      feed = () => now;
    }
    return out;
  }
  if (cmd.type !== 'Simple' || cmd.words.length === 0) return null;
  const fields = cmd.words.flatMap((w) => expandWord(w, st, ctx.home));
  if (!fields[0]?.known) return null;
  // A transformer of its input (base64 -d, tr, rev, cat, xxd -r -p): its own redirection, else the pipe's.
  const name = basenameOf(fields[0]!);
  if (name !== null && isTransformer(name)) {
    const own = cmd.redirects.length ? stdinOf(cmd, st, ctx) : undefined;
    const t = transformed(name, fields, own ?? input?.() ?? { value: '', known: false });
    if (t !== null) return t;
  }
  return outputOf(fields, st, ctx, cmd.span);
}

function outputOf(fields: Field[], st: State, ctx: Ctx, span: Span): Field | null {
  const name = basenameOf(fields[0]!);
  const mod = name === null ? null : programFor(name);
  const text = mod?.output?.({ name: name!, fields, env: {}, cwd: st.cwd, st, ctx, span, stdin: NO_STDIN, wrapDepth: 0, direct: true });
  return text ?? { value: '', known: false };
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
    env[a.name] = v ?? UNKNOWN_VALUE + (a.value?.raw ?? '');
  }
  const fields: Field[] = [];
  for (const w of node.words) {
    const out = ctx.files ? substitutionOutput(w, st, ctx) : null;
    if (out) fields.push(...out);
    else fields.push(...expandWord(w, st, ctx.home));
  }
  // `$EDITOR Makefile`: the user's editor, from the environment (not set in the line): it opens the files.
  if (fields[0] && !fields[0].known && isEditorWord(node.words[0]!, st)) fields[0] = { value: 'editor', known: true };
  if (fields.length === 0) {
    for (const [k, v] of assigned) st.vars.set(k, v);
    return;
  }
  let stdin: Stdin = node.redirects.length ? () => stdinOf(node, st, ctx) ?? pipedIn() : pipedIn;
  if (node.redirects.length || (fields[0]!.known && COPIERS.has(basenameOf(fields[0]!) ?? ''))) recordWrites(node, fields, st, ctx, stdin);
  // `. <(echo make build)`, `bash <(printf …)`: a script file that is the static output of a command.
  const file = node.words[1];
  const sub = file?.parts.length === 1 ? file.parts[0] : undefined;
  if (sub?.type === 'ProcessSub' && sub.op === '<(' && fields.length >= 2 && fields[0]!.known && programFor(basenameOf(fields[0]!) ?? '')?.readsScript) {
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

/**
 * A word that is one command substitution whose output is static text: `"$(cat tools/cmd.txt)"`,
 * `$(< f)`, `$(printf make)`. Its fields (the text, trailing newlines removed; unquoted, split on blanks);
 * null when the output is not known (or an unquoted one would be globbed or split by a changed IFS).
 */
function substitutionOutput(word: Word, st: State, ctx: Ctx): Field[] | null {
  let parts = word.parts;
  let quotedWord = false;
  if (parts.length === 1 && parts[0]!.type === 'DoubleQuoted') {
    parts = parts[0]!.parts;
    quotedWord = true;
  }
  const sub = parts.length === 1 ? parts[0]! : null;
  if (!sub || sub.type !== 'CommandSub' || sub.script.items.length !== 1) return null;
  let cmd = sub.script.items[0]!.command;
  if (cmd.type === 'Pipeline' && cmd.commands.length === 1) cmd = cmd.commands[0]!;
  if (cmd.type === 'Pipeline') {
    // `"$(echo … | base64 -d)"`: the pipeline's output, when every step of it is static.
    if (!cmd.commands.every((c) => c.type === 'Simple' && c.assignments.length === 0)) return null;
    const piped = producedText(cmd, st, ctx);
    if (!piped?.known) return null;
    const v = piped.value.replace(/\n+$/, '');
    if (quotedWord) return [{ value: v, known: true }];
    if (/[*?[]/.test(v) || st.vars.get('IFS') !== ' \t\n') return null;
    return v.split(/[ \t\n]+/).filter(Boolean).map((x) => ({ value: x, known: true }));
  }
  if (cmd.type !== 'Simple' || cmd.assignments.length) return null;
  let text: Field | null;
  if (cmd.words.length === 0) {
    // `$(< file)`: bash reads the file itself.
    const r = cmd.redirects.length === 1 && cmd.redirects[0]!.op === '<' ? cmd.redirects[0]!.target : null;
    const f = r ? expandWord(r, st, ctx.home) : [];
    text = f.length === 1 ? stdinFromFile(f[0]!, '$(<)', st.cwd, ctx, cmd.span) : null;
  } else {
    if (cmd.redirects.length) return null;
    text = producedText(cmd, st, ctx);
  }
  if (!text?.known) return null;
  const value = text.value.replace(/\n+$/, '');
  if (quotedWord) return [{ value, known: true }];
  if (/[*?[]/.test(value) || st.vars.get('IFS') !== ' \t\n') return null;
  return value.split(/[ \t\n]+/).filter(Boolean).map((v) => ({ value: v, known: true }));
}

const WRITE_OPS = new Set(['>', '>|', '>>', '&>', '&>>']);
/** Programs whose writes are followed without a redirection: tee's files, and a copy's destination. */
const COPIERS = new Set(['tee', 'cp', 'install', 'mv']);
/** Their options that take the next word as a value (besides -t/--target-directory, read in copied()). */
const COPY_VALUE = new Set(['-m', '--mode', '-o', '--owner', '-g', '--group', '-S', '--suffix']);

/**
 * `cp SRC DST`, `install [-m MODE] SRC DST`, `mv SRC DST`, and into a directory (`cp A B DIR/`, `cp -t DIR A B`):
 * each destination holds what its source holds: what the line wrote there, else the disk, else unknown.
 * Empty when the copy cannot be followed (a name made at run time).
 */
function copied(fields: Field[], st: State, ctx: Ctx): { target: Field; content: Field; sourceDir?: string }[] {
  const operands: Field[] = [];
  let dir: Field | null = null;
  for (let i = 1; i < fields.length; i++) {
    const f = fields[i]!;
    if (!f.known) return [];
    if (f.value === '--') {
      operands.push(...fields.slice(i + 1));
      break;
    }
    if (!f.value.startsWith('-') || f.value === '-') {
      operands.push(f);
      continue;
    }
    const t = /^(?:--target-directory=(.*)|-t(.*))$/.exec(f.value);
    if (t) {
      const v = t[1] ?? t[2];
      dir = v ? { value: v, known: true } : (fields[++i] ?? null);
      if (!dir?.known) return [];
    } else if (f.value === '--target-directory') {
      dir = fields[++i] ?? null;
      if (!dir?.known) return [];
    } else if (COPY_VALUE.has(f.value)) i++;
  }
  if (!operands.every((o) => o.known)) return [];
  if (dir === null) {
    if (operands.length < 2) return [];
    dir = operands.pop()!;
    const path = resolveDir(st.cwd, dir);
    if (path === null) return [];
    // One source onto a name that is not a directory: that file.
    if (operands.length === 1 && !dir.value.endsWith('/') && ctx.files?.read(path).kind !== 'directory') return [{ target: { value: path, known: true }, ...copiedContent(operands[0]!, st, ctx) }];
  }
  const base = resolveDir(st.cwd, dir);
  if (base === null) return [];
  return operands.map((src) => ({ target: { value: `${base.replace(/\/+$/, '')}/${src.value.replace(/\/+$/, '').slice(src.value.replace(/\/+$/, '').lastIndexOf('/') + 1)}`, known: true }, ...copiedContent(src, st, ctx) }));
}

/** A source's content, and for a directory its path (what a recursive copy or a move takes whole). */
function copiedContent(src: Field, st: State, ctx: Ctx): { content: Field; sourceDir?: string } {
  const path = resolveDir(st.cwd, src);
  if (path !== null && ctx.files?.read(path).kind === 'directory') return { content: { value: '', known: false }, sourceDir: path.replace(/\/+$/, '') || '/' };
  return { content: contentOf(src, st, ctx) };
}

/** What a file holds for a copy of it: what the line wrote there, else the disk, else unknown. */
function contentOf(src: Field, st: State, ctx: Ctx): Field {
  const path = resolveDir(st.cwd, src);
  if (path === null) return { value: '', known: false };
  const before = ctx.written?.get(path);
  if (before) return before;
  const r = ctx.files?.read(path);
  return r?.kind === 'text' ? { value: r.text, known: true } : { value: '', known: false };
}

/**
 * Files this command writes with content offhost can follow: `cat > f <<'EOF'`, `echo … > f`, `printf … >>
 * f`, `… | tee [-a] f`. Any other writer of a named file records it as unknown. Read back by
 * script-files.ts (writtenText) when the line runs or reads the file later.
 */
function recordWrites(node: SimpleCommandNode, fields: Field[], st: State, ctx: Ctx, stdin: Stdin): void {
  const prog = fields[0]!.known ? basenameOf(fields[0]!) : null;
  const write = (target: Field, content: Field | null, append: boolean): void => {
    const path = target.known ? resolveDir(st.cwd, target) : null;
    if (path === null) return;
    const written = (ctx.written ??= new Map());
    let text = content ?? { value: '', known: false };
    if (append) {
      const before = written.get(path);
      // Appending to a file the line did not write: what was there is not known here.
      text = before ? { value: before.value + text.value, known: before.known && text.known } : { value: '', known: false };
    }
    written.set(path, text);
    const counts = (ctx.writeCounts ??= new Map());
    counts.set(path, (counts.get(path) ?? 0) + 1);
  };
  for (const r of node.redirects) {
    if (!WRITE_OPS.has(r.op) || !r.target || (r.fd !== undefined && r.fd !== 1)) continue;
    const t = expandWord(r.target, st, ctx.home);
    if (t.length !== 1) continue;
    let content: Field | null = null;
    if (prog === 'cat' && fields.length === 1) content = stdin();
    else if (prog === 'echo' || prog === 'printf' || prog === 'cat') content = outputOf(fields, st, ctx, node.span);
    write(t[0]!, content, r.op === '>>' || r.op === '&>>');
  }
  if (prog === 'tee') {
    const append = fields.some((f) => f.known && /^-[a-z]*a|^--append$/.test(f.value));
    const text = stdin();
    for (const f of fields.slice(1)) if (!(f.known && f.value.startsWith('-'))) write(f, text, append);
  } else if (prog === 'cp' || prog === 'install' || prog === 'mv') {
    // `cp tools/build.sh x.sh && ./x.sh`: what runs is what was copied. A directory goes whole with
    // `cp -r`/`-R`/`-a` (cp refuses it otherwise) and with `mv`: its files are found under the copy.
    const whole = prog === 'mv' || (prog === 'cp' && fields.some((f) => f.known && /^(-[A-Za-z]*[rRa][A-Za-z]*|--recursive|--archive)$/.test(f.value)));
    for (const c of copied(fields, st, ctx)) {
      write(c.target, c.content, false);
      if (c.sourceDir !== undefined && whole) (ctx.copiedDirs ??= []).push({ target: c.target.value.replace(/\/+$/, ''), source: c.sourceDir });
    }
  }
}

/** `$EDITOR`, `"${VISUAL}"`, `${EDITOR:-vi}` as a command word, the variable not assigned in the line. */
function isEditorWord(word: Word, st: State): boolean {
  let parts = word.parts;
  if (parts.length === 1 && parts[0]!.type === 'DoubleQuoted') parts = parts[0]!.parts;
  const p = parts.length === 1 ? parts[0]! : null;
  if (!p || p.type !== 'Param' || !/^(EDITOR|VISUAL|GIT_EDITOR|SUDO_EDITOR)$/.test(p.name) || p.prefix || p.index) return false;
  if (st.vars.has(p.name)) return false;
  if (p.op === '') return true;
  // A default that is itself a plain word (`${EDITOR:-vi}`), judged as the editor too.
  return (p.op === ':-' || p.op === '-') && p.operands.every((w) => w.parts.every((x) => x.type === 'Literal' || x.type === 'SingleQuoted'));
}

const DIRECT_VIA = new Set(['builtin', 'command']);
const INFO_ONLY = { infoOnly: true };

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
  if (wrapDepth > 64) throw new NestedParseError('wrappers nested more than 64 deep', positionAt(ctx.text, span.start));
  // Inside a guess at an unknown program's arguments, every argv walked counts against the step budget:
  // guesses multiply the walk (src/shell/guess.ts).
  if (ctx.guessing && (ctx.nodes += fields.length) > ctx.maxNodes) throw new NestedParseError(`the line is too complex to judge (more than ${ctx.maxNodes} steps)`, positionAt(ctx.text, span.start));
  let name = basenameOf(fields[0]!);
  // `hash -p /usr/bin/make b; b build`: the name runs that file.
  const hashed = name !== null && fields[0]!.known && !fields[0]!.value.includes('/') ? st.hashed?.get(name) : undefined;
  if (hashed) {
    fields = [hashed, ...fields.slice(1)];
    name = basenameOf(hashed);
  }
  if (name === null) {
    emit(ctx, fields, env, cwd, span, st);
    return;
  }
  // A program linked or copied under another name earlier in the line (`ln -sf /usr/bin/make /tmp/b/cc
  // && PATH=/tmp/b:$PATH cc build`): what it runs is the target's, judged as well as the name.
  if (ctx.renamed && fields[0]!.known) {
    const target = renamedTarget(fields[0]!.value, cwd, ctx);
    // A copy whose source is named as it is run (`cp -t /tmp q.sh && /tmp/q.sh`: q.sh) is that same word: once.
    if (target !== null && target !== fields[0]!.value) withVia(ctx, `${fields[0]!.value} (links to ${target})`, () => runFields([{ value: target, known: true }, ...fields.slice(1)], env, cwd, st, ctx, span, stdin, wrapDepth + 1));
  }
  // A function defined earlier in the line: bash runs its body (at the top of a command; through a wrapper
  // the program of that name runs, but the body is walked too: fail closed).
  const fn = fields[0]!.known && !fields[0]!.value.includes('/') ? st.functions?.get(name) : undefined;
  if (fn) {
    callFunction(name, fn, fields.slice(1), st, ctx);
    if (wrapDepth === 0) return;
  }
  const call: Call = { name, fields, env, cwd, st, ctx, span, stdin, wrapDepth, direct: wrapDepth === 0 || ctx.via.every((v) => DIRECT_VIA.has(v)), grammar: undefined };
  if (fields[0]!.known && wrapDepth === 0 && st.expandAliases && st.aliases?.has(name)) {
    // An alias is text put in place of the word: walk `value args...` in this same shell. Whether it
    // applies depends on where the line breaks (bash reads a whole line first), so the command as
    // written is judged too: fail closed both ways.
    dispatch(call);
    const aliases = st.aliases!;
    const value = aliases.get(name)!;
    aliases.delete(name); // an alias is not expanded inside itself
    try {
      const rest = fields.slice(1);
      const text = { value: [value, ...rest.map((r) => r.value)].join(' '), known: value !== '\u0000unknown' && rest.every((r) => r.known) };
      runScript(text, 'eval', cwd, env, st, ctx, span, `alias ${name}`);
    } finally {
      aliases.set(name, value);
    }
    return;
  }
  dispatch(call);
}

/**
 * What a program name or path runs through the links and copies the line made: by path, the link at
 * that path; a bare name, a link of that name in any directory (PATH may be set to reach it). Null: none.
 */
function renamedTarget(word: string, cwd: string | null, ctx: Ctx): string | null {
  let at: string | null = word.includes('/') ? resolveDir(cwd, { value: word, known: true }) : null;
  let target: string | null = null;
  for (let hops = 0; hops < 8; hops++) {
    let next: string | undefined;
    if (at !== null) next = ctx.renamed!.get(at);
    else for (const [link, t] of ctx.renamed!) if (link.endsWith(`/${word}`)) next = t;
    if (next === undefined || next === target) break;
    target = next;
    at = next.includes('/') ? next : null;
    if (at === null) word = next;
  }
  return target;
}

/** A function's body, run in this shell with the call's arguments as $1, $2, ... (restored afterwards). */
function callFunction(name: string, body: Command, args: Field[], st: State, ctx: Ctx): void {
  const calling = (ctx.calling ??= []);
  if (calling.includes(name)) return; // recursion: its commands are counted already
  const saved: [string, VarValue | undefined][] = [];
  for (let i = 1; i <= Math.max(args.length, 9); i++) {
    saved.push([String(i), st.vars.get(String(i))]);
    const a = args[i - 1];
    if (a) st.vars.set(String(i), a.known ? a.value : null);
    else st.vars.delete(String(i));
  }
  calling.push(name);
  try {
    withVia(ctx, `function ${name}`, () => walkCommand(body, st, ctx));
  } finally {
    calling.pop();
    for (const [k, v] of saved) {
      if (v === undefined) st.vars.delete(k);
      else st.vars.set(k, v);
    }
  }
}

/** The program's module decides what the call runs; a program no module knows runs only itself. */
function dispatch(call: Call): void {
  const mod = programFor(call.name);
  if (!mod) {
    const at = call.ctx.out.length;
    emitPlain(call);
    guessArguments(call, WALKER, call.ctx.out[at]);
    return;
  }
  // Builtins and shells act only when their name is known as written (not `$X` that ends in `/cd`).
  if (!call.fields[0]!.known && mod.readsScript) return emitPlain(call);
  if (mod.grammar) call.grammar = mod.grammar;
  if (mod.walk) mod.walk(call, WALKER);
  else if (mod.unwrap) apply(mod.unwrap(call), call, true);
  else emitPlain(call);
}

function emitSelf(call: Call, cwd: string | null = call.cwd, fields: Field[] = call.fields): void {
  const grammar = call.grammar;
  emit(call.ctx, fields, call.env, cwd, call.span, call.st, grammar && isInfo(grammar, fields) ? INFO_ONLY : undefined);
}

/** A program that runs only itself; a file run by path is read (by its `#!` line) when files are read. */
function emitPlain(call: Call): void {
  emitSelf(call);
  const prog = call.fields[0]!;
  if (call.ctx.files && prog.known && prog.value.includes('/')) executableFile(call.fields, call.env, call.cwd, call.st, call.ctx, call.span);
}

function apply(u: Unwrapped, call: Call, withSelf = true): void {
  const { env, cwd, st, ctx, span } = call;
  switch (u.kind) {
    case 'none':
      if (withSelf) emitPlain(call);
      return;
    case 'many':
      if (withSelf) emitSelf(call);
      for (const item of u.items) apply(item, { ...call, stdin: NO_STDIN }, false);
      return;
    case 'run': {
      if (withSelf) emitSelf(call);
      const innerEnv = { ...env };
      for (const [k, v] of u.env ?? []) innerEnv[k] = v.known ? v.value : UNKNOWN_VALUE + v.value;
      let innerCwd = u.absoluteCwd !== undefined ? u.absoluteCwd : u.cwd ? resolveDir(cwd, u.cwd) : cwd;
      if (u.cwdUnknown) innerCwd = null;
      const argv = u.extraUnknownArg ? [...u.argv, { value: '<stdin>', known: false }] : u.argv;
      const container = u.container;
      if (container) inContainer(ctx, container, () => withVia(ctx, u.via, () => runFields(argv, innerEnv, container.workdir, st, ctx, span, call.stdin, call.wrapDepth + 1)));
      else {
        // Every wrapper (sudo, env, nice, timeout…) comes through here: no closures on this path.
        ctx.via.push(u.via);
        try {
          runFields(argv, innerEnv, innerCwd, st, ctx, span, call.stdin, call.wrapDepth + 1);
        } finally {
          ctx.via.pop();
        }
      }
      return;
    }
    case 'script': {
      if (withSelf) emitSelf(call);
      let innerCwd = u.absoluteCwd !== undefined ? u.absoluteCwd : u.cwd ? resolveDir(cwd, u.cwd) : cwd;
      if (u.cwdUnknown) innerCwd = null;
      const container = u.container;
      if (container) inContainer(ctx, container, () => runScript(u.text, u.via, container.workdir, env, st, ctx, span));
      else runScript(u.text, u.via, innerCwd, env, st, ctx, span);
      return;
    }
    case 'stdin-script': {
      if (withSelf) emitSelf(call);
      runScript(call.stdin() ?? { value: '', known: false }, `${u.via} <stdin`, cwd, env, st, ctx, span);
      return;
    }
    case 'file-script':
      if (withSelf) emitSelf(call);
      if (u.foreign) {
        // Not bash (fish): its scripts cannot be read with this parser.
        if (ctx.files) unknownScript(u.file, `${u.via} ${u.file.value}`, env, cwd, st, ctx, span);
        return;
      }
      scriptFile(u.file, u.args, u.via, u.sourced, env, cwd, st, ctx, span);
      return;
    case 'package-script':
      if (withSelf) emitSelf(call);
      if (!packageScript(u, env, cwd, st, ctx, span)) apply(u.fallback, call, false);
      return;
  }
}

/** Parses a string that a shell (or eval) will run, and walks it in its own scope. */
/**
 * Walks `f` inside a container (when there is one): its directories are the container's, mapped to the
 * laptop through its bind mounts when emitted, and files are read through the same mounts.
 */
function inContainer(ctx: Ctx, view: ContainerView | undefined, f: () => void): void {
  if (!view) return f();
  const saved = { container: ctx.container, files: ctx.files };
  const v = ctx.container ? nestedView(ctx.container, view) : view;
  ctx.container = v;
  if (saved.files) ctx.files = containerFiles(saved.files, v);
  try {
    f();
  } finally {
    if (saved.container) ctx.container = saved.container;
    else delete ctx.container;
    ctx.files = saved.files;
  }
}

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
  if (!shared && st.exported) {
    // A child shell's environment: what this shell exported stays exported there, so every command the
    // child runs gets it (`export WLR_BACKENDS=headless; bash -c labwc`, `export MAKEFLAGS=n; sh -c 'make'`).
    for (const k of st.exported) {
      const v = st.vars.get(k);
      if (v === undefined) continue;
      inner.vars.set(k, v);
      (inner.exported ??= new Set()).add(k);
    }
  }
  // Variables assigned inline (`X=1 bash -c …`, `env X=1 sh -c …`) are in the child's environment too.
  for (const [k, v] of Object.entries(env)) {
    inner.vars.set(k, isUnknownValue(v) ? null : v);
    if (!shared) (inner.exported ??= new Set()).add(k);
  }
  if (opts.positional) opts.positional.forEach((a, i) => inner.vars.set(String(i + 1), a.known ? a.value : null));
  if (!shared && st.functions) inner.functions = new Map(st.functions);
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

const WALKER: Walker = { runFields, runScript, apply, emitSelf, outputOf };
