// Entry point: dispatches on the subcommand (src/cli/commands-table.ts) and loads only that subcommand's
// module, so that the hot paths (check, hook, shell) start without the code of lock, lint, ci and their
// dependencies.
import { EXIT } from '../errors.js';
import type { Io } from '../io.js';
import { runCommand } from './run-command.js';
import { COMMANDS, type CommandEntry } from './commands-table.js';
import { quietIo, warmLines } from './warm.js';
import { everyProgramModule } from '../shell/programs/index.js';
import { VERSION } from '../version.js';
import { didYouMean } from './suggest.js';
export { processIo } from './process-io.js';

declare const __OFFHOST_BUNDLE__: 'hot' | 'cold' | undefined;
declare const require: NodeJS.Require;
declare const __dirname: string;
/** The loader's loadScript (src/cli/loader.cjs), a parameter of the bundle's wrapper; undefined from source. */
declare const __offhostLoadScript: ((name: string, req: NodeJS.Require, opts?: { wrap?: boolean }) => unknown) | undefined;

/**
 * How a command's module is loaded: from source, its own import; in the hot bundle, a cold command comes
 * from dist/cold.cjs (the same table, bundled with the cold commands; scripts/build.mjs leaves the hot
 * bundle's imports of cold commands external, never followed).
 */
function loaderOf(name: string, entry: CommandEntry): CommandEntry['load'] {
  if (entry.hot || typeof __OFFHOST_BUNDLE__ === 'undefined' || __OFFHOST_BUNDLE__ === 'cold') return entry.load;
  return async () => {
    // From its code cache (src/cli/loader.cjs): compiling dist/cold.cjs's 2 MB cost a cold command ~150 ms.
    const cold = (typeof __offhostLoadScript === 'function' ? __offhostLoadScript('cold.cjs', require, { wrap: true }) : require(`${__dirname}/cold.cjs`)) as typeof import('./cold.js');
    return cold.COMMANDS[name]!.load();
  };
}

function usage(): string {
  const width = Math.max(...Object.keys(COMMANDS).map((k) => k.length));
  const lines = Object.entries(COMMANDS).map(([k, v]) => `  ${k.padEnd(width)}  ${v.summary}`);
  // The layout of every command's help (src/cli/help.ts), written out here: main is on the hot path.
  return (
    `Usage: offhost <command> [options]\n\n` +
    `Keeps heavy builds and tests off this laptop: judges each command line before it runs (allow, deny, or\n` +
    `reroute to its test VM), and runs a rerouted command on the VM under the VM's lock.\n\n` +
    `Commands:\n${lines.join('\n')}\n\nOptions:\n  -h, --help     show this help (\`offhost <command> --help\`: that command's options)\n  -V, --version  print offhost's version\n\n` +
    `Exit status: the command's (its --help says what each means); 2 usage error.\n` +
    `Examples:\n  npx offhost init\n  offhost check 'make build-safe'\n  offhost run -- 'make e2e'\n`
  );
}

/**
 * `offhost --warm-cache`: check (plain and --json) over the warm-up lines, so that dist/hot.cjs's code
 * cache holds what check runs (the hook's bundle has its own warm-up: src/cli/warm.ts). Every program
 * family is loaded, so that each has its own cache written.
 */
async function warmCheck(io: Io): Promise<number> {
  const quiet = quietIo(io);
  everyProgramModule();
  const check = await import('./commands/check.js');
  for (const line of warmLines(io.env.HOME ?? '/home/koder')) {
    await check.run(['--json', line], quiet);
    await check.run([line], quiet);
  }
  return EXIT.ok;
}

/** The table entry for `name`, if it is a command. */
export function commandEntry(name: string | undefined): CommandEntry | undefined {
  return name !== undefined && Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined;
}

export async function main(argv: string[], io: Io): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || (name === 'help' && rest.length === 0)) {
    (name === undefined ? io.stderr : io.stdout)(usage());
    return name === undefined ? EXIT.error : EXIT.ok;
  }
  if (name === '--warm-cache') return warmCheck(io);
  if (name === '--version' || name === '-V') {
    io.stdout(`${VERSION}\n`);
    return EXIT.ok;
  }
  if (name === 'help' && rest[0] !== undefined) return main([rest[0], '--help'], io);
  const entry = commandEntry(name);
  if (!entry) {
    const what = name.startsWith('-') ? 'option' : 'command';
    const known = what === 'option' ? ['--help', '--version', '-h', '-V'] : Object.keys(COMMANDS);
    io.stderr(`offhost: unknown ${what} '${name}'${didYouMean(name, known)}; \`offhost --help\` lists the commands\n`);
    return EXIT.error;
  }
  return runCommand(name, loaderOf(name, entry), rest, io);
}
