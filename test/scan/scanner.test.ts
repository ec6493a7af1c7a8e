import { describe, expect, it } from 'vitest';
import { Scanner, scanSettings, logicalLines, DEFAULT_VM_GLOBS } from '../../src/adapters/scan.js';
import { calls, fakeClassify } from './fake-classify.js';

const env = { HOME: '/home/koder' };
const scanner = (over: Record<string, unknown> = {}) =>
  new Scanner({ classify: fakeClassify, settings: scanSettings({ scan: over }, env, 'meta/context/notices'), env });

describe('settings', () => {
  it('defaults, read defensively', () => {
    const s = scanSettings(undefined, env);
    expect(s.vmGlobs).toEqual(DEFAULT_VM_GLOBS);
    expect(s.laptopRoot).toBe('/home/koder/dev/koder');
    expect(s.dockerfileIsLaptop).toBe(true);
    const t = scanSettings({ root: '~/src/mono', scan: { vm_globs: ['x/**'], dockerfile_is_laptop: false, ignore: 'junk' } }, env);
    expect(t).toMatchObject({ vmGlobs: ['x/**'], dockerfileIsLaptop: false, laptopRoot: '/home/koder/src/mono' });
    expect(t.ignore.length).toBeGreaterThan(0);
  });
});

describe('Scanner', () => {
  it('reports a heavy command with position, rule and the rewrite', () => {
    const text = '#!/bin/bash\nset -e\necho "start"\nmake build-safe\n';
    const f = scanner().scan({ path: 'engines/lang/koda/build.sh', text });
    expect(f).toEqual([
      expect.objectContaining({
        file: 'engines/lang/koda/build.sh',
        line: 4,
        column: 1,
        ruleId: 'koda-make',
        severity: 'error',
        suggestion: 'offhost run -- make build-safe',
      }),
    ]);
    expect(f[0]!.message).toContain('shell script: `make build-safe` runs heavy work on the laptop');
    expect(calls.some((c) => c.cwd === '/home/koder/dev/koder/engines/lang/koda')).toBe(true);
  });

  it('reports only added lines when given', () => {
    const text = 'make build\necho ok\nmake kasm\n';
    expect(scanner().scan({ path: 'a.sh', text, lines: new Set([3]) }).map((f) => f.line)).toEqual([3]);
    expect(scanner().scan({ path: 'a.sh', text, lines: new Set([2]) })).toEqual([]);
  });

  it('does not flag files meant for the VM or CI, nor ignored files', () => {
    const wf = 'jobs:\n  b:\n    runs-on: ubuntu-latest\n    steps:\n      - run: make build-safe\n';
    expect(scanner().scan({ path: '.github/workflows/ci.yml', text: wf })).toEqual([]);
    expect(scanner().scan({ path: 'tools/vm/build.sh', text: 'make build\n' })).toEqual([]);
    expect(scanner().scan({ path: 'node_modules/x/a.sh', text: 'make build\n' })).toEqual([]);
    expect(scanner().scan({ path: 'meta/context/notices/vm-active/README.md', text: '```sh\nmake build\n```\n' })).toEqual([]);
    // ... unless the job runs on a laptop runner.
    const lap = 'jobs:\n  b:\n    runs-on: [self-hosted, laptop]\n    steps:\n      - run: make build-safe\n';
    expect(scanner({ laptop_runners: ['laptop'] }).scan({ path: '.github/workflows/ci.yml', text: lap })).toHaveLength(1);
    // ... or the config says workflows are not CI-only.
    expect(scanner({ vm_globs: [] }).scan({ path: '.github/workflows/ci.yml', text: wf })).toHaveLength(1);
  });

  it('skips Dockerfiles when configured', () => {
    const df = 'FROM x\nRUN make build\n';
    expect(scanner().scan({ path: 'Dockerfile', text: df })).toHaveLength(1);
    expect(scanner({ dockerfile_is_laptop: false }).scan({ path: 'Dockerfile', text: df })).toEqual([]);
  });

  it('falls back to one line at a time when a block does not parse', () => {
    const text = "```sh\nssh <host> 'echo\nmake build\n```\n";
    const f = scanner().scan({ path: 'README.md', text });
    expect(f.map((x) => [x.line, x.ruleId])).toEqual([[3, 'koda-make']]);
  });

  it('reports deny verdicts with the instruction, said once (the message has it: no suggestion repeating it)', () => {
    const f = scanner().scan({ path: 'run.sh', text: 'qemu-system-x86_64 -hda win10.img\n' });
    expect(f[0]).toMatchObject({ ruleId: 'qemu-windows' });
    expect(f[0]!.suggestion).toBeUndefined();
    expect(f[0]!.message).toContain('is refused on a laptop: migrate the VM to s.khost1.dev-win10');
  });

  it('markdown only when it is an instruction file', () => {
    const text = '```bash\nmake build\n```\n';
    expect(scanner().scan({ path: 'README.md', text })).toHaveLength(1);
    expect(scanner().scan({ path: 'engines/lang/koda/CLAUDE.md', text })).toHaveLength(1);
    expect(scanner().scan({ path: 'notes/random.md', text })).toEqual([]);
    expect(scanner().wants('notes/random.md')).toBe(false);
    expect(scanner().wants('bin/tool')).toBe(true);
    expect(scanner().wants('src/x.ts')).toBe(false);
  });

  it('logicalLines joins continuations', () => {
    expect(logicalLines('a \\\nb\nc\\\\\nd')).toEqual([
      { text: 'a \\\nb', start: 0 },
      { text: 'c\\\\', start: 6 },
      { text: 'd', start: 10 },
    ]);
  });
});
