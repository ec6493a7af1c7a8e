// Small helpers shared by the guard's subcommands (check, explain, rules, shell): option parsing with
// node:util parseArgs (no dependency on the hot path), help text in the same layout as commander's.
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { UsageError } from '../errors.js';
import type { Role } from '../types.js';
import { didYouMean } from './suggest.js';

type Options = NonNullable<ParseArgsConfig['options']>;

/** The option names of a parseArgs spec, as typed: --long and -s. */
function optionNames(options: Options): string[] {
  return Object.entries(options).flatMap(([k, v]) => [`--${k}`, ...(v.short ? [`-${v.short}`] : [])]);
}

/**
 * node:util parseArgs with errors as ONE UsageError line: an unknown option gets a suggestion; a missing
 * value names the option. (Node's own texts are long and quote unevenly.)
 */
export function parseOptions<T extends Options>(args: string[], options: T, _usage?: string) {
  try {
    return parseArgs({ args, options, allowPositionals: true, strict: true });
  } catch (err) {
    const e = err as Error & { code?: string };
    const msg = e.message;
    if (e.code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') {
      const name = /'([^']+)'/.exec(msg)?.[1] ?? msg;
      throw new UsageError(`unknown option '${name}'${didYouMean(name, optionNames(options))}`);
    }
    if (e.code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE') {
      const name = /'(-[^' ]+)/.exec(msg)?.[1];
      const spec = name ? options[name.replace(/^-+/, '')] ?? Object.values(options).find((o) => `-${o.short}` === name) : undefined;
      if (spec && spec.type === 'boolean') throw new UsageError(`option '${name}' takes no value`);
      throw new UsageError(name ? `option '${name}' needs a value` : msg);
    }
    throw new UsageError(msg);
  }
}

/** Help in commander's layout: usage, description, the options, then notes. */
export function helpText(h: { usage: string; description: string; options: [string, string][]; notes?: string }): string {
  const w = Math.max(...h.options.map(([f]) => f.length));
  const opts = h.options.map(([f, d]) => `  ${f.padEnd(w)}  ${d}`).join('\n');
  return `${h.usage}\n\n${h.description}\n\nOptions:\n${opts}\n${h.notes ? `\n${h.notes}\n` : ''}`;
}

/** The option lines `check` and `explain` share. */
export const GUARD_OPTION_HELP: [string, string][] = [
  ['--json', 'print the verdict as JSON'],
  ['--cwd <dir>', 'judge the line as run from this directory (default: the current one)'],
  ['--role <role>', 'laptop, vm or ci (default: $OFFHOST_ROLE, else detected)'],
  ['--config <file>', 'configuration file (default: offhost.config.yaml found upwards, plus the user config)'],
  ['--color, --no-color', 'colour the verdict (default: on a terminal, unless NO_COLOR; FORCE_COLOR forces it)'],
  ['-h, --help', 'show this help'],
];

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
    {
      json: { type: 'boolean' },
      cwd: { type: 'string' },
      role: { type: 'string' },
      config: { type: 'string' },
      color: { type: 'boolean' },
      'no-color': { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
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
