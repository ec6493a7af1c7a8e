// Ruby's process spawns, read from its tokens: system, exec, spawn (Kernel's and Process's), IO.popen,
// Open3's capture*/popen*/pipeline*, PTY.spawn, backticks and %x(), with or without parentheses: one
// string is a shell line, several words an argv, `[cmd, argv0]` first names the program, a leading env
// hash is skipped and `chdir:` moves it; Dir.chdir before them, and eval of a literal (read again as
// Ruby). Limits: no evaluation (a variable holding a command is unknown), no here-documents.
import { argOf, closerOf, Cwd, isSpaceAt, listArgs, listSpawn, matching, mentions, option, pieceOf, positional, numberTok, punct, quoted, quotedTok, regexEnd, regexMayStart, splitCommas, unescape, type Arg, type Tok } from './tokens.js';
import type { InlineLanguage, Piece, Spawned } from './types.js';

const ARGV = /\bARGV\b/;
const CONCAT = new Set(['+']);
const KEYWORDS = new Set(['return', 'and', 'or', 'not', 'if', 'unless', 'while', 'until', 'when', 'puts', 'p', 'print', 'split', 'scan', 'match', 'sub', 'gsub', 'then', 'do']);
const SPAWNY = /\b(system|exec|spawn|popen|Open3|PTY|eval)\b|`|%x/;
const KERNEL = new Set(['system', 'exec', 'spawn']);
const QUALIFIED: Record<string, Set<string>> = {
  Kernel: new Set(['system', 'exec', 'spawn']),
  Process: new Set(['spawn', 'exec']),
  IO: new Set(['popen']),
  Open3: new Set(['capture2', 'capture2e', 'capture3', 'popen2', 'popen2e', 'popen3', 'pipeline', 'pipeline_r', 'pipeline_w', 'pipeline_rw', 'pipeline_start']),
  PTY: new Set(['spawn', 'getpty']),
};
const LIST_END = new Set(['if', 'unless', 'while', 'until', 'or', 'and', 'rescue', 'do']);

function interpolates(raw: string): boolean {
  return /(?:^|[^\\])(?:\\\\)*#[{@$]/.test(raw);
}

function lex(code: string): Tok[] | null {
  const toks: Tok[] = [];
  let i = 0;
  const push = (t: Tok) => toks.push(t);
  while (i < code.length) {
    const c = code[i]!;
    if (c === '\n') {
      if (code.startsWith('\n=begin', i)) {
        const end = code.indexOf('\n=end', i + 1);
        i = end < 0 ? code.length : end + 5;
        continue;
      }
      push({ t: 'p', v: ';' });
      i++;
    } else if (isSpaceAt(code, i)) i++;
    else if (c === '#') {
      while (i < code.length && code[i] !== '\n') i++;
    } else if ((c === '$' || c === '@') && /[A-Za-z_@]/.test(code[i + 1] ?? '')) {
      const m = /^[$@]@?[A-Za-z_][A-Za-z0-9_]*/.exec(code.slice(i, i + 256))![0];
      push({ t: 'id', v: m });
      i += m.length;
    } else if (c === ':' && /[A-Za-z_]/.test(code[i + 1] ?? '') && code[i - 1] !== ':') {
      const m = /^:[A-Za-z_][A-Za-z0-9_]*[?!]?/.exec(code.slice(i, i + 256))![0];
      push({ t: 'id', v: m });
      i += m.length;
    } else if (/[A-Za-z_]/.test(c)) {
      const m = /^[A-Za-z_][A-Za-z0-9_]*[?!]?/.exec(code.slice(i, i + 256))![0];
      if (m === '__END__') break;
      push({ t: 'id', v: m });
      i += m.length;
    } else if (/[0-9]/.test(c) || c === "'" || c === '"' || c === '`') {
      const r = /[0-9]/.test(c) ? numberTok(code, i) : quotedTok(code, i, interpolates);
      if (!r) return null;
      push(r.tok);
      i = r.end;
    } else if (c === '%' && regexMayStart(toks[toks.length - 1], KEYWORDS) && /^[wWiIqQxrs]?[^\w\s=]/.test(code.slice(i + 1, i + 3))) {
      const type = /[wWiIqQxrs]/.test(code[i + 1]!) ? code[i + 1]! : 'Q';
      const at = type === 'Q' && !/[wWiIqQxrs]/.test(code[i + 1]!) ? i + 1 : i + 2;
      const r = quoted(code, at, code[at]!, closerOf(code[at]!));
      if (!r) return null;
      if (type === 'w' || type === 'W' || type === 'i' || type === 'I') push({ t: 'words', v: r.raw.split(/\s+/).filter(Boolean) });
      else if (type === 'q') push({ t: 'str', v: r.raw, known: true });
      else if (type === 'x') push({ t: 'cmd', v: unescape(r.raw, false), known: !interpolates(r.raw) });
      else if (type === 'r') push({ t: 're' });
      else push({ t: 'str', v: unescape(r.raw, false), known: !interpolates(r.raw) });
      i = r.end;
    } else if (c === '?' && /[A-Za-z]/.test(code[i + 1] ?? '') && !/[A-Za-z0-9_]/.test(code[i + 2] ?? '') && regexMayStart(toks[toks.length - 1], KEYWORDS)) {
      push({ t: 'str', v: code[i + 1]!, known: true });
      i += 2;
    } else if (c === '/' && regexMayStart(toks[toks.length - 1], KEYWORDS)) {
      const end = regexEnd(code, i);
      if (end === null) return null;
      push({ t: 're' });
      i = end;
    } else {
      const p = punct(code, i);
      push({ t: 'p', v: p });
      i += p.length;
    }
  }
  return toks;
}

