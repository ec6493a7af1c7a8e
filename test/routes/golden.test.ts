// Golden tests: the exact command lines (fixtures/routes/golden.json), starting with the built-in Koda
// route of POLICY R8.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { BUILTIN_VMS, renderJob, renderLine, type VmSpec } from '../../src/routes/index.js';

interface GoldenCase {
  name: string;
  vm: string | VmSpec;
  line?: string;
  argv?: string[];
  cwd: string;
  env?: Record<string, string>;
  expect: string;
}

const file = fileURLToPath(new URL('../../fixtures/routes/golden.json', import.meta.url));
const cases = (JSON.parse(readFileSync(file, 'utf8')) as { cases: GoldenCase[] }).cases;

describe('golden renderings', () => {
  it('the built-in Koda route is incus dev-linux-koda behind ssh khost1', () => {
    expect(BUILTIN_VMS['s.khost1.dev-linux-koda']).toEqual({
      id: 's.khost1.dev-linux-koda',
      backend: 'incus',
      host: 'khost1',
      instance: 'dev-linux-koda',
      sync: 'shared', // R6: the monorepo is bind-mounted at the same path (offhost run verifies it)
    });
  });

  it('Koda: make build-safe renders exactly (ssh re-splits once, so the bash -c script is quoted for it)', () => {
    expect(renderLine(BUILTIN_VMS['s.khost1.dev-linux-koda']!, 'make build-safe', '/home/koder/dev/koder/engines/lang/koda')).toBe(
      `ssh khost1 -- incus exec dev-linux-koda --cwd /home/koder/dev/koder/engines/lang/koda -- bash -c "'make build-safe'"`,
    );
  });

  it.each(cases)('$name', (c) => {
    const vm = typeof c.vm === 'string' ? BUILTIN_VMS[c.vm]! : c.vm;
    expect(vm, `unknown VM ${String(c.vm)}`).toBeDefined();
    const got = c.line !== undefined ? renderLine(vm, c.line, c.cwd, c.env) : renderJob(vm, { argv: c.argv!, cwd: c.cwd, env: c.env ?? {} });
    expect(got).toBe(c.expect);
  });
});
