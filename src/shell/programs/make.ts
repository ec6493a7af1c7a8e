// GNU make: its option grammar (declared once: the walker, the Makefile reader and the koda-make rule all
// read this one), where the recipes run (`-C DIR`, several composing; `-f DIR/Makefile`), what makes a
// call run no recipe (dry runs in every spelling: `-n`, `-nj8`, `--dry`, `--just-p`, `MAKEFLAGS=n`), and
// what the Makefile's recipes and the prerequisites of the requested targets run.
import { posix } from 'node:path';
import type { Field } from '../expand.js';
import { emit, envField, NO_STDIN, resolveDir, withVia, NestedParseError, type Call, type State, type Walker } from '../walk-state.js';
import { lineMayWrite, unknownScript, writtenText } from '../script-files.js';
import { makeRecipes, shellCalls } from '../makefiles.js';
import { canonicalLong, normalize } from './grammar.js';
import { MAKE_GRAMMAR } from './make-grammar.js';

export { MAKE_GRAMMAR };
import type { ProgramModule } from './types.js';

/** Options with which make runs no recipe (a dry run, a question, touch). `-p` alone prints and builds. */
const NO_RUN_LONG = new Set(['--just-print', '--dry-run', '--recon', '--question', '--touch']);
const NO_RUN_SHORT = /[nqt]/;
const VALUE_SHORT = 'CfIoWE';

export interface MakeCall {
  /** `-C` values in order (they compose). */
  dirs: Field[];
  makefile: Field | null;
  targets: Field[];
  /** Runs no recipe: dry run, question, touch, help, version. */
  noRun: boolean;
  /** Some option or target is unknown. */
  unknown: boolean;
  /** `SHELL=PROG` on the command line (make ignores it from the environment): what runs each recipe line, as `PROG -c LINE`. */
  shell: Field | null;
  /** `--eval=TEXT`: makefile text make reads first. */
  evals: Field[];
}

/** Reads a make argv (long options already canonical). */
export function readMake(fields: Field[]): MakeCall {
  const out: MakeCall = { dirs: [], makefile: null, targets: [], noRun: false, unknown: false, shell: null, evals: [] };
  for (let i = 1; i < fields.length; i++) {
    const f = fields[i]!;
    if (!f.known) {
      out.unknown = true;
      out.targets.push(f);
      continue;
    }
    const v = f.value;
    if (v === '--') continue;
    if (v.startsWith('--')) {
      const eq = v.indexOf('=');
      const name = canonicalLong(MAKE_GRAMMAR, eq < 0 ? v : v.slice(0, eq));
      const value = eq >= 0 ? { value: v.slice(eq + 1), known: true } : MAKE_GRAMMAR.value.includes(name) ? (fields[++i] ?? null) : null;
      if (NO_RUN_LONG.has(name) || MAKE_GRAMMAR.info!.includes(name)) out.noRun = true;
      if (name === '--directory' && value) out.dirs.push(value);
      if ((name === '--file' || name === '--makefile') && value) out.makefile = value;
      if (name === '--eval' && value) out.evals.push(value);
      continue;
    }
    if (v.startsWith('-') && v.length > 1) {
      for (let j = 1; j < v.length; j++) {
        const c = v[j]!;
        if (VALUE_SHORT.includes(c)) {
          const value = j + 1 < v.length ? { value: v.slice(j + 1), known: true } : (fields[++i] ?? null);
          if (c === 'C' && value) out.dirs.push(value);
          if (c === 'f' && value) out.makefile = value;
          break;
        }
        if (c === 'j' || c === 'l' || c === 'O') {
          // An optional value: attached, or the next word when it is a number (`-j 8`).
          if (j + 1 === v.length && /^\d+(\.\d+)?$/.test(fields[i + 1]?.value ?? '')) i++;
          break;
        }
        if (NO_RUN_SHORT.test(c) || c === 'h' || c === 'v') out.noRun = true;
      }
      continue;
    }
    if (/^[A-Za-z_][A-Za-z0-9_.]*[:+?!]?=/.test(v)) {
      // VAR=value; `SHELL=PROG` (or `:=`) sets the program that runs every recipe line.
      const sh = /^SHELL:{0,2}=(.*)$/s.exec(v);
      if (sh) out.shell = { value: sh[1]!, known: true };
      continue;
    }
    out.targets.push(f);
  }
  return out;
}

