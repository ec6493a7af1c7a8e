// Output shared by every command printing findings (lint, scan, ci): the format (and its default), the
// report options ESLint has (-o FILE, --max-warnings, --quiet, colour), the extra SARIF file and the
// GitHub step summary.
import { appendFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { EXIT, UsageError } from '../errors.js';
import { counts, defaultFormat, format, isFormatKind, stepSummary, type FormatKind } from './index.js';
import { colorEnabled } from './color.js';
import type { Finding } from '../types.js';
import type { Io } from '../cli/io.js';
import { integerOption, type ReportOpts } from '../cli/commander.js';

export { parseWith } from '../cli/commander.js';

export function formatKind(flag: string | undefined, env: NodeJS.ProcessEnv): FormatKind {
  if (flag === undefined) return defaultFormat(env);
  if (!isFormatKind(flag)) throw new UsageError(`--format must be stylish, json, sarif or github, not '${flag}'`);
  return flag;
}

export interface OutputOptions {
  kind: FormatKind;
  root: string;
  color?: boolean;
  /** Write the report here instead of stdout (-o). */
  outputFile?: string;
  /** More warnings than this: exit 1 (--max-warnings). */
  maxWarnings?: number;
  /** Errors only (--quiet). */
  quiet?: boolean;
  /** Also write SARIF to this file. */
  sarifFile?: string;
  summary: boolean;
  title: string;
  /** Printed to stderr after the findings (stylish only), e.g. what was checked; given the number reported. */
  footer?: (reported: number) => string;
  /** The command's name for messages (`offhost lint`). */
  name?: string;
}

/** The report options as parsed by commander (addReportOptions), validated, for emit(). */
export function reportOptions(o: ReportOpts, io: Io): Pick<OutputOptions, 'kind' | 'color' | 'outputFile' | 'maxWarnings' | 'quiet'> {
  const kind = formatKind(o.format, io.env);
  return {
    kind,
    // Colour goes to a terminal only: never into a file (-o) or a machine format.
    color: kind === 'stylish' && o.outputFile === undefined && colorEnabled(o.color, io),
    ...(o.outputFile !== undefined ? { outputFile: o.outputFile } : {}),
    // -1 is ESLint's "no limit", the default.
    ...(o.maxWarnings !== undefined && integerOption('--max-warnings', o.maxWarnings, { min: -1 }) >= 0 ? { maxWarnings: Number(o.maxWarnings) } : {}),
    ...(o.quiet ? { quiet: true } : {}),
  };
}

/** Prints the findings, writes the extra outputs, returns the exit status (1 on an error or too many warnings). */
export function emit(all: Finding[], o: OutputOptions, io: Io): number {
  const findings = o.quiet ? all.filter((f) => f.severity === 'error') : all;
  const opts = { root: o.root, toolVersion: io.env.OFFHOST_VERSION ?? '0.1.0', color: o.color === true };
  const out = format(findings, o.kind, opts);
  const text = out ? (out.endsWith('\n') ? out : `${out}\n`) : '';
  if (o.outputFile !== undefined) {
    try {
      writeFileSync(resolve(io.cwd, o.outputFile), text);
    } catch (e) {
      throw new UsageError(`cannot write --output-file ${o.outputFile}: ${(e as Error).message}`);
    }
  } else if (text) io.stdout(text);
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
  if (o.footer && o.kind === 'stylish') io.stderr(o.footer(findings.length));
  const { errors, warnings } = counts(findings);
  if (errors) return EXIT.findings;
  if (o.maxWarnings !== undefined && warnings > o.maxWarnings) {
    io.stderr(`${o.name ?? 'offhost'}: too many warnings (${warnings}; --max-warnings ${o.maxWarnings})\n`);
    return EXIT.findings;
  }
  return EXIT.ok;
}
