// Code interpreters (python, node, perl, ruby, php; deno is deno.ts): their code comes inline (`-c`, `-e`), from a
// file, from standard input (`python3 - <<'EOF'`, `echo … | python3`, `node <<< …`) or names a module
// (`python3 -m pytest`). Code from stdin is judged like inline code (the inline-code rules read it); code
// that execs its own arguments (`perl -e 'exec @ARGV' make build-safe`) runs them; a file inside a
// package (`node node_modules/@playwright/test/cli.js test`) is that package's command.
import type { Field } from '../expand.js';
import { clone, emit, NO_STDIN, resolveDir, withVia, type Call, type Walker } from '../walk-state.js';
import { interpreterFile } from '../script-files.js';
import { languageOf } from '../inline/index.js';
import { PYTHON_NAMES } from '../inline/names.js';
import { PACKAGE_BINS } from './package-runners.js';
import type { ProgramModule } from './types.js';

/** Options that take the next word as their value. */
const VALUE_OPTS = new Set(['-W', '-X', '-Q', '-r', '--require', '--import', '--loader', '--experimental-loader', '-C', '--conditions', '--input-type', '-I', '--env-file', '-x', '-M', '-d']);
/** Options whose value is the program's code. */
const CODE_OPTS = new Set(['-c', '-e', '-E', '--eval', '-p', '--print']);
const INFO_OPTS = new Set(['-v', '-V', '--version', '-h', '--help', '-help']);
/** Code that uses its command-line arguments, and code that starts a process. */
const USES_ARGV = /@ARGV|\$ARGV\[|\bARGV\b|sys\.argv|process\.argv|Deno\.args|\$argv\b/;
const SPAWNS = /\b(exec\w*|system|spawn\w*|popen|Popen|subprocess|call|run|check_call|check_output|Command|fork)\b|`|\bqx\b/;

function codeFlag(name: string): string {
  return PYTHON_NAMES.test(name) ? '-c' : name === 'php' ? '-r' : '-e';
}

/** `node node_modules/@playwright/test/cli.js test` -> `playwright`; `node node_modules/.bin/vitest` -> `vitest`. */
function packageBin(path: string): string | null {
  const bin = /(?:^|\/)node_modules\/\.bin\/([^/]+)$/.exec(path);
  if (bin) return bin[1]!;
  const m = /(?:^|\/)node_modules\/((?:@[^/]+\/)?[^/]+)\/(?:.*\/)?(?:cli|bin|index|main|run|[^/]*-cli)(?:\.[cm]?js)?$|(?:^|\/)node_modules\/((?:@[^/]+\/)?[^/]+)\/bin\/[^/]+$/.exec(path);
  const pkg = m?.[1] ?? m?.[2];
  if (!pkg) return null;
  return PACKAGE_BINS[pkg] ?? pkg.replace(/^@[^/]+\//, '');
}

function walk(call: Call, w: Walker): void {
  const { name, fields, ctx } = call;
  let i = 1;
  let code: Field | null = null;
  let module: Field | null = null;
  let fromStdin = false;
  const perlModules: string[] = [];
  while (i < fields.length) {
    const f = fields[i]!;
    if (!f.known) break;
    const v = f.value;
    if (INFO_OPTS.has(v)) return w.emitSelf(call);
    if (v === '-') {
      fromStdin = true;
      i++;
      break;
    }
    if (v === '--') {
      i++;
      break;
    }
    if (name.startsWith('node') && (v === '--run' || v.startsWith('--run='))) {
      // `node --run e2e -- args` (Node 22): the package.json script, as `npm run` runs it.
      const script = v === '--run' ? fields[i + 1] : { value: v.slice(6), known: true };
      if (!script) return w.emitSelf(call);
      const rest = fields.slice(v === '--run' ? i + 2 : i + 1);
      const args = rest[0]?.known && rest[0].value === '--' ? rest.slice(1) : rest;
      return w.apply({ kind: 'package-script', via: 'node --run', script, args, fallback: { kind: 'none' } }, call, true);
    }
    if (CODE_OPTS.has(v) || (name === 'php' && v === '-r')) {
      code = fields[i + 1] ?? null;
      i += 2;
      break;
    }
    if (/^-[ce]./.test(v) && !name.startsWith('node')) {
      code = { value: v.slice(2), known: true };
      i++;
      break;
    }
    if (v === '-m' && PYTHON_NAMES.test(name)) {
      module = fields[i + 1] ?? null;
      i += 2;
      break;
    }
    if (!v.startsWith('-')) break;
    // `perl -MIPC::Cmd=run -e 'run(…)'`: the code runs with the module used.
    const used = name === 'perl' ? /^-M-?([A-Za-z_][\w:]*)/.exec(v) : null;
    if (used) perlModules.push(used[1]!);
    // `perl -pi -e`, `-ne`: a cluster ending in e takes the code next.
    if (/^-[a-zA-Z]*e$/.test(v) && name === 'perl') {
      code = fields[i + 1] ?? null;
      i += 2;
      break;
    }
    i += VALUE_OPTS.has(v) ? 2 : 1;
  }
  // Inline code as the rules see it: on one line (the inline-code rules look for a call and a heavy
  // command in one argument, and calls span lines); its spawns are read from the code as written.
  const codeAt = code ? fields.indexOf(code) : -1;
  if (codeAt > 0 && code!.known && /\s/.test(code!.value)) w.emitSelf(call, call.cwd, fields.map((f, k) => (k === codeAt ? { value: f.value.replace(/\s+/g, ' '), known: true } : f)));
  else w.emitSelf(call);
  const args = fields.slice(i);
  if (module) {
    // `python3 -m pytest -x`: the module's command, with the arguments.
    if (module.known) withVia(ctx, `${name} -m`, () => w.runFields([module!, ...args], call.env, call.cwd, call.st, ctx, call.span, call.stdin, call.wrapDepth + 1));
    return;
  }
  if (code) {
    if (code.known) walkCode(name, `${perlModules.map((m) => `use ${m}; `).join('')}${code.value}`, args, call, w);
    return;
  }
  const file = fromStdin ? null : fields[i];
  if (file && !(file.known && /^\/dev\/(stdin|fd\/0)$/.test(file.value))) {
    const bin = file.known && name.startsWith('node') ? packageBin(file.value) : null;
    if (bin) {
      withVia(ctx, `${name} ${file.value}`, () => w.runFields([{ value: bin, known: true }, ...fields.slice(i + 1)], call.env, call.cwd, call.st, ctx, call.span, call.stdin, call.wrapDepth + 1));
      return;
    }
    if (ctx.files) interpreterFile(name, fields, call.env, call.cwd, call.st, ctx, call.span);
    return;
  }
  // The code is standard input (a heredoc, a here-string, a pipe): judged as the inline code it is.
  const text = call.stdin();
  withVia(ctx, `${name} <stdin`, () => {
    if (text?.known) {
      emit(ctx, [{ value: name, known: true }, { value: codeFlag(name), known: true }, { value: text.value.replace(/\s+/g, ' '), known: true }], call.env, call.cwd, call.span, call.st);
      walkCode(name, text.value, args, call, w);
    } else emit(ctx, [{ value: `${name} <stdin>`, known: false }], call.env, call.cwd, call.span, call.st);
  });
}

/**
 * What literal code starts (src/shell/inline/): each spawn it makes, judged as the command line or argv it
 * is, in the directory it starts in; a spawn offhost cannot read is an unknown program (the rules decide
 * what that means where it runs). Code that runs its own arguments (`perl -e 'exec @ARGV' make …`) runs
 * `args`.
 */
function walkCode(name: string, code: string, args: Field[], call: Call, w: Walker): void {
  const { ctx } = call;
  const lang = languageOf(name);
  const spawns = lang ? lang.spawns(code) : [];
  const flag = codeFlag(name);
  const runsArgs = args.length > 0 && (spawns.some((s) => s.kind === 'unknown' && s.argvDerived) || (USES_ARGV.test(code) && SPAWNS.test(code)));
  if (runsArgs) {
    withVia(ctx, `${name} ${flag}`, () => w.runFields(args, call.env, call.cwd, call.st, ctx, call.span, call.stdin, call.wrapDepth + 1));
    // An argument may be handed to a shell (`os.system(sys.argv[1]) 'make build'`): one with blanks is read as a line too.
    for (const a of args) if (a.known && /\s/.test(a.value)) w.runScript(a, `${name} ${flag} (an argument run by a shell)`, call.cwd, call.env, call.st, ctx, call.span);
  }
  for (const s of spawns) {
    if (s.kind === 'unknown' && s.argvDerived && runsArgs) continue;
    const cwd = s.cwd ? resolveDir(call.cwd, s.cwd) : call.cwd;
    const via = `${name} ${flag}: ${s.call}`;
    if (s.kind === 'shell') w.runScript(s.text, via, cwd, call.env, call.st, ctx, call.span);
    else if (s.kind === 'argv') withVia(ctx, via, () => w.runFields(s.argv, call.env, cwd, clone(call.st), ctx, call.span, NO_STDIN, call.wrapDepth + 1));
    else withVia(ctx, via, () => emit(ctx, [{ value: `${name} ${s.call}`, known: false }], call.env, cwd, call.span, call.st));
  }
}

export const interpreters: ProgramModule = {
  family: 'interpreters',
  names: ['python', 'python2', 'python3', 'pypy', 'pypy3', 'ipython', 'ipython3', 'node', 'nodejs', 'perl', 'ruby', 'php'],
  pattern: PYTHON_NAMES,
  walk,
  examples: {
    match: [
      { line: "perl -e 'exec @ARGV' make build-safe", runs: 'make build-safe' },
      { line: "python3 -c 'import os,sys; os.execvp(sys.argv[1], sys.argv[1:])' make build-safe", runs: 'make build-safe' },
      { line: "python3 - <<'EOF'\nimport subprocess\nsubprocess.run(['make','build-safe'])\nEOF", runs: "python3 -c import subprocess subprocess.run(['make','build-safe']) " },
      { line: "node <<< 'require(\"child_process\").execSync(\"make build-safe\")'", runs: 'node -e require("child_process").execSync("make build-safe") ' },
      { line: 'node node_modules/@playwright/test/cli.js test', runs: 'playwright test' },
      { line: 'python3 -m pytest -x', runs: 'pytest -x' },
      { line: "pypy3 -c 'import os; os.system(\"make build-safe\")'", runs: 'make build-safe' },
      { line: "ipython -c '!make build-safe'", runs: 'make build-safe' },
    ],
    not_match: [
      { line: "perl -e 'print @ARGV' make build-safe", runs: 'make build-safe' },
      { line: 'python3 --version', runs: 'python3 -c' },
    ],
  },
};
