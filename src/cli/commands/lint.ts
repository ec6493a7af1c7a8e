// `offhost lint [--staged | --lock-ref [REF] [--since REV]] [--now ISO] [--format ...] [--notices-dir D] [--skew S] [PATHS...]`
// Validates VM lock files (the given files/folders, or every lock file under the notices folder of the
// repository at cwd); with --staged, the staged lock transition against HEAD, read from the index (a lock
// the commit adds or changes that is already expired is an error); with --lock-ref, every commit of the
// lock ref's history (refs/offhost/locks, or REV..REF), as `offhost ci` checks a branch's commits.
// Exit 0 clean or warnings only, 1 errors found, 2 usage/git error. Does not depend on the role.
// Inside a git hook, warnings of a passing check are also written to the terminal (/dev/tty): lint-staged
// shows a task's output only when it fails.
import { Command } from 'commander';
import { addReportOptions, collectPaths, parseNowOption, parseSkewOption, parseWith, reportOptions, type ReportOpts } from '../commander.js';
import { closeSync, openSync, readdirSync, readFileSync, statSync, writeSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { basename, dirname, isAbsolute, join, relative, resolve } from 'node:path';
import { EXIT, UsageError } from '../../errors.js';
import { lintLockContent, type LockCheckContext, type LockFileKind } from '../../locks/lint.js';
import { ARCHIVE_DIR, ACTIVE_DIR, COMPONENT_DIR, DEFAULT_NOTICES_DIR } from '../../locks/paths.js';
import { parseUtc } from '../../locks/schema.js';
import { transitionFindings } from '../../locks/transition.js';
import { readStagedTransition, repoRoot } from '../../git/staged.js';
import { openRepoAt } from '../../git/ref-tree.js';
import { runCi } from '../../adapters/ci.js';
import { refKnowsHold } from '../../locks/legacy.js';
import { LOCK_REF } from '../../locks/store.js';
import { format } from '../../report/index.js';
import { emit } from '../../report/output.js';
import type { Finding } from '../../types.js';
import type { Io } from '../../io.js';

interface Opts extends ReportOpts {
  staged?: boolean;
  lockRef?: string | boolean;
  since?: string;
  now?: string;
  noticesDir?: string;
  skew?: string;
}

function parseArgs(args: string[], io: Io): { opts: Opts; paths: string[] } | number {
  const cmd = new Command('offhost lint')
    .description('Validates VM lock files (POLICY R3/R4/R7): the files given, or every lock file under the notices folder; with --staged, the staged lock transition against HEAD (what the pre-commit hook runs); with --lock-ref, every commit of the lock history ref.')
    .option('--staged', 'check the staged change (index vs HEAD); PATHS (as lint-staged passes them) are accepted and the whole staged transition is checked')
    .option('--lock-ref [ref]', 'check every commit of the lock history ref (default refs/offhost/locks)')
    .option('--since <rev>', 'with --lock-ref: only the commits after this one (e.g. the ref before a push)')
    .option('--now <iso>', 'judge expiry at this instant (ISO-8601 UTC) instead of the clock')
    .option('--notices-dir <dir>', `notices folder, relative to the repository root (default ${DEFAULT_NOTICES_DIR})`)
    .option('--skew <seconds>', 'clock-skew margin in seconds (default 120)')
    .argument('[paths...]', 'lock files or folders (default: every lock file under the notices folder)')
    .allowExcessArguments(false);
  addReportOptions(cmd);
  const early = parseWith(cmd, args, io, {
    exit: '0 clean or warnings only, 1 errors (or more warnings than --max-warnings), 2 usage or git error.',
    examples: ['offhost lint', 'offhost lint --staged', 'offhost lint --lock-ref --format json'],
  });
  if (early !== null) return early;
  return { opts: cmd.opts<Opts>(), paths: cmd.args };
}

/** Where a lock file sits, from its folder name: archive, component (not a VM lock), or active. */
function kindOf(path: string): LockFileKind | 'component' {
  const parent = basename(dirname(path));
  if (parent === ARCHIVE_DIR) return 'archive';
  if (parent === COMPONENT_DIR) return 'component';
  return 'active';
}

/** Every `lock-*.md` under `dir` (recursive), sorted. */
function walkLocks(dir: string, out: string[]): void {
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch (e) {
    throw new UsageError(`cannot read ${dir}: ${(e as Error).message}`);
  }
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const e of entries) {
    const p = join(dir, e.name);
    if (e.isDirectory()) {
      if (e.name === '.git' || e.name === 'node_modules') continue;
      walkLocks(p, out);
    } else if (e.isFile() && /^lock-.*\.md$/.test(e.name)) out.push(p);
  }
}

