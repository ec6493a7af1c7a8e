// The registry of program modules: every program whose name changes how the walker goes is declared in
// one module here (see types.ts for the interface and docs/GUARD.md for how to add one). The walker asks
// `programFor(name)` and knows no program by name; the rule compiler asks `sharedList` / `sharedGrammar`.
import type { ProgramModule } from './types.js';
import { builtins, filesystem, fileReaders } from './builtins.js';
import { shells, multicall } from './shells.js';
import { wrappers } from './wrappers.js';
import { schedulers } from './schedulers.js';
import { make } from './make.js';
import { git } from './git.js';
import { ssh } from './ssh.js';
import { containers } from './containers.js';
import { packageRunners, monorepoRunners } from './package-runners.js';
import { interpreters } from './interpreters.js';
import { textTools } from './text-tools.js';
import { heavyPrograms, appLaunchers } from './heavy.js';
import { fvm } from './fvm.js';

export const MODULES: readonly ProgramModule[] = [
  builtins, filesystem, fileReaders, shells, multicall, wrappers, schedulers, make, git, ssh, containers, packageRunners, monorepoRunners, interpreters, textTools, appLaunchers, fvm, ...heavyPrograms,
];

const byName = new Map<string, ProgramModule>();
for (const m of MODULES) {
  for (const n of m.names) {
    const had = byName.get(n);
    // A heavy program's grammar never shadows a module that walks it.
    if (had && had.family !== 'heavy programs' && m.family !== 'heavy programs') throw new Error(`program registry: ${n} is declared by ${had.family} and ${m.family}`);
    if (!had || had.family === 'heavy programs') byName.set(n, m);
  }
}
const patterned = MODULES.filter((m) => m.pattern);
const cache = new Map<string, ProgramModule | null>();

/** The module that knows `name` (a basename), or null for a program that only runs itself. */
export function programFor(name: string): ProgramModule | null {
  const m = byName.get(name);
  if (m) return m;
  let c = cache.get(name);
  if (c === undefined) {
    c = patterned.find((p) => p.pattern!.test(name)) ?? null;
    if (cache.size < 10_000) cache.set(name, c);
  }
  return c;
}

export { sharedList, sharedGrammar } from './shared.js';
