// Where offhost runs (src/config/role.ts): --role, else OFFHOST_ROLE, else the config's role, else ci
// when CI is true and the caller (a CI command) asked for that, else laptop. A bad value is an error, never
// a default.
import { describe, expect, it } from 'vitest';
import { resolveRole } from '../../src/config/role.js';
import type { Role } from '../../src/types.js';

describe('resolveRole', () => {
  it.each([
    ['nothing set', undefined, {}, undefined, 'laptop'],
    ['--role first', 'vm', { OFFHOST_ROLE: 'ci', CI: 'true' }, 'laptop', 'vm'],
    ['OFFHOST_ROLE over the config', undefined, { OFFHOST_ROLE: 'vm', CI: 'true' }, 'ci', 'vm'],
    ['an empty OFFHOST_ROLE counts as unset', undefined, { OFFHOST_ROLE: '' }, 'vm', 'vm'],
    ['the config over CI', undefined, { CI: 'true' }, 'laptop', 'laptop'],
    ['CI=true', undefined, { CI: 'true' }, undefined, 'ci'],
    ['CI=1', undefined, { CI: '1' }, undefined, 'ci'],
    ['CI=TRUE (any case)', undefined, { CI: 'TRUE' }, undefined, 'ci'],
    ['CI=false is not CI', undefined, { CI: 'false' }, undefined, 'laptop'],
    ['CI=yes is not CI', undefined, { CI: 'yes' }, undefined, 'laptop'],
  ] as const)('%s (a CI command)', (_what, flag, env, configRole, expected) => {
    expect(resolveRole(flag, env as NodeJS.ProcessEnv, configRole as Role | undefined, true)).toBe(expected);
  });

  it.each([
    ['CI=true', { CI: 'true' }],
    ['CI=1', { CI: '1' }],
    ['CI=TRUE', { CI: 'TRUE' }],
  ] as const)('a bare %s leaves the doors and check on laptop', (_what, env) => {
    expect(resolveRole(undefined, env as NodeJS.ProcessEnv, undefined)).toBe('laptop');
    expect(resolveRole(undefined, { ...env, OFFHOST_ROLE: 'ci' } as NodeJS.ProcessEnv, undefined)).toBe('ci');
  });

  it.each([
    ['--role', 'desktop', {}, "--role must be one of laptop, vm, ci (got 'desktop')"],
    ['OFFHOST_ROLE', undefined, { OFFHOST_ROLE: 'server' }, "OFFHOST_ROLE must be one of laptop, vm, ci (got 'server')"],
  ] as const)('a bad %s is a ConfigError', (_what, flag, env, message) => {
    expect(() => resolveRole(flag, env as NodeJS.ProcessEnv, undefined)).toThrow(message);
  });
});