/** Lints files in this thread. */
function lintFilesHere(files: readonly string[], cwd: string, ctx: LockCheckContext): Finding[] {
  const out: Finding[] = [];
  for (const abs of files) {
    const k = kindOf(abs);
    if (k === 'component') continue;
    const shown = relative(cwd, abs) || abs;
    let buf: Buffer;
    try {
      buf = readFileSync(abs);
    } catch (e) {
      out.push({ file: shown, ruleId: 'lock-unreadable', severity: 'error', message: `cannot be read: ${(e as Error).message}` });
      continue;
    }
    for (const f of lintLockContent(shown, buf, k, ctx).findings) out.push(f);
  }
  return out;
}

/**
 * Above this many files, part of the work goes to worker threads (when this module is a built .mjs file);
 * by default one per idle core (cores minus the load average, up to 4); OFFHOST_LINT_THREADS sets the number
 * of threads (1: none).
 */
const PARALLEL_MIN_FILES = 2000;
const WORKER_TAG = 'offhost-lint-worker';

interface WorkerJob {
  tag: typeof WORKER_TAG;
  /** The command whose module a worker started on a bundle loads (src/cli/cold.ts). */
  command: 'lint';
  files: string[];
  cwd: string;
  ctx: Omit<LockCheckContext, 'now'> & { now: number };
}

/** Lints files, split over the available cores for large sets. Findings keep the order of `files`. */
async function lintFiles(files: readonly string[], cwd: string, ctx: LockCheckContext, env: NodeJS.ProcessEnv): Promise<Finding[]> {
  const self = import.meta.url;
  const asked = Number(env.OFFHOST_LINT_THREADS);
  // By default as many threads as there are idle cores (up to 4): on a busy machine threads only add overhead.
  const idle = Math.floor(availableParallelism() - loadavg()[0]! + 0.5);
  const cores = Number.isInteger(asked) && asked >= 1 ? Math.min(asked, 16) : Math.max(1, Math.min(4, idle));
  if (files.length < PARALLEL_MIN_FILES || cores < 2 || !self.endsWith('.cjs')) return lintFilesHere(files, cwd, ctx);
  const size = Math.ceil(files.length / cores);
  const slices = Array.from({ length: cores }, (_, i) => files.slice(i * size, (i + 1) * size));
  const jobs = slices.slice(1).map(
    (slice) =>
      new Promise<Finding[]>((resolveJob, rejectJob) => {
        const job: WorkerJob = { tag: WORKER_TAG, command: 'lint', files: slice, cwd, ctx: { ...ctx, now: ctx.now.getTime() } };
        const w = new Worker(new URL(self), { workerData: job });
        w.once('message', (m: Finding[]) => resolveJob(m));
        w.once('error', rejectJob);
        w.once('exit', (code) => rejectJob(new Error(`lint worker exited (${code}) without its findings`))); // no-op after 'message'
      }),
  );
  const first = lintFilesHere(slices[0] ?? [], cwd, ctx);
  // A worker that cannot start or fails: its slice is linted here instead.
  const rest = await Promise.all(jobs.map((j, i) => j.catch(() => lintFilesHere(slices[i + 1] ?? [], cwd, ctx))));
  return first.concat(...rest);
}

// In a worker thread started by lintFiles: lint the slice and post the findings back.
if (!isMainThread && (workerData as WorkerJob | undefined)?.tag === WORKER_TAG) {
  const job = workerData as WorkerJob;
  parentPort?.postMessage(lintFilesHere(job.files, job.cwd, { ...job.ctx, now: new Date(job.ctx.now) }));
}

