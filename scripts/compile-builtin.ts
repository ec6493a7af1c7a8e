// Build step: load rules/builtin.yaml, validate it, compile its globs and run every rule's examples.
// A failing example stops the build: the pack cannot ship a rule that misses its own example.
import { loadLayer } from '../src/config/pack.js';
import { resolveLayers, type Layer } from '../src/config/resolve.js';
import { selfTest } from '../src/policy/guard.js';
import { checkProgramExamples } from '../src/shell/programs/self-test.js';
import { namesDeclaredTwice } from '../src/shell/programs/index.js';

export function compileBuiltin(file: string): Layer {
  const layer = loadLayer(file);
  const built: Layer = { ...layer, file: '<built-in>', rules: layer.rules.map((r) => ({ ...r, source: { file: 'rules/builtin.yaml', ...(r.source?.line ? { line: r.source.line } : {}) } })) };
  // Examples are checked with a fixed HOME, the one the policy names (~ = /home/koder).
  const config = resolveLayers([built], { HOME: '/home/koder' });
  const failures = selfTest(config);
  if (failures.length > 0) {
    const lines = failures.map((f) => `  ${f.source?.file ?? ''}:${f.source?.line ?? ''} ${f.rule}: ${f.problem}: ${f.kind} \`${f.line}\` (cwd ${f.cwd})`);
    throw new Error(`the built-in pack fails its own examples:\n${lines.join('\n')}`);
  }
  // The program registry's own examples (src/shell/programs/*): a module cannot ship contradicting them.
  const programFailures = checkProgramExamples();
  if (programFailures.length > 0) {
    const lines = programFailures.map((f) => `  ${f.family} ${f.kind}: \`${f.example.line}\` runs \`${f.example.runs}\`${f.example.in ? ` in ${f.example.in}` : ''}; found: ${f.found.join(' | ')}`);
    throw new Error(`the program registry fails its own examples:\n${lines.join('\n')}`);
  }
  const twice = namesDeclaredTwice();
  if (twice.length > 0) throw new Error(`program registry: names declared by two families that walk them: ${twice.join(', ')}`);
  return built;
}
