// Every `offhost` subcommand, in the order `offhost --help` lists them: the one place a command is
// registered. main() dispatches on it; scripts/build.mjs reads it to decide what goes into the hot bundle
// (dist/hot.cjs, `hot: true`) and which commands become their own file (dist/commands/<name>.cjs) that the
// hot bundle require()s only when that command runs. Adding a command is adding one entry here.
import type { CommandModule } from '../io.js';

export interface CommandEntry {
  /** One line for `offhost --help`. */
  summary: string;
  /** In the hot bundle: run before every command an agent or a shell executes, so start-up matters. */
  hot?: true;
  /**
   * Starts in a bundle of its own, dist/<name>.cjs, built from src/cli/<name>-bin.ts: the hook and the
   * shell door, each run before every command an agent (or a shell) executes. The loader
   * (src/cli/loader.cjs) runs that bundle for `offhost <name>`; anywhere else (`offhost help <name>`) the
   * command comes from dist/cold.cjs.
   */
  ownBundle?: true;
  /**
   * The command writes everything synchronously (writeAll): the process may exit as soon as it returns,
   * skipping the heap teardown of a natural exit (about 0.7 ms on every call).
   */
  exitAtOnce?: true;
  /** Its module: a literal import, so that the build can bundle it or make it its own file. */
  load: () => Promise<CommandModule>;
}

export const COMMANDS: Readonly<Record<string, CommandEntry>> = {
  check: { summary: 'classify one command line: allow, deny or reroute', hot: true, exitAtOnce: true, load: () => import('./commands/check.js') },
  explain: { summary: 'show the commands found in a line and the rule that decided each', hot: true, exitAtOnce: true, load: () => import('./commands/explain.js') },
  rules: { summary: 'list the rules in force, or test their examples', load: () => import('./commands/rules.js') },
  lock: { summary: 'acquire, heartbeat, release, inspect VM locks (POLICY R3/R4)', load: () => import('./commands/lock.js') },
  run: { summary: 'run a command here, or on its VM under the VM lock', load: () => import('./commands/run.js') },
  runs: { summary: 'list the runs offhost run recorded, or show one', load: () => import('./commands/runs.js') },
  lint: { summary: 'validate lock files and the staged lock transition', load: () => import('./commands/lint.js') },
  init: { summary: 'set up husky + lint-staged, agent hooks, the shims or shell integration', load: () => import('./commands/init.js') },
  uninstall: { summary: 'remove what init added (hook lines, lint-staged entry, agent hooks, shims), nothing else', load: () => import('./commands/uninstall.js') },
  hook: { summary: "an agent's pre-exec hook: claude-code, codex, gemini, cursor, copilot, windsurf, opencode", ownBundle: true, exitAtOnce: true, load: () => import('./commands/hook.js') },
  shell: { summary: 'drop-in $SHELL: check `-c COMMAND`, then run it or its reroute', ownBundle: true, load: () => import('./commands/shell.js') },
  shim: { summary: 'exec-time shims: install, remove, list; judge one program about to start', hot: true, exitAtOnce: true, load: () => import('./commands/shim.js') },
  scan: { summary: 'scan scripts, CI files and docs for heavy commands', load: () => import('./commands/scan.js') },
  ci: { summary: 'pull-request policy check: lock hygiene and heavy commands', load: () => import('./commands/ci.js') },
  vm: { summary: 'provision a catalogue VM, or preflight VMs (vm provision ID, vm status [ID])', load: () => import('./commands/vm.js') },
  doctor: { summary: 'check this laptop: hooks and shims wired, the paths they call, config valid', load: () => import('./commands/doctor.js') },
};
