// `offhost uninstall`: takes out of a repository exactly what `offhost init` put in, and nothing else:
//   - .husky/pre-commit: the block under offhost's marker line (the lint-staged line only when offhost added
//     it and no other lint-staged entry is left to run; the deletion check); the file itself when nothing
//     else is left in it;
//   - the lint-staged entry running `offhost lint --staged` (package.json or a JSON/YAML .lintstagedrc), the
//     glob itself when nothing else is left under it, package.json's "lint-staged" when it is left empty;
//   - agent settings: every hook whose command runs `offhost … hook <agent>`, whatever path form offhost was
//     called by (node + dist/offhost.cjs, node_modules/.bin/offhost, npx offhost), the Claude Code
//     SessionStart hook of `init --shims` (`offhost shim env --claude-env-file`), and the groups, event
//     lists and "hooks" objects that only held them; a settings file left empty is removed
//     (src/install/agent-settings.ts);
//   - per user (the shims folder, personal agent settings): this repository's share of them, and the thing
//     itself when no other repository still uses it, or with --shared (src/install/uninstall-user.ts).
// husky and lint-staged themselves (devDependencies, scripts.prepare, core.hooksPath) stay: other hooks may
// use them; uninstall says so and how to remove them; so is the shell integration (the user's own lines:
// named, never edited). Every file is read and checked before any is written: a file offhost cannot read
// safely stops the whole uninstall with its name, and nothing is changed.
import { existsSync, readFileSync, renameSync, rmSync, rmdirSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { isMap, isScalar, isSeq, parseDocument } from 'yaml';
import { ConfigError } from '../errors.js';
import type { Io } from '../io.js';
import { DELETION_COMMENT, HOOK_MARKER, LINT_COMMAND, LINT_STAGED_FILES, LINT_STAGED_LINE, isPlainObject, jsonIndent, parseJson } from './husky.js';
import { planAgentSettings, type Plan } from './agent-settings.js';
import { planUserWiring } from './uninstall-user.js';
import { repositoryOf, updateLedger } from './user-wiring.js';
import { planLeftovers, removeWithEmptyParents } from './uninstall-leftovers.js';
import { homeShow } from './uninstall-user.js';

export interface UninstallOptions {
  /** Project whose agent settings are cleaned (default: the repository root). */
  project?: string;
  /** Print what would be removed, write nothing. */
  dryRun?: boolean;
  /** Also remove the per-user parts (shims folder, personal agent hooks) other repositories still use. */
  shared?: boolean;
}

/** Removes the command from a glob -> command(s) object; returns the number of entries changed. */
function pruneLintStaged(cfg: Record<string, unknown>): number {
  let n = 0;
  for (const [glob, v] of Object.entries(cfg)) {
    if (typeof v === 'string' && v.trim() === LINT_COMMAND) {
      delete cfg[glob];
      n++;
    } else if (Array.isArray(v) && v.some((c) => typeof c === 'string' && c.trim() === LINT_COMMAND)) {
      const rest = v.filter((c) => !(typeof c === 'string' && c.trim() === LINT_COMMAND));
      // init turned a single command into [command, ours]: give the single command back.
      if (rest.length === 0) delete cfg[glob];
      else cfg[glob] = rest.length === 1 && typeof rest[0] === 'string' ? rest[0] : rest;
      n++;
    }
  }
  return n;
}

/** The lint-staged entry; also says whether any other lint-staged entry remains. */
function planLintStaged(root: string, show: (p: string) => string): { plans: Plan[]; othersLeft: boolean; pkg?: { value: Record<string, unknown>; text: string } } {
  const pkgPath = join(root, 'package.json');
  let pkg: { value: Record<string, unknown>; text: string } | undefined;
  if (existsSync(pkgPath)) {
    const text = readFileSync(pkgPath, 'utf8');
    const value = parseJson(text, show(pkgPath));
    if (isPlainObject(value)) pkg = { value, text };
  }
  for (const name of LINT_STAGED_FILES) {
    const path = join(root, name);
    if (name === 'package.json') {
      if (!pkg || !('lint-staged' in pkg.value)) continue;
      const cfg = pkg.value['lint-staged'];
      if (!isPlainObject(cfg)) return { plans: [], othersLeft: true, pkg };
      const n = pruneLintStaged(cfg);
      const othersLeft = Object.keys(cfg).length > 0;
      if (!othersLeft) delete pkg.value['lint-staged'];
      if (!n) return { plans: [], othersLeft: true, pkg };
      return {
        plans: [{ path, text: `${JSON.stringify(pkg.value, null, jsonIndent(pkg.text))}\n`, what: `package.json: removed the lint-staged entry "${LINT_COMMAND}"${othersLeft ? '' : ' (and the "lint-staged" section it left empty)'}` }],
        othersLeft,
        pkg,
      };
    }
    if (!existsSync(path)) continue;
    if (name.startsWith('package.y')) continue;
    const text = readFileSync(path, 'utf8');
    if (/\.(m|c)?(j|t)s$/.test(name)) {
      // A JavaScript config: offhost never wrote to it (init refuses it); nothing of ours can be in it.
      return { plans: [], othersLeft: true, ...(pkg ? { pkg } : {}) };
    }
    if (name === '.lintstagedrc.json' || (name === '.lintstagedrc' && /^\s*\{/.test(text))) {
      const cfg = text.trim() === '' ? {} : parseJson(text, name);
      if (!isPlainObject(cfg)) return { plans: [], othersLeft: true, ...(pkg ? { pkg } : {}) };
      const n = pruneLintStaged(cfg);
      const othersLeft = Object.keys(cfg).length > 0;
      return { plans: n ? [{ path, text: `${JSON.stringify(cfg, null, jsonIndent(text))}\n`, what: `${name}: removed the entry "${LINT_COMMAND}"` }] : [], othersLeft, ...(pkg ? { pkg } : {}) };
    }
    const doc = parseDocument(text);
    if (doc.errors.length) throw new ConfigError(`is neither valid JSON nor valid YAML (${doc.errors[0]!.message.split('\n')[0]}) — nothing was changed`, name);
    const map = doc.contents;
    if (!isMap(map)) return { plans: [], othersLeft: map !== null, ...(pkg ? { pkg } : {}) };
    let n = 0;
    for (const item of [...map.items]) {
      const v = item.value;
      if (isScalar(v) && typeof v.value === 'string' && v.value.trim() === LINT_COMMAND) {
        map.delete(item.key);
        n++;
      } else if (isSeq(v) && v.items.some((c) => isScalar(c) && c.value === LINT_COMMAND)) {
        v.items = v.items.filter((c) => !(isScalar(c) && c.value === LINT_COMMAND));
        if (v.items.length === 0) map.delete(item.key);
        else if (v.items.length === 1 && isScalar(v.items[0])) item.value = v.items[0];
        n++;
      }
    }
    return { plans: n ? [{ path, text: doc.toString(), what: `${name}: removed the entry "${LINT_COMMAND}"` }] : [], othersLeft: map.items.length > 0, ...(pkg ? { pkg } : {}) };
  }
  return { plans: [], othersLeft: false, ...(pkg ? { pkg } : {}) };
}

/** Every form of the lines init has written (older versions: without --verbose, without OFFHOST_NO_TTY). */
const OUR_LINES = [LINT_STAGED_LINE, 'npx lint-staged --verbose', 'npx lint-staged', DELETION_COMMENT];
const DELETION_CHECK = new RegExp(`^git diff --cached --quiet --diff-filter=D -- '.*' \\|\\| (?:OFFHOST_NO_TTY=1 )?${LINT_COMMAND}$`);

function planHook(root: string, lintStagedStillUsed: boolean): Plan[] {
  const path = join(root, '.husky', 'pre-commit');
  if (!existsSync(path)) return [];
  const text = readFileSync(path, 'utf8');
  const lines = text.split('\n');
  const at = lines.indexOf(HOOK_MARKER);
  if (at === -1) return [];
  let end = at + 1;
  const kept: string[] = [];
  while (end < lines.length && (OUR_LINES.includes(lines[end]!) || DELETION_CHECK.test(lines[end]!))) {
    // offhost's lint-staged line stays while other lint-staged entries still need it.
    if (lines[end]!.includes('lint-staged') && !lines[end]!.startsWith('#') && lintStagedStillUsed) kept.push(lines[end]!);
    end++;
  }
  let start = at;
  // init put a blank line before its block when it appended to an existing hook.
  if (start > 0 && lines[start - 1] === '' && kept.length === 0) start--;
  const out = [...lines.slice(0, start), ...kept, ...lines.slice(end)];
  const rest = out.join('\n');
  const empty = rest.trim() === '';
  return [
    {
      path,
      text: empty ? null : rest.endsWith('\n') ? rest : `${rest}\n`,
      what: `.husky/pre-commit: removed offhost's lines${kept.length ? ` (kept \`${kept[0]}\`: other lint-staged entries use it)` : ''}${empty ? ' (nothing else was in it: file removed)' : ''}`,
    },
  ];
}

/** `offhost uninstall`: returns the exit status. */
export async function uninstall(io: Io, opts: UninstallOptions = {}): Promise<number> {
  // Outside a repository (init --shims can be run anywhere): that folder, for what init recorded there.
  const root = await repositoryOf(io.cwd, io.env);
  const project = opts.project ?? root;
  const show = (p: string) => relative(io.cwd, p) || p;
  const ls = planLintStaged(root, show);
  const plans = [...planHook(root, ls.othersLeft), ...ls.plans, ...planAgentSettings(project, show)];
  const user = planUserWiring(io.env, root, { shared: opts.shared === true, skip: new Set(plans.map((p) => p.path)) });
  plans.push(...user.plans);
  const left = planLeftovers(root, io.env, show, homeShow(io.env.HOME));
  plans.push(...left.plans);
  const deps = ls.pkg ? { ...(isPlainObject(ls.pkg.value.dependencies) ? ls.pkg.value.dependencies : {}), ...(isPlainObject(ls.pkg.value.devDependencies) ? ls.pkg.value.devDependencies : {}) } : {};
  const kept = [
    ...('husky' in deps || 'lint-staged' in deps ? ['kept: husky and lint-staged (devDependencies, scripts.prepare): other hooks may use them; `npm uninstall husky lint-staged` removes them if nothing does'] : []),
    ...user.kept,
    ...left.kept,
    ...('offhost' in deps ? ['offhost itself: `npm uninstall offhost`'] : []),
  ];
  if (opts.dryRun) {
    io.stdout(plans.length ? `would remove:\n${plans.map((p) => `  ${p.what}`).join('\n')}\n` : 'nothing of offhost to remove\n');
    if (kept.length) io.stdout(`${kept.join('\n')}\n`);
    return 0;
  }
  for (const p of plans) {
    if (p.apply) p.apply();
    else if (p.text === null) {
      rmSync(p.path, { force: true });
      if (p.path.startsWith(`${root}/`) && !p.path.endsWith('pre-commit')) {
        // In the repository: the folders init made for this file alone (.github/hooks and .github,
        // .opencode/plugins and .opencode, .claude …) when nothing else is left in them.
        removeWithEmptyParents(p.path, root);
      } else if (!p.path.endsWith('pre-commit')) {
        // Under HOME: the agent's own folder (~/.codex …) when init made it for this file alone.
        try {
          rmdirSync(dirname(p.path));
        } catch {
          /* not empty: other files of the user's stay */
        }
      }
    } else {
      const tmp = `${p.path}.offhost-${process.pid}.tmp`;
      writeFileSync(tmp, p.text);
      renameSync(tmp, p.path);
    }
  }
  updateLedger(io.env, user.nextLedger);
  io.stdout(plans.length ? `${plans.map((p) => p.what).join('\n')}\n` : 'nothing of offhost to remove\n');
  if (kept.length) io.stdout(`${kept.join('\n')}\n`);
  return 0;
}
