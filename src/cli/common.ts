// Small helpers shared by the guard's subcommands (check, explain, rules).
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { UsageError } from '../errors.js';
import type { Role } from '../types.js';

/** node:util parseArgs (no dependency to load on the hot path), with errors as UsageError. */
export function parseOptions<T extends NonNullable<ParseArgsConfig['options']>>(args: string[], options: T, usage: string) {
  try {
    return parseArgs({ args, options, allowPositionals: true, strict: true });
  } catch (err) {
    throw new UsageError(`${(err as Error).message}\n${usage}`);
  }
}

/** The one COMMAND argument (a whole command line). */
export function oneCommandLine(positionals: string[], usage: string): string {
  if (positionals.length === 1) return positionals[0]!;
  if (positionals.length === 0) throw new UsageError(`missing COMMAND\n${usage}`);
  throw new UsageError(`give the command line as ONE argument, quoted: offhost check 'make build-safe' (got ${positionals.length} arguments)\n${usage}`);
}

/** The options `check` and `explain` share, parsed, and the guard they ask for. */
export function guardCommandOptions(args: string[], usage: string) {
  const { values, positionals } = parseOptions(
    args,
    { json: { type: 'boolean' }, cwd: { type: 'string' }, role: { type: 'string' }, config: { type: 'string' }, help: { type: 'boolean', short: 'h' } },
    usage,
  );
  return {
    values,
    positionals,
    guardOptions: (io: { cwd: string; env: NodeJS.ProcessEnv }) => ({
      cwd: values.cwd ?? io.cwd,
      env: io.env,
      ...(values.role !== undefined ? { role: values.role as Role } : {}),
      ...(values.config !== undefined ? { configFile: values.config } : {}),
    }),
  };
}
