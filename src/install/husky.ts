// `offhost init` (husky): sets a repository up so every commit runs `offhost lint --staged` on the lock files:
// husky v9 (`"prepare": "husky"` in package.json, `.husky/pre-commit`), and a lint-staged entry for the lock
// paths. Never clobbers: an existing `.husky/pre-commit` is appended to, an existing lint-staged config gets
// one more key (package.json, .lintstagedrc as JSON or YAML, .lintstagedrc.json/.yaml/.yml); a config this
// cannot merge safely (JavaScript/TypeScript, package.yaml) or a hook manager that husky would switch off is
// refused before anything is written. Idempotent: a second run changes nothing.
//
// lint-staged shows a task's output only when the task fails: the hook runs it with --verbose, so that the
// warnings of a check that passes (a lock about to expire, a heartbeat overdue) reach the person committing,
// and with OFFHOST_NO_TTY=1, so that `offhost lint --staged` does not also write them to the terminal itself
// (which it does for a lint-staged run without --verbose): shown once.
//
// lint-staged passes only added/copied/modified/renamed files (git diff --diff-filter=ACMR), so a commit that
// only deletes a lock would not reach it: the pre-commit hook also runs `offhost lint --staged` itself when the
// staged change deletes something under the notices folder.
import { spawnSync } from 'node:child_process';
import { runGitSync } from '../git/run.js';
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, isAbsolute, join, relative } from 'node:path';
import { isMap, isScalar, isSeq, parseDocument, type Document } from 'yaml';
import { ConfigError, GitError, UsageError, positionAt } from '../errors.js';
import type { Io } from '../io.js';
import { DEFAULT_NOTICES_DIR } from '../locks/paths.js';
import { repoRoot } from '../git/staged.js';
import { singleQuote } from '../routes/quote.js';

export const LINT_COMMAND = 'offhost lint --staged';
export const HOOK_MARKER = '# offhost: VM lock checks (added by offhost init)';
/** The lint-staged line offhost adds to the hook (`offhost uninstall` recognises it and the older form). */
export const LINT_STAGED_LINE = 'OFFHOST_NO_TTY=1 npx lint-staged --verbose';
export const DELETION_COMMENT = '# lint-staged never sees deleted files: check a change that deletes a lock (or an archive) directly';

export interface HuskyInitOptions {
  noticesDir?: string;
  /** Print the changes, write nothing. */
  dryRun?: boolean;
}

/** lint-staged's config files, in its own search order (lint-staged/lib/configFiles.js). */
export const LINT_STAGED_FILES = [
  'package.json',
  'package.yaml',
  'package.yml',
  '.lintstagedrc',
  '.lintstagedrc.json',
  '.lintstagedrc.yaml',
  '.lintstagedrc.yml',
  '.lintstagedrc.mjs',
  '.lintstagedrc.mts',
  '.lintstagedrc.js',
  '.lintstagedrc.ts',
  '.lintstagedrc.cjs',
  '.lintstagedrc.cts',
  'lint-staged.config.mjs',
  'lint-staged.config.mts',
  'lint-staged.config.js',
  'lint-staged.config.ts',
  'lint-staged.config.cjs',
  'lint-staged.config.cts',
];

interface PlannedWrite {
  path: string;
  text: string;
  mode?: number;
  what: string[];
}

export function jsonIndent(text: string): string | number {
  const m = /\n([ \t]+)"/.exec(text);
  return m ? (m[1]!.includes('\t') ? '\t' : m[1]!.length) : 2;
}

export function parseJson(text: string, file: string): unknown {
  try {
    return JSON.parse(text);
  } catch (e) {
    const msg = (e as Error).message;
    const at = /position (\d+)/.exec(msg);
    const pos = at ? positionAt(text, Number(at[1])) : undefined;
    throw new ConfigError(`is not valid JSON (${msg}); fix it and run offhost init again — nothing was changed`, file, pos?.line, pos?.column);
  }
}

export function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Adds `command` for `glob` to a lint-staged config object; returns what changed, or null when already there. */
function mergeLintStaged(config: Record<string, unknown>, glob: string, command: string, file: string): string | null {
  for (const v of Object.values(config)) {
    const cmds = typeof v === 'string' ? [v] : Array.isArray(v) ? v : [];
    if (cmds.some((c) => typeof c === 'string' && c.includes(command))) return null;
  }
  const cur = config[glob];
  if (cur === undefined) {
    config[glob] = command;
    return `lint-staged (${file}): "${glob}": "${command}"`;
  }
  if (typeof cur === 'string') {
    config[glob] = [cur, command];
  } else if (Array.isArray(cur) && cur.every((c) => typeof c === 'string')) {
    cur.push(command);
  } else {
    throw new ConfigError(`lint-staged entry "${glob}" is not a command or a list of commands: add "${command}" to it yourself — nothing was changed`, file);
  }
  return `lint-staged (${file}): "${glob}" += "${command}"`;
}