function command(call: string, args: Arg[], cwdT: Cwd, firstOnly: boolean): Spawned {
  let pos = positional(args);
  const cwd = cwdT.at(option(args, 'chdir'));
  if (pos[0]?.k === 'obj') pos = pos.slice(1); // the environment hash
  if (pos.length > 1 && pos[pos.length - 1]!.k === 'obj') pos = pos.slice(0, -1); // the options hash
  if (firstOnly) pos = pos.slice(0, 1);
  const first = pos[0];
  if (first?.k === 'list' && !firstOnly && first.items.length === 2) {
    // system(["/usr/bin/make", "cc"], "build"): the program, then its argv[0].
    const rest: Piece[] = pos.slice(1).map(pieceOf);
    return first.items[0]!.known ? { kind: 'argv', call, argv: [first.items[0]!, ...rest], cwd } : { kind: 'unknown', call, argvDerived: mentions(first, ARGV), cwd };
  }
  return listSpawn(call, pos, cwd, ARGV);
}

/** Calls that reach a method by its name. */
const BY_NAME = new Set(['send', 'public_send', '__send__', 'method', 'public_method', 'instance_method', 'singleton_method']);

function spawnsOf(code: string, depth: number): Spawned[] {
  const toks = lex(code);
  if (toks === null) return SPAWNY.test(code) ? [{ kind: 'unknown', call: 'ruby code offhost cannot read', argvDerived: false }] : [];
  const out: Spawned[] = [];
  const cwd = new Cwd();
  const idAt = (k: number) => (toks[k]?.t === 'id' ? (toks[k] as { v: string }).v : null);
  const pAt = (k: number) => (toks[k]?.t === 'p' ? (toks[k] as { v: string }).v : null);
  for (let i = 0; i < toks.length; i++) {
    const t = toks[i]!;
    if (t.t === 'cmd') {
      out.push(t.known ? { kind: 'shell', call: '`…`', text: { value: t.v, known: true }, cwd: cwd.at() } : { kind: 'unknown', call: '`…`', argvDerived: ARGV.test(t.v), cwd: cwd.at() });
      continue;
    }
    if (t.t !== 'id') continue;
    const member = pAt(i - 1) === '.' || pAt(i - 1) === '::';
    const owner = member ? idAt(i - 2) : null;
    if (pAt(i + 1) === ':' || pAt(i + 1) === '=>' || pAt(i + 1) === '=') continue; // a hash key, an assignment
    if (member && owner === 'Dir' && t.v === 'chdir') {
      const { args, end } = listArgs(toks, CONCAT, LIST_END, i + 1);
      cwd.chdir(positional(args)[0]);
      i = end - 1;
      continue;
    }
    if (!member && (t.v === 'eval' || t.v === 'instance_eval')) {
      const { args, end } = listArgs(toks, CONCAT, LIST_END, i + 1);
      const src = positional(args)[0];
      if (src?.k === 'str' && src.piece.known && depth < 4) out.push(...spawnsOf(src.piece.value, depth + 1));
      else if (src?.k === 'other' && SPAWNY.test(src.text)) out.push({ kind: 'unknown', call: 'eval', argvDerived: false, cwd: cwd.at() });
      i = end - 1;
      continue;
    }
    const spawns = member ? owner !== null && QUALIFIED[owner]?.has(t.v) === true : KERNEL.has(t.v);
    if (!spawns) continue;
    const name = member ? `${owner}.${t.v}` : t.v;
    const { args, end } = listArgs(toks, CONCAT, LIST_END, i + 1);
    if (args.length === 0 && pAt(i + 1) !== '(') {
      // `method(:system)`, `send(:system, …)` reach it elsewhere; the name alone with no arguments runs nothing.
      i = end - 1;
      continue;
    }
    out.push(command(name, args, cwd, owner === 'IO'));
    i = end - 1;
  }
  // send(:system, …), method(:spawn): a spawn function reached by name; send/public_send/method with a name
  // the code computes (`public_send("sys" + "tem", …)`), or a string naming a spawn: the same.
  for (let i = 0; i < toks.length; i++) {
    const t = toks[i]!;
    if (t.t === 'id' && /^:(system|exec|spawn|popen|capture[23]e?)$/.test(t.v)) out.push({ kind: 'unknown', call: `${t.v.slice(1)} (reached by name)`, argvDerived: false, cwd: cwd.at() });
    else if (t.t === 'id' && BY_NAME.has(t.v) && (pAt(i + 1) === '(' || toks[i + 1]?.t === 'str' || toks[i + 1]?.t === 'id')) {
      const first = positional(listArgs(toks, CONCAT, LIST_END, i + 1).args)[0];
      const symbol = first?.k === 'other' && /^:\w+[?!]?$/.test(first.text.trim());
      const literal = first?.k === 'str' && first.piece.known ? first.piece.value : null;
      if (first && !symbol && (literal === null || /^(system|exec|spawn|popen|capture[23]e?|`)$/.test(literal))) out.push({ kind: 'unknown', call: `${t.v} (a method named at run time)`, argvDerived: false, cwd: cwd.at() });
    }
  }
  return out;
}

export const ruby: InlineLanguage = { name: 'ruby', spawns: (code) => spawnsOf(code, 0) };
