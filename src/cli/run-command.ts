// Running one subcommand with the CLI's error contract: an error that escapes it is printed with the
// subcommand's name and mapped to its exit status (src/errors.ts), in both bundles alike.
import { exitCodeFor, isOffhostError } from '../errors.js';
import type { CommandModule, Io } from '../io.js';

export async function runCommand(name: string, load: () => Promise<CommandModule>, args: string[], io: Io): Promise<number> {
  try {
    const mod = await load();
    return await mod.run(args, io);
  } catch (err) {
    io.stderr(`offhost ${name}: ${isOffhostError(err) ? err.message : String((err as Error)?.stack ?? err)}\n`);
    return exitCodeFor(err);
  }
}
