// A checker for laptop-side shell code (issue 26): what must run on a Mac, whose /bin/bash is 3.2, whose
// /bin/sh may be dash, and whose userland is BSD's. It tokenizes (quotes, comments, heredocs, command
// substitutions, `case` patterns), finds the commands that would run, and reports:
//   - GNU-only programs and options (`timeout`, `readlink -f`, `sed -i` without a suffix, `stat -c` ...);
//   - in bash code, bash-4-only syntax (associative arrays, `${x,,}`, `mapfile`, `|&`, `&>>`, `coproc`,
//     `;&`, `{fd}>`, `$BASHPID`, `READLINE_LINE` ...), except inside `if` blocks whose condition tests
//     BASH_VERSINFO (code that only runs on a newer bash);
//   - in sh code, what dash refuses (`[[`, arrays, `$'…'`, `<<<`, `&>`, `function`, `source`).
// Each finding names the line and column and gives the portable form. Words that are data (quoted
// arguments, comments, heredoc bodies, `case` patterns) never count; a program word counts however it is
// quoted or spaced (`'timeout' 5 x`, `sed  -i  s/a/b/ f`).

export type Dialect = 'sh' | 'bash' | 'zsh' | 'fish';

export interface PortFinding {
  line: number;
  column: number;
  what: string;
  portable: string;
}

interface Word {
  /** After quote removal (expansions kept as written). */
  text: string;
  /** As written. */
  raw: string;
  at: number;
  /** Some part of it was quoted. */
  quoted: boolean;
}
type Tok = { kind: 'word'; w: Word } | { kind: 'op'; op: string; at: number };

const OPS = ['&>>', ';;&', '<<<', '<<-', '&&', '||', '|&', ';;', ';&', '&>', '>>', '>|', '>&', '<&', '<<', '<>', '|', '&', ';', '<', '>', '(', ')', '\n'];
const SEPARATORS = new Set(['&&', '||', '|&', '|', '&', ';', ';;', ';&', ';;&', '\n', '(', ')']);
const REDIRS = new Set(['&>>', '<<<', '&>', '>>', '>|', '>&', '<&', '<>', '<', '>']);
/** Words after which a new command starts (reserved words and fish's keywords). */
const COMMAND_PREFIX = new Set(['if', 'then', 'else', 'elif', 'while', 'until', 'do', '!', '{', '}', 'time', 'and', 'or', 'not', 'begin']);
/** Words that run the next word as the command. */
const RUNNERS = new Set(['command', 'builtin', 'exec', 'nohup', 'noglob', 'nocorrect', 'env']);

const GNU_PROGRAMS: Record<string, string> = {
  timeout: "a background job and a killer: `cmd & p=$!; ( sleep N; kill \"$p\" ) & wait \"$p\"` (or let node's timers do it)",
  gtimeout: 'the same as timeout (gtimeout is Homebrew coreutils, not on a stock Mac)',
  setsid: 'job control (`set -m`: a background job gets its own process group), or node `spawn(..., { detached: true })`',
  sha256sum: '`shasum -a 256`',
  sha1sum: '`shasum -a 1`',
  sha512sum: '`shasum -a 512`',
  md5sum: '`cksum` (or `shasum`)',
  nproc: '`getconf _NPROCESSORS_ONLN`',
  tac: '`tail -r` (BSD) or `awk \'{l[NR]=$0} END {for (i=NR;i;i--) print l[i]}\'`',
  stdbuf: 'nothing portable: write the program to flush, or use a pty',
  flock: 'an atomic `mkdir LOCKDIR` (removed on exit)',
  shuf: '`awk` with `srand()`',
  numfmt: '`awk` or `printf`',
  mapfile: 'a `while IFS= read -r line; do …; done` loop (mapfile is bash 4)',
  readarray: 'a `while IFS= read -r line; do …; done` loop (readarray is bash 4)',
  coproc: 'a named pipe (`mkfifo`) and a background job (coproc is bash 4)',
};
/** Programs whose `--long` options are GNU's (BSD's have single-letter ones only). */
const COREUTILS = new Set(['ls', 'cp', 'mv', 'rm', 'mkdir', 'rmdir', 'ln', 'cat', 'head', 'tail', 'sort', 'uniq', 'wc', 'cut', 'tr', 'touch', 'chmod', 'chown', 'du', 'df', 'date', 'stat', 'readlink', 'mktemp', 'install', 'sed', 'xargs', 'basename', 'dirname', 'tee', 'split', 'od', 'nl', 'env', 'uname', 'id']);

