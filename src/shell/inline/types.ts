// The one interface of the inline-code readers (src/shell/inline/<language>.ts): what a runtime's literal
// code starts. Each reader is a cheap tokenizer for one language, not a parser of it: it finds the calls
// that spawn a process (os.system, subprocess.run, child_process.execSync, perl's system/exec/qx, ruby's
// system/spawn/backticks...) and reads their arguments where they are literals. What it cannot follow
// (a computed string, a call it cannot delimit) it reports as unknown, never as nothing.

/** A value in the code: a literal (known), or an expression offhost cannot evaluate. */
export interface Piece {
  value: string;
  known: boolean;
}

/** One process the code starts, in the directory it starts in (`cwd`: relative to the code's own, when set). */
export type Spawned =
  /** A command line handed to a shell (`os.system("make")`, `execSync("…")`, backticks, `system "make build"`). */
  | { kind: 'shell'; call: string; text: Piece; cwd?: Piece }
  /** An argv run directly; `argv[0]` is the file run (execv's path, perl's `exec {PROG}`), not the name it is given. */
  | { kind: 'argv'; call: string; argv: Piece[]; cwd?: Piece }
  /** A spawn whose command cannot be read (`os.system(cmd)`, `spawn(prog)`); `argvDerived`: it comes from the code's own arguments. */
  | { kind: 'unknown'; call: string; argvDerived: boolean; cwd?: Piece };

export interface InlineLanguage {
  /** The language, for messages (`python`, `node`, `perl`, `ruby`). */
  name: string;
  /** The processes `code` starts, in the order it starts them (a `chdir` before a spawn moves it). */
  spawns(code: string): Spawned[];
}
