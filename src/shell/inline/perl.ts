// Perl's process spawns, read from its tokens: system and exec (a list, a one-string shell line, or the
// indirect-object form `exec {"/usr/bin/make"} "cc", "build"`, where the block's value is the program
// and the list its argv from argv[0]), backticks, qx//, readpipe, piped opens (`open my $fh, "-|",
// "make", "build"`, `open(F, "make |")`), chdir before them, and `eval "string"` (read again as Perl);
// `CORE::system` and `POSIX::system` are system. Unknown: a sub called by a computed name (`&$f(…)`,
// `&{"…"}(…)`), and the functions of the modules that start processes (IPC::Open3, IPC::Cmd, IPC::Run…).
// Quote-like operators (q, qq, qw, qx, m, qr, s, tr, y) are read with their delimiters, a regular
// expression is told from a division by the token before it. Limits: no evaluation (a variable holding
// a command is unknown), no here-documents, no source filters.
import { argOf, closerOf, Cwd, isSpaceAt, listArgs, listSpawn, matching, mentions, pieceOf, positional, numberTok, punct, quoted, quotedTok, regexEnd, regexMayStart, splitCommas, unescape, type Arg, type Tok } from './tokens.js';
import type { InlineLanguage, Piece, Spawned } from './types.js';

const ARGV = /ARGV/;
const CONCAT = new Set(['.']);
const KEYWORDS = new Set(['return', 'and', 'or', 'not', 'if', 'unless', 'while', 'until', 'split', 'grep', 'map', 'join', 'push', 'unshift', 'x', 'lt', 'gt', 'le', 'ge', 'eq', 'ne', 'cmp', 'print', 'when']);
const QUOTE_LIKE = new Set(['q', 'qq', 'qw', 'qx', 'm', 'qr', 's', 'tr', 'y']);
const SPAWNY = /\b(system|exec|qx|readpipe|open|eval)\b|`/;
/** Modules that start processes, and their functions (qualified, or imported by a `use` of the module). */
const IPC_USE = /\b(use|require)\s+(IPC::(Open2|Open3|Cmd|Run|Run3|System::Simple)|Proc::(Background|Simple)|Capture::Tiny|Expect)\b/;
/** Their functions: qualified, or names no other code uses (open3, run3, systemx...), or generic names once the module is used. */
const IPC_QUALIFIED = /^(IPC::(Open2|Open3|Cmd|Run|Run3|System::Simple)|Proc::Background|Capture::Tiny|Expect)::\w+$/;
const IPC_DISTINCT = /^(open2|open3|run3|runx|systemx|capturex)$/;
const IPC_GENERIC = /^(run|start|harness|capture|spawn)$/;
/** Words ending a list operator's arguments (`system "make" or die`). */
const LIST_END = new Set(['or', 'and', 'if', 'unless', 'while', 'until', 'foreach', 'for', 'xor']);

/** Interpolation in a double-quoted perl string: `$x`, `${…}`, `@x`, `@{…}` not escaped. */
function interpolates(raw: string): boolean {
  return /(?:^|[^\\])(?:\\\\)*[$@](?:[A-Za-z_{:]|\$)/.test(raw);
}

function lex(code: string): Tok[] | null {
  const toks: Tok[] = [];
  let i = 0;
  const push = (t: Tok) => toks.push(t);
  while (i < code.length) {
    const c = code[i]!;
    if (isSpaceAt(code, i)) i++;
    else if (c === '#') {
      while (i < code.length && code[i] !== '\n') i++;
    } else if ((c === '$' || c === '@') && /[A-Za-z_:]/.test(code[i + 1] ?? '')) {
      const m = /^[$@][A-Za-z_:][A-Za-z0-9_:]*/.exec(code.slice(i, i + 256))![0];
      push({ t: 'id', v: m });
      i += m.length;
    } else if (c === '$' && /[0-9$!@&_]/.test(code[i + 1] ?? '')) {
      push({ t: 'id', v: code.slice(i, i + 2) });
      i += 2;
    } else if (/[A-Za-z_]/.test(c)) {
      const m = /^[A-Za-z_][A-Za-z0-9_]*(?:::[A-Za-z_][A-Za-z0-9_]*)*/.exec(code.slice(i, i + 256))![0];
      if (m === '__END__' || m === '__DATA__') break;
      let j = i + m.length;
      while (code[j] === ' ' || code[j] === '\t') j++;
      const d = code[j];
      const prev = toks[toks.length - 1];
      const isKey = code.startsWith('=>', j) || (prev?.t === 'p' && (prev.v === '->' || prev.v === '{') && code[j] === '}');
      if (QUOTE_LIKE.has(m) && d !== undefined && /[^\w\s,;)=]/.test(d) && !isKey && !(m === 's' || m === 'y' || m === 'q' ? d === '=' : false)) {
        const r = quoteLike(code, m, j);
        if (!r) return null;
        push(r.tok);
        i = r.end;
        continue;
      }
      push({ t: 'id', v: m });
      i += m.length;
    } else if (/[0-9]/.test(c) || c === "'" || c === '"' || c === '`') {
      const r = /[0-9]/.test(c) ? numberTok(code, i) : quotedTok(code, i, interpolates);
      if (!r) return null;
      push(r.tok);
      i = r.end;
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

