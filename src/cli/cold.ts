// Loading a cold subcommand (one not needed before every agent command). From source (tests) these are
// ordinary dynamic imports; the build swaps this module for one that imports dist/commands/<name>.mjs
// through the loader (dist/offhost.cjs), since the hot bundle runs from V8's code cache in a vm.Script.
import type { CommandModule } from './io.js';

export function loadCold(name: string): Promise<CommandModule> {
  switch (name) {
    case 'rules':
      return import('./commands/rules.js');
    case 'lock':
      return import('./commands/lock.js');
    case 'run':
      return import('./commands/run.js');
    case 'runs':
      return import('./commands/runs.js');
    case 'lint':
      return import('./commands/lint.js');
    case 'init':
      return import('./commands/init.js');
    case 'scan':
      return import('./commands/scan.js');
    case 'hook':
      return import('./commands/hook.js');
    case 'ci':
      return import('./commands/ci.js');
    default:
      return Promise.reject(new Error(`no command ${name}`));
  }
}