/** Short option letters of a word (`-abc` -> abc), null for a non-option. */
function shortFlags(w: string): string | null {
  return /^-[A-Za-z0-9]+$/.test(w) ? w.slice(1) : null;
}

function gnuOptions(program: string, args: Word[]): { at: number; what: string; portable: string } | null {
  const words = args.map((a) => a.text);
  for (let i = 0; i < words.length; i++) {
    const a = words[i]!;
    if (a === '--') break;
    const at = args[i]!.at;
    if (a.startsWith('--') && COREUTILS.has(program)) return { at, what: `\`${program} ${a.replace(/=.*/, '')}\` is a GNU long option`, portable: `the short, POSIX options of ${program}` };
    const f = shortFlags(a);
    if (f === null) continue;
    switch (program) {
      case 'readlink':
        if (/[fem]/.test(f)) return { at, what: '`readlink -f` (GNU; not before macOS 12.3, not in busybox everywhere)', portable: 'a loop over `readlink FILE` (no option) with `cd -P DIR && pwd -P`' };
        break;
      case 'sed':
        if (f === 'i' || (f.endsWith('i') && !f.includes('e'))) {
          const next = words[i + 1];
          return { at, what: next === '' ? "`sed -i ''` (BSD only: GNU sed takes '' for the script)" : '`sed -i` without a suffix (GNU only: BSD sed takes the next word for the suffix)', portable: "`sed -i.bak 'SCRIPT' FILE && rm FILE.bak`, or write to a temp file and `mv` it" };
        }
        if (f.includes('r')) return { at, what: '`sed -r` (GNU)', portable: '`sed -E`' };
        break;
      case 'stat':
        if (f.includes('c')) return { at, what: '`stat -c` (GNU; BSD stat takes -f with other letters)', portable: '`wc -c < FILE` for a size, `ls -ld` for the rest, or node' };
        break;
      case 'date':
        if (f.includes('d')) return { at, what: '`date -d` (GNU; BSD date -d sets the DST flag)', portable: '`date -u +%s` arithmetic, or node' };
        break;
      case 'grep':
        if (f.includes('P')) return { at, what: '`grep -P` (GNU)', portable: '`grep -E`' };
        break;
      case 'xargs':
        if (f.includes('r')) return { at, what: '`xargs -r` (GNU)', portable: 'test for empty input first' };
        break;
      case 'find':
        break;
      case 'cp':
        if (f.includes('t') || f.includes('T')) return { at, what: `\`cp -${f}\` (GNU)`, portable: '`cp SRC... DIR`' };
        break;
      case 'base64':
        if (f.includes('w')) return { at, what: '`base64 -w` (GNU)', portable: "`base64 | tr -d '\\n'`" };
        break;
    }
  }
  if (program === 'find') {
    const p = words.find((w) => w === '-printf' || w === '-regextype');
    if (p) return { at: args[words.indexOf(p)]!.at, what: `\`find ${p}\` (GNU)`, portable: '`find … -exec`, or `-print` and `sed`' };
  }
  return null;
}

const BASH4_VARS: Record<string, string> = {
  BASHPID: '`$(exec sh -c \'echo "$PPID"\')` (BASHPID is bash 4)',
  EPOCHSECONDS: '`date +%s` (bash 5)',
  EPOCHREALTIME: 'node, or `date +%s` (bash 5)',
  READLINE_LINE: 'nothing in bash 3.2: keep readline-editing code under a BASH_VERSINFO test (READLINE_LINE is bash 4)',
  READLINE_POINT: 'nothing in bash 3.2: keep it under a BASH_VERSINFO test (READLINE_POINT is bash 4)',
};
const BASH4_SHOPTS = new Set(['globstar', 'autocd', 'checkjobs', 'dirspell', 'direxpand', 'lastpipe', 'globasciiranges', 'inherit_errexit', 'localvar_inherit', 'localvar_unset', 'assoc_expand_once', 'compat31', 'compat40', 'compat41', 'patsub_replacement', 'varredir_close', 'noexpand_translation']);

/** The tokenizer and command finder. */
class Checker {
  private i = 0;
  readonly out: PortFinding[] = [];
  constructor(
    private readonly src: string,
    private readonly dialect: Dialect,
  ) {}

