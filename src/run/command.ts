// What `offhost run -- …` runs, as it was typed: one word after `--` is a shell line (bash -c LINE, as
// today and as the doors' rewrites give it); several words are an argv, passed on word for word, here and
// on the VM, exactly as sudo, env, timeout or nohup do. The guard judges an argv as the line that quotes
// each word once (quoteArgv), which a shell splits back into the same words.
import { quoteArgv } from '../routes/quote.js';

export interface TypedCommand {
  /** The line the guard judges (and the record shows): the typed line, or the argv quoted. */
  line: string;
  /** Set when several words were given: run as they are, without a shell. */
  argv?: string[];
}

export function commandOf(words: readonly string[]): TypedCommand {
  if (words.length === 1) return { line: words[0]! };
  return { line: quoteArgv(words), argv: [...words] };
}

/** The argv that runs the command: the typed argv, or bash -c LINE. */
export function commandArgv(c: TypedCommand): string[] {
  return c.argv ?? ['bash', '-c', c.line];
}
