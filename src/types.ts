// Core types shared by every part of offhost (see ../shared/ARCHITECTURE.md).
import type { Span } from './shell/ast.js';

export type { Span };

export type Decision = 'allow' | 'deny' | 'reroute';
export type Role = 'laptop' | 'vm' | 'ci';

/** One command that would actually execute, found by walking the syntax tree. */
export interface SimpleCommand {
  /**
   * The program's name as a rule sees it: the basename of argv[0] after quote removal and `~`/`$HOME`
   * expansion (`/usr/bin/make` -> `make`). null when it cannot be known statically (`"$CMD" build`).
   */
  program: string | null;
  /** argv[0] as written after quote removal and expansion (a path stays a path). */
  argv: string[];
  /** Indices into argv of words that are not statically known (they contain `$x`, `$(…)`, globs...). */
  unknown: number[];
  /** For unknown words that start with static text: index -> that text (`emulator "@$NAME"` -> `@`). */
  prefixes?: Record<number, string>;
  /** Inline assignments (`FOO=1 make`) and `env`/`sudo` assignments that apply to this command. */
  env: Record<string, string>;
  /** For a program that cannot be known: the whole line it was found in (rules may look at it). */
  line?: string;
  /** Environment variables that are set to something unknown (`export X="$(…)"`, set in a branch). */
  unknownEnv?: string[];
  /** Effective working directory, absolute; null when it cannot be known (`cd "$DIR"`). */
  cwd: string | null;
  /**
   * In a checkout of the monorepo other than the canonical one (a worktree, another clone): the same place
   * under `{root}`, where the rules' directories are written (src/config/checkout.ts). A rule's `cwd`
   * condition holds when it holds for `cwd` or for this.
   */
  ruleCwd?: string | undefined;
  /**
   * How `ruleCwd` is worked out the first time a rule's cwd condition asks for it (ruleCwdOf): most commands
   * meet no rule with a cwd condition (`git status`, `grep`), and then no directory above theirs is looked at.
   */
  ruleSpace?: { dir: string; of: (dir: string) => string | undefined } | undefined;
  /** Wrappers and shells it was found inside, outermost first (`sudo`, `bash -c`, `xargs`, `$(…)`...). */
  via: string[];
  /** Span in the top-level line (for nested re-parsed scripts: the span of the outermost word holding it). */
  span: Span;
  /**
   * Found in a file offhost reads only in part (a Makefile's recipes): a rule applies to it only when it
   * surely does; a "maybe" (something unknown) counts as no, so that reading the file never adds a refusal.
   */
  certainOnly?: boolean;
  /** The program only prints help, its version or a list (`make --help`, `playwright test --list`): it runs nothing. */
  infoOnly?: boolean;
  /**
   * Found by reading an unknown program's arguments as the command they may start (src/shell/guess.ts):
   * it can make the line heavier, never lighter, so no allow rule explains the line by it.
   */
  guessed?: boolean;
}

/** A route: where a rerouted command runs. */
export interface RouteRef {
  name: string;
  /** Canonical VM id, e.g. `s.khost1.dev-linux-koda`. */
  vm: string;
  /** The working directory on the VM (after path mapping). */
  cwd: string;
  /** A command line that, run by bash on the laptop, runs the original line on the VM. */
  command: string;
}

export interface Verdict {
  decision: Decision;
  /** Id of the deciding rule; null when nothing matched (allow by default) or on a parse error. */
  rule: string | null;
  reason: string;
  route: RouteRef | null;
  /** The command line to run instead of the original (reroute only). */
  rewrite: string | null;
  /** Every simple command found, with the rule that matched it (for `explain`). */
  commands: { command: SimpleCommand; rule: string | null; decision: Decision }[];
}

export type Severity = 'error' | 'warning';

/** The one currency of `lint`, `scan` and `ci`: every formatter takes a list of these. */
export interface Finding {
  file: string;
  line?: number;
  column?: number;
  endLine?: number;
  endColumn?: number;
  ruleId: string;
  severity: Severity;
  message: string;
  /** What to do instead (for scan: the rewrite to use). */
  suggestion?: string;
}

export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

/** A VM lock file's content (POLICY R3), parsed. */
export interface Lock {
  vm: string;
  session: string;
  ai: string;
  started: Date;
  heartbeat?: Date;
  ttlMinutes: number;
  reason: string;
  body: string;
  /** Path of the file, relative to the repository root. */
  file: string;
  /** 1-based line of each frontmatter field, for findings. */
  positions: Partial<Record<'vm' | 'session' | 'ai' | 'started' | 'heartbeat' | 'ttl_minutes' | 'reason', number>>;
}

/** A command's rule-space directory (SimpleCommand.ruleCwd), worked out once, when first asked. */
export function ruleCwdOf(cmd: SimpleCommand): string | undefined {
  const rs = cmd.ruleSpace;
  if (rs !== undefined) {
    cmd.ruleSpace = undefined;
    const v = rs.of(rs.dir);
    if (v !== undefined) cmd.ruleCwd = v;
  }
  return cmd.ruleCwd;
}
