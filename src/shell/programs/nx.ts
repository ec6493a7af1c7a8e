// Nx: `nx run web:e2e`, `nx e2e web`, `nx run-many -t e2e`, `nx affected -t e2e` run targets of the
// workspace's projects. A target is read from the project's project.json (`nx:run-commands` commands,
// `nx:run-script` scripts, the executors whose program is known: `@nx/playwright:playwright` is
// `playwright test`), its package.json scripts, or the target a known plugin infers for it
// (`@nx/playwright/plugin`'s `e2e` where the project has a playwright config); its `dependsOn` targets
// first. What cannot be read (another executor, a target another plugin may add, a project not found) is
// unknown. `nx exec -- CMD` and
// `nx watch -- CMD` run CMD. Projects are the root's and those of the workspace globs (package.json
// `workspaces`, pnpm-workspace.yaml) or, without globs, of apps/*, libs/*, packages/*, e2e/*.
import { posix } from 'node:path';
import type { Field } from '../expand.js';
import { expandWorkspaceGlobs, nearest, searchFrom, unknownScript } from '../script-files.js';
import { quote } from '../../routes/quote.js';
import { withVia, type Call, type Walker } from '../walk-state.js';
import type { ProgramModule } from './types.js';

/** nx commands that run no target (or only nx's own tooling). */
const OWN = new Set(['graph', 'dep-graph', 'show', 'list', 'report', 'reset', 'clear-cache', 'daemon', 'generate', 'g', 'migrate', 'add', 'init', 'connect', 'connect-to-nx-cloud', 'view-logs', 'release', 'repair', 'sync', 'sync:check', 'format:check', 'format:write', 'format', 'print-affected', 'import', 'login', 'logout', 'mcp', 'help', 'workspace-generator']);
/** Executors whose program is known: the command line they amount to. */
const EXECUTORS: Record<string, string> = {
  '@nx/playwright:playwright': 'playwright test',
  '@nrwl/playwright:playwright': 'playwright test',
  '@nx/cypress:cypress': 'cypress run',
  '@nrwl/cypress:cypress': 'cypress run',
  '@nx/jest:jest': 'jest',
  '@nrwl/jest:jest': 'jest',
  '@nx/vite:test': 'vitest run',
  '@nx/eslint:lint': 'eslint .',
  '@nx/linter:eslint': 'eslint .',
};

type Json = Record<string, unknown>;
const isObj = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

interface Project {
  name: string;
  dir: string;
  targets: Json;
  scripts: Json;
}

interface Workspace {
  root: string;
  /** nx.json names plugins other than those below: they may add targets no file spells. */
  plugins: boolean;
  /** Targets the known plugins infer: name -> the command and the config file a project needs for it. */
  inferred: Map<string, { command: string; configs: string[] }>;
  projects: Project[];
}

/** Plugins whose inferred target is known: its default name, command, and the project file it needs. */
const PLUGINS: Record<string, { target: string; command: string; configs: string[] }> = {
  '@nx/playwright/plugin': { target: 'e2e', command: 'playwright test', configs: ['playwright.config.ts', 'playwright.config.js', 'playwright.config.mjs', 'playwright.config.cjs'] },
  '@nx/cypress/plugin': { target: 'e2e', command: 'cypress run', configs: ['cypress.config.ts', 'cypress.config.js', 'cypress.config.mjs', 'cypress.config.cjs'] },
};

class Unknown extends Error {}

function json(call: Call, path: string): Json | null {
  const r = call.ctx.files!.read(path);
  if (r.kind === 'missing' || r.kind === 'directory') return null;
  if (r.kind !== 'text') throw new Unknown(`${path} cannot be read`);
  try {
    const v = JSON.parse(r.text) as unknown;
    if (!isObj(v)) throw new Unknown(`${path} is not an object`);
    return v;
  } catch (err) {
    if (err instanceof Unknown) throw err;
    throw new Unknown(`${path} is not JSON`);
  }
}

function project(call: Call, dir: string): Project | null {
  const pj = json(call, `${dir}/project.json`);
  const pkg = json(call, `${dir}/package.json`);
  if (!pj && !pkg) return null;
  const name = typeof pj?.name === 'string' ? pj.name : typeof pkg?.name === 'string' ? pkg.name : posix.basename(dir);
  return { name, dir, targets: isObj(pj?.targets) ? pj.targets : {}, scripts: isObj(pkg?.scripts) ? pkg.scripts : {} };
}

