// What a program module says a call runs (the wrapper stripped, a script, a package script...): the one
// currency between the program modules (programs/*) and the walker (walk-state.ts, commands.ts).
import type { Field } from './expand.js';
import type { ContainerView } from './container-view.js';

export type Unwrapped =
  /** Run `argv` (the wrapper stripped), with extra env / cwd; `extraUnknownArg`: args come from stdin. */
  | {
      kind: 'run';
      via: string;
      argv: Field[];
      env?: [string, Field][];
      cwd?: Field;
      extraUnknownArg?: boolean;
      cwdUnknown?: boolean;
      /** The directory is already absolute and final (git's top level): not resolved against the caller's. */
      absoluteCwd?: string | null;
      /** Runs inside a container on this laptop: walked in its coordinates (src/shell/container-view.ts). */
      container?: ContainerView;
    }
  /** A string that a shell parses and runs (`bash -c`, `eval`, `env -S`, `watch`, `su -c`, `npx -c`...). */
  | { kind: 'script'; via: string; text: Field; cwd?: Field; absoluteCwd?: string | null; cwdUnknown?: boolean; container?: ContainerView }
  /** A shell that reads its script from standard input. */
  | { kind: 'stdin-script'; via: string }
  /**
   * A script file run by a shell (`bash run.sh a b`) or sourced into this one (`. ./env.sh`): the walker
   * reads it when it has file access (the guard gives it the disk), judged as the shell itself otherwise.
   */
  | { kind: 'file-script'; via: string; file: Field; args: Field[]; sourced: boolean; foreign?: boolean }
  /**
   * `npm run e2e`, `npm test`, `pnpm build`, `yarn e2e`, `bun run e2e`: a package.json script. `fallback`
   * is what runs when the package has no such script (yarn, pnpm and bun then run the binary).
   */
  | { kind: 'package-script'; via: string; script: Field; args: Field[]; dir?: Field; workspaces?: WorkspaceSelection; shell?: Field; fallback: Unwrapped }
  /** Several commands (find with several -exec). */
  | { kind: 'many'; items: Unwrapped[] }
  /** Not a wrapper, or a wrapper that runs nothing here (`command -v make`, `sudo -l`). */
  | { kind: 'none' };

/** Which workspace packages a package-manager command runs in: all of them, or those named. */
export interface WorkspaceSelection {
  all: boolean;
  names: Field[];
}
