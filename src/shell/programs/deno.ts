// Deno: `deno run -A npm:playwright test` and `deno x playwright test` / `dx playwright test` run an npm
// package's binary (as npx does); `deno task e2e` runs a task of deno.json(c), else a package.json script;
// `deno eval CODE` is inline code; `deno run script.ts` / `deno script.ts` is a code file (judged like
// `node script.js`). Remote modules (`jsr:`, `https:`) are code offhost cannot read: judged by the name, as
// a missing file is. Deno's own commands (`deno test`, `fmt`, `lint`, `compile`...) run only deno.
import type { Field } from '../expand.js';
import { emit, withVia, type Call, type Walker } from '../walk-state.js';
import { denoTask, interpreterFile } from '../script-files.js';
import { PACKAGE_BINS } from './package-runners.js';
import type { ProgramModule } from './types.js';

/** Options (of any subcommand) that take the next word as their value; the others use `=`. */
const VALUE_OPTS = new Set(['-c', '--config', '--import-map', '--lock', '--cert', '--location', '--seed', '--ext', '--preload', '--require', '--cwd', '-f', '--filter']);
const INFO_OPTS = new Set(['-h', '--help', '-V', '--version']);
/** Deno's own commands: they run no package binary, task or script of the user's (tests stay deno's). */
const OWN = new Set(['add', 'approve-scripts', 'bench', 'bundle', 'cache', 'check', 'clean', 'compile', 'completions', 'coverage', 'deploy', 'doc', 'fmt', 'help', 'info', 'init', 'install', 'jupyter', 'lint', 'lsp', 'outdated', 'publish', 'remove', 'repl', 'test', 'types', 'uninstall', 'update', 'upgrade', 'vendor']);
const USES_ARGV = /Deno\.args/;
const SPAWNS = /\b(Command|run|spawn\w*|exec\w*)\b/;

/** The index of the first word from `i` on that is not an option (an option's value skipped). */
function firstOperand(fields: Field[], i: number): number {
  while (i < fields.length) {
    const f = fields[i]!;
    if (!f.known || !f.value.startsWith('-') || f.value === '-') break;
    if (f.value === '--') return i + 1;
    i += VALUE_OPTS.has(f.value) ? 2 : 1;
  }
  return i;
}

