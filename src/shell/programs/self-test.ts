// Checks every program module's examples (run at build time by scripts/compile-builtin.ts and by
// test/shell/programs.test.ts): a module cannot ship with an example its own walk contradicts.
import { parse } from '../parser.js';
import { commandsOf } from '../commands.js';
import { everyProgramModule } from './index.js';
import type { ProgramExample } from './types.js';

const ROOT = '/home/koder/dev/koder';
const HOME = '/home/koder';

export interface ProgramExampleFailure {
  family: string;
  kind: 'match' | 'not_match';
  example: ProgramExample;
  found: string[];
}

export function checkProgramExamples(): ProgramExampleFailure[] {
  const failures: ProgramExampleFailure[] = [];
  for (const m of everyProgramModule()) {
    for (const kind of ['match', 'not_match'] as const) {
      for (const ex of m.examples[kind]) {
        let cmds;
        try {
          cmds = commandsOf(parse(ex.line), ex.line, { cwd: ex.cwd ?? ROOT, env: { HOME } });
        } catch (err) {
          failures.push({ family: m.family, kind, example: ex, found: [`error: ${(err as Error).message}`] });
          continue;
        }
        const hit = cmds.some((c) => c.argv.join(' ') === ex.runs && (ex.in === undefined || c.cwd === ex.in) && (ex.info === undefined || !!c.infoOnly === ex.info));
        if (hit !== (kind === 'match')) failures.push({ family: m.family, kind, example: ex, found: cmds.map((c) => `${c.argv.join(' ')} @ ${c.cwd}${c.infoOnly ? ' (info)' : ''}`) });
      }
    }
  }
  return failures;
}