/** MAKEFLAGS / MFLAGS / GNUMAKEFLAGS from the call's environment: whether they ask for a dry run. */
function flagsDry(call: Call): boolean {
  for (const key of ['MAKEFLAGS', 'MFLAGS', 'GNUMAKEFLAGS']) {
    // Unknown (`MAKEFLAGS=$(…)`) is not a dry run: its raw text is not its value.
    const f = envField(call, key);
    if (!f?.known) continue;
    const words = f.value.trim().split(/\s+/).filter(Boolean);
    // The first word may be bare flag letters (`n`, `ks`); then options and assignments.
    if (words[0] && !words[0].startsWith('-') && !words[0].includes('=') && NO_RUN_SHORT.test(words[0])) return true;
    const fields = [{ value: 'make', known: true }, ...words.map((w) => ({ value: w, known: true }))];
    if (readMake(normalize(MAKE_GRAMMAR, fields)).noRun) return true;
  }
  return false;
}

function walk(call: Call, w: Walker): void {
  let fields = normalize(MAKE_GRAMMAR, call.fields);
  // `MAKEFLAGS=n make build`: make reads its flags from the environment too.
  if (flagsDry(call)) fields = [fields[0]!, { value: '--dry-run', known: true }, ...fields.slice(1)];
  const m = readMake(fields);
  let dir = call.cwd;
  for (const d of m.dirs) dir = resolveDir(dir, d);
  const runDir = dir;
  // make -f DIR/Makefile builds that directory's project: judge it as run there.
  if (m.makefile && m.makefile.value.includes('/')) {
    const file = resolveDir(dir, m.makefile);
    dir = file === null ? null : posix.dirname(file);
  } else if (m.makefile && !m.makefile.known) dir = null;
  w.emitSelf(call, dir, fields);
  // `--eval='x := $(shell cmd)'`: run while make reads it, whatever it then builds (a dry run included).
  for (const e of m.evals) {
    if (!e.known) continue;
    for (const c of shellCalls(e.value)) w.runScript({ value: c, known: true }, 'make --eval $(shell)', runDir, call.env, call.st, call.ctx, call.span);
  }
  if (!m.noRun && !m.unknown) makefileRecipes(m, runDir, call, w);
}

/**
 * `make e2e` (any directory: the Koda engine's own builds are a rule on `make` itself): the recipes of
 * the targets, and of their prerequisites, from the Makefile, each run by a shell in `dir`; and each
 * prerequisite target, as the `make TARGET` it amounts to (`make all` that builds `build` first is a
 * `make build`). Only what this finds for sure counts: these commands are `certainOnly`, lines bash
 * cannot parse and targets from included files are dropped: reading a Makefile can add a finding but
 * never turn `make clean` into a refusal.
 */