function quoteLike(code: string, op: string, at: number): { tok: Tok; end: number } | null {
  const open = code[at]!;
  const close = closerOf(open);
  const first = quoted(code, at, open, close);
  if (!first) return null;
  let end = first.end;
  if (op === 's' || op === 'tr' || op === 'y') {
    // s/a/b/ shares the middle delimiter; s{a}{b} has a second bracketed part, maybe after spaces.
    let second: { raw: string; end: number } | null;
    if (open === close) second = quoted(code, end - 1, open, close);
    else {
      let k = end;
      while (/\s/.test(code[k] ?? '')) k++;
      second = quoted(code, k, code[k] ?? '', closerOf(code[k] ?? ''));
    }
    if (!second) return null;
    end = second.end;
  }
  while (/[a-z]/.test(code[end] ?? '')) end++;
  const raw = first.raw;
  switch (op) {
    case 'q':
      return { tok: { t: 'str', v: raw.replace(/\\([\\'])/g, '$1'), known: true }, end };
    case 'qq':
      return { tok: { t: 'str', v: unescape(raw, false), known: !interpolates(raw) }, end };
    case 'qw':
      return { tok: { t: 'words', v: raw.split(/\s+/).filter(Boolean) }, end };
    case 'qx':
      return { tok: { t: 'cmd', v: open === "'" ? raw : unescape(raw, false), known: open === "'" || !interpolates(raw) }, end };
    default:
      return { tok: { t: 're' }, end };
  }
}

function spawnsOf(code: string, depth: number): Spawned[] {
  const toks = lex(code);
  if (toks === null) return SPAWNY.test(code) ? [{ kind: 'unknown', call: 'perl code offhost cannot read', argvDerived: false }] : [];
  const out: Spawned[] = [];
  const cwd = new Cwd();
  for (let i = 0; i < toks.length; i++) {
    const t = toks[i]!;
    if (t.t === 'cmd') {
      out.push(t.known ? { kind: 'shell', call: 'qx', text: { value: t.v, known: true }, cwd: cwd.at() } : { kind: 'unknown', call: 'qx', argvDerived: ARGV.test(t.v), cwd: cwd.at() });
      continue;
    }
    // `&$f(…)`, `&{"CORE::sys" . "tem"}(…)`: a sub called by a name computed at run time.
    if (t.t === 'p' && t.v === '&' && !(toks[i - 1]?.t === 'p' && (toks[i - 1] as { v: string }).v === '&')) {
      const n: Tok | undefined = toks[i + 1];
      const called = n?.t === 'id' && n.v.startsWith('$') ? i + 2 : n?.t === 'p' && n.v === '{' ? matching(toks, i + 1) + 1 : -1;
      if (called > 0 && (toks[called]?.t === 'p' && ['(', ';'].includes((toks[called] as { v: string }).v) || toks[called] === undefined)) {
        out.push({ kind: 'unknown', call: '&… (a sub named at run time)', argvDerived: false, cwd: cwd.at() });
      }
      continue;
    }
    if (t.t !== 'id') continue;
    const prev = toks[i - 1];
    // `$h->{system}`, `Foo::system`, `->exec(`: a method or a hash key, not the builtin.
    if (prev?.t === 'p' && (prev.v === '->' || prev.v === '{')) continue;
    // The modules that start processes (IPC::Open2/3, IPC::Cmd, IPC::Run, IPC::Run3, IPC::System::Simple,
    // Proc::Background…): a call of one of their functions is unknown (its arguments are not read).
    if ((IPC_QUALIFIED.test(t.v) || IPC_DISTINCT.test(t.v) || (IPC_GENERIC.test(t.v) && IPC_USE.test(code))) && !(toks[i + 1]?.t === 'p' && ['=>', '}'].includes((toks[i + 1] as { v: string }).v))) {
      out.push({ kind: 'unknown', call: `${t.v} (a process module)`, argvDerived: false, cwd: cwd.at() });
      continue;
    }
    const name = t.v.replace(/^(CORE::(GLOBAL::)?|POSIX::)/, '');
    const next = toks[i + 1];
    if (next?.t === 'p' && (next.v === '=>' || next.v === '}')) continue;
    if (name === 'system' || name === 'exec') {
      let j = i + 1;
      let program: Piece | null = null;
      if (next?.t === 'p' && next.v === '{') {
        // exec {PROGRAM} LIST: the program is the block's value; LIST is its argv from argv[0].
        const close = matching(toks, j);
        program = pieceOf(argOf(toks, j + 1, close, CONCAT));
        j = close + 1;
      }
      const { args, end } = listArgs(toks, CONCAT, LIST_END, j);
      if (program) {
        const list = listSpawn(name, args, cwd.at(), ARGV);
        const argv = list.kind === 'argv' ? list.argv : list.kind === 'shell' ? [list.text] : [{ value: '…', known: false }];
        out.push(program.known ? { kind: 'argv', call: `${name} {…}`, argv: [program, ...argv.slice(1)], cwd: cwd.at() } : { kind: 'unknown', call: `${name} {…}`, argvDerived: false, cwd: cwd.at() });
      } else out.push(listSpawn(name, args, cwd.at(), ARGV));
      i = end - 1;
    } else if (name === 'readpipe') {
      const { args, end } = listArgs(toks, CONCAT, LIST_END, i + 1);
      out.push(listSpawn(name, args.slice(0, 1), cwd.at(), ARGV));
      i = end - 1;
    } else if (name === 'open') {
      const { args, end } = listArgs(toks, CONCAT, LIST_END, i + 1);
      const pos = positional(args);
      const mode = pos[1];
      if (pos.length >= 3 && mode?.k === 'str' && /^\s*(-\||\|-)\s*$/.test(mode.piece.value)) out.push(listSpawn('open', pos.slice(2), cwd.at(), ARGV));
      else if (pos.length === 2 && mode?.k === 'str' && /^\s*\||\|\s*$/.test(mode.piece.value)) {
        const text = mode.piece.value.replace(/^\s*\|\s*|\s*\|\s*$/g, '');
        out.push(mode.piece.known ? { kind: 'shell', call: 'open', text: { value: text, known: true }, cwd: cwd.at() } : { kind: 'unknown', call: 'open', argvDerived: false, cwd: cwd.at() });
      } else if (pos.length >= 2 && (mode?.k !== 'str' || !mode.piece.known)) {
        // A mode or a two-argument name computed at run time may be a pipe.
        out.push({ kind: 'unknown', call: 'open', argvDerived: mentions(mode, ARGV), cwd: cwd.at() });
      }
      i = end - 1;
    } else if (name === 'chdir') {
      const { args, end } = listArgs(toks, CONCAT, LIST_END, i + 1);
      cwd.chdir(args[0]);
      i = end - 1;
    } else if (name === 'eval' && !(next?.t === 'p' && next.v === '{')) {
      const { args, end } = listArgs(toks, CONCAT, LIST_END, i + 1);
      const src = args[0];
      if (src?.k === 'str' && src.piece.known && depth < 4) out.push(...spawnsOf(src.piece.value, depth + 1));
      else if (src && src.k !== 'str' && SPAWNY.test(src.k === 'other' ? src.text : '')) out.push({ kind: 'unknown', call: 'eval', argvDerived: false, cwd: cwd.at() });
      i = end - 1;
    }
  }
  return out;
}

export const perl: InlineLanguage = { name: 'perl', spawns: (code) => spawnsOf(code, 0) };
