// The program families of the registry, in lookup order (a module listed earlier wins a pattern match).
// From source and in dist/cold.cjs these are the modules themselves. The hot bundle is given a table in
// their place (scripts/lazy-families.mjs) whose entries load each family's own file, with its own code
// cache, the first time a command line names one of its programs: an agent's `git status` does not pay
// for tmux, docker and ssh (docs/BUILD.md). A family that other core code imports stays in the hot bundle.
import type { ProgramModule } from './types.js';
import { builtins, filesystem, fileReaders, inert } from './builtins.js';
import { shells, multicall } from './shells.js';
import { wrappers } from './wrappers.js';
import { schedulers } from './schedulers.js';
import { make } from './make.js';
import { makeWrappers } from './make-wrappers.js';
import { git } from './git.js';
import { ssh } from './ssh.js';
import { containers } from './containers.js';
import { packageRunners, monorepoRunners, packageFiles } from './package-runners.js';
import { interpreters } from './interpreters.js';
import { readerless } from './readerless.js';
import { pagers } from './pagers.js';
import { helperPrograms } from './helper-programs.js';
import { databaseShells } from './database-shells.js';
import { textTools } from './text-tools.js';
import { heavyPrograms, appLaunchers } from './heavy.js';
import { fvm } from './fvm.js';
import { runParts } from './run-parts.js';
import { installers } from './installers.js';
import { deno } from './deno.js';
import { just } from './just.js';
import { task } from './task.js';
import { nx } from './nx.js';

/** What the registry knows of a module before it is loaded: enough to find it by a program's name. */
export interface FamilyEntry {
  family: string;
  names: readonly string[];
  pattern?: RegExp;
  load(): ProgramModule;
}

export const MODULES: readonly ProgramModule[] = [
  builtins, filesystem, fileReaders, shells, multicall, wrappers, schedulers, make, makeWrappers, git, ssh, containers, packageRunners, monorepoRunners, packageFiles, interpreters, readerless, deno, pagers, helperPrograms, databaseShells, just, task, nx, textTools, appLaunchers, fvm, runParts, inert, installers, ...heavyPrograms,
];

export const FAMILIES: readonly FamilyEntry[] = MODULES.map((m) => ({ family: m.family, names: m.names, ...(m.pattern ? { pattern: m.pattern } : {}), load: () => m }));