/** `npm:@playwright/test@1.45/playwright` -> `playwright`; `npm:vitest` -> `vitest`. */
function npmBin(spec: string): string {
  const m = /^((?:@[^/@]+\/)?[^/@]+)(?:@[^/]*)?(?:\/(.+))?$/.exec(spec);
  if (!m) return spec;
  if (m[2]) return m[2];
  return PACKAGE_BINS[m[1]!] ?? m[1]!.replace(/^@[^/]+\//, '');
}

/** What `deno run TARGET args` (or `deno x TARGET args`, bare: a package name) runs. */
function runTarget(call: Call, w: Walker, via: string, fields: Field[], at: number, bare: boolean): void {
  const target = fields[at];
  if (!target) return;
  const args = fields.slice(at + 1);
  if (!target.known) {
    withVia(call.ctx, via, () => emit(call.ctx, [{ value: target.value, known: false }], call.env, call.cwd, call.span, call.st));
    return;
  }
  const v = target.value;
  const npm = v.startsWith('npm:') ? v.slice(4) : bare && !/^(jsr:|https?:|file:|\.{0,2}\/)/.test(v) && !/\.[cm]?[jt]sx?$/.test(v) ? v : null;
  if (npm !== null) {
    const bin = { value: npmBin(npm), known: true };
    withVia(call.ctx, `${via} ${v}`, () => w.runFields([bin, ...args], call.env, call.cwd, call.st, call.ctx, call.span, call.stdin, call.wrapDepth + 1));
    return;
  }
  if (/^(jsr:|https?:)/.test(v)) return; // remote code: judged by the line as written
  if (call.ctx.files) interpreterFile('deno', [call.fields[0]!, target, ...args], call.env, call.cwd, call.st, call.ctx, call.span);
}

function walk(call: Call, w: Walker): void {
  const { fields } = call;
  const n = fields.length;
  if (call.name === 'dx') {
    // `dx PKG args` is `deno x PKG args`.
    w.emitSelf(call);
    return runTarget(call, w, 'dx', fields, firstOperand(fields, 1), true);
  }
  let i = 1;
  while (i < n && fields[i]!.known && fields[i]!.value.startsWith('-') && fields[i]!.value !== '-') {
    if (INFO_OPTS.has(fields[i]!.value)) return w.emitSelf(call);
    i += VALUE_OPTS.has(fields[i]!.value) ? 2 : 1;
  }
  w.emitSelf(call);
  const sub = fields[i];
  if (!sub) return;
  if (!sub.known) {
    // What deno is asked to do is not known: the rules judge an unknown program.
    return void withVia(call.ctx, 'deno', () => emit(call.ctx, [{ value: sub.value, known: false }], call.env, call.cwd, call.span, call.st));
  }
  const s = sub.value;
  if (s === 'run' || s === 'serve') return runTarget(call, w, `deno ${s}`, fields, firstOperand(fields, i + 1), false);
  if (s === 'x') return runTarget(call, w, 'deno x', fields, firstOperand(fields, i + 1), true);
  if (s === 'eval') {
    const at = firstOperand(fields, i + 1);
    const code = fields[at];
    if (!code) return;
    // As inline code (the inline-code rules read it), and code that runs its own arguments runs them.
    withVia(call.ctx, 'deno eval', () => emit(call.ctx, [{ value: 'deno', known: true }, { value: '-e', known: true }, code], call.env, call.cwd, call.span, call.st));
    const args = fields.slice(at + 1);
    if (args.length && code.known && USES_ARGV.test(code.value) && SPAWNS.test(code.value)) {
      withVia(call.ctx, 'deno eval', () => w.runFields(args, call.env, call.cwd, call.st, call.ctx, call.span, call.stdin, call.wrapDepth + 1));
    }
    return;
  }
  if (s === 'task') {
    let dir: Field | undefined;
    for (let k = i + 1; k < n; k++) {
      const f = fields[k]!;
      if (f.known && f.value === '--cwd') dir = fields[k + 1];
      else if (f.known && f.value.startsWith('--cwd=')) dir = { value: f.value.slice(6), known: true };
    }
    const at = firstOperand(fields, i + 1);
    const task = fields[at];
    if (!task) return; // `deno task`: lists the tasks
    const args = fields.slice(at + 1);
    denoTask({ via: `deno task ${task.value}`, task, args, ...(dir ? { dir } : {}) }, call.env, call.cwd, call.st, call.ctx, call.span);
    return;
  }
  if (OWN.has(s)) return;
  // `deno script.ts`, `deno npm:vite`: `run` without the word.
  runTarget(call, w, 'deno', fields, i, false);
}

export const deno: ProgramModule = {
  family: 'deno',
  names: ['deno', 'dx'],
  walk,
  examples: {
    match: [
      { line: 'deno run -A npm:playwright test', runs: 'playwright test' },
      { line: 'deno run --allow-all --config deno.json npm:@playwright/test@1.45.0 test', runs: 'playwright test' },
      { line: 'deno x playwright test', runs: 'playwright test' },
      { line: 'dx --allow-all playwright test', runs: 'playwright test' },
      { line: 'deno npm:playwright test', runs: 'playwright test' },
      { line: 'deno run -A npm:@playwright/test/playwright test', runs: 'playwright test' },
      { line: "deno eval 'new Deno.Command(Deno.args[0], { args: Deno.args.slice(1) }).spawn()' make build-safe", runs: 'make build-safe' },
    ],
    not_match: [
      { line: 'deno test -A', runs: 'playwright test' },
      { line: 'deno fmt --check', runs: 'fmt' },
      { line: 'deno run https://deno.land/std/examples/welcome.ts playwright test', runs: 'playwright test' },
    ],
  },
};
