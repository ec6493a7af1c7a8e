// `offhost shell`: a drop-in `$SHELL` for agents and tools that spawn `$SHELL -c COMMAND`.
//
// This module decides; src/cli/commands/shell.ts runs the real shell. The invocation is read the way bash
// reads its own arguments (bash(1) "INVOCATION"/"OPTIONS"):
//   [--long-option ...] [-abefhkmnptuvxBCHP...] [-o opt] [-O shopt] [+o opt] -c COMMAND [$0 [$1 ...]]
// Option letters may be clustered (`-lc`, `-ic`, `-ec`, `-xec`); `-o`/`-O`/`+o`/`+O` and `--rcfile`/
// `--init-file` take the next argument; `--` or `-` ends the options.
//
// What happens:
// - `-c COMMAND`: COMMAND is classified. allow -> the real shell runs with the very same arguments.
//   reroute -> the same arguments with COMMAND replaced by the rewrite. deny -> exit 126, reason on stderr.
// - a script file (`offhost-shell build.sh args`): the file's text is classified as a script. allow -> run;
//   reroute or deny -> refused (126) with the reroute to use, because a script's own `$0`/`$@` and exit
//   status cannot be carried over to a rerouted one faithfully. A file we cannot read is refused, except
//   one that does not exist (the real shell would only print "No such file").
// - commands on standard input (`-s`, or no command and stdin is not a terminal, e.g. `printf 'make\n' |
//   $SHELL`): read in full (up to 1 MiB, else refused), classified as a script, and fed to the real shell
//   on its stdin when allowed; refused on deny or reroute (same reason as scripts).
// - an interactive shell (no command and stdin is a terminal): passed through to the real shell unchecked;
//   a person types there, and `offhost init --shell bash|zsh` covers that case. `-i` with stdin on a pipe is
//   treated as commands on stdin (an agent driving a shell), not as a person.
// - a long-lived shell fed over a pipe (commands written one at a time, stdin never closed) is not supported:
//   the input is refused (126) when it has not ended after OFFHOST_SHELL_STDIN_MS (default 30 s), instead of
//   running anything unchecked.
// - `--version`, `--help`: passed through.
// - anything unparseable in the arguments (`-c` without COMMAND, an unknown `--option`): passed through when
//   it cannot run a command (the real shell reports the usage error), never checked-and-let-through.

export type ShellPlan =
  | { kind: 'command'; command: string; commandIndex: number; interactive: boolean }
  | { kind: 'script'; file: string; fileIndex: number }
  | { kind: 'stdin' }
  | { kind: 'interactive' }
  | { kind: 'passthrough'; why: string };

const TAKES_ARG_SHORT = new Set(['o', 'O']);
const TAKES_ARG_LONG = new Set(['--rcfile', '--init-file']);

/** Reads a bash-style argument list. `stdinIsTty` decides between stdin commands and interactive use. */
export function planShell(args: readonly string[], stdinIsTty: boolean): ShellPlan {
  let cflag = false;
  let sflag = false;
  let iflag = false;
  let versionOrHelp = false;
  let i = 0;
  // Long options come first in bash; accept them anywhere before the first operand, like bash does for
  // the ones it knows.
  while (i < args.length) {
    const a = args[i] as string;
    if (a === '--' || a === '-') {
      i++;
      break;
    }
    if (a.startsWith('--')) {
      if (a === '--version' || a === '--help') versionOrHelp = true;
      if (TAKES_ARG_LONG.has(a)) i++;
      i++;
      continue;
    }
    if ((a.startsWith('-') || a.startsWith('+')) && a.length > 1) {
      const letters = a.slice(1);
      let consumeNext = 0;
      for (const ch of letters) {
        if (ch === 'c') cflag = true;
        else if (ch === 's') sflag = true;
        else if (ch === 'i') iflag = true;
        else if (TAKES_ARG_SHORT.has(ch)) consumeNext++;
      }
      i += 1 + consumeNext;
      continue;
    }
    break;
  }
  if (cflag) {
    if (i >= args.length) return { kind: 'passthrough', why: '-c without a command string' };
    return { kind: 'command', command: args[i] as string, commandIndex: i, interactive: iflag };
  }
  if (versionOrHelp) return { kind: 'passthrough', why: '--version / --help' };
  if (sflag) return stdinIsTty ? { kind: 'interactive' } : { kind: 'stdin' };
  if (i < args.length) return { kind: 'script', file: args[i] as string, fileIndex: i };
  // A person at a terminal. `-i` on a pipe is not one: an agent can drive a persistent interactive shell
  // through a pipe, and that must be checked like any other commands on stdin.
  if (stdinIsTty) return { kind: 'interactive' };
  void iflag;
  return { kind: 'stdin' };
}

/** The argument list for the real shell with the command string at `index` replaced. */
export function replaceAt(args: readonly string[], index: number, value: string): string[] {
  const out = args.slice();
  out[index] = value;
  return out;
}