  private pos(at: number): { line: number; column: number } {
    let line = 1;
    let last = -1;
    for (let k = 0; k < at && k < this.src.length; k++) if (this.src[k] === '\n') ((line++), (last = k));
    return { line, column: at - last };
  }

  report(at: number, what: string, portable: string): void {
    this.out.push({ ...this.pos(at), what, portable });
  }

  /** bash-4 findings wait for the end: whether a version test guards them is known only then. */
  private pending: { at: number; what: string; portable: string }[] = [];
  /** Text ranges under a BASH_VERSINFO test (`then` … its `elif`/`else`/`fi`). */
  private guarded: [number, number][] = [];
  private guardStarts: number[] = [];

  private bash4(at: number, what: string, portable: string): void {
    if (this.dialect === 'bash') this.pending.push({ at, what: `${what} (bash 4+; a Mac's /bin/bash is 3.2)`, portable });
  }

  finish(): void {
    for (const p of this.pending) if (!this.guarded.some(([a, b]) => p.at >= a && p.at < b)) this.report(p.at, p.what, p.portable);
  }

  private opFinding(op: string, at: number): void {
    if (op === '|&') this.bash4(at, '`|&`', '`2>&1 |`');
    if (op === '&>>') this.bash4(at, '`&>>`', '`>> FILE 2>&1`');
    if (op === ';&' || op === ';;&') this.bash4(at, `\`${op}\` in a case`, "repeat the next branch's commands, or separate `case`s");
    if (op === '&>') this.notSh(at, '`&>`', '`> FILE 2>&1`');
    if (op === '<<<') this.notSh(at, '`<<<` (a here-string)', "`printf '%s\\n' \"$x\" |`");
  }

  private notSh(at: number, what: string, portable: string): void {
    if (this.dialect === 'sh') this.report(at, `${what} (not POSIX sh: a Mac's /bin/sh may be dash)`, portable);
  }

  /** Code until `end` (a closing `)` or `` ` `` of a substitution) or the end of the text. */
  code(end: ')' | '`' | null): void {
    const toks: Tok[] = [];
    const heredocs: { delim: string; strip: boolean }[] = [];
    for (;;) {
      this.blanks();
      const c = this.src[this.i];
      if (c === undefined) break;
      if (end === ')' && c === ')' && this.parenDepth === 0) {
        this.i++;
        break;
      }
      if (end === '`' && c === '`') {
        this.i++;
        break;
      }
      if (c === '#') {
        while (this.i < this.src.length && this.src[this.i] !== '\n') this.i++;
        continue;
      }
      if (c === '\n') {
        toks.push({ kind: 'op', op: '\n', at: this.i });
        this.i++;
        for (const h of heredocs.splice(0)) this.skipHeredoc(h.delim, h.strip);
        continue;
      }
      const op = this.dialect === 'fish' ? this.fishOp() : OPS.find((o) => this.src.startsWith(o, this.i));
      // `((…))` arithmetic (bash/zsh): one word for the version guard, never commands.
      if (this.dialect !== 'fish' && this.dialect !== 'sh' && this.src.startsWith('((', this.i)) {
        const start = this.i;
        const close = this.src.indexOf('))', this.i);
        this.i = close < 0 ? this.src.length : close + 2;
        const text = this.src.slice(start, this.i);
        toks.push({ kind: 'word', w: { text, raw: text, at: start, quoted: true } });
        continue;
      }
      if (op) {
        // `{name}>` is a word then an operator; the word test is in the command pass.
        if (op === '(') this.parenDepth++;
        if (op === ')') this.parenDepth = Math.max(0, this.parenDepth - 1);
        toks.push({ kind: 'op', op, at: this.i });
        this.i += op.length;
        if (op === '<<' || op === '<<-') {
          this.blanks();
          const w = this.word();
          if (w) {
            heredocs.push({ delim: w.text, strip: op === '<<-' });
            toks.push({ kind: 'word', w });
          }
        }
        continue;
      }
      const w = this.word();
      if (w) toks.push({ kind: 'word', w });
      else this.i++;
    }
    this.commands(toks);
  }

  private parenDepth = 0;

  private fishOp(): string | undefined {
    for (const o of ['&&', '||', '&>', '>>', '|', '&', ';', '<', '>', '\n']) if (this.src.startsWith(o, this.i)) return o;
    return undefined;
  }

