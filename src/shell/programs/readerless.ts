// Interpreters whose code offhost has no reader for (Lua, R, Julia, AppleScript, Tcl, Groovy, Scala,
// Kotlin, JShell, Elixir, Erlang, Guile, Racket, Clojure and Babashka): the
// inline-code-heavy rule reads the code they are given inline (`lua -e CODE`, `Rscript -e CODE`) for a call
// that spawns a heavy command. Code they read from standard input (`lua <<< CODE`, `echo CODE | Rscript -`,
// `osascript <<'EOF'`, `tclsh <<< 'exec make build-safe'`) is the same code: it is judged as that inline
// code (`NAME -e CODE`), and code from an input offhost cannot read is an unknown program, as for the
// interpreters with a reader (./interpreters.ts). A script file they run is judged by its name only.
import type { Field } from '../expand.js';
import { emit, withVia, type Call, type Walker } from '../walk-state.js';
import type { ProgramModule } from './types.js';

interface Language {
  /** Options whose value is inline code (judged by the rule as they are). */
  code: readonly string[];
  /** Options that take the next word as their value. */
  values: readonly string[];
  /** Options whose value is the script file (R's `-f FILE`). */
  file?: readonly string[];
  /** Without a script file (and without inline code) it reads its program from standard input. */
  stdinWithoutFile: boolean;
  /** A first operand that is a subcommand, not a script (`R CMD BATCH x.R`). */
  subcommands?: readonly string[];
}

const LANGUAGES: Record<string, Language> = {
  // lua [options] [script [args]]: no script and no -e reads stdin (when it is not a terminal); `-` is stdin.
  lua: { code: ['-e'], values: ['-l'], stdinWithoutFile: true },
  luajit: { code: ['-e'], values: ['-l', '-b', '-j', '-O'], stdinWithoutFile: true },
  // Rscript needs a file or -e (alone it prints its usage); `Rscript -` reads stdin.
  Rscript: { code: ['-e'], values: ['--default-packages'], stdinWithoutFile: false },
  // R reads its commands from stdin unless given -f FILE / --file=FILE (`R --vanilla < x.R`).
  R: { code: ['-e'], values: ['-d', '--debugger', '-g', '--gui'], file: ['-f'], stdinWithoutFile: true, subcommands: ['CMD'] },
  julia: {
    code: ['-e', '-E', '--eval', '--print'],
    values: ['-J', '--sysimage', '-L', '--load', '-t', '--threads', '-p', '--procs', '-C', '--cpu-target', '-H', '--home', '--machine-file', '--project'],
    stdinWithoutFile: true,
  },
  // osascript [-l language] [-e statement | file]: neither reads stdin.
  osascript: { code: ['-e'], values: ['-l', '-s'], stdinWithoutFile: true },
  tclsh: { code: [], values: ['-encoding'], stdinWithoutFile: true },
  // The JVM's and the BEAM's scripting front ends, Scheme and Clojure: `-e CODE` (erl: `-eval`), a file, or
  // code on standard input (a REPL reads it when it is not a terminal).
  groovy: { code: ['-e'], values: ['-cp', '-classpath', '--classpath', '-D', '--define', '-c', '--encoding', '-l'], stdinWithoutFile: false },
  scala: { code: ['-e'], values: ['-cp', '-classpath', '--classpath', '-deprecation'], stdinWithoutFile: true },
  kotlin: { code: ['-e', '-expression'], values: ['-cp', '-classpath', '-J'], stdinWithoutFile: false },
  jshell: { code: [], values: ['--class-path', '--module-path', '--add-modules', '--startup', '--feedback', '-R', '-J', '-C'], stdinWithoutFile: true },
  elixir: { code: ['-e', '--eval'], values: ['-r', '-pr', '--cookie', '--name', '--sname', '--erl', '--logger-otp-reports', '--logger-sasl-reports'], stdinWithoutFile: false },
  erl: { code: ['-eval'], values: ['-s', '-run', '-pa', '-pz', '-sname', '-name', '-setcookie', '-config', '-env'], stdinWithoutFile: true },
  guile: { code: ['-c'], values: ['-l', '-e', '-x', '-L', '-C'], stdinWithoutFile: true },
  racket: { code: ['-e', '--eval'], values: ['-l', '--lib', '-t', '--require', '-f', '--load', '-r', '--script', '-k', '-S', '--search'], stdinWithoutFile: true },
  bb: { code: ['-e', '--eval'], values: ['-f', '--file', '-cp', '--classpath', '-m', '--main', '-x', '--exec'], stdinWithoutFile: true },
  clojure: { code: ['-e', '--eval'], values: ['-Sdeps', '-i', '--init', '-A', '-X', '-T'], stdinWithoutFile: true },
  clj: { code: ['-e', '--eval'], values: ['-Sdeps', '-i', '--init', '-A', '-X', '-T'], stdinWithoutFile: true },
  wish: { code: [], values: ['-encoding', '-display', '-geometry', '-name', '-visual', '-colormap', '-use'], stdinWithoutFile: true },
};

