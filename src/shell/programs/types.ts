// The interface of a program module: what the walker needs to know about one family of programs (their
// names, their option grammar, what they run and where), and the examples that prove it. One resolver
// per program behind the same small interface (knip's plugin model); examples checked at build time
// (scripts/compile-builtin.ts) and by test/shell/programs.test.ts, like the rules' examples.
import type { Field } from '../expand.js';
import type { Call, Walker } from '../walk-state.js';
import type { Grammar } from './grammar.js';
import type { Unwrapped } from '../unwrapped.js';
export type { Unwrapped, WorkspaceSelection } from '../unwrapped.js';

/**
 * A program example, checked by walking `line` (in `cwd`, default the monorepo root of the examples,
 * /home/koder/dev/koder): `match` examples must find a command whose argv, joined by spaces, is `runs`
 * (and, if given, whose directory is `in`); `not_match` examples must find none.
 */
export interface ProgramExample {
  line: string;
  runs: string;
  cwd?: string;
  in?: string;
  /** Whether the found command is help/version/list only (checked when given). */
  info?: boolean;
}

export interface ProgramModule {
  /** The family, for messages and docs (wrappers, shells, make, git...). */
  family: string;
  /** Exact basenames. */
  names: readonly string[];
  /** Basenames matched by pattern (`python3.12`, `qemu-system-*`). */
  pattern?: RegExp;
  /** The option grammar (declared once; long options may be abbreviated to an unambiguous prefix). */
  grammar?: Grammar;
  /**
   * Environment variables the program reads that change what it runs or where (`MAKEFLAGS=n`: a dry run;
   * `DOCKER_HOST=ssh://…`: a remote daemon). The exec-time judge (src/shims/judge.ts) writes them into
   * the line it judges, since a shim sees them in its environment, not on the command line.
   */
  env?: readonly string[];
  /** Reads its first argument as a script (`. FILE`, `bash FILE`): `. <(echo …)` hands it static text. */
  readsScript?: boolean;
  /** Looks through the program: what it runs (data the walker applies). */
  unwrap?(call: Call): Unwrapped;
  /** The whole walk of a call, when there is more to it than unwrap (state, extra commands). Emits the call. */
  walk?(call: Call, w: Walker): void;
  /** The static text the program writes to standard output (echo, printf, cat of a file), or null. */
  output?(call: Call): Field | null;
  examples: { match: ProgramExample[]; not_match: ProgramExample[] };
}
