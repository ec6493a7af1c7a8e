// Which programs get shims, and when a shim may skip the judge.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cwdPrefix, planShims } from '../../src/shims/plan.js';
import { builtinLayer } from '../../src/config/builtin.js';

let base: string;
beforeAll(() => {
  base = realpathSync(mkdtempSync(join(tmpdir(), 'offhost-plan-')));
});
afterAll(() => rmSync(base, { recursive: true, force: true }));

describe('cwdPrefix', () => {
  it('reads the fixed directory a cwd glob requires, and refuses when an alternation encloses it', () => {
    const koda = builtinLayer().rules.find((r) => r.id === 'koda-make')!.match.cwd!;
    const vars = { koda: '/home/u/dev/koder/engines/lang/koda' };
    expect(koda.map((g) => cwdPrefix(g, vars))).toEqual([vars.koda, vars.koda]);
    expect(cwdPrefix({ literal: '/srv/x' }, {})).toBe('/srv/x');
    expect(cwdPrefix({ literal: 'relative' }, {})).toBeNull();
    expect(cwdPrefix({ source: '^(?:\\/a\\/b|\\/c)$', flags: '' }, {})).toBeNull();
    expect(cwdPrefix({ source: '^(?:.*\\/koda)$', flags: '' }, {})).toBeNull();
    expect(cwdPrefix({ source: '^(?:\\/srv\\/eng(?:\\/.*)?)$', flags: '' }, {})).toBe('/srv/eng');
    expect(cwdPrefix({ source: '^\\/srv\\/engx?$', flags: '' }, {})).toBe('/srv/eng');
  });
});

describe('planShims', () => {
  it('shims what deny/reroute rules name, not runtimes; make has a fast path under the built-in pack only', () => {
    const home = join(base, 'home');
    mkdirSync(join(home, 'dev', 'koder', 'engines', 'lang', 'koda'), { recursive: true });
    const env = { HOME: home, PATH: '/nonexistent' };
    const plan = planShims({ cwd: home, env });
    const names = plan.programs.map((p) => p.name);
    expect(names).toEqual(expect.arrayContaining(['make', 'gmake', 'emulator', 'qemu-system-x86_64', 'chromium', 'xvfb-run', 'lb', 'playwright']));
    expect(names).not.toContain('python3');
    expect(names).not.toContain('node');
    const make = plan.programs.find((p) => p.name === 'make')!;
    expect(make.fast?.dirs.map((d) => [d.spelled, d.existed])).toEqual([[join(home, 'dev', 'koder', 'engines', 'lang', 'koda'), true]]);
    expect(plan.programs.find((p) => p.name === 'chromium')!.fast).toBeNull();

    // A project rule for make that holds in any directory: make loses its fast path.
    const proj = join(base, 'proj');
    mkdirSync(proj, { recursive: true });
    writeFileSync(
      join(proj, 'offhost.config.yaml'),
      [
        'rules:',
        '  - id: bench-make',
        '    description: make bench anywhere',
        '    policy: R1',
        '    decision: deny',
        '    message: benchmarks run on a VM',
        '    match: { program: [make], positional: { any: [bench] } }',
        '    examples: { match: [make bench], not_match: [make clean] }',
        '',
      ].join('\n'),
    );
    const p2 = planShims({ cwd: proj, env });
    expect(p2.programs.find((p) => p.name === 'make')!.fast).toBeNull();
    expect(p2.configs).toEqual([join(proj, 'offhost.config.yaml')]);
  });
});
