// commander, the way every cold subcommand uses it: errors become UsageError (exit 2), --help exits 0,
// output goes through Io.
import { CommanderError, type Command } from 'commander';
import { EXIT, UsageError } from '../errors.js';
import type { Io } from './io.js';
import { statSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseUtc } from '../locks/schema.js';

/** Parses with commander; returns a number when it printed help (exit status), else null. */
export function parseWith(cmd: Command, args: string[], io: Io): number | null {
  cmd
    .exitOverride()
    .configureOutput({ writeOut: (s) => io.stdout(s), writeErr: (s) => io.stderr(s) });
  try {
    cmd.parse(args, { from: 'user' });
  } catch (e) {
    if (e instanceof CommanderError) {
      if (e.code === 'commander.helpDisplayed' || e.code === 'commander.help' || e.code === 'commander.version') return EXIT.ok;
      throw new UsageError(e.message.replace(/^error: /, ''));
    }
    throw e;
  }
  return null;
}

/** `--now ISO`: the instant, or a UsageError that says how to write it. */
export function parseNowOption(value: string): Date {
  const d = parseUtc(value);
  if (!d) throw new UsageError(`--now '${value}' is not an ISO-8601 UTC timestamp; write it like 2026-05-19T22:30:00Z`);
  return d;
}

/** `--skew SECONDS`: a whole number of seconds. */
export function parseSkewOption(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(n)) throw new UsageError(`--skew must be a whole number of seconds, not '${value}'`);
  return n;
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
