// commander, the way every cold subcommand uses it: an error is ONE UsageError line (exit 2) with commander's
// suggestion for a mistyped option, --help exits 0, output goes through Io. Also the option definitions and
// validators every command shares (numbers, timestamps, the report options of lint/scan/ci).
import { CommanderError, Option, type Command } from 'commander';
import { EXIT, UsageError } from '../errors.js';
import type { Io } from '../io.js';
import { statSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseNowOption } from '../locks/schema.js';
export { parseNowOption };
import { formatKind, type OutputOptions } from '../report/output.js';
import { colorEnabled } from '../report/color.js';
import { HELP_OPTION, HELP_WIDTH, helpTail, type HelpSpec } from './help.js';

/** commander's error text as one line: `unknown option '--stagd' (did you mean --staged?)`. */
export function usageMessage(e: CommanderError): string {
  return e.message
    .replace(/^error: /, '')
    .replace(/\s*\n\s*\(Did you mean (.+)\?\)\s*$/, ' (did you mean $1?)')
    .replace(/\s*\n\s*/g, ' ')
    .trim();
}

/**
 * Parses with commander; returns a number when it printed help (exit status), else null. `help`: the exit
 * statuses and examples that end the command's help (src/cli/help.ts: the layout every command's help has).
 */
export function parseWith(cmd: Command, args: string[], io: Io, help?: Pick<HelpSpec, 'exit' | 'examples' | 'notes'>): number | null {
  cmd
    .exitOverride()
    .helpOption(...HELP_OPTION)
    .configureHelp({ helpWidth: HELP_WIDTH })
    .showSuggestionAfterError(true)
    // commander would print the error itself and then the caller again: only the UsageError is printed.
    .configureOutput({ writeOut: (s) => io.stdout(s), writeErr: (s) => io.stderr(s), outputError: () => undefined });
  // commander ends the text it adds with a line break of its own
  if (help) cmd.addHelpText('after', helpTail(help).replace(/\n$/, ''));
  try {
    cmd.parse(args, { from: 'user' });
  } catch (e) {
    if (e instanceof CommanderError) {
      if (e.code === 'commander.helpDisplayed' || e.code === 'commander.help' || e.code === 'commander.version') return EXIT.ok;
      throw new UsageError(usageMessage(e));
    }
    throw e;
  }
  return null;
}

/**
 * A whole-number option (`--max-warnings 0`, `--skew 120`): the number, or a UsageError naming the option.
 * `min` defaults to 0. Every command validates numbers through this (or numberOption) so that `--wait=abc`
 * and `--skew -1` fail the same way everywhere.
 */
export function integerOption(name: string, value: string, opts: { min?: number; max?: number; unit?: string } = {}): number {
  const min = opts.min ?? 0;
  const n = Number(value);
  const what = `${min === 0 ? 'a whole number' : `a whole number from ${min}`}${opts.max !== undefined ? ` up to ${opts.max}` : ''}${opts.unit ? ` of ${opts.unit}` : ''}`;
  if (!/^[+-]?\d+$/.test(value.trim()) || !Number.isSafeInteger(n) || n < min || (opts.max !== undefined && n > opts.max)) {
    throw new UsageError(`${name} must be ${what}, not '${value}'`);
  }
  return n;
}

/** A number option that may have a fraction (`--poll 0.5` seconds); same failure as integerOption. */
export function numberOption(name: string, value: string, opts: { min?: number; unit?: string; positive?: boolean } = {}): number {
  const n = Number(value);
  const min = opts.min ?? 0;
  if (value.trim() === '' || !Number.isFinite(n) || n < min || (opts.positive && n <= 0)) {
    throw new UsageError(`${name} must be a ${opts.positive ? 'positive ' : ''}number${opts.unit ? ` of ${opts.unit}` : ''}, not '${value}'`);
  }
  return n;
}

/** `--skew SECONDS`: a whole number of seconds. */
export function parseSkewOption(value: string): number {
  return integerOption('--skew', value, { unit: 'seconds' });
}

/** The report options of every command that prints findings (lint, scan, ci), as ESLint spells them. */
export interface ReportOpts {
  format?: string;
  outputFile?: string;
  maxWarnings?: string;
  quiet?: boolean;
  color?: boolean;
}

export function addReportOptions(cmd: Command): Command {
  return cmd
    .option('-f, --format <kind>', 'stylish | json | sarif | github (default: github inside GitHub Actions, else stylish)')
    .option('-o, --output-file <file>', 'write the report to this file instead of standard output')
    .option('--max-warnings <n>', 'exit 1 when there are more than this many warnings (default -1: no limit)')
    .option('--quiet', 'report errors only (warnings are neither shown nor counted)')
    .addOption(new Option('--color', 'colour the stylish output (default: on a terminal, unless NO_COLOR; FORCE_COLOR forces it)'))
    .addOption(new Option('--no-color', 'never colour the output'));
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

/** The files named on the command line: a folder is walked with `walk`, a missing path is a UsageError. */
export function collectPaths(paths: string[], cwd: string, walk: (dir: string, into: string[]) => void): string[] {
  const files: string[] = [];
  for (const p of paths) {
    const abs = resolve(cwd, p);
    let st;
    try {
      st = statSync(abs);
    } catch {
      throw new UsageError(`${p}: no such file or folder`);
    }
    if (st.isDirectory()) walk(abs, files);
    else files.push(abs);
  }
  return files;
}