/** The workspace: the nearest nx.json's folder, and its projects. */
function workspace(call: Call, start: string): Workspace | null {
  return nearest(start, ['nx.json'], (path, d) => {
    const nx = json(call, path);
    if (nx) {
      const pkg = json(call, `${d}/package.json`);
      const ws = pkg?.workspaces;
      let globs = Array.isArray(ws) ? ws : isObj(ws) && Array.isArray(ws.packages) ? ws.packages : null;
      const pnpm = call.ctx.files!.read(`${d}/pnpm-workspace.yaml`);
      if (!globs && pnpm.kind === 'text') globs = [...pnpm.text.matchAll(/^\s+-\s*['"]?([^'"#\n]+?)['"]?\s*$/gm)].map((m) => m[1]!);
      const dirs = expandWorkspaceGlobs(d, (globs ?? ['apps/*', 'libs/*', 'packages/*', 'e2e/*', 'apps/*/*', 'libs/*/*']).filter((g): g is string => typeof g === 'string'), call.ctx);
      if (dirs === null) throw new Unknown('the workspace cannot be listed');
      const projects = [d, ...dirs].map((p) => project(call, p)).filter((p): p is Project => p !== null);
      const inferred = new Map<string, { command: string; configs: string[] }>();
      let plugins = false;
      for (const entry of Array.isArray(nx.plugins) ? nx.plugins : []) {
        const name = typeof entry === 'string' ? entry : isObj(entry) && typeof entry.plugin === 'string' ? entry.plugin : null;
        const known = name !== null && Object.hasOwn(PLUGINS, name) ? PLUGINS[name]! : null;
        if (!known) {
          plugins = true;
          continue;
        }
        const options = isObj(entry) && isObj(entry.options) ? entry.options : {};
        const target = typeof options.targetName === 'string' ? options.targetName : typeof options.ciTargetName === 'string' ? options.ciTargetName : known.target;
        inferred.set(target, { command: known.command, configs: known.configs });
      }
      return { root: d, plugins, inferred, projects };
    }
    return null;
  });
}

function runTarget(call: Call, w: Walker, ws: Workspace, p: Project, target: string, args: Field[], done: Set<string>, depth: number): void {
  const key = `${p.dir}\u0000${target}`;
  if (done.has(key) || depth > 16) return;
  done.add(key);
  const label = `nx ${p.name}:${target}`;
  const t = p.targets[target];
  const rest = args.length ? ` ${args.map((a) => quote(a.value)).join(' ')}` : '';
  const run = (text: string, dir: string | null) => w.runScript({ value: text + rest, known: args.every((a) => a.known) }, label, dir, call.env, call.st, call.ctx, call.span);
  if (t === undefined) {
    const script = p.scripts[target];
    if (typeof script === 'string') return run(script, p.dir);
    const plugin = ws.inferred.get(target);
    if (plugin && plugin.configs.some((c) => call.ctx.files!.read(`${p.dir}/${c}`).kind === 'text')) return run(plugin.command, p.dir);
    // A target only a plugin adds (`@nx/playwright/plugin` infers `e2e`) cannot be read.
    if (ws.plugins) throw new Unknown(`${label}: a target a plugin may add`);
    return;
  }
  if (!isObj(t)) throw new Unknown(label);
  for (const dep of Array.isArray(t.dependsOn) ? t.dependsOn : []) {
    const name = typeof dep === 'string' ? dep : isObj(dep) && typeof dep.target === 'string' ? dep.target : null;
    if (name === null) throw new Unknown(`${label}: dependsOn`);
    if (name.startsWith('^')) {
      // `^build`: the target in the projects this one depends on (not known here: all that have it).
      for (const other of ws.projects) if (other !== p && (other.targets[name.slice(1)] !== undefined || typeof other.scripts[name.slice(1)] === 'string')) runTarget(call, w, ws, other, name.slice(1), [], done, depth + 1);
    } else runTarget(call, w, ws, p, name, [], done, depth + 1);
  }
  const options = isObj(t.options) ? t.options : {};
  const executor = typeof t.executor === 'string' ? t.executor : typeof t.command === 'string' ? 'nx:run-commands' : null;
  // run-commands run from the workspace root, or from `cwd` (relative to the root).
  const cwd = typeof options.cwd === 'string' ? posix.resolve(ws.root, options.cwd) : ws.root;
  if (executor === 'nx:run-commands') {
    const commands = typeof t.command === 'string' ? [t.command] : typeof options.command === 'string' ? [options.command] : Array.isArray(options.commands) ? options.commands : null;
    if (!commands) throw new Unknown(`${label}: run-commands without commands`);
    for (const c of commands) {
      const text = typeof c === 'string' ? c : isObj(c) && typeof c.command === 'string' ? c.command : null;
      if (text === null) throw new Unknown(`${label}: a command`);
      run(text.replace(/\{args\.[^}]*\}/g, () => '${__offhost_nx}'), cwd);
    }
    return;
  }
  if (executor === 'nx:run-script') {
    const script = typeof options.script === 'string' ? p.scripts[options.script] : undefined;
    if (typeof script !== 'string') throw new Unknown(`${label}: run-script`);
    return run(script, p.dir);
  }
  if (executor && Object.hasOwn(EXECUTORS, executor)) return run(EXECUTORS[executor]!, p.dir);
  throw new Unknown(`${label}: executor ${executor ?? '(none)'}`);
}

