// Makefile recipes. Each logical recipe line (continuations joined: make passes `\`-newline to the shell
// and drops the next line's leading tab) is one shell invocation, run in the Makefile's directory, so it
// is one snippet. Before classification:
//   - the `@`, `-`, `+` prefixes are removed;
//   - `$$` becomes `$` (make's escape for the shell's `$`);
//   - make variables are expanded where the Makefile itself says what they are: `$(MAKE)` -> `make`,
//     `$(CURDIR)` -> `.` (the recipe runs there), `X = …`/`X := …`/`X ?= …`/`X += …` defined in the file,
//     then make's built-in defaults (`$(CC)` -> `cc`, `$(RM)` -> `rm -f`, ...), recursively, depth-limited;
//   - any other reference (`$(KODA_DIR)`, `$@`, `$(shell …)`, `$(wildcard …)`) becomes a shell parameter
//     `${NAME}` (or `${MAKE_EXPR}`), i.e. a word whose value is unknown. Left as `$(X)` it would read to
//     the shell as a command substitution running a program named X, which is wrong both ways: it would
//     invent a command and hide the argument. An unknown word lets the guard decide on what is known
//     (`make -C ${KODA} build` still reads as a make build; the Koda rule then needs the directory).
//     Undefined make variables fall back to the environment in make, and `${HOME}` is expanded by the
//     guard from the environment too, so that reading is also the faithful one.
import { dirOf, lineStarts, SnippetBuilder, type Snippet } from './snippet.js';

const ASSIGN = /^(?:(?:override|export|private)\s+)*([A-Za-z_][A-Za-z0-9_.-]*)\s*(::?=|:::=|\?=|\+=|!=|=)\s*(.*)$/;
/** GNU make's built-in values (`make -p`) for the variables recipes use as programs. */
const MAKE_DEFAULTS: [string, string][] = [
  ['CC', 'cc'], ['CXX', 'g++'], ['CPP', '$(CC) -E'], ['AR', 'ar'], ['AS', 'as'], ['LD', 'ld'], ['RM', 'rm -f'],
  ['FC', 'f77'], ['LEX', 'lex'], ['YACC', 'yacc'], ['MAKEINFO', 'makeinfo'], ['TEX', 'tex'], ['CO', 'co'], ['GET', 'get'],
  ['PC', 'pc'], ['M2C', 'm2c'], ['CWEAVE', 'cweave'], ['CTANGLE', 'ctangle'], ['WEAVE', 'weave'], ['TANGLE', 'tangle'],
  ['LINT', 'lint'], ['ECHO', 'echo'],
];
const SHELL_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

export function isMakefile(path: string): boolean {
  const base = path.slice(path.lastIndexOf('/') + 1);
  return /^(GNUmakefile|makefile|Makefile)$/.test(base) || /\.(mk|mak|make)$/i.test(base);
}

interface Phys {
  text: string;
  start: number;
}

