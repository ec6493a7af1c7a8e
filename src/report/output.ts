// Output shared by every command printing findings (lint, scan, ci): the format (and its default), the
// report options ESLint has (-o FILE, --max-warnings, --quiet, colour), the extra SARIF file and the
// GitHub step summary.
import { appendFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { EXIT, UsageError } from '../errors.js';
import { counts, defaultFormat, format, isFormatKind, stepSummary, type FormatKind } from './index.js';
import type { Finding } from '../types.js';
import type { Io } from '../io.js';
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

/** Prints the findings, writes the extra outputs, returns the exit status (1 on an error or too many warnings). */
export function emit(all: Finding[], o: OutputOptions, io: Io): number {
  const findings = o.quiet ? all.filter((f) => f.severity === 'error') : all;
  const opts = { root: o.root, toolVersion: VERSION, color: o.color === true };
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
