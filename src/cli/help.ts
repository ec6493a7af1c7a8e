// One layout for every command's --help, the one `offhost check --help` prints (src/cli/common.ts helpText):
//
//   Usage: offhost NAME [options] ...        (further forms on the next lines, aligned under the first)
//
//   What the command does, in sentences.
//
//   Subcommands:                              (commands with verbs: lock, vm, runs, shim, rules)
//     verb ARGS   what it does
//
//   Options:
//     --flag <arg>  what it does (default)
//     -h, --help    show this help
//
//   Exit status: what each status means.
//   Examples:
//     offhost NAME ...
//
// Commands parsed with commander print commander's help configured to this layout (parseWith in
// src/cli/commander.ts: the help option's text, the width, then helpTail below); the others build the whole
// text with formatHelp. test/cli/help.test.ts checks every command of the command table against it.

/** The width help text is wrapped to (commander) or written within (formatHelp's callers). */
export const HELP_WIDTH = 100;

export const HELP_OPTION: [string, string] = ['-h, --help', 'show this help'];

export interface HelpSpec {
  /** The usage forms, without "Usage: ". */
  usage: string[];
  /** Sentences (wrapped to HELP_WIDTH; a line break in it is kept). */
  description: string;
  subcommands?: [string, string][];
  /** The options; the help option is added at the end. */
  options: [string, string][];
  /** What each exit status means ("0 …, 1 …, 2 usage error"). */
  exit: string;
  examples: string[];
  /** More lines after the examples (environment, where to read more). */
  notes?: string;
}

/** Each line of `text` broken at spaces to fit `width` (lines already short enough are kept as they are). */
export function wrap(text: string, width = HELP_WIDTH, indent = ''): string {
  const out: string[] = [];
  for (const line of text.split('\n')) {
    let rest = line;
    while (rest.length > width) {
      let cut = rest.lastIndexOf(' ', width);
      // a word longer than the width: break after it
      if (cut <= indent.length) cut = rest.indexOf(' ', width);
      if (cut <= indent.length) break;
      out.push(rest.slice(0, cut));
      rest = `${indent}${rest.slice(cut + 1)}`;
    }
    out.push(rest);
  }
  return out.join('\n');
}

/** Two columns; a long second column wraps under itself. */
function table(rows: [string, string][]): string {
  const w = Math.max(...rows.map(([a]) => a.length));
  return rows.map(([a, b]) => wrap(`  ${a.padEnd(w)}  ${b}`.trimEnd(), HELP_WIDTH, ' '.repeat(w + 4))).join('\n');
}

/** Exit status, examples and notes: the end of every help text. */
export function helpTail(h: Pick<HelpSpec, 'exit' | 'examples' | 'notes'>): string {
  const examples = h.examples.length === 1 ? `Example: ${h.examples[0]}` : `Examples:\n${h.examples.map((e) => `  ${e}`).join('\n')}`;
  return `\n${wrap(`Exit status: ${h.exit}`)}\n${examples}\n${h.notes ? `${wrap(h.notes)}\n` : ''}`;
}

export function formatHelp(h: HelpSpec): string {
  const usage = h.usage.map((u, i) => `${i === 0 ? 'Usage: ' : '       '}${u}`).join('\n');
  const subs = h.subcommands?.length ? `Subcommands:\n${table(h.subcommands)}\n\n` : '';
  // The help option last, once (some option lists already end with it).
  const options = [...h.options.filter(([flags]) => flags !== HELP_OPTION[0]), HELP_OPTION];
  return `${usage}\n\n${wrap(h.description)}\n\n${subs}Options:\n${table(options)}\n${helpTail(h)}`;
}
