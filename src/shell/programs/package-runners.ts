// Package managers: `npx playwright test` (a package's binary), `npm run e2e` / `pnpm e2e` / `yarn e2e` /
// `bun run e2e` (a package.json script, read by the walker), across workspaces (`-ws`, `-w web`, `pnpm -r`,
// `--filter`, `yarn workspace web`).
import type { Field } from '../expand.js';
import { envField, type Call } from '../walk-state.js';
import type { ProgramModule, Unwrapped, WorkspaceSelection } from './types.js';
import { scan } from './grammar.js';

/** Packages whose binary is not named after the package. */
export const PACKAGE_BINS: Record<string, string> = { '@playwright/test': 'playwright', 'playwright-core': 'playwright', '@puppeteer/browsers': 'browsers', 'selenium-standalone': 'selenium-standalone' };

/** `npx`, `pnpm exec`, ... : runners of a package's binary. */
const PACKAGE_RUNNERS = ['npx', 'pnpx', 'bunx', 'pnpm', 'yarn', 'npm', 'bun'];
/** pnpm/yarn built-in commands (anything else is a package binary: `pnpm playwright test`). */
const PNPM_OWN = new Set(['add', 'install', 'i', 'update', 'up', 'remove', 'rm', 'link', 'unlink', 'import', 'rebuild', 'prune', 'fetch', 'patch', 'patch-commit', 'audit', 'list', 'ls', 'outdated', 'why', 'publish', 'pack', 'run', 'test', 't', 'start', 'init', 'store', 'config', 'root', 'bin', 'setup', 'env', 'server', 'deploy', 'licenses', 'help', 'create', 'ci', 'dedupe', 'doctor', 'cache', 'self-update', 'info', 'view', 'version', 'login', 'logout', 'whoami', 'node', 'workspace', 'workspaces', 'global', 'upgrade', 'upgrade-interactive', 'generate-lock-entry', 'policies', 'plugin', 'set', 'constraints', 'explain', 'npm', 'search', 'tag', 'owner', 'team', 'unplug', 'dlx', 'exec', 'x']);

/** npm commands that run a package.json script, and the script each runs (null: the next word names it). */
const NPM_SCRIPT_COMMANDS: Record<string, string | null> = { run: null, 'run-script': null, rum: null, urn: null, rt: null, test: 'test', t: 'test', tst: 'test', start: 'start', stop: 'stop', restart: 'restart' };

/**
 * A workspace option at argv[j] (`-w web`, `--workspace=apps/web`, `--filter web`, `-ws`, `-r`): recorded in
 * `sel`; returns how many words it took (0: not one).
 */
function workspaceOption(argv: Field[], j: number, sel: WorkspaceSelection): number {
  const f = argv[j]!;
  if (!f.known) return 0;
  const v = f.value;
  if (/^(-ws|--workspaces|-r|--recursive)$/.test(v)) {
    sel.all = true;
    return 1;
  }
  if (/^(-w|--workspace|--filter|-F)$/.test(v)) {
    sel.names.push(argv[j + 1] ?? { value: '', known: false });
    return 2;
  }
  const m = /^(--workspace|--filter)=(.*)$/s.exec(v);
  if (m) {
    sel.names.push({ value: m[2]!, known: true });
    return 1;
  }
  return 0;
}

/** Where the runner runs: `--prefix DIR` / `-C DIR` / `--dir DIR` / `--cwd DIR` (or `=DIR`). */
interface RunnerPlace {
  sel: WorkspaceSelection;
  dirs: Field[];
  /** `--script-shell X` (npm, pnpm): the program that runs each script, as `X -c SCRIPT`. */
  shell?: Field;
}

/** A workspace or directory option at argv[j], recorded in `place`; the words it took (0: not one). */
function runnerOption(argv: Field[], j: number, place: RunnerPlace): number {
  const took = workspaceOption(argv, j, place.sel);
  if (took) return took;
  const v = argv[j]!;
  if (!v.known) return 0;
  if (/^(--prefix|-C|--dir|--cwd)$/.test(v.value)) {
    place.dirs.push(argv[j + 1] ?? { value: '', known: false });
    return 2;
  }
  if (/^(--prefix|--dir|--cwd)=/.test(v.value)) {
    place.dirs.push({ value: v.value.slice(v.value.indexOf('=') + 1), known: true });
    return 1;
  }
  if (v.value === '--script-shell') {
    place.shell = argv[j + 1] ?? { value: '', known: false };
    return 2;
  }
  if (v.value.startsWith('--script-shell=')) {
    place.shell = { value: v.value.slice('--script-shell='.length), known: true };
    return 1;
  }
  return 0;
}