  private blanks(): void {
    for (;;) {
      const c = this.src[this.i];
      if (c === ' ' || c === '\t' || c === '\r') this.i++;
      else if (c === '\\' && this.src[this.i + 1] === '\n') this.i += 2;
      else return;
    }
  }

  private skipHeredoc(delim: string, strip: boolean): void {
    while (this.i < this.src.length) {
      const nl = this.src.indexOf('\n', this.i);
      const lineEnd = nl < 0 ? this.src.length : nl;
      let line = this.src.slice(this.i, lineEnd);
      if (strip) line = line.replace(/^\t+/, '');
      this.i = nl < 0 ? this.src.length : nl + 1;
      if (line === delim) return;
    }
  }

  /** One word (quotes removed, expansions looked into), or null at an operator or blank. */
  private word(): Word | null {
    const start = this.i;
    let text = '';
    let quoted = false;
    const s = this.src;
    const stop = this.dialect === 'fish' ? ' \t\r\n;|&<>' : ' \t\r\n;|&<>()';
    while (this.i < s.length) {
      const c = s[this.i]!;
      if (stop.includes(c)) {
        // zsh/bash `=(…)`, `<(…)`: process substitution is code.
        break;
      }
      if (c === '\\') {
        if (s[this.i + 1] === '\n') {
          this.i += 2;
          continue;
        }
        text += s[this.i + 1] ?? '';
        this.i += 2;
        quoted = true;
        continue;
      }
      if (c === "'") {
        quoted = true;
        this.i++;
        while (this.i < s.length && s[this.i] !== "'") {
          if (this.dialect === 'fish' && s[this.i] === '\\' && (s[this.i + 1] === "'" || s[this.i + 1] === '\\')) this.i++;
          text += s[this.i++];
        }
        this.i++;
        continue;
      }
      if (c === '"') {
        quoted = true;
        this.i++;
        while (this.i < s.length && s[this.i] !== '"') {
          const d = s[this.i]!;
          if (d === '\\') {
            text += s[this.i + 1] ?? '';
            this.i += 2;
          } else if (d === '$' || d === '`') text += this.dollar(true);
          else text += s[this.i++];
        }
        this.i++;
        continue;
      }
      if (c === '$' && s[this.i + 1] === "'" && this.dialect !== 'fish') {
        this.notSh(this.i, "`$'…'` quoting", "printf '\\n' into a variable");
        quoted = true;
        this.i += 2;
        while (this.i < s.length && s[this.i] !== "'") {
          if (s[this.i] === '\\') this.i++;
          text += s[this.i++] ?? '';
        }
        this.i++;
        continue;
      }
      if (c === '$' || c === '`') {
        text += this.dollar(false);
        continue;
      }
      if (this.dialect === 'fish' && c === '(') {
        // fish command substitution: `(cmd)` inside a word.
        this.i++;
        const saved = this.parenDepth;
        this.parenDepth = 0;
        this.code(')');
        this.parenDepth = saved;
        text += '(…)';
        continue;
      }
      if (c === '{' && this.dialect !== 'fish') {
        const close = s.indexOf('}', this.i);
        const inner = close < 0 ? '' : s.slice(this.i + 1, close);
        if (/^-?\d+\.\.-?\d+\.\.-?\d+$/.test(inner)) this.bash4(this.i, `\`{${inner}}\`: a brace range with a step`, '`seq FIRST STEP LAST`');
        else if (/^-?0\d+\.\.-?\d+$/.test(inner)) this.bash4(this.i, `\`{${inner}}\`: a zero-padded brace range`, "`seq -f '%02g' FIRST LAST`");
      }
      text += c;
      this.i++;
    }
    if (this.i === start) return null;
    return { text, raw: s.slice(start, this.i), at: start, quoted };
  }

