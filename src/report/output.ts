// Output shared by `offhost scan` and `offhost ci` (and any command printing findings): the format, the
// extra SARIF file and the GitHub step summary.
import { appendFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { EXIT, UsageError } from '../errors.js';
import { defaultFormat, format, isFormatKind, stepSummary, type FormatKind } from './index.js';
import type { Finding } from '../types.js';
import type { Io } from '../cli/io.js';
import { VERSION } from '../version.js';

export function formatKind(flag: string | undefined, env: NodeJS.ProcessEnv): FormatKind {
  if (flag === undefined) return defaultFormat(env);
  if (!isFormatKind(flag)) throw new UsageError(`--format must be stylish, json, sarif or github, not '${flag}'`);
  return flag;
}

export interface OutputOptions {
  kind: FormatKind;
  root: string;
  color?: boolean;
  /** Also write SARIF to this file. */
  sarifFile?: string;
  summary: boolean;
  title: string;
  /** Printed to stderr after the findings (stylish only), e.g. what was checked. */
  footer?: string;
}

/** Prints the findings, writes the extra outputs, returns the exit status (1 when any error). */
export function emit(findings: Finding[], o: OutputOptions, io: Io): number {
  const opts = { root: o.root, toolVersion: VERSION, color: o.color === true };
  const out = format(findings, o.kind, opts);
  if (out) io.stdout(out.endsWith('\n') ? out : `${out}\n`);
  if (o.sarifFile) {
    const p = resolve(io.cwd, o.sarifFile);
    try {
      writeFileSync(p, format(findings, 'sarif', opts));
    } catch (e) {
      throw new UsageError(`cannot write --sarif ${o.sarifFile}: ${(e as Error).message}`);
    }
  }
  const summaryFile = io.env.GITHUB_STEP_SUMMARY;
  if (o.summary && summaryFile) {
    try {
      appendFileSync(summaryFile, stepSummary(findings, { ...opts, title: o.title }));
    } catch (e) {
      io.stderr(`offhost: cannot write the step summary to ${summaryFile}: ${(e as Error).message}\n`);
    }
  }
  if (o.footer && o.kind === 'stylish') io.stderr(o.footer);
  return findings.some((f) => f.severity === 'error') ? EXIT.findings : EXIT.ok;
}