export async function run(args: string[], io: Io): Promise<number> {
  const parsed = parseArgs(args, io);
  if (typeof parsed === 'number') return parsed;
  const { opts, paths } = parsed;
  const report = reportOptions(opts, io);
  const now = opts.now !== undefined ? parseNowOption(opts.now) : io.clock.now();
  const skewSeconds = opts.skew !== undefined ? parseSkewOption(opts.skew) : undefined;
  const noticesDir = (opts.noticesDir ?? DEFAULT_NOTICES_DIR).replace(/\\/g, '/').replace(/\/+$/, '');
  if (isAbsolute(noticesDir) || noticesDir.split('/').includes('..')) {
    throw new UsageError(`--notices-dir must be a folder inside the repository, relative to its root: '${noticesDir}'`);
  }
  const ctx: LockCheckContext = { now, severityForTime: 'warning', noticesDir };
  if (skewSeconds !== undefined) ctx.skewSeconds = skewSeconds;
  const ex = { cwd: io.cwd, env: io.env };

  const findings: Finding[] = [];
  let root: string | undefined;
  if (opts.lockRef !== undefined && opts.lockRef !== false) {
    const ref = typeof opts.lockRef === 'string' ? opts.lockRef : LOCK_REF;
    const r = runCi({ cwd: io.cwd, env: io.env, base: opts.since ?? null, head: ref, now, noticesDir, scanner: null, checkHead: false, ...(skewSeconds !== undefined ? { skewSeconds } : {}) });
    root = r.root;
    findings.push(...r.findings);
  } else if (opts.staged) {
    const t = await readStagedTransition(ex, noticesDir);
    root = t.root;
    // A lock this commit adds or changes that is already expired is an error (issue 14), not a warning.
    const all = transitionFindings(t.before, t.after, { ...ctx, severityForTime: 'error' });
    findings.push(...(await withoutMigrated(all, t.before, root, noticesDir, io.env)));
  } else {
    const files: string[] = [];
    if (paths.length === 0) {
      root = await repoRoot(ex);
      const base = join(root, noticesDir);
      for (const sub of [ACTIVE_DIR, ARCHIVE_DIR]) {
        const d = join(base, sub);
        let isDir = false;
        try {
          isDir = statSync(d).isDirectory();
        } catch {
          /* absent: nothing to check */
        }
        if (isDir) walkLocks(d, files);
      }
    } else {
      files.push(...collectPaths(paths, io.cwd, walkLocks));
    }
    findings.push(...(await lintFiles(files, io.cwd, ctx, io.env)));
  }

  const status = emit(findings, { ...report, name: 'offhost lint', root: root ?? io.cwd, summary: false, title: 'offhost lint' }, io);
  const shown = report.quiet ? [] : findings;
  if (opts.staged && status === EXIT.ok && shown.length && report.kind === 'stylish' && report.outputFile === undefined) toTerminal(format(shown, 'stylish', { root: root ?? io.cwd }), io.env);
  return status;
}

/**
 * Inside a git hook (git sets GIT_INDEX_FILE for pre-commit), also writes a passing check's warnings to the
 * controlling terminal: lint-staged 16 swallows the output of tasks that succeed (unless --verbose), so the
 * person committing would never see them. No terminal (CI, an agent's pipe): nothing. OFFHOST_NO_TTY=1 turns
 * it off.
 */
function toTerminal(text: string, env: NodeJS.ProcessEnv): void {
  if (!env.GIT_INDEX_FILE || env.OFFHOST_NO_TTY === '1') return;
  try {
    const fd = openSync('/dev/tty', 'w');
    try {
      writeSync(fd, `offhost lint --staged: warnings (the commit goes on):\n${text.endsWith('\n') ? text : `${text}\n`}`);
    } finally {
      closeSync(fd);
    }
  } catch {
    /* no controlling terminal */
  }
}

/** Drops "deleted without its archive" for a branch lock the lock ref has taken over (lock gc migrated it). */
async function withoutMigrated(findings: Finding[], before: Map<string, string>, root: string, noticesDir: string, env: NodeJS.ProcessEnv): Promise<Finding[]> {
  const deleted = findings.filter((f) => f.ruleId === 'lock-deleted-unarchived');
  if (deleted.length === 0) return findings;
  let repo;
  try {
    repo = await openRepoAt(root, env);
  } catch {
    return findings;
  }
  const migrated = new Set<string>();
  for (const f of deleted) {
    const text = before.get(f.file);
    if (text !== undefined && (await refKnowsHold(repo, f.file, text, noticesDir))) migrated.add(f.file);
  }
  return findings.filter((f) => !(f.ruleId === 'lock-deleted-unarchived' && migrated.has(f.file)));
}