export function extractMakefile(path: string, text: string): Snippet[] {
  const starts = lineStarts(text);
  const lines: Phys[] = starts.map((s, i) => {
    const end = i + 1 < starts.length ? starts[i + 1]! - 1 : text.length;
    return { text: text.slice(s, end).replace(/\r$/, ''), start: s };
  });
  const vars = new Map<string, string>([['MAKE', 'make'], ['CURDIR', '.'], ...MAKE_DEFAULTS]);
  const recipes: { parts: Phys[]; target: string }[] = [];
  let inRule = false;
  let target = '';
  let inDefine = false;
  for (let i = 0; i < lines.length; i++) {
    const l = lines[i]!;
    if (inDefine) {
      if (/^\s*endef\b/.test(l.text)) inDefine = false;
      continue;
    }
    if (l.text.startsWith('\t')) {
      if (!inRule) continue;
      // A recipe line and its continuations.
      const parts: Phys[] = [{ text: l.text.slice(1), start: l.start + 1 }];
      while (endsWithContinuation(parts[parts.length - 1]!.text) && i + 1 < lines.length) {
        i++;
        const n = lines[i]!;
        const drop = n.text.startsWith('\t') ? 1 : 0;
        parts.push({ text: n.text.slice(drop), start: n.start + drop });
      }
      recipes.push({ parts, target });
      continue;
    }
    // Logical non-recipe line (continuations joined for assignments).
    let logical = l.text;
    while (endsWithContinuation(logical) && i + 1 < lines.length) {
      i++;
      logical = logical.slice(0, -1) + ' ' + lines[i]!.text.trim();
    }
    const bare = stripComment(logical);
    if (bare.trim() === '') continue;
    if (/^\s*define\s/.test(bare)) {
      inDefine = true;
      continue;
    }
    if (/^\s*(ifeq|ifneq|ifdef|ifndef|else|endif|include|-include|sinclude|vpath|unexport)\b/.test(bare)) continue;
    const a = ASSIGN.exec(bare.trim());
    if (a && !/^[^=]*:[^=]/.test(bare.trim().slice(0, bare.trim().indexOf(a[2]!)))) {
      const [, name, op, value] = a;
      if (op === '+=') vars.set(name!, `${vars.get(name!) ?? ''} ${value}`.trim());
      else if (op === '?=') {
        if (!vars.has(name!)) vars.set(name!, value!);
      } else if (op !== '!=') vars.set(name!, value!);
      inRule = false;
      continue;
    }
    const colon = ruleColon(bare);
    if (colon >= 0) {
      inRule = true;
      target = bare.slice(0, colon).trim();
      // `target: prereqs ; recipe`
      const semi = bare.indexOf(';', colon);
      if (semi >= 0 && bare.slice(semi + 1).trim()) {
        recipes.push({ parts: [{ text: l.text.slice(semi + 1), start: l.start + semi + 1 }], target });
      }
      continue;
    }
    inRule = false;
  }

  const out: Snippet[] = [];
  for (const r of recipes) {
    const b = new SnippetBuilder(starts);
    let first = true;
    for (const [k, p] of r.parts.entries()) {
      let t = p.text;
      let off = p.start;
      if (first) {
        const m = /^[\s@+-]*/.exec(t)![0];
        t = t.slice(m.length);
        off += m.length;
        first = false;
      }
      expandInto(b, t, off, vars);
      if (k < r.parts.length - 1) b.add('\n', p.start + p.text.length);
    }
    if (b.length === 0) continue;
    const snip = b.build({ cwd: dirOf(path), cwdKind: 'repo', where: `recipe of ${r.target || 'a rule'}` });
    if (snip.text.trim()) out.push(snip);
  }
  return out;
}

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

/** Appends `t` (starting at source offset `off`) to `b`, with `$$` and make references rewritten. */
function expandInto(b: SnippetBuilder, t: string, off: number, vars: Map<string, string>): void {
  let i = 0;
  let plain = 0;
  const flush = (end: number) => {
    if (end > plain) b.add(t.slice(plain, end), off + plain);
  };
  while (i < t.length) {
    if (t[i] !== '$') {
      i++;
      continue;
    }
    flush(i);
    const next = t[i + 1];
    if (next === '$') {
      b.add('$', off + i);
      i += 2;
    } else if (next === '(' || next === '{') {
      const close = matching(t, i + 1);
      const inner = t.slice(i + 2, close < 0 ? t.length : close);
      b.add(expandRef(inner, vars, 0), off + i, false);
      i = close < 0 ? t.length : close + 1;
    } else if (next !== undefined) {
      // `$@`, `$<`, `$X`: single-character references.
      b.add(SHELL_NAME.test(next) ? `\${${next}}` : '${MAKE_AUTO}', off + i, false);
      i += 2;
    } else {
      b.add('$', off + i);
      i++;
    }
    plain = i;
  }
  flush(t.length);
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

/** The text a `$(inner)` reference stands for, as far as the Makefile says. */
function expandRef(inner: string, vars: Map<string, string>, depth: number): string {
  const name = inner.trim();
  if (depth < 10 && vars.has(name)) return expandValue(vars.get(name)!, vars, depth + 1);
  if (SHELL_NAME.test(name)) return `\${${name}}`;
  return '${MAKE_EXPR}';
}

function expandValue(v: string, vars: Map<string, string>, depth: number): string {
  let out = '';
  for (let i = 0; i < v.length; i++) {
    if (v[i] === '$' && v[i + 1] === '$') {
      out += '$';
      i++;
    } else if (v[i] === '$' && (v[i + 1] === '(' || v[i + 1] === '{')) {
      const close = matching(v, i + 1);
      out += expandRef(v.slice(i + 2, close < 0 ? v.length : close), vars, depth);
      i = close < 0 ? v.length : close;
    } else out += v[i];
  }
  return out;
}
