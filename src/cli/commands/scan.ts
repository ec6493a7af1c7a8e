// `offhost scan [PATHS...] [--format stylish|json|sarif|github] [--config FILE] [--sarif FILE]`
// Scans scripts, package.json scripts, Makefiles, CI files, Dockerfiles and Markdown instructions for
// heavy commands that would run on a laptop without a VM route (whole files; `offhost ci` scans only the
// lines a pull request adds). PATHS are files or folders (default: every file git tracks in the
// repository at cwd, or every file under cwd outside a repository); lint-staged passes staged files.
// Classification is always as on a laptop (role `laptop`), whatever OFFHOST_ROLE or CI say.
// Exit 0 clean (warnings allowed), 1 findings, 2 error.
import { Command } from 'commander';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { isAbsolute, join, relative, resolve, sep } from 'node:path';
import { runGitSync, topLevelSync } from '../../git/run.js';
import { splitZ } from '../../git/plumbing.js';
import { UsageError } from '../../errors.js';
import { loadGuard } from '../../config/load-guard.js';
import { withRunRewrite } from '../../adapters/run-rewrite.js';
import { Scanner, scanSettings } from '../../adapters/scan.js';
import type { Finding } from '../../types.js';
import type { Io } from '../../io.js';
import { emit } from '../../report/output.js';
import { addReportOptions, collectPaths, parseWith, reportOptions, type ReportOpts } from '../commander.js';

interface Opts extends ReportOpts {
  config?: string;
  sarif?: string;
  summary: boolean;
}

function repoRootOf(cwd: string, env: NodeJS.ProcessEnv): string | null {
  return topLevelSync(cwd, env);
}

function walk(dir: string, out: string[]): void {
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch (e) {
    throw new UsageError(`cannot read ${dir}: ${(e as Error).message}`);
  }
  for (const e of entries) {
    if (e.name === '.git' || e.name === 'node_modules') continue;
    const p = join(dir, e.name);
    if (e.isDirectory()) walk(p, out);
    else if (e.isFile()) out.push(p);
  }
}

export async function run(args: string[], io: Io): Promise<number> {
  const cmd = new Command('offhost scan')
    .description('Scans scripts, package.json scripts, Makefiles, CI files, Dockerfiles and docs for heavy commands that would run on a laptop without a VM route (judged as on a laptop, from the repository root and from the script\'s own folder).')
    .argument('[paths...]', 'files or folders (default: every tracked file of the repository)')
    .option('--config <file>', 'offhost config file (default: offhost.config.yaml found upwards)')
    .option('--sarif <file>', 'also write SARIF 2.1.0 to this file')
    .option('--no-summary', 'do not write the GitHub step summary ($GITHUB_STEP_SUMMARY)');
  addReportOptions(cmd);
  const early = parseWith(cmd, args, io, {
    exit: '0 clean (warnings allowed), 1 findings (or more warnings than --max-warnings), 2 usage or config error.',
    examples: ['offhost scan', 'offhost scan scripts/ Makefile --format json', 'offhost scan --sarif scan.sarif'],
  });
  if (early !== null) return early;
  const opts = cmd.opts<Opts>();
  const report = reportOptions(opts, io);
  const paths = cmd.args;

  const root = repoRootOf(io.cwd, io.env) ?? resolve(io.cwd);
  const guard = loadGuard({ cwd: io.cwd, env: io.env, role: 'laptop', ...(opts.config ? { configFile: opts.config } : {}) });
  const settings = scanSettings(guard.config, io.env, guard.config.locks?.noticesDir);
  // Each committed file is scanned on its own; a script a line runs is not read again from the disk (in CI
  // the working tree is not the commit being judged).
  const scanner = new Scanner({ classify: (l, at) => withRunRewrite(guard.classify(l, { ...at, files: false }), l), settings, env: io.env });

  let files: string[];
  if (paths.length === 0) {
    const r = runGitSync(['ls-files', '-z', '--cached'], { cwd: root, env: io.env });
    if (r.code === 0) files = splitZ(r.stdout).map((p) => join(root, p));
    else {
      files = [];
      walk(root, files);
    }
  } else {
    files = collectPaths(paths, io.cwd, walk);
  }

  const findings: Finding[] = [];
  for (const abs of files.sort()) {
    let rel = relative(root, abs);
    if (rel.startsWith('..') || isAbsolute(rel)) rel = abs; // outside the repository: shown as given
    rel = rel.split(sep).join('/');
    if (!scanner.wants(rel)) continue;
    let text: string;
    try {
      if (statSync(abs).size > 1024 * 1024) continue;
      text = readFileSync(abs, 'utf8');
    } catch {
      continue; // deleted or unreadable: nothing a heavy command can run from
    }
    findings.push(...scanner.scan({ path: rel, text }));
  }
  return emit(
    findings,
    {
      ...report,
      name: 'offhost scan',
      root,
      ...(opts.sarif ? { sarifFile: opts.sarif } : {}),
      summary: opts.summary !== false,
      title: 'offhost scan',
      footer: (n) => `offhost scan: ${scanner.stats.files} file${scanner.stats.files === 1 ? '' : 's'} scanned, ${n} finding${n === 1 ? '' : 's'}\n`,
    },
    io,
  );
}