/**
 * `npm run X` / `npm test` / `pnpm X` / `yarn X` / `bun run X` (and across workspaces: `npm run X -w web`,
 * `pnpm --filter web X`, `pnpm -r X`, `yarn workspace web X`, `yarn workspaces foreach run X`): which
 * package.json script runs, with the arguments appended; anything else is packageRunner's (a package
 * binary, or nothing).
 */
function packageCommand(name: string, argv: Field[], envShell?: Field): Unwrapped {
  const fallback = packageRunner(name, argv);
  if (name !== 'npm' && name !== 'pnpm' && name !== 'yarn' && name !== 'bun') return fallback; // npx, pnpx, bunx: binaries only
  let k = 1;
  const place: RunnerPlace = { sel: { all: false, names: [] }, dirs: [], ...(envShell && (name === 'npm' || name === 'pnpm') ? { shell: envShell } : {}) };
  const sel = place.sel;
  // Global options before the command.
  while (k < argv.length && argv[k]!.known && argv[k]!.value.startsWith('-')) {
    k += runnerOption(argv, k, place) || (/^(--reporter|--loglevel)$/.test(argv[k]!.value) ? 2 : 1);
  }
  let sub = argv[k];
  if (!sub?.known) return fallback;
  if (name === 'yarn' && sub.value === 'workspace' && argv[k + 1]) {
    // yarn workspace NAME <script or command>
    sel.names.push(argv[k + 1]!);
    k += 2;
    sub = argv[k];
    if (!sub?.known) return fallback;
  } else if (name === 'yarn' && sub.value === 'workspaces' && argv[k + 1]?.known && argv[k + 1]!.value === 'foreach') {
    // yarn workspaces foreach [options] run NAME
    sel.all = true;
    k += 2;
    while (k < argv.length && argv[k]!.known && argv[k]!.value.startsWith('-')) k++;
    sub = argv[k];
    if (!sub?.known) return fallback;
  }
  let script: Field | undefined;
  let rest: Field[];
  if (name === 'npm') {
    if (!Object.hasOwn(NPM_SCRIPT_COMMANDS, sub.value)) return fallback;
    const fixed = NPM_SCRIPT_COMMANDS[sub.value]!;
    let j = k + 1;
    // npm options between the command and the script name (`npm run -w web build`, `npm run --silent x`).
    while (fixed === null && j < argv.length && argv[j]!.known && argv[j]!.value.startsWith('-')) j += runnerOption(argv, j, place) || 1;
    script = fixed === null ? argv[j] : { value: fixed, known: true };
    rest = argv.slice(fixed === null ? j + 1 : k + 1);
  } else if (name === 'bun' && sub.value === 'test') {
    return fallback; // bun's own test runner, not a script
  } else if (sub.value === 'run' || sub.value === 'run-script') {
    let j = k + 1;
    while (j < argv.length && argv[j]!.known && argv[j]!.value.startsWith('-')) j += runnerOption(argv, j, place) || 1;
    script = argv[j];
    rest = argv.slice(j + 1);
  } else if (sub.value === 'test' || sub.value === 't' || sub.value === 'start') {
    script = { value: sub.value === 't' ? 'test' : sub.value, known: true };
    rest = argv.slice(k + 1);
  } else if (!PNPM_OWN.has(sub.value) && !(name === 'bun' && /\.(m?[jt]sx?|cjs)$/.test(sub.value))) {
    script = sub; // `pnpm build`, `yarn e2e`: a script of that name, else the binary
    rest = argv.slice(k + 1);
  } else {
    return fallback;
  }
  if (!script) return fallback;
  // Options after the script name (before any `--`): npm takes them as its own (`npm run e2e -ws`,
  // `--prefix ../web`); pnpm, yarn and bun hand them to the script, but a directory among them is judged
  // too (fail closed: the script of either package). Workspace options count either way.
  const runnerDir = place.dirs.at(-1);
  const late: RunnerPlace = { sel, dirs: [] };
  for (let j = 0; j < rest.length && !(rest[j]!.known && rest[j]!.value === '--'); j++) runnerOption(rest, j, late);
  const shell = name === 'npm' || name === 'pnpm' ? (late.shell ?? place.shell) : undefined;
  // Arguments reach the script after `--` (npm) or directly (the others, and npm 7+ too).
  const args = rest[0]?.known && rest[0].value === '--' ? rest.slice(1) : rest.filter((a) => !(a.known && a.value === '--'));
  const via = `${name} ${sub.value === script.value ? '' : `${sub.value} `}${script.value}`;
  const workspaces = sel.all || sel.names.length ? { workspaces: sel } : {};
  const at = (dir: Field | undefined): Unwrapped => ({ kind: 'package-script', via, script: script!, args, ...(dir ? { dir } : {}), ...workspaces, ...(shell ? { shell } : {}), fallback });
  const lateDir = late.dirs.at(-1);
  if (!lateDir) return at(runnerDir);
  if (name === 'npm') return at(lateDir); // the last one wins
  return { kind: 'many', items: [at(runnerDir), at(lateDir)] };
}

