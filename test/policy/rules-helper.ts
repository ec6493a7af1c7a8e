// Rules and commands for the policy unit tests: a rule from the YAML a user would write (compiled and
// hydrated by the real config code), a SimpleCommand as the walker would hand it over.
import { parseConfigText } from '../../src/config/load.js';
import { layerFromConfig } from '../../src/config/pack.js';
import { resolveLayers } from '../../src/config/resolve.js';
import type { Rule } from '../../src/policy/match.js';
import type { SimpleCommand } from '../../src/types.js';

const HOME = '/home/u';

/** Rules from `rules:` entries (YAML, each `- id: …` block); routes r1/r2 on two VMs exist. */
export function rulesFrom(yamlRules: string, paths = ''): Rule[] {
  const text = `root: ~/mono\n${paths}vms:\n  - { id: s.h1.dev-a, backend: incus, host: h1 }\n  - { id: s.h1.dev-b, backend: incus, host: h1 }\nroutes:\n  r1: { vms: [s.h1.dev-a] }\n  r2: { vms: [s.h1.dev-b] }\nrules:\n${yamlRules}`;
  return resolveLayers([layerFromConfig(parseConfigText(text, 'test.yaml'), 'test.yaml', text)], { HOME }).rules;
}

/** One rule with this `match:` (a YAML flow mapping) and decision. */
export function ruleWith(match: string, opts: { id?: string; decision?: 'allow' | 'deny' | 'reroute'; route?: string; roles?: string; unknown?: string } = {}): Rule {
  const id = opts.id ?? 'under-test';
  const decision = opts.decision ?? 'deny';
  const lines = [
    `  - id: ${id}`,
    '    description: A thing under test.',
    '    policy: R1',
    `    decision: ${decision}`,
    ...(decision === 'reroute' ? [`    route: ${opts.route ?? 'r1'}`] : []),
    ...(opts.roles ? [`    roles: ${opts.roles}`] : []),
    ...(opts.unknown ? [`    unknown: ${opts.unknown}`] : []),
    `    message: ${id} decided.`,
    `    match: ${match}`,
    // The self-test of examples is not run here (that is load-config's job): any example will do.
    '    examples: { match: [x] }',
  ];
  return rulesFrom(lines.join('\n') + '\n')[0]!;
}

/** A command: argv with `?` marking a word that is not statically known. */
export function cmd(argv: string[], over: Partial<SimpleCommand> = {}): SimpleCommand {
  const unknown = argv.flatMap((a, i) => (a.startsWith('?') ? [i] : []));
  const words = argv.map((a) => (a.startsWith('?') ? a.slice(1) : a));
  const program = unknown.includes(0) ? null : (words[0]!.split('/').pop() ?? null);
  return { program, argv: words, unknown, env: {}, cwd: `${HOME}/mono`, via: [], span: { start: 0, end: 1 }, ...over };
}
