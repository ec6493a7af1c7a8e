// The guard as the doors (hook, shell) use it: loaded once per project directory, with a time budget.
//
// A hook that hangs is worse than one that refuses: the agents give up on a hook after their own timeout
// and then run the command anyway (Claude Code and Codex treat a timed-out hook as a non-blocking error).
// Classification is synchronous and linear-time, so a line up to INLINE_MAX is classified in this process;
// a larger one (up to the parser's 1 MiB limit) is classified in a child `offhost hook --classify-only`
// that is killed at the deadline, and the command is refused with that reason; a line past the limit is
// refused at once.
import { requireBuiltin } from '../lazy-builtin.js';
import { formatDuration } from '../report/duration.js';
import { dirname } from 'node:path';
import type { Role, Verdict } from '../types.js';
import type { Guard } from '../policy/guard.js';
import type { ResolvedConfig } from '../config/resolve.js';
import { type Classify, HOOK_RULES, errorText, refusal } from './common.js';
import { withRunRewrite } from './run-rewrite.js';
import { ownExecutable } from '../own-executable.js';

/** Lines up to this many characters are classified in-process. */
export const INLINE_MAX = 64 * 1024;
/** The parser's own limit (src/shell/parser.ts: 1 MiB of text). */
export const TEXT_MAX = 1024 * 1024;
export const DEFAULT_BUDGET_MS = 5000;

export interface ClassifierOptions {
  env: NodeJS.ProcessEnv;
  role?: Role;
  configFile?: string;
  /** Deadline for one out-of-process classification (default OFFHOST_HOOK_BUDGET_MS or 5000). */
  budgetMs?: number;
  /** The offhost entry script to re-run for large lines (default: the running one, if it is the bundle). */
  bin?: string | null;
}

type GuardModule = typeof import('../config/load-guard.js');

let guardModule: GuardModule | null = null;

/** Loads the guard (src/config/load-guard.ts) on first use. */
async function loadGuardModule(): Promise<GuardModule> {
  guardModule ??= await import('../config/load-guard.js');
  return guardModule;
}


export interface Classifier {
  /** Guard classify for a project directory; throws ConfigError when that project's config is bad. */
  classifyAt(cwd: string): Classify;
  /** That project's config (`hook:` and `audit:` sections are read by the doors). */
  configAt(cwd: string): { hook: { mode?: 'rewrite' | 'suggest'; allowRewrite?: boolean }; audit: { path?: string; maxBytes?: number; record?: 'decisions' | 'all' }; rules?: import('../policy/match.js').Rule[] };
  /** That project's guard as loaded (for `offhost hook --debug`). */
  guardAt?(cwd: string): Guard<ResolvedConfig>;
}

export async function makeClassifier(opts: ClassifierOptions): Promise<Classifier> {
  const mod = await loadGuardModule();
  const guards = new Map<string, ReturnType<GuardModule['loadGuard']>>();
  const budgetMs = opts.budgetMs ?? (Number(opts.env.OFFHOST_HOOK_BUDGET_MS) > 0 ? Number(opts.env.OFFHOST_HOOK_BUDGET_MS) : DEFAULT_BUDGET_MS);
  // Resolved on first need (a line over INLINE_MAX): realpath costs a millisecond on every hook call.
  let binCache: string | null | undefined = opts.bin;
  const getBin = () => (binCache === undefined ? (binCache = ownExecutable()) : binCache);
  const guardAt = (projectCwd: string) => {
    let guard = guards.get(projectCwd);
    if (!guard) {
      guard = mod.loadGuard({ cwd: projectCwd, env: opts.env, role: opts.role, configFile: opts.configFile });
      guards.set(projectCwd, guard);
    }
    return guard;
  };
  return {
    configAt: (projectCwd) => guardAt(projectCwd).config,
    guardAt,
    classifyAt(projectCwd: string): Classify {
      const g = guardAt(projectCwd);
      return (line, at) => {
        if (line.length > TEXT_MAX) {
          return refusal(HOOK_RULES.budget, `the command is ${line.length} characters long, more than offhost checks (${TEXT_MAX}); split it up or put it in a script`);
        }
        const bin = line.length <= INLINE_MAX ? null : getBin();
        if (!bin) return withRunRewrite(g.classify(line, at), line);
        return classifyInChild(bin, line, at?.cwd ?? projectCwd, projectCwd, opts, budgetMs);
      };
    },
  };
}

/** Classifies in a child process with a deadline; a child that does not answer in time means refused. */
function classifyInChild(bin: string, line: string, cwd: string, projectCwd: string, opts: ClassifierOptions, budgetMs: number): Verdict {
  const args = [bin, 'hook', '--classify-only'];
  if (opts.role) args.push('--role', opts.role);
  if (opts.configFile) args.push('--config', opts.configFile);
  const started = Date.now();
  // Loaded only here: node:child_process costs ~2 ms at start-up, and most hook calls never need it.
  const { spawnSync } = requireBuiltin<typeof import('node:child_process')>('node:child_process');
  const r = spawnSync(process.execPath, args, {
    input: JSON.stringify({ line, cwd, project: projectCwd }),
    env: opts.env,
    cwd: dirname(bin),
    timeout: budgetMs,
    killSignal: 'SIGKILL',
    maxBuffer: 64 * 1024 * 1024,
    encoding: 'utf8',
  });
  const elapsed = Date.now() - started;
  if (r.error && (r.error as NodeJS.ErrnoException).code === 'ETIMEDOUT') {
    return refusal(HOOK_RULES.budget, `checking this ${line.length}-character command took longer than offhost's ${formatDuration(budgetMs)} budget; refused rather than let through unchecked`);
  }
  if (r.error) return refusal(HOOK_RULES.internal, `could not check this command: ${errorText(r.error)}`);
  if (r.status !== 0) {
    return refusal(HOOK_RULES.internal, `could not check this command (checker exited with ${r.status ?? r.signal} after ${formatDuration(elapsed)}): ${r.stderr.trim().slice(0, 500)}`);
  }
  try {
    const v = JSON.parse(r.stdout) as Verdict;
    return { ...v, commands: v.commands ?? [] };
  } catch (err) {
    return refusal(HOOK_RULES.internal, `could not read the checker's answer: ${errorText(err)}`);
  }
}

/** `offhost hook --classify-only`: stdin `{line, cwd, project}`, stdout the verdict (without `commands`). */
export async function classifyOnly(stdin: string, opts: ClassifierOptions): Promise<string> {
  const req = JSON.parse(stdin) as { line: string; cwd: string; project: string };
  const c = await makeClassifier({ ...opts, bin: null });
  const v = c.classifyAt(req.project)(req.line, { cwd: req.cwd, env: opts.env });
  const { commands: _omit, ...rest } = v;
  return `${JSON.stringify(rest)}\n`;
}