function packageRunner(name: string, argv: Field[]): Unwrapped {
  const sub = argv[1];
  let start = 1;
  if (name === 'npm') {
    if (!sub?.known || !['exec', 'x'].includes(sub.value)) return { kind: 'none' };
    start = 2;
  } else if (name === 'pnpm' || name === 'yarn' || name === 'bun') {
    // Global options before the command: `pnpm --filter web exec playwright test`, `yarn --cwd app …`.
    let k = 1;
    while (k < argv.length && argv[k]!.known && argv[k]!.value.startsWith('-')) {
      const v = argv[k]!.value;
      k += /^(--filter|-F|--dir|-C|--cwd|--workspace|--reporter|--loglevel)$/.test(v) ? 2 : 1;
    }
    const sub = argv[k];
    if (!sub) return { kind: 'none' };
    if (!sub.known) return { kind: 'run', via: name, argv: argv.slice(k) };
    // `yarn run X` runs a script named X or, failing that, the binary X: judge it as the binary.
    if (['exec', 'dlx', 'x'].includes(sub.value) || (name === 'yarn' && sub.value === 'run')) start = k + 1;
    else if (k > 1 && !sub.value.startsWith('-') && !PNPM_OWN.has(sub.value)) start = k;
    else if (PNPM_OWN.has(sub.value)) return { kind: 'none' };
    else if (name === 'bun' && /\.(m?[jt]sx?|cjs)$/.test(sub.value)) return { kind: 'none' };
    else start = k;
  }
  const s = scan([argv[0]!, ...argv.slice(start)], { value: ['-p', '--package', '-c', '--call', '--registry', '--cache', '--userconfig', '--workspace', '-w', '--filter', '-F', '--dir', '-C'], scriptOption: ['-c', '--call'] });
  if (!s) return { kind: 'none' };
  const call = s.opts.find(([n]) => n === '-c' || n === '--call');
  if (call && call[1]) return { kind: 'script', via: `${name} -c`, text: call[1] };
  const inner = [argv[0]!, ...argv.slice(start)].slice(s.index);
  if (inner.length === 0) return { kind: 'none' };
  // A package spec names the binary: `npx playwright@1.45.0 test`, `npx @scope/tool@latest`.
  const first = inner[0]!;
  if (first.known) {
    const pkg = /^(@[^/@]+\/[^@]+|[^@]+)(?:@[^/]+)?$/.exec(first.value)?.[1] ?? first.value;
    const bin = PACKAGE_BINS[pkg] ?? pkg.replace(/^@[^/]+\//, '');
    if (bin !== first.value) inner[0] = { value: bin, known: true };
  }
  return { kind: 'run', via: name, argv: inner };
}


/** Task runners over a workspace's package.json scripts. */
const MONOREPO_RUNNERS = ['turbo', 'lerna'];
/** turbo's own commands (anything else is a task: `turbo e2e` is `turbo run e2e`). */
const TURBO_OWN = new Set(['login', 'logout', 'link', 'unlink', 'prune', 'gen', 'generate', 'ls', 'info', 'daemon', 'telemetry', 'query', 'scan', 'boundaries', 'bin', 'completion', 'devtools', 'help']);
const TURBO_VALUE_OPTS = new Set(['--filter', '-F', '--concurrency', '--cache-dir', '--graph', '--output-logs', '--log-order', '--log-prefix', '--env-mode', '--cache', '--team', '--token', '--api', '--profile', '--cwd', '--heap', '--trace', '--anon-profile', '--ui', '--summarize']);
const LERNA_VALUE_OPTS = new Set(['--scope', '--ignore', '--concurrency', '--since', '--loglevel', '--npm-client', '--profile-location', '--include-dependents', '--include-dependencies']);

/**
 * `turbo run e2e test --filter=web`, `turbo e2e`, `turbo watch e2e`, `lerna run e2e --scope web`: the
 * scripts of those names in the selected workspace packages (all of them without a filter, or with a
 * pattern); `lerna exec -- CMD` runs CMD in each package (directory unknown).
 */
function monorepoRun(program: string, argv: Field[]): Unwrapped {
  let i = 1;
  while (argv[i]?.known && argv[i]!.value.startsWith('-')) i++; // global flags (`turbo --no-daemon run`)
  const sub = argv[i];
  if (!sub?.known) return { kind: 'none' };
  if (program === 'lerna' && sub.value === 'exec') {
    const dash = argv.findIndex((a, k) => k > i && a.known && a.value === '--');
    const inner = dash >= 0 ? argv.slice(dash + 1) : argv.slice(i + 1).filter((a) => !(a.known && a.value.startsWith('-')));
    return inner.length ? { kind: 'run', via: 'lerna exec', argv: inner, cwdUnknown: true } : { kind: 'none' };
  }
  let tasksFrom: number;
  if (sub.value === 'run' || (program === 'turbo' && sub.value === 'watch')) tasksFrom = i + 1;
  else if (program === 'turbo' && !TURBO_OWN.has(sub.value)) tasksFrom = i;
  else return { kind: 'none' };
  const valueOpts = program === 'turbo' ? TURBO_VALUE_OPTS : LERNA_VALUE_OPTS;
  const sel: WorkspaceSelection = { all: false, names: [] };
  const tasks: Field[] = [];
  let args: Field[] = [];
  for (let k = tasksFrom; k < argv.length; k++) {
    const f = argv[k]!;
    if (f.known && f.value === '--') {
      args = argv.slice(k + 1);
      break;
    }
    if (f.known && f.value.startsWith('-')) {
      const eq = f.value.indexOf('=');
      const name = eq < 0 ? f.value : f.value.slice(0, eq);
      const value = eq < 0 ? argv[k + 1] : { value: f.value.slice(eq + 1), known: true };
      if (name === '--dry-run' || name === '--dry' || name === '--graph') return { kind: 'none' }; // runs no task
      if (name === '--filter' || name === '-F' || name === '--scope') {
        if (value) sel.names.push(value);
      } else if (name === '--affected' || name === '--since' || name === '--ignore') {
        sel.all = true; // a subset computed from git: take them all (fail closed)
      }
      if (eq < 0 && valueOpts.has(name)) k++;
      continue;
    }
    tasks.push(f);
  }
  if (sel.names.length === 0) sel.all = true;
  const items: Unwrapped[] = tasks.map((t) => {
    // turbo's `web#e2e`: the task of one package.
    const hash = t.known ? t.value.indexOf('#') : -1;
    const script = hash >= 0 ? { value: t.value.slice(hash + 1), known: true } : t;
    const only: WorkspaceSelection = hash >= 0 ? { all: false, names: [{ value: t.value.slice(0, hash), known: true }] } : sel;
    return { kind: 'package-script', via: `${program} ${script.value}`, script, args, workspaces: only, fallback: { kind: 'none' } };
  });
  if (items.length === 0) return { kind: 'none' };
  return items.length === 1 ? items[0]! : { kind: 'many', items };
}

export const packageRunners: ProgramModule = {
  family: 'package runners',
  names: PACKAGE_RUNNERS,
  // npm's config from the environment: npm_config_script_shell (any case, as npm reads it).
  unwrap: (call: Call) => packageCommand(call.name, call.fields, envField(call, 'npm_config_script_shell') ?? envField(call, 'NPM_CONFIG_SCRIPT_SHELL')),
  examples: {
    match: [
      { line: 'npx playwright test', runs: 'playwright test' },
      { line: 'npx @playwright/test test', runs: 'playwright test' },
      { line: 'pnpm exec playwright test', runs: 'playwright test' },
      { line: 'npm exec -- playwright test', runs: 'playwright test' },
    ],
    not_match: [{ line: 'npm install playwright', runs: 'playwright test' }],
  },
};

export const monorepoRunners: ProgramModule = {
  family: 'monorepo task runners',
  names: MONOREPO_RUNNERS,
  unwrap: (call: Call) => monorepoRun(call.name, call.fields),
  examples: {
    match: [{ line: 'lerna exec -- make build', runs: 'make build' }],
    not_match: [{ line: 'turbo run build --dry-run', runs: 'make build' }],
  },
};

/**
 * A package's JavaScript file run by its path (`node_modules/@playwright/test/cli.js test`): its `#!`
 * line is node's, so it is `node FILE ARGS`, which the interpreters family reads as that package's
 * command (`playwright test`). Other .js files run by path are read by their `#!` line as before.
 */
export const packageFiles: ProgramModule = {
  family: 'package files',
  names: [],
  pattern: /\.[cm]?js$/,
  unwrap: (call: Call) => {
    const prog = call.fields[0]!;
    if (!prog.known || !/(^|\/)node_modules\//.test(prog.value)) return { kind: 'none' };
    return { kind: 'run', via: `${prog.value} (run by node, its #! line)`, argv: [{ value: 'node', known: true }, ...call.fields] };
  },
  examples: {
    match: [
      { line: 'node_modules/@playwright/test/cli.js test', runs: 'node node_modules/@playwright/test/cli.js test' },
      { line: './node_modules/playwright/cli.js test --project=chromium', runs: 'node ./node_modules/playwright/cli.js test --project=chromium' },
    ],
    not_match: [{ line: './scripts/build.js', runs: 'node ./scripts/build.js' }],
  },
};
