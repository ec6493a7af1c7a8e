// Matching one command against one rule (src/policy/match.ts): yes, no, or maybe when the answer depends
// on a word, a directory or a variable that cannot be known statically.
import { describe, expect, it } from 'vitest';
import { matchRule } from '../../src/policy/match.js';
import { cmd, ruleWith } from './rules-helper.js';

const ROOT = '/home/u/mono';

describe('matchRule', () => {
  it.each([
    // program
    ['program literal', '{ program: make }', cmd(['make']), 'yes'],
    ['program by basename of a path', '{ program: make }', cmd(['/usr/bin/make', 'all']), 'yes'],
    ['another program', '{ program: make }', cmd(['gmake']), 'no'],
    ['program glob', '{ program: "qemu-system-*" }', cmd(['qemu-system-x86_64']), 'yes'],
    ['a program that cannot be known is no, unless the rule says so', '{ program: make }', cmd(['?$CMD']), 'no'],
    // cwd
    ['cwd glob, inside', '{ program: make, cwd: "{root}/engines/**" }', cmd(['make'], { cwd: `${ROOT}/engines/lang` }), 'yes'],
    ['cwd glob, outside', '{ program: make, cwd: "{root}/engines/**" }', cmd(['make'], { cwd: `${ROOT}/apps` }), 'no'],
    ['cwd unknown', '{ program: make, cwd: "{root}/engines/**" }', cmd(['make'], { cwd: null }), 'maybe'],
    // subcommands and positionals
    ['subcommand', '{ program: flutter, subcommands: [test] }', cmd(['flutter', 'test', '-d', 'chrome']), 'yes'],
    ['another subcommand', '{ program: flutter, subcommands: [test] }', cmd(['flutter', 'build']), 'no'],
    ['subcommand unknown', '{ program: flutter, subcommands: [test] }', cmd(['flutter', '?$SUB']), 'maybe'],
    ['no subcommand at all', '{ program: flutter, subcommands: [test] }', cmd(['flutter']), 'no'],
    ['positional any', '{ program: make, positional: { any: [build, "build-*"] } }', cmd(['make', '-j4', 'build-safe']), 'yes'],
    ['positional or none, none given', '{ program: make, positional: { any: [build], or_none: true } }', cmd(['make', '-j4']), 'yes'],
    ['positional or none, another given', '{ program: make, positional: { any: [build], or_none: true } }', cmd(['make', 'clean']), 'no'],
    ['positional unknown', '{ program: make, positional: { any: [build] } }', cmd(['make', '?$T']), 'maybe'],
    ['positional ignored words', '{ program: make, positional: { ignore: ["*=*"], any: [build], or_none: true } }', cmd(['make', 'CC=clang']), 'yes'],
    ['an unknown word with a static prefix that settles it', '{ program: emulator, positional: { any: ["@*"] } }', cmd(['emulator', '?@$AVD'], { prefixes: { 1: '@' } }), 'yes'],
    // flags
    ['flag present', '{ program: emulator, flags: [{ names: -avd }] }', cmd(['emulator', '-avd', 'p']), 'yes'],
    ['flag absent', '{ program: emulator, flags: [{ names: -avd }] }', cmd(['emulator', '-list-avds']), 'no'],
    ['flag value', '{ program: flutter, value_options: [-d], flags: [{ names: [-d, --device-id], values: chrome }] }', cmd(['flutter', 'test', '-d', 'chrome']), 'yes'],
    ['flag value attached (--x=v)', '{ program: flutter, flags: [{ names: [--device-id], values: chrome }] }', cmd(['flutter', 'test', '--device-id=chrome']), 'yes'],
    ['flag value in a short cluster (-dchrome)', '{ program: flutter, value_options: [-d], flags: [{ names: -d, values: chrome }] }', cmd(['flutter', 'test', '-dchrome']), 'yes'],
    ['flag value another', '{ program: flutter, value_options: [-d], flags: [{ names: -d, values: chrome }] }', cmd(['flutter', 'test', '-d', 'linux']), 'no'],
    ['flag value unknown', '{ program: flutter, value_options: [-d], flags: [{ names: -d, values: chrome }] }', cmd(['flutter', 'test', '-d', '?$DEV']), 'maybe'],
    ['any_flag: one of them', '{ program: x, any_flag: [{ names: -a }, { names: -b }] }', cmd(['x', '-b']), 'yes'],
    ['not_flags rules it out', '{ program: emulator, not_flags: [-list-avds] }', cmd(['emulator', '-list-avds']), 'no'],
    ['after --, words are positionals, not flags', '{ program: emulator, flags: [{ names: -avd }] }', cmd(['emulator', '--', '-avd']), 'no'],
    // args, env, line
    ['args_contain', '{ program: docker, args_contain: "*playwright*" }', cmd(['docker', 'run', 'mcr.microsoft.com/playwright:v1']), 'yes'],
    ['args_contain unknown', '{ program: docker, args_contain: "*playwright*" }', cmd(['docker', 'run', '?$IMG']), 'maybe'],
    ['env set', '{ program: npm, env: { CI: "true" } }', cmd(['npm', 'test'], { env: { CI: 'true' } }), 'yes'],
    ['env not set', '{ program: npm, env: { CI: "true" } }', cmd(['npm', 'test']), 'no'],
    ['env unknown', '{ program: npm, env: { CI: "true" } }', cmd(['npm', 'test'], { unknownEnv: ['CI'] }), 'maybe'],
    ['line_contains for an unknown program, on one line', '{ program: "*", line_contains: "*make build*" }', cmd(['?$M', 'build'], { line: 'x=make\n$x   build' }), 'no'],
    // any_of
    ['any_of: one alternative', '{ any_of: [{ program: a }, { program: b }] }', cmd(['b']), 'yes'],
    ['any_of: none', '{ any_of: [{ program: a }, { program: b }] }', cmd(['c']), 'no'],
    ['any_of: maybe', '{ any_of: [{ program: a, cwd: "{root}/x/**" }, { program: b }] }', cmd(['a'], { cwd: null }), 'maybe'],
  ] as const)('%s', (_what, match, command, expected) => {
    expect(matchRule(ruleWith(match), command)).toBe(expected);
  });
});