function mergeLintStagedYaml(doc: Document.Parsed, glob: string, command: string, file: string): string | null {
  const map = doc.contents;
  if (map !== null && !isMap(map)) throw new ConfigError('is not a mapping of globs to commands: cannot add an entry safely — nothing was changed', file);
  const plain = (map ? (doc.toJS() as Record<string, unknown>) : {}) ?? {};
  for (const v of Object.values(plain)) {
    const cmds = typeof v === 'string' ? [v] : Array.isArray(v) ? v : [];
    if (cmds.some((c) => typeof c === 'string' && c.includes(command))) return null;
  }
  if (!map) {
    doc.contents = doc.createNode({ [glob]: command }) as never;
    return `lint-staged (${file}): "${glob}": "${command}"`;
  }
  const cur = map.get(glob, true);
  if (cur === undefined) {
    map.set(doc.createNode(glob) as never, doc.createNode(command) as never);
    return `lint-staged (${file}): "${glob}": "${command}"`;
  }
  if (isScalar(cur) && typeof cur.value === 'string') {
    map.set(doc.createNode(glob) as never, doc.createNode([cur.value, command]) as never);
  } else if (isSeq(cur)) {
    cur.add(doc.createNode(command) as never);
  } else {
    throw new ConfigError(`lint-staged entry "${glob}" is not a command or a list of commands: add "${command}" to it yourself — nothing was changed`, file);
  }
  return `lint-staged (${file}): "${glob}" += "${command}"`;
}

function gitOut(args: string[], cwd: string, env: NodeJS.ProcessEnv): { ok: boolean; out: string } {
  const r = runGitSync(args, { cwd, env });
  return { ok: r.code === 0, out: r.stdout.toString('utf8').trim() };
}

/** The lines offhost adds to `.husky/pre-commit`. */
export function hookLines(noticesDir: string, needLintStaged: boolean, needDeletionCheck: boolean): string[] {
  const lines = [HOOK_MARKER];
  if (needLintStaged) lines.push(LINT_STAGED_LINE);
  if (needDeletionCheck) {
    lines.push(
      DELETION_COMMENT,
      `git diff --cached --quiet --diff-filter=D -- ${singleQuote(noticesDir)} || OFFHOST_NO_TTY=1 ${LINT_COMMAND}`,
    );
  }
  return lines;
}