function makefileRecipes(m: MakeCall, dir: string | null, call: Call, w: Walker): void {
  const { ctx, env, st, span } = call;
  const targets = m.targets.map((t) => t.value);
  const makefile = m.makefile;
  let path: string | null = null;
  let text: string | null = null;
  if (makefile?.known && (makefile.value === '-' || /^\/(dev\/stdin|dev\/fd\/0|proc\/self\/fd\/0)$/.test(makefile.value))) {
    // `printf 'x:\n\t$(MAKE) -C …\n' | make -f - x`, `make -f - x <<'EOF'`: the Makefile is standard input,
    // read when it is static text; otherwise unknown (the rules see the line around it).
    const input = call.stdin();
    if (!input?.known) {
      unknownScript({ value: 'make -f -', known: false }, `make -f ${makefile.value}`, env, dir, st, ctx, span);
      return;
    }
    path = '<stdin>';
    text = input.value;
  }
  if (text === null && (!ctx.files || dir === null)) return;
  const candidates = makefile ? [makefile.known ? resolveDir(dir, makefile) : null] : ['GNUmakefile', 'makefile', 'Makefile'].map((n) => (dir === '/' ? `/${n}` : `${dir}/${n}`));
  for (const p of text === null ? candidates : []) {
    if (p === null) return;
    const written = writtenText(p, ctx);
    if (written?.known) {
      // `printf 'x:\n\tmake …\n' > Makefile; make x`: what the line wrote is what make reads.
      path = p;
      text = written.value;
      break;
    }
    // A Makefile the line itself writes (`printf … > Makefile; make x`): what make reads is not on disk yet.
    if (lineMayWrite(p, ctx, false)) {
      unknownScript({ value: targets.join(' '), known: false }, `make ${targets.join(' ')} (${p.slice(p.lastIndexOf('/') + 1)} written by the line)`, env, dir, st, ctx, span);
      return;
    }
    const r = ctx.files!.read(p);
    if (r.kind === 'missing') continue;
    if (r.kind !== 'text') return;
    path = p;
    text = r.text;
    break;
  }
  if (path === null || text === null) return;
  const key = `${path}\u0000${targets.join(' ')}`;
  if (ctx.reading.includes(key)) return; // `$(MAKE)` calling the same targets again
  const { lines, reached, goals, parseTime } = makeRecipes(text, targets, dir);
  const name = path.slice(path.lastIndexOf('/') + 1);
  ctx.reading.push(key);
  const wasCertainOnly = ctx.certainOnly;
  ctx.certainOnly = true;
  try {
    // Each prerequisite make builds on the way, as the `make TARGET` it amounts to.
    for (const t of reached) {
      if (goals.includes(t)) continue;
      withVia(ctx, `make ${goals.join(' ')} (${name}: prerequisite)`, () => emit(ctx, [{ value: 'make', known: true }, { value: t, known: true }], env, dir, span, st));
    }
    // What make runs as it reads the file: the same for every target.
    for (const c of parseTime) {
      const before = ctx.out.length;
      try {
        w.runScript({ value: c, known: true }, `make (${name}: $(shell) while reading)`, dir, env, st, ctx, span);
      } catch (err) {
        if (!(err instanceof NestedParseError)) throw err;
        ctx.out.length = before;
      }
    }
    for (const { target, text: line } of lines) {
      const before = ctx.out.length;
      try {
        // `make SHELL=./x.sh …`: each line runs as `./x.sh -c LINE`, judged as the command it is.
        if (m.shell) withVia(ctx, `make ${target} (${name}, SHELL=${m.shell.value})`, () => w.runFields([m.shell!, { value: '-c', known: true }, { value: line, known: true }], env, dir, st, ctx, span, NO_STDIN, 1));
        else w.runScript({ value: line, known: true }, `make ${target} (${name})`, dir, env, st, ctx, span);
      } catch (err) {
        // Make syntax this reader does not follow can leave a line bash would not parse, and a deep
        // `$(MAKE)` recursion can pass the walker's limits: dropped either way (reading never refuses).
        if (!(err instanceof NestedParseError)) throw err;
        ctx.out.length = before;
      }
    }
  } finally {
    ctx.certainOnly = wasCertainOnly;
    ctx.reading.pop();
  }
}

export const make: ProgramModule = {
  family: 'make',
  names: ['make', 'gmake', 'gnumake', 'remake', 'bmake', 'pmake'],
  env: ['MAKEFLAGS', 'MFLAGS', 'GNUMAKEFLAGS'],
  grammar: MAKE_GRAMMAR,
  walk,
  examples: {
    match: [
      { line: 'make -C engines/lang/koda build-safe', runs: 'make -C engines/lang/koda build-safe', in: '/home/koder/dev/koder/engines/lang/koda' },
      { line: 'make --dir=engines/lang/koda build-safe', runs: 'make --directory=engines/lang/koda build-safe', in: '/home/koder/dev/koder/engines/lang/koda' },
      { line: 'make -Cengines -Clang/koda build', runs: 'make -Cengines -Clang/koda build', in: '/home/koder/dev/koder/engines/lang/koda' },
      { line: 'make --just-p build', runs: 'make --just-print build' },
      { line: 'MAKEFLAGS=n make build', runs: 'make --dry-run build' },
      { line: 'make -f engines/lang/koda/Makefile build', runs: 'make -f engines/lang/koda/Makefile build', in: '/home/koder/dev/koder/engines/lang/koda' },
      { line: 'make --help', runs: 'make --help', info: true },
    ],
    not_match: [{ line: 'make -C engines/lang/koda build', runs: 'make -C engines/lang/koda build', in: '/home/koder/dev/koder' }],
  },
};


