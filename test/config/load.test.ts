// One config file read and checked (src/config/load.ts): every problem is a ConfigError naming the file
// and, where the problem has a place, its line and column; nothing is defaulted.
import { describe, expect, it } from 'vitest';
import { parseConfigText } from '../../src/config/load.js';
import { ConfigError } from '../../src/errors.js';

const FILE = '/proj/offhost.config.yaml';

function errorOf(text: string): ConfigError {
  try {
    parseConfigText(text, FILE);
  } catch (e) {
    if (e instanceof ConfigError) return e;
    throw e;
  }
  throw new Error('expected a ConfigError');
}

const RULE = (over: string) =>
  `rules:\n  - id: heavy\n    description: d\n    policy: R1\n    message: m\n    match: { program: make }\n    examples: { match: [make] }\n${over}`;

describe('schema and YAML errors carry file:line:column', () => {
  it.each([
    ['a list, not a mapping', '- a\n- b\n', 1, 1, /must be a YAML mapping/],
    ['a bare scalar', 'hello\n', 1, 1, /must be a YAML mapping/],
    ['broken YAML', 'role: laptop\nvms: [\n', 3, 1, /invalid YAML: Flow sequence/],
    ['a key given twice', 'role: laptop\nrole: vm\n', 2, 1, /invalid YAML: Map keys must be unique/],
    ['an unknown key, on its own line', 'role: laptop\nrols: vm\n', 2, 1, /Unrecognized key: "rols"/],
    ['an unknown nested key', 'hook:\n  mode: rewrite\n  moed: suggest\n', 3, 3, /hook: Unrecognized key: "moed"/],
    ['a role that does not exist', '\nrole: desktop\n', 2, 7, /^role: Invalid option/],
    ['a production container as a VM (R2)', 'vms:\n  - id: s.khost1.flow\n    backend: incus\n', 2, 9, /vms\.0\.id: a test VM id is s\.<host>/],
    ['an unknown backend', 'vms:\n  - id: s.khost1.dev-x\n    backend: vmware\n', 3, 14, /vms\.0\.backend: Invalid option/],
    ['a route with no VM', 'routes:\n  koda:\n    vms: []\n', 3, 10, /routes\.koda\.vms: Too small/],
    ['a rule id with capitals', RULE('    decision: deny\n').replace('id: heavy', 'id: Heavy_1'), 2, 9, /rules\.0\.id: a rule id is lowercase/],
    ['a reroute rule without a route', RULE('    decision: reroute\n'), 2, 5, /rules\.0\.route: a reroute rule names a route/],
    ['an empty match', RULE('    decision: deny\n').replace('match: { program: make }', 'match: {}'), 6, 12, /rules\.0\.match: a match needs at least one condition/],
    ['a rule without examples', RULE('    decision: deny\n').replace('    examples: { match: [make] }\n', ''), 2, 5, /rules\.0\.examples/],
    ['a negative skew', 'locks:\n  skew_seconds: -1\n', 2, 17, /locks\.skew_seconds: Too small/],
    // Passed to git ls-remote/fetch/push as the repository: it must never be read as an option (--upload-pack runs a command).
    ['a lock remote that git would read as an option', 'locks:\n  remote: "--upload-pack=touch pwned"\n', 2, 11, /locks\.remote: a remote's name or URL, not starting with '-'/],
  ] as const)('%s', (_what, text, line, column, message) => {
    const e = errorOf(text);
    expect(e.file).toBe(FILE);
    expect({ line: e.line, column: e.column }).toEqual({ line, column });
    expect(e.message.startsWith(`${FILE}:${line}:${column}: `)).toBe(true);
    expect(e.message.slice(`${FILE}:${line}:${column}: `.length)).toMatch(message);
  });

  it('a NUL byte: the file is not a config, named without a line', () => {
    const e = errorOf('role: laptop\0\n');
    expect(e.file).toBe(FILE);
    expect(e.line).toBeUndefined();
    expect(e.message).toBe(`${FILE}: the file contains a NUL byte; it is not a YAML config`);
  });
});

describe('valid files', () => {
  it.each([
    ['an empty file is an empty config', '', {}],
    ['comments only', '# nothing here\n', {}],
    ['scalars as written (~ is expanded later, when layering)', 'role: vm\nroot: ~/dev\n', { role: 'vm', root: '~/dev' }],
    ['a glob or a list of globs: always a list', RULE('    decision: deny\n'), { rules: [expect.objectContaining({ id: 'heavy', match: { program: ['make'] } })] }],
  ] as const)('%s', (_what, text, expected) => {
    expect(parseConfigText(text, FILE)).toEqual(expected);
  });
});
