// Entry point: dispatches on the subcommand and loads only that subcommand's module, so that the hot
// paths (check, hook, shell) start without the code of lock, lint, ci and their dependencies.
import { EXIT } from '../errors.js';
import type { CommandModule, Io } from './io.js';
import { runCommand } from './run-command.js';
export { processIo } from './process-io.js';
// The hot paths (run before every command an agent executes) are in the entry file itself; the rest are
// separate files loaded on demand (scripts/build.mjs makes the cold imports external).
import * as check from './commands/check.js';
import * as explain from './commands/explain.js';
import * as shell from './commands/shell.js';
import * as shim from './commands/shim.js';
import { loadCold } from './cold.js';
import { quietIo, warmLines } from './warm.js';

const COMMANDS: Record<string, { summary: string; load: () => Promise<CommandModule> }> = {
  check: { summary: 'classify one command line: allow, deny or reroute', load: async () => check },
  explain: { summary: 'show the commands found in a line and the rule that decided each', load: async () => explain },
  rules: { summary: 'list the rules in force, or test their examples', load: () => loadCold('rules') },
  lock: { summary: 'acquire, heartbeat, release, inspect VM locks (POLICY R3/R4)', load: () => loadCold('lock') },
  run: { summary: 'run a command here, or on its VM under the VM lock', load: () => loadCold('run') },
  lint: { summary: 'validate lock files and the staged lock transition', load: () => loadCold('lint') },
  init: { summary: 'set up husky + lint-staged, agent hooks or shell integration', load: () => loadCold('init') },
  hook: { summary: 'pre-exec hook for claude-code, codex or gemini (event JSON on stdin)', load: () => loadCold('hook') },
  shell: { summary: 'drop-in $SHELL: check `-c COMMAND`, then run it or its reroute', load: async () => shell },
  shim: { summary: 'exec-time shims: install, remove, list; judge one program about to start', load: async () => shim },
  scan: { summary: 'scan scripts, CI files and docs for heavy commands', load: () => loadCold('scan') },
  ci: { summary: 'pull-request policy check: lock hygiene and heavy commands', load: () => loadCold('ci') },
};

function usage(): string {
  const width = Math.max(...Object.keys(COMMANDS).map((k) => k.length));
  const lines = Object.entries(COMMANDS).map(([k, v]) => `  ${k.padEnd(width)}  ${v.summary}`);
  return `Usage: offhost <command> [options]\n\nCommands:\n${lines.join('\n')}\n\nRun \`offhost <command> --help\` for a command's options.\n`;
}

export async function main(argv: string[], io: Io): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    (name === undefined ? io.stderr : io.stdout)(usage());
    return name === undefined ? EXIT.error : EXIT.ok;
  }
  if (name === '--warm-cache') return warm(io);
  if (name === '--version' || name === '-V') {
    io.stdout(`${process.env.OFFHOST_VERSION ?? '0.1.0'}\n`);
    return EXIT.ok;
  }
  const entry = Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined;
  if (!entry) {
    io.stderr(`offhost: unknown command '${name}'\n\n${usage()}`);
    return EXIT.error;
  }
  return runCommand(name, entry.load, rest, io);
}

async function warm(io: Io): Promise<number> {
  const quiet = quietIo(io);
  for (const line of warmLines(io.env.HOME ?? '/home/koder')) {
    await check.run(['--json', line], quiet);
    await check.run([line], quiet);
  }
  return EXIT.ok;
}