/** `offhost init` / `offhost init --husky`: returns the exit status. */
export async function initHusky(io: Io, opts: HuskyInitOptions = {}): Promise<number> {
  const noticesDir = (opts.noticesDir ?? DEFAULT_NOTICES_DIR).replace(/\\/g, '/').replace(/^\.\/+/, '').replace(/\/+$/, '') || '.';
  if (noticesDir.startsWith('/') || noticesDir.split('/').includes('..')) {
    throw new UsageError(`--notices-dir must be a folder inside the repository, relative to its root: '${noticesDir}'`);
  }
  const glob = noticesDir === '.' ? '**/*.md' : `${noticesDir}/**/*.md`;
  const root = await repoRoot({ cwd: io.cwd, env: io.env });
  const show = (p: string) => relative(io.cwd, p) || p;
  const pkgPath = join(root, 'package.json');
  if (!existsSync(pkgPath)) {
    throw new UsageError(`no package.json at the repository root ${root}: husky installs through npm's "prepare" script; run \`npm init -y\` there first, then offhost init`);
  }
  const pkgText = readFileSync(pkgPath, 'utf8');
  const pkg = parseJson(pkgText, show(pkgPath));
  if (!isPlainObject(pkg)) throw new ConfigError('is not a JSON object — nothing was changed', show(pkgPath));

  // Another hook manager, or hooks that husky's core.hooksPath would silently switch off: refuse.
  const hooksPath = gitOut(['config', '--get', 'core.hooksPath'], root, io.env).out;
  if (hooksPath && !/^\.husky(\/_)?\/?$/.test(hooksPath)) {
    throw new ConfigError(
      `git core.hooksPath is set to '${hooksPath}' (another hook manager?): husky would replace it. Run \`npx lint-staged\` from that setup's pre-commit hook instead, or unset core.hooksPath and run offhost init again — nothing was changed`,
    );
  }
  if (!hooksPath) {
    const gitHook = gitOut(['rev-parse', '--git-path', 'hooks/pre-commit'], root, io.env).out;
    const abs = gitHook ? (isAbsolute(gitHook) ? gitHook : join(root, gitHook)) : '';
    if (abs && existsSync(abs)) {
      throw new ConfigError(
        `${show(abs)} exists: once husky sets core.hooksPath it would stop running. Move its commands into .husky/pre-commit and run offhost init again — nothing was changed`,
      );
    }
  }
  if (isPlainObject(pkg.husky) && 'hooks' in pkg.husky) {
    throw new ConfigError('has a husky v4 "husky.hooks" section: migrate it to husky v9 (.husky/<hook> files) first, then run offhost init again — nothing was changed', show(pkgPath));
  }

  const writes: PlannedWrite[] = [];
  const changes: string[] = [];
  let pkgChanged = false;

  // package.json: prepare script and dev dependencies.
  const scripts = isPlainObject(pkg.scripts) ? pkg.scripts : (pkg.scripts = {});
  if (!isPlainObject(scripts)) throw new ConfigError('"scripts" is not an object — nothing was changed', show(pkgPath));
  const prepare = scripts.prepare;
  if (typeof prepare !== 'string' || prepare.trim() === '') {
    scripts.prepare = 'husky';
    changes.push('package.json: scripts.prepare = "husky"');
    pkgChanged = true;
  } else if (!/(^|[\s;&|(])husky(\s|$|;|&|\|)/.test(prepare)) {
    scripts.prepare = `${prepare} && husky`;
    changes.push(`package.json: scripts.prepare = "${scripts.prepare as string}"`);
    pkgChanged = true;
  }
  const deps = { ...(isPlainObject(pkg.dependencies) ? pkg.dependencies : {}), ...(isPlainObject(pkg.devDependencies) ? pkg.devDependencies : {}) };
  const wanted: Record<string, string> = { husky: '^9.1.7', 'lint-staged': '^16.4.0' };
  for (const [name, range] of Object.entries(wanted)) {
    if (name in deps) continue;
    const dev = isPlainObject(pkg.devDependencies) ? pkg.devDependencies : (pkg.devDependencies = {});
    (dev as Record<string, unknown>)[name] = range;
    changes.push(`package.json: devDependencies.${name} = "${range}" (run npm install)`);
    pkgChanged = true;
  }

  // lint-staged config: the first one lint-staged itself would use.
  let configFile: string | null = null;
  for (const name of LINT_STAGED_FILES) {
    const p = join(root, name);
    if (name === 'package.json') {
      if ('lint-staged' in pkg) {
        configFile = name;
        break;
      }
      continue;
    }
    if (existsSync(p)) {
      if (name === 'package.yaml' || name === 'package.yml') {
        const doc = parseDocument(readFileSync(p, 'utf8'));
        if (!(isMap(doc.contents) && doc.contents.has('lint-staged'))) continue;
      }
      configFile = name;
      break;
    }
  }
  if (configFile === null || configFile === 'package.json') {
    let cfg = pkg['lint-staged'];
    if (cfg === undefined) cfg = pkg['lint-staged'] = {};
    if (!isPlainObject(cfg)) {
      throw new ConfigError(`"lint-staged" is not an object of globs to commands: add "${glob}": "${LINT_COMMAND}" yourself — nothing was changed`, show(pkgPath));
    }
    const c = mergeLintStaged(cfg, glob, LINT_COMMAND, 'package.json');
    if (c) {
      changes.push(c);
      pkgChanged = true;
    }
  } else if (/\.(m|c)?(j|t)s$/.test(configFile) || configFile.startsWith('package.y')) {
    throw new ConfigError(
      `lint-staged is configured in ${configFile}, which offhost cannot merge safely: add the entry ${JSON.stringify(glob)}: ${JSON.stringify(LINT_COMMAND)} to it yourself, then run offhost init again (it will keep your config) — nothing was changed`,
      configFile,
    );
  } else {
    const p = join(root, configFile);
    const text = readFileSync(p, 'utf8');
    const asJson = configFile === '.lintstagedrc.json' || (configFile === '.lintstagedrc' && /^\s*\{/.test(text));
    if (asJson) {
      const cfg = text.trim() === '' ? {} : parseJson(text, configFile);
      if (!isPlainObject(cfg)) throw new ConfigError('is not an object of globs to commands: cannot add an entry safely — nothing was changed', configFile);
      const c = mergeLintStaged(cfg, glob, LINT_COMMAND, configFile);
      if (c) {
        writes.push({ path: p, text: `${JSON.stringify(cfg, null, jsonIndent(text))}\n`, what: [c] });
        changes.push(c);
      }
    } else {
      const doc = parseDocument(text);
      if (doc.errors.length) {
        const e = doc.errors[0]!;
        throw new ConfigError(`is neither valid JSON nor valid YAML (${e.message.split('\n')[0]}) — nothing was changed`, configFile, e.linePos?.[0]?.line, e.linePos?.[0]?.col);
      }
      const c = mergeLintStagedYaml(doc, glob, LINT_COMMAND, configFile);
      if (c) {
        writes.push({ path: p, text: doc.toString(), what: [c] });
        changes.push(c);
      }
    }
  }
  if (pkgChanged) {
    writes.unshift({ path: pkgPath, text: `${JSON.stringify(pkg, null, jsonIndent(pkgText))}\n`, what: [] });
  }

  // .husky/pre-commit: create, or append to what is there.
  const hookPath = join(root, '.husky', 'pre-commit');
  const existing = existsSync(hookPath) ? readFileSync(hookPath, 'utf8') : null;
  const needLintStaged = !(existing ?? '').split('\n').some((l) => /^\s*[^#].*\blint-staged\b/.test(l));
  const needDeletion = !(existing ?? '').includes(LINT_COMMAND);
  if (!needLintStaged && !(existing ?? '').split('\n').some((l) => /^\s*[^#].*\blint-staged\b.*\s(--verbose|-v)\b/.test(l))) {
    io.stderr('offhost init: note: .husky/pre-commit runs lint-staged without --verbose: offhost\'s warnings show only when a check fails; add --verbose to that line to see them\n');
  }
  if (needLintStaged || needDeletion) {
    const lines = hookLines(noticesDir, needLintStaged, needDeletion);
    let text: string;
    if (existing === null) {
      text = `${lines.join('\n')}\n`;
      changes.push(`.husky/pre-commit: created (${LINT_STAGED_LINE}, and offhost lint --staged for deletions)`);
    } else {
      if (/^\s*exit\b/m.test(existing)) {
        io.stderr('offhost init: warning: .husky/pre-commit contains an `exit`; the lines appended after it may never run\n');
      }
      text = `${existing}${existing.endsWith('\n') || existing === '' ? '' : '\n'}\n${lines.join('\n')}\n`;
      changes.push(`.husky/pre-commit: appended ${needLintStaged ? LINT_STAGED_LINE : ''}${needLintStaged && needDeletion ? ' and ' : ''}${needDeletion ? 'the deletion check' : ''} (existing commands kept)`);
    }
    writes.push({ path: hookPath, text, mode: 0o755, what: [] });
  }

  if (opts.dryRun) {
    io.stdout(changes.length ? `would change:\n${changes.map((c) => `  ${c}`).join('\n')}\n` : 'already set up: nothing to change\n');
    return 0;
  }
  for (const w of writes) {
    mkdirSync(dirname(w.path), { recursive: true });
    const tmp = `${w.path}.offhost-${process.pid}.tmp`;
    writeFileSync(tmp, w.text);
    if (w.mode !== undefined) chmodSync(tmp, w.mode);
    renameSync(tmp, w.path);
  }
  io.stdout(changes.length ? `${changes.map((c) => `updated ${c}`).join('\n')}\n` : 'already set up: package.json, lint-staged and .husky/pre-commit unchanged\n');

  // Install the hooks now when husky is in node_modules (else `npm install` runs "prepare" later).
  let huskyBin: string | null = null;
  try {
    // husky's package.json "exports" only exposes ".": resolve that, its bin.js sits beside it.
    huskyBin = join(dirname(createRequire(pkgPath).resolve('husky')), 'bin.js');
  } catch {
    huskyBin = existsSync(join(root, 'node_modules', 'husky', 'bin.js')) ? join(root, 'node_modules', 'husky', 'bin.js') : null;
  }
  if (huskyBin && existsSync(huskyBin)) {
    const r = spawnSync(process.execPath, [huskyBin], { cwd: root, env: io.env, encoding: 'utf8' });
    const said = `${r.stdout ?? ''}${r.stderr ?? ''}`.trim();
    if (r.status !== 0) throw new GitError(`husky could not install the hooks: ${said || `exit ${r.status}`}`);
    const hp = gitOut(['config', '--get', 'core.hooksPath'], root, io.env).out;
    io.stdout(said ? `husky: ${said}\n` : `husky: hooks installed (core.hooksPath ${hp})\n`);
  } else {
    io.stdout('husky is not installed in node_modules yet: run `npm install` (the "prepare" script installs the hooks)\n');
  }
  if (!('offhost' in deps) && !pathHas('offhost', io.env)) {
    io.stdout('note: the hook runs `offhost`: add it as a dev dependency or put it on PATH\n');
  }
  return 0;
}

function pathHas(cmd: string, env: NodeJS.ProcessEnv): boolean {
  for (const d of (env.PATH ?? '').split(':')) if (d && existsSync(join(d, cmd))) return true;
  return false;
}
