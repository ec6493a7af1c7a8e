// commander, the way every cold subcommand uses it: errors become UsageError (exit 2), --help exits 0,
// output goes through Io.
import { CommanderError, type Command } from 'commander';
import { EXIT, UsageError } from '../errors.js';
import type { Io } from './io.js';

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