const INFO_OPTS = new Set(['-v', '-V', '--version', '-h', '--help', '-help']);

/** Inline code as the rule reads it: on one line (its patterns look for a call and a command in one argument). */
const oneLine = (f: Field): Field => (f.known && /\s/.test(f.value) ? { value: f.value.replace(/\s+/g, ' '), known: true } : f);

function walk(call: Call, w: Walker): void {
  const { name, fields, ctx } = call;
  const lang = LANGUAGES[name]!;
  let inline = false;
  let stdin = false;
  let file: Field | null = null;
  const codeAt = new Set<number>();
  for (let i = 1; i < fields.length; i++) {
    const f = fields[i]!;
    if (!f.known) {
      file = f; // an operand offhost cannot read: the script's name
      break;
    }
    const v = f.value;
    if (INFO_OPTS.has(v)) return w.emitSelf(call);
    if (v === '-') {
      stdin = true;
      break;
    }
    if (v === '--') {
      file = fields[i + 1] ?? null;
      stdin = file !== null && file.known && /^\/dev\/(stdin|fd\/0)$/.test(file.value);
      break;
    }
    if (lang.code.includes(v)) {
      inline = true;
      codeAt.add(i + 1);
      i++;
      continue;
    }
    const eq = v.indexOf('=');
    if (v.startsWith('--') && eq > 0 && lang.code.includes(v.slice(0, eq))) {
      inline = true;
      codeAt.add(i);
      continue;
    }
    if (lang.file?.includes(v) || v.startsWith('--file=')) {
      file = v.startsWith('--file=') ? { value: v.slice(7), known: true } : (fields[i + 1] ?? null);
      break;
    }
    if (!v.startsWith('-')) {
      if (lang.subcommands?.includes(v)) return w.emitSelf(call);
      file = f;
      break;
    }
    if (lang.values.includes(v)) i++;
  }
  w.emitSelf(call, call.cwd, fields.map((f, k) => (codeAt.has(k) ? oneLine(f) : f)));
  if (file !== null && !stdin) stdin = file.known && /^\/dev\/(stdin|fd\/0)$/.test(file.value);
  if (!stdin && (file !== null || inline || !lang.stdinWithoutFile)) return;
  // The program is standard input (a heredoc, a here-string, a pipe): judged as the inline code it is.
  const text = call.stdin();
  withVia(ctx, `${name} <stdin`, () => {
    if (text?.known) emit(ctx, [{ value: name, known: true }, { value: '-e', known: true }, oneLine(text)], call.env, call.cwd, call.span, call.st);
    else emit(ctx, [{ value: `${name} <stdin>`, known: false }], call.env, call.cwd, call.span, call.st);
  });
}

export const readerless: ProgramModule = {
  family: 'interpreters without a reader',
  names: Object.keys(LANGUAGES),
  walk,
  examples: {
    match: [
      { line: "lua <<< 'os.execute(\"make build-safe\")'", runs: 'lua -e os.execute("make build-safe") ' },
      { line: "echo 'os.execute(\"make build-safe\")' | lua -", runs: 'lua -e os.execute("make build-safe") ' },
      { line: "Rscript - <<'EOF'\nsystem(\"make build-safe\")\nEOF", runs: 'Rscript -e system("make build-safe") ' },
      { line: "R --vanilla <<< 'system(\"make build-safe\")'", runs: 'R -e system("make build-safe") ' },
      { line: "julia <<< 'run(`make build-safe`)'", runs: 'julia -e run(`make build-safe`) ' },
      { line: "osascript <<< 'do shell script \"make build-safe\"'", runs: 'osascript -e do shell script "make build-safe" ' },
      { line: "tclsh <<< 'exec make build-safe'", runs: 'tclsh -e exec make build-safe ' },
      { line: "lua -e 'os.execute(\n\"make build-safe\")'", runs: 'lua -e os.execute( "make build-safe")' },
      { line: "jshell <<< 'new ProcessBuilder(\"make\", \"build-safe\").start()'", runs: 'jshell -e new ProcessBuilder("make", "build-safe").start() ' },
      { line: "echo '(system \"make build-safe\")' | guile", runs: 'guile -e (system "make build-safe") ' },
    ],
    not_match: [
      // A script file runs (judged by its name); -e code is the rule's alone; Rscript alone prints its usage.
      { line: "lua build.lua <<< 'os.execute(\"make build-safe\")'", runs: 'lua -e os.execute("make build-safe") ' },
      { line: "lua -e 'print(1)' <<< 'os.execute(\"make build-safe\")'", runs: 'lua -e os.execute("make build-safe") ' },
      { line: "Rscript <<< 'system(\"make build-safe\")'", runs: 'Rscript -e system("make build-safe") ' },
      { line: "R CMD BATCH job.R <<< 'system(\"make build-safe\")'", runs: 'R -e system("make build-safe") ' },
      { line: "tclsh --version <<< 'exec make build-safe'", runs: 'tclsh -e exec make build-safe ' },
    ],
  },
};