function walk(call: Call, w: Walker): void {
  w.emitSelf(call);
  const { fields, ctx } = call;
  const words: Field[] = [];
  let i = 1;
  for (; i < fields.length; i++) {
    const f = fields[i]!;
    if (f.known && f.value === '--') break;
    words.push(f);
  }
  const afterDash = fields.slice(i + 1);
  const positional = words.filter((f) => !(f.known && f.value.startsWith('-')));
  const sub = positional[0];
  if (!sub) return;
  if (!sub.known) return unknownScript(sub, 'nx', call.env, call.cwd, call.st, ctx, call.span);
  if (OWN.has(sub.value)) return;
  if (sub.value === 'exec' || sub.value === 'watch') {
    // `nx exec -- CMD` (in each project's folder), `nx watch --all -- CMD`.
    if (afterDash.length) withVia(ctx, `nx ${sub.value}`, () => w.runFields(afterDash, call.env, sub.value === 'exec' ? null : call.cwd, call.st, ctx, call.span, call.stdin, call.wrapDepth + 1));
    return;
  }
  if (!ctx.files || call.cwd === null) return;
  const where = `nx ${words.map((f) => f.value).join(' ')}`;
  try {
    const ws = workspace(call, searchFrom(call.cwd, ctx));
    if (!ws) return; // not an Nx workspace: nx stops
    const byName = (n: string): Project => {
      const p = ws.projects.find((x) => x.name === n);
      if (!p) throw new Unknown(`project ${n} not found`);
      return p;
    };
    const here = (): Project => {
      const cwd = searchFrom(call.cwd!, ctx);
      const p = [...ws.projects].sort((a, b) => b.dir.length - a.dir.length).find((x) => cwd === x.dir || cwd.startsWith(`${x.dir}/`));
      if (!p) throw new Unknown('no project here');
      return p;
    };
    const opt = (names: string[]): string[] => {
      const out: string[] = [];
      for (let k = 0; k < words.length; k++) {
        const f = words[k]!;
        const eq = names.find((n) => f.value.startsWith(`${n}=`));
        if (!f.known) continue;
        if (eq) out.push(...f.value.slice(eq.length + 1).split(','));
        else if (names.includes(f.value)) for (let j = k + 1; j < words.length && !words[j]!.value.startsWith('-'); j++) out.push(...words[j]!.value.split(','));
      }
      return out.filter(Boolean);
    };
    if (words.some((f) => !f.known)) throw new Unknown('a word known only at run time');
    const done = new Set<string>();
    if (sub.value === 'run') {
      const spec = positional[1]?.value;
      if (!spec) return;
      const parts = spec.split(':');
      const [proj, target] = parts.length >= 2 ? [byName(parts[0]!), parts[1]!] : [here(), parts[0]!];
      return runTarget(call, w, ws, proj, target, afterDash, done, 0);
    }
    if (sub.value === 'run-many' || sub.value === 'affected') {
      const targets = opt(['-t', '--target', '--targets']);
      if (targets.length === 0) throw new Unknown('no target named');
      const names = opt(['-p', '--projects']);
      const projects = names.length ? names.map(byName) : ws.projects;
      for (const p of projects) for (const t of targets) if (p.targets[t] !== undefined || typeof p.scripts[t] === 'string' || ws.inferred.has(t) || ws.plugins) runTarget(call, w, ws, p, t, afterDash, done, 0);
      return;
    }
    // `nx e2e web`, `nx e2e` (the project here).
    const proj = positional[1] ? byName(positional[1].value) : here();
    runTarget(call, w, ws, proj, sub.value, afterDash, done, 0);
  } catch (err) {
    if (!(err instanceof Unknown)) throw err;
    withVia(ctx, `${where} (${err.message})`, () => unknownScript({ value: where, known: false }, where, call.env, call.cwd, call.st, ctx, call.span));
  }
}

export const nx: ProgramModule = {
  family: 'nx',
  names: ['nx'],
  walk,
  examples: {
    // The targets come from project.json and package.json on disk: test/policy/script-files.test.ts.
    match: [{ line: 'nx exec -- make build', runs: 'make build' }],
    not_match: [{ line: 'nx graph', runs: 'make build' }],
  },
};
