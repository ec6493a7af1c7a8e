// offhost rules list [--json] | offhost rules test   (rules in force: built-in pack + config layers)
import { EXIT, UsageError } from '../../errors.js';
import { formatHelp } from '../help.js';
import type { Io } from '../../io.js';
import { parseOptions } from '../common.js';
import { didYouMean } from '../suggest.js';
import { loadConfig } from '../../config/load-config.js';
import { selfTest } from '../../policy/guard.js';

const USAGE = 'Usage: offhost rules [list|test] [options]';

export async function run(args: string[], io: Io): Promise<number> {
  const { values, positionals } = parseOptions(args, { json: { type: 'boolean' }, config: { type: 'string' }, help: { type: 'boolean', short: 'h' } }, USAGE);
  if (values.help) {
    io.stdout(
      formatHelp({
        usage: [USAGE.replace(/^Usage: /, '')],
        description: 'The rules in force: the built-in pack, then each configuration layer over it.',
        subcommands: [
          ['list', 'one line per rule: id, POLICY item, decision and route, description (the default)'],
          ['test', "checks every rule's examples against the rule itself (match / not_match)"],
        ],
        options: [
          ['--json', 'list: print the rules as JSON'],
          ['--config <file>', 'configuration file (default: offhost.config.yaml found upwards, plus the user config)'],
        ],
        exit: '0; test: 1 when an example fails; 2 usage or config error.',
        examples: ['offhost rules', 'offhost rules test --config offhost.config.yaml'],
      }),
    );
    return EXIT.ok;
  }
  const sub = positionals[0] ?? 'list';
  const config = loadConfig({ cwd: io.cwd, env: io.env, ...(values.config !== undefined ? { configFile: values.config } : {}) });
  if (sub === 'list') {
    if (values.json) {
      io.stdout(JSON.stringify(config.rules.map((r) => ({ id: r.id, policy: r.policy, decision: r.decision, route: r.route ?? null, roles: r.roles, description: r.description, message: r.message, source: r.source ?? null })), null, 2) + '\n');
      return EXIT.ok;
    }
    const w = Math.max(...config.rules.map((r) => r.id.length));
    for (const r of config.rules) {
      io.stdout(`${r.id.padEnd(w)}  ${r.policy.padEnd(3)} ${(r.decision + (r.route ? ` -> ${r.route}` : '')).padEnd(18)} ${r.description}\n`);
    }
    io.stdout(`\n${config.rules.length} rules from ${config.sources.join(' < ')}\n`);
    return EXIT.ok;
  }
  if (sub === 'test') {
    const failures = selfTest(config);
    const total = config.rules.reduce((n, r) => n + r.examples.match.length + (r.examples.not_match?.length ?? 0), 0);
    for (const f of failures) {
      io.stdout(`${f.source?.file ?? ''}${f.source?.line ? `:${f.source.line}` : ''}: ${f.rule}: ${f.problem}: ${f.kind} \`${f.line}\` (cwd ${f.cwd})\n`);
    }
    io.stdout(`${total - failures.length} passed, ${failures.length} failed (${config.rules.length} rules, examples checked against their own rule)\n`);
    return failures.length ? EXIT.findings : EXIT.ok;
  }
  throw new UsageError(`unknown subcommand '${sub}'${didYouMean(sub, ['list', 'test'])}; \`offhost rules --help\` lists them`);
}
