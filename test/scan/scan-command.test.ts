// `offhost scan` in-process with the real guard, on the fixtures/scan trees.
import { describe, expect, it } from 'vitest';
import { run } from '../../src/cli/commands/scan.js';
import type { JsonFinding } from '../../src/report/json.js';
import { copyFixture, testIo } from './helpers.js';

describe('offhost scan (real guard)', () => {
  it('finds one heavy command in every file kind, with position, rule and rewrite', async () => {
    const dir = copyFixture('heavy');
    const t = testIo(dir);
    const code = await run(['--format', 'json'], t.io);
    expect(t.err()).toBe('');
    const f = JSON.parse(t.out()) as JsonFinding[];
    const got = f.map((x) => `${x.file}:${x.line}:${x.column} ${x.ruleId} ${x.severity}`);
    expect(got).toEqual([
      '.github/workflows/e2e.yml:10:11 playwright-test error',
      '.gitlab-ci.yml:4:7 android-emulator error',
      'Dockerfile:5:5 flutter-test-browser error',
      'Makefile:6:3 koda-make error',
      'README.md:7:1 koda-make error',
      'docs/iso.md:5:3 live-build error',
      'engines/lang/koda/build.sh:5:1 koda-make error',
      'tools/emulator-run:2:1 android-emulator error',
      'web/package.json:7:18 playwright-test error',
    ]);
    expect(code).toBe(1);
    const sh = f.find((x) => x.file === 'engines/lang/koda/build.sh')!;
    expect(sh.suggestion).toBe("offhost run -- 'make build-safe'");
    expect(sh.message).toContain('`make build-safe` runs heavy work on the laptop');
    expect(f.find((x) => x.file === 'README.md')!.suggestion).toBe("offhost run -- 'make build'");
  });

  it('passes clean files: routed commands, VM commands, data that mentions commands, CI workflows', async () => {
    const dir = copyFixture('clean');
    const t = testIo(dir);
    const code = await run(['--format', 'json'], t.io);
    expect(JSON.parse(t.out())).toEqual([]);
    expect(code).toBe(0);
  });

  it('scans only the paths given (as lint-staged passes them)', async () => {
    const dir = copyFixture('heavy');
    const t = testIo(dir);
    const code = await run(['--format', 'json', `${dir}/README.md`, 'web'], t.io);
    expect((JSON.parse(t.out()) as JsonFinding[]).map((x) => x.file)).toEqual(['README.md', 'web/package.json']);
    expect(code).toBe(1);
  });

  it('stylish output and a bad config exit 2', async () => {
    const dir = copyFixture('heavy');
    const t = testIo(dir);
    await run(['README.md'], t.io);
    expect(t.out()).toContain('README.md\n  7:1');
    expect(t.err()).toContain('offhost scan: 1 file scanned, 1 finding');
    const t2 = testIo(dir);
    await expect(run(['--config', 'nope.yaml'], t2.io)).rejects.toMatchObject({ exitCode: 2 });
  });
});

describe('config keys (offhost.config.yaml)', () => {
  it('scan.dockerfile_is_laptop: false, scan.ignore and scan.vm_globs', async () => {
    const dir = copyFixture('heavy');
    const { writeFileSync } = await import('node:fs');
    writeFileSync(`${dir}/offhost.config.yaml`, "scan:\n  dockerfile_is_laptop: false\n  ignore: ['docs/**']\n  vm_globs: ['tools/**', '.github/**', '.gitlab-ci.yml']\n");
    const t = testIo(dir);
    await run(['--format', 'json'], t.io);
    const files = (JSON.parse(t.out()) as JsonFinding[]).map((x) => x.file);
    expect(files).toEqual(['Makefile', 'README.md', 'engines/lang/koda/build.sh', 'web/package.json']);
  });

  it('HOME comes from the environment: the repository is placed at <root> = ~/dev/koder under it', async () => {
    const dir = copyFixture('heavy');
    const t = testIo(dir, { HOME: '/home/someone-else' });
    await run(['--format', 'json', 'engines'], t.io);
    expect((JSON.parse(t.out()) as JsonFinding[]).map((x) => x.ruleId)).toEqual(['koda-make']);
  });
});
