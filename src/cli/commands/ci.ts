// `offhost ci --base REF [--head REF] [--format stylish|json|sarif|github] [--now ISO] [--config FILE]
//             [--notices-dir DIR] [--skew SECONDS] [--all-locks] [--no-scan] [--sarif FILE] [--no-summary]`
// The pull-request policy check (src/adapters/ci.ts): lock hygiene commit by commit and at head, and
// heavy commands the pull request writes into scripts, CI files, Dockerfiles and docs.
// --base defaults to $OFFHOST_BASE, else origin/$GITHUB_BASE_REF inside a GitHub pull request.
// Exit 0 clean (warnings allowed), 1 findings, 2 error (bad ref, not a repository, bad config).
import { Command } from 'commander';
import { isAbsolute } from 'node:path';
import { UsageError } from '../../errors.js';
import { loadGuard } from '../../config/load-guard.js';
import { withRunRewrite } from '../../adapters/run-rewrite.js';
import { Scanner, scanSettings } from '../../adapters/scan.js';
import { runCi } from '../../adapters/ci.js';
import { addReportOptions, parseNowOption, parseSkewOption, type ReportOpts } from '../commander.js';
import type { Io } from '../../io.js';
import { emit } from '../../report/output.js';
import { parseWith, reportOptions } from '../commander.js';

interface Opts extends ReportOpts {
  base?: string;
  head?: string;
  now?: string;
  config?: string;
  noticesDir?: string;
  skew?: string;
  allLocks?: boolean;
  scan: boolean;
  sarif?: string;
  summary: boolean;
}

export async function run(args: string[], io: Io): Promise<number> {
  const cmd = new Command('offhost ci')
    .description('The pull-request policy check: VM lock hygiene commit by commit and at head, and the heavy commands the pull request adds to scripts, CI files, Dockerfiles and docs.')
    .option('--base <ref>', 'the base of the pull request (default $OFFHOST_BASE, else origin/$GITHUB_BASE_REF)')
    .option('--head <ref>', 'the head of the pull request', 'HEAD')
    .option('--now <iso>', "CI's clock: judge the state at head at this instant (ISO-8601 UTC)")
    .option('--config <file>', 'offhost config file (default: offhost.config.yaml found upwards)')
    .option('--notices-dir <dir>', 'notices folder relative to the repository root (default: config, else meta/context/notices)')
    .option('--skew <seconds>', 'clock-skew margin in seconds (default: config, else 120)')
    .option('--all-locks', 'check every active lock at head, not only those the pull request touches')
    .option('--lock-ref [ref]', "also check the lock ref's history (default refs/offhost/locks; fetch it first)")
    .option('--lock-ref-since <rev>', 'with --lock-ref: only the commits after this one (the ref before the push)')
    .option('--no-scan', 'skip the heavy-command scan')
    .option('--sarif <file>', 'also write SARIF 2.1.0 to this file (for code scanning upload)')
    .option('--no-summary', 'do not write the GitHub step summary ($GITHUB_STEP_SUMMARY)')
    .allowExcessArguments(false);
  addReportOptions(cmd);
  const early = parseWith(cmd, args, io, {
    exit: '0 clean (warnings allowed), 1 findings, 2 error (bad ref, not a repository, bad config).',
    examples: ['offhost ci --base origin/main', 'offhost ci --base origin/main --lock-ref --format github'],
  });
  if (early !== null) return early;
  const opts = cmd.opts<Opts>();
  const report = reportOptions(opts, io);
  const base = opts.base ?? (io.env.OFFHOST_BASE || (io.env.GITHUB_BASE_REF ? `origin/${io.env.GITHUB_BASE_REF}` : undefined));
  if (!base) throw new UsageError('--base REF is required (the commit the pull request is based on, e.g. origin/main)');
  const now = opts.now !== undefined ? parseNowOption(opts.now) : io.clock.now();
  let skewSeconds = opts.skew !== undefined ? parseSkewOption(opts.skew) : undefined;

  // The question for scanned lines is what they would do on a laptop, not here in CI: role laptop.
  const guard = loadGuard({ cwd: io.cwd, env: io.env, role: 'laptop', ...(opts.config ? { configFile: opts.config } : {}) });
  const locksCfg = (guard.config as { locks?: { noticesDir?: string; skewSeconds?: number } }).locks ?? {};
  const noticesDir = (opts.noticesDir ?? locksCfg.noticesDir ?? 'meta/context/notices').replace(/\\/g, '/').replace(/\/+$/, '');
  if (isAbsolute(noticesDir) || noticesDir.split('/').includes('..')) {
    throw new UsageError(`--notices-dir must be a folder inside the repository, relative to its root: '${noticesDir}'`);
  }
  skewSeconds ??= typeof locksCfg.skewSeconds === 'number' ? locksCfg.skewSeconds : undefined;
  // Each committed file is scanned on its own; a script a line runs is not read again from the disk (in CI
  // the working tree is not the commit being judged).
  const scanner = opts.scan === false ? null : new Scanner({ classify: (l, at) => withRunRewrite(guard.classify(l, { ...at, files: false }), l), settings: scanSettings(guard.config, io.env, noticesDir), env: io.env });

  const result = runCi({
    cwd: io.cwd,
    env: io.env,
    base,
    head: opts.head ?? 'HEAD',
    now,
    noticesDir,
    ...(skewSeconds === undefined ? {} : { skewSeconds }),
    allLocks: opts.allLocks === true,
    scanner,
  });
  // The lock history pushed to refs/offhost/locks (docs/LOCKS.md): every commit, as the branch's are.
  const lockRef = (opts as { lockRef?: string | boolean }).lockRef;
  if (lockRef !== undefined && lockRef !== false) {
    const since = (opts as { lockRefSince?: string }).lockRefSince;
    const refCheck = runCi({ cwd: io.cwd, env: io.env, base: since ?? null, head: typeof lockRef === 'string' ? lockRef : 'refs/offhost/locks', now, noticesDir, scanner: null, checkHead: false, ...(skewSeconds === undefined ? {} : { skewSeconds }) });
    result.findings.push(...refCheck.findings.map((f) => ({ ...f, message: `refs/offhost/locks: ${f.message}` })));
    result.commits += refCheck.commits;
    result.stats.lockChanges += refCheck.stats.lockChanges;
  }
  return emit(
    result.findings,
    {
      ...report,
      name: 'offhost ci',
      root: result.root,
      ...(opts.sarif ? { sarifFile: opts.sarif } : {}),
      summary: opts.summary !== false,
      title: `offhost ci: ${result.base.slice(0, 12)}..${result.head.slice(0, 12)}`,
      footer: (n) => `offhost ci: ${result.commits} commit${result.commits === 1 ? '' : 's'}, ${result.stats.lockChanges} lock change${result.stats.lockChanges === 1 ? '' : 's'}, ${result.stats.scannedFiles} changed file${result.stats.scannedFiles === 1 ? '' : 's'} scanned, ${n} finding${n === 1 ? '' : 's'} (${result.stats.gitProcesses} git processes)\n`,
    },
    io,
  );
}