  /** `$name`, `${…}`, `$(…)`, `$((…))`, `` `…` ``: looked into, returned as written. */
  private dollar(inDouble: boolean): string {
    const s = this.src;
    const start = this.i;
    if (s[this.i] === '`') {
      this.i++;
      this.code('`');
      return s.slice(start, this.i);
    }
    const n = s[this.i + 1];
    if (n === '(' && s[this.i + 2] === '(' && this.dialect !== 'fish') {
      const close = s.indexOf('))', this.i);
      this.i = close < 0 ? s.length : close + 2;
      return s.slice(start, this.i);
    }
    if (n === '(') {
      this.i += 2;
      const saved = this.parenDepth;
      this.parenDepth = 0;
      this.code(')');
      this.parenDepth = saved;
      return s.slice(start, this.i);
    }
    if (n === '{') {
      let depth = 0;
      let k = this.i + 1;
      for (; k < s.length; k++) {
        if (s[k] === '\\') k++;
        else if (s[k] === '{') depth++;
        else if (s[k] === '}' && --depth === 0) break;
      }
      const inner = s.slice(this.i + 2, k);
      this.expansion(inner, this.i);
      this.i = k + 1;
      return s.slice(start, this.i);
    }
    const m = /^[A-Za-z_][A-Za-z0-9_]*/.exec(s.slice(this.i + 1, this.i + 64));
    if (m) {
      this.variable(m[0], this.i);
      this.i += 1 + m[0].length;
      return s.slice(start, this.i);
    }
    this.i += n === undefined ? 1 : 2;
    void inDouble;
    return s.slice(start, this.i);
  }

  private variable(name: string, at: number): void {
    const p = BASH4_VARS[name];
    if (p) this.bash4(at, `\`$${name}\``, p);
  }

