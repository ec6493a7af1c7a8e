// Small helpers shared by the guard's subcommands (check, explain, rules, shell): option parsing (our own:
// node:util's parseArgs costs half a millisecond to load on its first call, paid before every agent
// command), help text in the same layout as commander's.
import { UsageError } from '../errors.js';
import type { Role } from '../types.js';
import { didYouMean } from './suggest.js';
import { quoteArgv } from '../routes/quote.js';

interface OptionSpec {
  type: 'boolean' | 'string';
  short?: string;
}
type Options = Record<string, OptionSpec>;
type Values<T extends Options> = { [K in keyof T]?: T[K]['type'] extends 'boolean' ? boolean : string };

/** The option names of a spec, as typed: --long and -s. */
function optionNames(options: Options): string[] {
  return Object.entries(options).flatMap(([k, v]) => [`--${k}`, ...(v.short ? [`-${v.short}`] : [])]);
}

/**
 * Options as node:util parseArgs reads them in strict mode with positionals (`--name`, `--name=value`,
 * `--name value`, `-s`, grouped `-abc`, `-sVALUE`, `--` ends the options, a lone `-` is a positional), with
 * errors as ONE UsageError line: an unknown option gets a suggestion, a missing value names the option.
 * A value that starts with a dash must be given as `--name=-x` (as parseArgs requires). One deliberate
 * difference: a dash inside a group of short flags is an error, where parseArgs ends the options there.
 */
export function parseOptions<T extends Options>(args: string[], options: T, _usage?: string): { values: Values<T>; positionals: string[] } {
  const values: Record<string, string | boolean> = {};
  const positionals: string[] = [];
  const byShort = new Map<string, string>();
  for (const [k, v] of Object.entries(options)) if (v.short) byShort.set(v.short, k);
  const unknown = (name: string) => new UsageError(`unknown option '${name}'${didYouMean(name, optionNames(options))}`);
  /** The value of a string option written as its own argument: the next one, unless it is missing or an option. */
  const nextValue = (i: number, name: string): string => {
    const v = args[i + 1];
    if (v === undefined || (v.startsWith('-') && v.length > 1)) throw new UsageError(`option '${name}' needs a value`);
    return v;
  };
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === '--') {
      positionals.push(...args.slice(i + 1));
      break;
    }
    if (a.startsWith('--')) {
      const eq = a.indexOf('=');
      const key = eq < 0 ? a.slice(2) : a.slice(2, eq);
      const spec = Object.hasOwn(options, key) ? options[key] : undefined;
      if (!spec) throw unknown(eq < 0 ? a : a.slice(0, eq));
      if (spec.type === 'boolean') {
        if (eq >= 0) throw new UsageError(`option '--${key}' takes no value`);
        values[key] = true;
      } else if (eq >= 0) values[key] = a.slice(eq + 1);
      else values[key] = nextValue(i++, a);
      continue;
    }
    if (a.startsWith('-') && a.length > 1) {
      for (let j = 1; j < a.length; j++) {
        // parseArgs reads `-q-x` as `-q -- -x` (the rest of the line positional): surely a typo, refused.
        if (a[j] === '-') throw new UsageError(`'${a}': a dash inside a group of short options`);
        const key = byShort.get(a[j]!);
        if (key === undefined) throw unknown(`-${a[j]}`);
        if (options[key]!.type === 'boolean') {
          values[key] = true;
          continue;
        }
        if (j + 1 < a.length) values[key] = a.slice(j + 1);
        else values[key] = nextValue(i++, `-${a[j]}`);
        break;
      }
      continue;
    }
    positionals.push(a);
  }
  return { values: values as Values<T>, positionals };
}

/** Help in commander's layout: usage, description, the options, then notes. */
export function helpText(h: { usage: string; description: string; options: [string, string][]; notes?: string }): string {
  const w = Math.max(...h.options.map(([f]) => f.length));
  const opts = h.options.map(([f, d]) => `  ${f.padEnd(w)}  ${d}`).join('\n');
  return `${h.usage}\n\n${h.description}\n\nOptions:\n${opts}\n${h.notes ? `\n${h.notes}\n` : ''}`;
}

/** The option lines `check` and `explain` share. */
export const GUARD_OPTION_HELP: [string, string][] = [
  ['-f, --format <format>', 'stylish (the default: for people) or json'],
  ['--json', 'the same as --format json'],
  ['--stdin', 'read the command line from standard input (all of it, less one final newline), not an argument'],
  ['--debug', 'trace on stderr what offhost read and decided: config files, role, checkout, each rule matched'],
  ['--cwd <dir>', 'judge the line as run from this directory (default: the current one)'],
  ['--role <role>', 'laptop, vm or ci (default: $OFFHOST_ROLE, else detected)'],
  ['--config <file>', 'configuration file (default: offhost.config.yaml found upwards, plus the user config)'],
  ['--color, --no-color', 'colour the verdict (default: on a terminal, unless NO_COLOR; FORCE_COLOR forces it)'],
  ['-h, --help', 'show this help'],
];

/** The output format of check and explain: `--format stylish|json` (`-f`), `--json` for json. */
export function outputFormat(values: { format?: string; json?: boolean }): 'stylish' | 'json' {
  const f = values.format;
  if (f === undefined) return values.json ? 'json' : 'stylish';
  if (f !== 'stylish' && f !== 'json') throw new UsageError(`--format must be stylish or json (got '${f}')${didYouMean(f, ['stylish', 'json'])}`);
  if (values.json && f !== 'json') throw new UsageError(`--json and --format ${f} disagree: give one of them`);
  return f;
}

/**
 * The command line from standard input (`--stdin`): all of it, less one final newline (what `echo` and an
 * editor add), judged whole as a script would be. No COMMAND argument may be given as well.
 */
export async function commandLineFromStdin(io: { readStdin: () => Promise<string> }, positionals: string[], usage: string): Promise<string> {
  if (positionals.length > 0) throw new UsageError(`--stdin reads the command line from standard input: give no COMMAND argument as well (got ${positionals.length})\n${usage}`);
  const text = (await io.readStdin()).replace(/\r?\n$/, '');
  if (text.trim() === '') throw new UsageError('--stdin: standard input held no command line');
  return text;
}

/** The one COMMAND argument (a whole command line). */
/**
 * The line `check`/`explain` judge, by `offhost run`'s rule (src/run/command.ts): one word is a shell
 * line; several words are an argv, judged as the line that quotes each word once.
 */
export function oneCommandLine(positionals: string[], usage: string): string {
  if (positionals.length === 1) return positionals[0]!;
  if (positionals.length === 0) throw new UsageError(`missing COMMAND\n${usage}`);
  return quoteArgv(positionals);
}

/** The options `check` and `explain` share, parsed, and the guard they ask for. */
export function guardCommandOptions(args: string[], usage: string) {
  const { values, positionals } = parseOptions(
    args,
    {
      json: { type: 'boolean' },
      format: { type: 'string', short: 'f' },
      stdin: { type: 'boolean' },
      debug: { type: 'boolean' },
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
