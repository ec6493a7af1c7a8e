// The run's probe results of the optional tools (test/helpers/tools.ts): one file per tool in a folder
// global-setup makes, shared by every worker of the run. Kept apart from tools.ts, which imports vitest's
// worker API: global-setup (the main process) reads this alone.
import { existsSync, readFileSync, readdirSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** A tool's problem as probed in this run (null: it works), or undefined when nobody probed it yet. */
export function readResult(dir: string, tool: string): string | null | undefined {
  const file = join(dir, `${tool}.json`);
  if (!existsSync(file)) return undefined;
  return (JSON.parse(readFileSync(file, 'utf8')) as { problem: string | null }).problem;
}

export function writeResult(dir: string, tool: string, problem: string | null): void {
  // Whole or not at all: a worker reading it meanwhile sees the file complete or absent.
  const file = join(dir, `${tool}.json`);
  const part = `${file}.${process.pid}`;
  writeFileSync(part, JSON.stringify({ problem }));
  renameSync(part, file);
}

/** The tools found missing in this run, with why. */
export function missingInRun(dir: string): [string, string][] {
  if (!existsSync(dir)) return [];
  const out: [string, string][] = [];
  for (const f of readdirSync(dir).filter((x) => x.endsWith('.json')).sort()) {
    const tool = f.replace(/\.json$/, '');
    const problem = readResult(dir, tool);
    if (problem) out.push([tool, problem]);
  }
  return out;
}
