// The arguments of a program offhost does not know, read as the commands they may be. No registry lists
// every wrapper (`vglrun emulator -avd Pixel_7`, `aws-vault exec prod -- make build-safe`, `scl enable
// devtoolset-9 'make build-safe'`, `s6-setuidgid koder playwright test`), so an unknown program's argv is
// also walked from each word that names a program some rule or module knows, from the word after `--`,
// and each string argument that parses as a command line (positional, or the value of an option that
// says command: `-c`, `--exec`...). What is found this way counts only where a rule matches it for sure
// (`certainOnly`, as for Makefile recipes): `mytool cat notes.txt` changes nothing, and the guessed
// emulator goes where the emulator goes. Programs known to run none of their arguments (pkill, apt,
// ldd...) are in the registry (`inert` in src/shell/programs/builtins.ts), and those the policy keeps here as they are
// (an allow rule naming the program alone: rg, gh, man) are not read this way either. The values of the
// variables the line sets for the program are read as its string arguments are (`RSYNC_RSH='…' rsync`).
//
// Cost: a line with no such word pays one registry look-up per word. Each guess walks the rest of the
// argv, so the fields guessed are counted against the walker's step budget: a line built to make this
// quadratic is refused as too complex, never let through unread. Guesses do not guess again.
import type { Field } from './expand.js';
import type { SimpleCommand } from '../types.js';
import { parse } from './parser.js';
import { ParseError, positionAt } from '../errors.js';
import { programFor } from './programs/index.js';
import { NestedParseError, NO_STDIN, basenameOf, clone, isUnknownValue, withVia, type Call, type Walker } from './walk-state.js';

/** Options whose value is a command line, in programs offhost does not know (`capsh -c`, `nodemon --exec`). */
const COMMAND_OPTION = /^--?(c|x|e|cmd|command|commands|exec|execute|run|shell|script|sh|on-change|on-success|on-failure|pre|post|hook)$/;

/** Variables whose name says they hold a program to start. */
const PROGRAM_VAR = /(^|_)(SHELL|RSH|ASKPASS|BROWSER|EDITOR|VISUAL|PAGER|TERMINAL|PROGRAM|PROG|CMD|COMMAND)$/;

/** A word that can name a program to run (not `file.txt:12`, `a=b`, `@scope`, a URL). */
const PROGRAM_WORD = /^(?:[^\s=:@]*\/)?[A-Za-z0-9_][A-Za-z0-9_.+-]*$/;

/** `self`: the call itself as emitted (the policy judges it); absent when nothing was emitted for it. */
export function guessArguments(call: Call, w: Walker, self: SimpleCommand | undefined): void {
  const { fields, ctx } = call;
  const n = fields.length;
  if (ctx.guessing || (n < 2 && Object.keys(call.env).length === 0)) return;
  // The policy keeps the call here as it is: nothing more is read.
  if (self && ctx.policy?.keeps(self)) return;
  const label = `${call.name} (unknown to offhost: its arguments read as a command)`;
  const wasCertainOnly = ctx.certainOnly;
  ctx.guessing = true;
  ctx.certainOnly = true;
  try {
    let option: string | null = null; // the word before was an option (this word may be its value)
    let dashDash = false;
    let guessedAt = -1; // the word after `--`, already walked from
    for (let j = 1; j < n; j++) {
      const f = fields[j]!;
      if (!f.known) {
        option = null;
        continue;
      }
      const v = f.value;
      if (v === '--' && !dashDash) {
        dashDash = true;
        if (j + 1 < n) suffix((guessedAt = j + 1));
        option = null;
        continue;
      }
      if (v.startsWith('-') && v.length > 1 && !/\s/.test(v)) {
        // `--exec=make build-safe` as words: the value starts the command, the words after it follow.
        const eq = /^(--?[A-Za-z][\w-]*)=(.+)$/.exec(v);
        if (eq && COMMAND_OPTION.test(eq[1]!) && PROGRAM_WORD.test(eq[2]!) && names(eq[2]!)) suffix(j, { value: eq[2]!, known: true });
        option = v;
        continue;
      }
      if (v.startsWith('-') && /^--?[A-Za-z][\w-]*=/.test(v)) {
        // `--exec=make build-safe`
        const eq = v.indexOf('=');
        if (COMMAND_OPTION.test(v.slice(0, eq))) script(v.slice(eq + 1));
        option = null;
        continue;
      }
      if (/\s/.test(v)) {
        if (option === null || COMMAND_OPTION.test(option)) script(v);
      } else if (j !== guessedAt && PROGRAM_WORD.test(v) && names(v)) suffix(j);
      option = null;
    }
    // The variables the line sets for it may name what it runs (`RSYNC_RSH='…' rsync`, `BROWSER='…'
    // xdg-open URL`): a value that is a command line is read as one, as a string argument is.
    for (const k in call.env) {
      const v = call.env[k]!;
      if (isUnknownValue(v)) continue;
      if (/\s/.test(v)) script(v);
      // A variable whose name says it holds a program (`SHELL=./x.sh`, `TERMINAL=…`, `FOO_RSH=…`): that program.
      else if (PROGRAM_VAR.test(k) && PROGRAM_WORD.test(v)) attempt(() => withVia(ctx, label, () => w.runFields([{ value: v, known: true }], call.env, call.cwd, clone(call.st), ctx, call.span, NO_STDIN, call.wrapDepth + 1)));
    }
  } finally {
    ctx.guessing = false;
    ctx.certainOnly = wasCertainOnly;
  }

  function budget(steps: number): void {
    ctx.nodes += steps;
    if (ctx.nodes > ctx.maxNodes) throw new NestedParseError(`the line is too complex to judge (more than ${ctx.maxNodes} steps)`, positionAt(ctx.text, call.span.start));
  }

  /** Whether the word names a program the registry knows or a rule names. */
  function names(word: string): boolean {
    const name = basenameOf({ value: word, known: true });
    return name !== null && (programFor(name) !== null || ctx.policy?.names(name) === true);
  }

  /** The argv from word j on (its first word given as `first`), as the command an unknown wrapper would run. */
  function suffix(j: number, first?: Field): void {
    budget(n - j);
    const rest: Field[] = fields.slice(j);
    if (first) rest[0] = first;
    attempt(() => withVia(ctx, label, () => w.runFields(rest, call.env, call.cwd, clone(call.st), ctx, call.span, NO_STDIN, call.wrapDepth + 1)));
  }

  /** A string argument that may be a command line: walked if it parses (a message that does not is text). */
  function script(text: string): void {
    budget(1 + (text.length >> 4));
    try {
      parse(text);
    } catch (err) {
      if (err instanceof ParseError) return;
      throw err;
    }
    attempt(() => w.runScript({ value: text, known: true }, label, call.cwd, call.env, call.st, ctx, call.span));
  }

  /**
   * A guess that runs into something the walker refuses (a nested string that does not parse, a script
   * file it cannot read) keeps what it found before that and drops the rest: it was a guess. The step
   * budget is the exception: past it, the line is refused.
   */
  function attempt(walk: () => void): void {
    try {
      walk();
    } catch (err) {
      if (!(err instanceof NestedParseError) || ctx.nodes > ctx.maxNodes) throw err;
    }
  }
}
