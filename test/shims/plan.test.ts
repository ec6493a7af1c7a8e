// Which programs get shims, and when a shim may skip the judge.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cwdPrefix, planShims, requiredText } from '../../src/shims/plan.js';
import { builtinLayer } from '../../src/config/builtin.js';
import { compiledMatch } from '../../src/policy/rule.js';

let base: string;
beforeAll(() => {
  base = realpathSync(mkdtempSync(join(tmpdir(), 'offhost-plan-')));
});
afterAll(() => rmSync(base, { recursive: true, force: true }));

describe('cwdPrefix', () => {
  it('reads the fixed directory a cwd glob requires, and refuses when an alternation encloses it', () => {
    const koda = compiledMatch(builtinLayer().rules.find((r) => r.id === 'koda-make')!).cwd!;
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
  it('shims what deny/reroute rules name, not runtimes; each program\'s fast path holds what its rules need', () => {
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
    // A browser: heavy only with a headless/automation flag or MOZ_HEADLESS (headless-browser).
    const chromium = plan.programs.find((p) => p.name === 'chromium')!.fast!;
    expect(chromium.longFlags).toEqual(expect.arrayContaining(['--headless', '--screenshot', '--remote-debugging-port']));
    expect(chromium.dashWords).toEqual(expect.arrayContaining(['-headless', '-marionette']));
    expect(chromium.env).toEqual(['MOZ_HEADLESS']);
    expect(chromium.dirs).toEqual([]);
    // Subcommands: lb build, playwright test (and screenshot, pdf...); emulator -avd or @NAME.
    expect(plan.programs.find((p) => p.name === 'lb')!.fast!.words).toEqual(['build']);
    expect(plan.programs.find((p) => p.name === 'playwright')!.fast!.words).toEqual(expect.arrayContaining(['test', 'screenshot']));
    const emulator = plan.programs.find((p) => p.name === 'emulator')!.fast!;
    expect([emulator.dashWords, emulator.longFlags, emulator.contains]).toEqual([['-avd'], ['--avd'], ['@']]);
    // Heavy at every start but --help/--version (xvfb-run, qemu), or running commands where no shim
    // sees them (docker: in a container): always judged.
    for (const n of ['xvfb-run', 'qemu-system-x86_64', 'docker']) expect(plan.programs.find((p) => p.name === n)!.fast, n).toBeNull();

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
    // ... keeps a fast path that also sends `bench` to the judge, anywhere.
    expect(p2.programs.find((p) => p.name === 'make')!.fast!.contains).toEqual(['bench']);
    // A rule with nothing a shim can test without judging: no fast path.
    writeFileSync(
      join(proj, 'offhost.config.yaml'),
      ['rules:', '  - id: any-make', '    description: make anywhere', '    policy: R1', '    decision: deny', '    message: no', '    match: { program: [make] }', '    examples: { match: [make x], not_match: [gcc] }', ''].join('\n'),
    );
    expect(planShims({ cwd: proj, env }).programs.find((p) => p.name === 'make')!.fast).toBeNull();
    expect(p2.configs).toEqual([join(proj, 'offhost.config.yaml')]);
  });
});

describe('requiredText', () => {
  it('finds the text every match of a glob contains, or null', () => {
    expect(requiredText({ literal: 'connectedCheck' })).toBe('connectedCheck');
    expect(requiredText({ source: '^(?:.*?AndroidTest)$', flags: '' })).toBe('AndroidTest');
    expect(requiredText({ source: '^(?:.*?:allDevices.*?\\/?)$', flags: '' })).toBe(':allDevices');
    expect(requiredText({ source: '^(?:x|y)$', flags: '' })).toBeNull();
    expect(requiredText({ source: '^(?:ab?c)$', flags: '' })).toBe('a');
    expect(requiredText({ source: '^(?:(?!(?:^|\\/)).)*$', flags: '', prefix: '@' })).toBe('@');
    expect(requiredText({ source: '^[a-z]+$', flags: '' })).toBeNull();
  });
});
