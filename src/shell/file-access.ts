// How the walker reads the files a line runs (scripts, package.json, Makefiles): through this interface
// only, so the walker does no I/O itself (the guard passes the disk: src/policy/disk-files.ts).

/** What reading a file gave: its text, or why there is none. */
export type FileRead = { kind: 'text'; text: string } | { kind: 'binary' } | { kind: 'missing' } | { kind: 'directory' } | { kind: 'unreadable'; why: string };

/**
 * Read access to files a line runs (`bash run.sh`, `./build.sh`, `npm run e2e`'s package.json). The walker
 * itself does no I/O: the guard passes the disk, tests may pass a table.
 */
export interface FileAccess {
  read(absolutePath: string): FileRead;
  /** The entries of a directory (for workspace globs like `apps/*`); null if it is not one. */
  list?(absoluteDir: string): string[] | null;
  /** The files of a directory that are not directories (run-parts runs them); null if it is not one. */
  listFiles?(absoluteDir: string): string[] | null;
  /**
   * The directory with its symbolic links resolved (itself when it cannot be). npm, just and deno look
   * for their files from the process's working directory, which is physical: from a symlinked checkout
   * (`~/koda-link` -> `…/engines/lang/koda`) the parents they search are the checkout's, not the link's.
   */
  physical?(absoluteDir: string): string;
  /**
   * How names in this directory compare, when not as plain text: a function giving each name its key (on a
   * case-insensitive volume, a Mac's APFS, vfat, a casefold directory: src/policy/case-rule.ts `foldCase`),
   * keeping every character's length. `echo … > RUN.sh; bash run.sh` then writes the file it runs.
   */
  nameKey?(absoluteDir: string): ((name: string) => string) | null;
}
