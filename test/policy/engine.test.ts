// The decision for one line (src/policy/engine.ts): per command, the strictest rule that acts in the role
// (deny > reroute > allow, the earlier rule on a tie); across the line, the strictest again; two
// reroutes to different routes deny; `unknown: deny` turns a maybe into a refusal that says why.
import { describe, expect, it } from 'vitest';
import { decide, decideCommand } from '../../src/policy/engine.js';
import { cmd, rulesFrom } from './rules-helper.js';

const rule = (id: string, program: string, decision: string, extra = '') =>
  `  - id: ${id}\n    description: A ${id} run.\n    policy: R1\n    decision: ${decision}\n${decision === 'reroute' ? `    route: ${id.endsWith('2') ? 'r2' : 'r1'}\n` : ''}${extra}    message: ${id} decided.\n    match: { program: ${program} }\n    examples: { match: [x] }\n`;

const RULES = rulesFrom(
  rule('allow-make', 'make', 'allow') +
    rule('build', 'make', 'reroute', '    unknown: deny\n') +
    rule('qemu', '"qemu-*"', 'deny') +
    rule('emu2', 'emulator', 'reroute') +
    rule('ci-only', 'deploy', 'deny', '    roles: [ci]\n') +
    rule('later-tie', 'make', 'reroute'),
);

describe('decideCommand: one command', () => {
  it.each([
    ['no rule: allow, with the reason', cmd(['ls']), 'laptop', { decision: 'allow', rule: null }],
    ['the strictest rule wins (reroute over allow)', cmd(['make']), 'laptop', { decision: 'reroute', rule: 'build' }],
    ['deny', cmd(['qemu-system-x86_64']), 'laptop', { decision: 'deny', rule: 'qemu' }],
    ['a rule for another role does not act', cmd(['deploy']), 'laptop', { decision: 'allow', rule: null }],
    ['… and acts in its role', cmd(['deploy']), 'ci', { decision: 'deny', rule: 'ci-only' }],
  ] as const)('%s', (_what, command, role, expected) => {
    const d = decideCommand(command, RULES, role);
    expect({ decision: d.decision, rule: d.rule?.id ?? null }).toEqual(expected);
  });

  it('on a tie the earlier rule decides', () => {
    // `build` and `later-tie` both reroute make: build comes first in the pack.
    expect(decideCommand(cmd(['make']), RULES, 'laptop').rule?.id).toBe('build');
  });

  it('unknown: deny turns a maybe into a deny that names what is unknown', () => {
    const rules = rulesFrom(rule('koda', 'make', 'reroute', '    unknown: deny\n').replace('match: { program: make }', 'match: { program: make, positional: { any: [build] } }'));
    const d = decideCommand(cmd(['make', '?$T']), rules, 'laptop');
    expect(d).toMatchObject({ decision: 'deny', unknown: true });
    expect(d.reason).toMatch(/^offhost cannot tell statically whether `make \$T` is a koda run: an argument comes from a variable/);
    const inCwd = decideCommand(cmd(['make', 'build'], { cwd: null }), rulesFrom(rule('k', 'make', 'reroute', '    unknown: deny\n').replace('match: { program: make }', 'match: { program: make, cwd: "{root}/e/**" }')), 'laptop');
    expect(inCwd.reason).toMatch(/the working directory comes from a variable/);
  });

  it('a maybe is ignored for a command that only counts when certain (Makefile recipes)', () => {
    const rules = rulesFrom(rule('koda', 'make', 'reroute', '    unknown: deny\n').replace('match: { program: make }', 'match: { program: make, positional: { any: [build] } }'));
    expect(decideCommand(cmd(['make', '?$T'], { certainOnly: true }), rules, 'laptop')).toMatchObject({ decision: 'allow', rule: null });
  });
});

describe('decide: one line', () => {
  it.each([
    ['no command', [], { decision: 'allow', rule: null, reason: 'the line runs no command', route: null }],
    ['allow + allow', [cmd(['ls']), cmd(['cat', 'x'])], { decision: 'allow', rule: null }],
    ['the strictest command decides', [cmd(['ls']), cmd(['make']), cmd(['qemu-img'])], { decision: 'deny', rule: 'qemu' }],
    ['a reroute carries its route', [cmd(['ls']), cmd(['make'])], { decision: 'reroute', rule: 'build', route: 'r1' }],
    ['two reroutes to the same route: one reroute', [cmd(['make']), cmd(['make', 'test'])], { decision: 'reroute', route: 'r1' }],
    ['two routes in one line: deny', [cmd(['make']), cmd(['emulator'])], { decision: 'deny', rule: 'multiple-routes', route: null }],
  ] as const)('%s', (_what, commands, expected) => {
    expect(decide([...commands], RULES, 'laptop')).toMatchObject(expected);
  });

  it('the multiple-routes refusal names both routes', () => {
    expect(decide([cmd(['make']), cmd(['emulator'])], RULES, 'laptop').reason).toBe('this line needs more than one VM (routes r1, r2); split it into one command line per route');
  });

  it('on an allow tie, a command some rule allowed explains the verdict better than one no rule knew', () => {
    const d = decide([cmd(['ls']), cmd(['make'])], rulesFrom(rule('allow-make', 'make', 'allow')), 'laptop');
    expect(d).toMatchObject({ decision: 'allow', rule: 'allow-make' });
  });

  it('every command keeps its own decision', () => {
    const d = decide([cmd(['ls']), cmd(['make'])], RULES, 'laptop');
    expect(d.commands.map((c) => [c.command.argv[0], c.decision, c.rule?.id ?? null])).toEqual([
      ['ls', 'allow', null],
      ['make', 'reroute', 'build'],
    ]);
  });
});