  /** The inside of `${…}`. */
  private expansion(inner: string, at: number): void {
    if (this.dialect === 'zsh' || this.dialect === 'fish') return;
    const m = /^[#!]?([A-Za-z_][A-Za-z0-9_]*|[0-9]+|[@*#?$!-])(\[[^\]]*\])?(.*)$/s.exec(inner);
    if (!m) return;
    const [, name, sub, rest] = m as unknown as [string, string, string | undefined, string];
    this.variable(name, at);
    if (/^,,|^\^\^|^,(?!,)|^\^(?!\^)/.test(rest)) this.bash4(at, `\`\${${inner}}\`: case conversion`, "`tr '[:upper:]' '[:lower:]'` (or `tr '[:lower:]' '[:upper:]'`)");
    if (/^@[QEPAaUuLK]/.test(rest)) this.bash4(at, `\`\${${inner}}\`: a parameter transformation`, '`printf %q` or a case statement');
    if (sub && /^\[\s*-/.test(sub)) this.bash4(at, `\`\${${inner}}\`: a negative array index`, '`${a[${#a[@]}-1]}`');
    if (this.dialect === 'sh') {
      if (sub) this.notSh(at, `\`\${${inner}}\`: an array`, 'positional parameters (`set -- …`) or separate variables');
      if (/^\/|^:-?\d|^:\s*-?\d/.test(rest)) this.notSh(at, `\`\${${inner}}\`: substitution or a substring`, '`sed`, or `${x#…}`/`${x%…}`');
    }
  }

  /** The commands of a token list: which program each runs, with what. */
  private commands(toks: Tok[]): void {
    type Case = { state: 'patterns' | 'body' };
    const cases: Case[] = [];
    const ifs: { guard: boolean; cond: string[]; inCond: boolean }[] = [];
    let k = 0;
    const isOp = (u: Tok | undefined, op: string) => u?.kind === 'op' && u.op === op;
    while (k < toks.length) {
      const t = toks[k]!;
      const c0 = cases[cases.length - 1];
      if (c0 && c0.state === 'patterns') {
        // A case's pattern list, up to its `)`: data, not commands.
        if (t.kind === 'op' && (t.op === '\n' || t.op === ';')) k++;
        else if (t.kind === 'word' && t.w.text === 'esac' && !t.w.quoted) {
          cases.pop();
          k++;
        } else {
          if (isOp(t, '(')) k++;
          while (k < toks.length && !isOp(toks[k], ')')) k++;
          k++;
          c0.state = 'body';
        }
        continue;
      }
      if (t.kind === 'word' && !t.w.quoted && t.w.text === 'case' && this.dialect !== 'fish') {
        // `case WORD in`: the patterns follow.
        while (k < toks.length && !(toks[k]!.kind === 'word' && (toks[k] as { w: Word }).w.text === 'in')) k++;
        k++;
        cases.push({ state: 'patterns' });
        continue;
      }
      // `name() …`: a function definition, not a run of `name`.
      if (t.kind === 'word' && isOp(toks[k + 1], '(') && isOp(toks[k + 2], ')')) {
        k += 3;
        continue;
      }
      if (t.kind === 'op') {
        this.opFinding(t.op, t.at);
        const c = cases[cases.length - 1];
        if (c && (t.op === ';;' || t.op === ';&' || t.op === ';;&')) c.state = 'patterns';
        k++;
        continue;
      }
      // A command starts here.
      const words: Word[] = [];
      while (k < toks.length) {
        const u = toks[k]!;
        // `a=(x y)`: an array's words are data.
        const last = words[words.length - 1];
        if (u.kind === 'op' && u.op === '(' && last && /^[A-Za-z_][A-Za-z0-9_]*\+?=$/.test(last.raw) && last.at + last.raw.length === u.at) {
          if (this.dialect === 'sh') this.notSh(last.at, `\`${last.raw}(…)\`: an array`, 'positional parameters (`set -- …`)');
          while (k < toks.length && !isOp(toks[k], ')')) k++;
          k++;
          continue;
        }
        if (u.kind === 'op') {
          if (SEPARATORS.has(u.op)) break;
          if (REDIRS.has(u.op) || u.op === '<<' || u.op === '<<-') {
            this.opFinding(u.op, u.at);
            // A redirection's target is not an argument; `{fd}>` before it is bash 4.1.
            const prev = words[words.length - 1];
            if (prev && /^\{[A-Za-z_][A-Za-z0-9_]*\}$/.test(prev.raw) && prev.at + prev.raw.length === u.at) {
              this.bash4(prev.at, `\`${prev.raw}${u.op}\`: a file descriptor in a variable`, 'a fixed descriptor number (`exec 3>FILE`)');
              words.pop();
            }
            k += 2;
            continue;
          }
          k++;
          continue;
        }
        words.push(u.w);
        k++;
      }
      this.command(words, cases, ifs);
    }
  }

  private command(all: Word[], cases: { state: 'patterns' | 'body' }[], ifs: { guard: boolean; cond: string[]; inCond: boolean }[]): void {
    let words = all;
    // Reserved words that start a command of their own.
    while (words.length && !words[0]!.quoted && (COMMAND_PREFIX.has(words[0]!.text) || words[0]!.text === 'fi' || words[0]!.text === 'done' || words[0]!.text === 'esac' || words[0]!.text === 'end')) {
      const w = words[0]!.text;
      if (w === 'if' || w === 'elif') {
        if (w === 'elif') {
          this.closeIf(ifs, words[0]!.at);
          ifs.pop();
        }
        ifs.push({ guard: false, cond: [], inCond: true });
      } else if (w === 'then') {
        const top = ifs[ifs.length - 1];
        if (top && top.inCond) {
          top.inCond = false;
          top.guard = top.cond.some((x) => x.includes('BASH_VERSINFO') || x.includes('BASH_VERSION'));
          if (top.guard) this.guardStarts.push(words[0]!.at);
        }
      } else if (w === 'else') this.closeIf(ifs, words[0]!.at, true);
      else if (w === 'fi') {
        this.closeIf(ifs, words[0]!.at);
        ifs.pop();
      } else if (w === 'esac') cases.pop();
      words = words.slice(1);
    }
    const top = ifs[ifs.length - 1];
    if (top?.inCond) top.cond.push(...words.map((w) => w.raw));
    // Assignments (`X=1 cmd`; `a=(…)` is an array).
    while (words.length && /^[A-Za-z_][A-Za-z0-9_]*(\[[^\]]*\])?\+?=/.test(words[0]!.raw)) words = words.slice(1);
    if (!words.length) return;
    let program = words[0]!;
    let args = words.slice(1);
    // Words that run the next one as the command (`command timeout`, `exec -a name prog`, `env X=1 prog`).
    while (RUNNERS.has(program.text) && args.length) {
      // `command -v NAME` asks whether NAME exists: it runs nothing.
      if (program.text === 'command' && args.some((a) => a.text === '-v' || a.text === '-V')) return;
      let j = 0;
      while (j < args.length && (args[j]!.text.startsWith('-') || /^[A-Za-z_][A-Za-z0-9_]*=/.test(args[j]!.text))) j += program.text === 'exec' && args[j]!.text === '-a' ? 2 : 1;
      if (j >= args.length) break;
      program = args[j]!;
      args = args.slice(j + 1);
    }
    const name = program.text.slice(program.text.lastIndexOf('/') + 1);
    if (name === 'function' && this.dialect === 'sh') this.notSh(program.at, '`function NAME`', '`NAME() { …; }`');
    if ((name === '[[' || name === 'source') && this.dialect === 'sh') this.notSh(program.at, `\`${name}\``, name === '[[' ? '`[ … ]` or `case`' : '`.`');
    // `sh -c SCRIPT`, `bash -lc SCRIPT`: the script is code of that shell.
    const nested: Record<string, Dialect> = { sh: 'sh', dash: 'sh', bash: 'bash', zsh: 'zsh', fish: 'fish' };
    if (nested[name]) {
      const c = args.findIndex((a) => /^-[A-Za-z]*c[A-Za-z]*$/.test(a.text));
      const script = c >= 0 ? args.slice(c + 1).find((a) => !a.text.startsWith('-')) : undefined;
      if (script) for (const f of checkPortable(script.text, nested[name])) this.report(script.at, `in \`${name} -c\` (its line ${f.line}, column ${f.column}): ${f.what}`, f.portable);
      return;
    }
    const gnu = GNU_PROGRAMS[name];
    if (gnu) {
      const bashOnly = name === 'mapfile' || name === 'readarray' || name === 'coproc';
      if (bashOnly) this.bash4(program.at, `\`${name}\``, gnu);
      else this.report(program.at, `\`${name}\` is GNU/Linux only (not on a stock Mac)`, gnu);
      return;
    }
    const opt = gnuOptions(name, args);
    if (opt) this.report(opt.at, opt.what, opt.portable);
    if (name === 'declare' || name === 'typeset' || name === 'local') {
      for (const a of args) {
        const f = shortFlags(a.text);
        if (f === null) continue;
        if (f.includes('A')) this.bash4(a.at, `\`${name} -${f}\`: an associative array`, 'separate variables, or a `case` lookup');
        if (f.includes('n')) this.bash4(a.at, `\`${name} -${f}\`: a name reference`, '`eval` with a checked name, or `printf -v`');
        if (f.includes('g')) this.bash4(a.at, `\`${name} -${f}\`: a global from a function`, 'assign without declare');
        if (/[lu]/.test(f) && this.dialect === 'bash') this.bash4(a.at, `\`${name} -${f}\`: case-converting attribute`, "`tr '[:upper:]' '[:lower:]'`");
      }
    }
    if (name === 'shopt' && args.some((a) => a.text === '-s' || a.text === '-u')) {
      for (const a of args) if (BASH4_SHOPTS.has(a.text)) this.bash4(a.at, `\`shopt ${a.text}\``, 'code that does not need it (e.g. `find` instead of `**`)');
    }
    if (name === 'wait' && args.some((a) => a.text === '-n' || a.text === '-p' || a.text === '-f')) this.bash4(program.at, '`wait -n`', 'wait for each job by pid');
    if ((name === '[[' || name === 'test' || name === '[') && args.some((a) => a.text === '-v')) this.bash4(program.at, `\`${name} -v\``, '`[ -n "${NAME+set}" ]`');
    if (name === 'printf' && args.length && /%\([^)]*\)T/.test(args[0]!.text)) this.bash4(program.at, '`printf %(…)T`', '`date +…`');
    if (name === 'read' && args.some((a) => /^-[A-Za-z]*t$/.test(a.text)) && args.some((a) => /^\d*\.\d+$/.test(a.text))) this.bash4(program.at, '`read -t` with a fraction of a second', 'a whole number of seconds');
  }

  private closeIf(ifs: { guard: boolean; inCond: boolean }[], at: number, reopenAsElse = false): void {
    const top = ifs[ifs.length - 1];
    if (top?.guard) {
      this.guarded.push([this.guardStarts.pop()!, at]);
      top.guard = false;
    }
    if (reopenAsElse && top) top.inCond = false;
  }
}

/** The findings of a script's text in a dialect, in order. */
export function checkPortable(text: string, dialect: Dialect): PortFinding[] {
  const c = new Checker(text, dialect);
  c.code(null);
  c.finish();
  return c.out.sort((a, b) => a.line - b.line || a.column - b.column);
}

/** `file:line:column: what; portable: …`, one a line. */
export function formatFindings(file: string, findings: PortFinding[]): string {
  return findings.map((f) => `${file}:${f.line}:${f.column}: ${f.what}; portable: ${f.portable}`).join('\n');
}
