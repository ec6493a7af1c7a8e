// `offhost ci` in-process with the real guard: pull requests writing heavy commands into every scanned
// file kind (fixtures/ci/scan-scenarios.yaml), output formats, exit statuses.
import { readFileSync, existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { run } from '../../src/cli/commands/ci.js';
import { main } from '../../src/cli/main.js';
import type { JsonFinding } from '../../src/report/json.js';
import { validateSarif } from '../report/sarif-validator.js';
import { ROOT, testIo } from '../scan/helpers.js';
import { active, archive, basePr, lockText, Repo } from './repo.js';

interface Scenario {
  name: string;
  base?: Record<string, string>;
  pr: Record<string, string | null>;
  expect: string[];
}
const scenarios = parse(readFileSync(join(ROOT, 'fixtures/ci/scan-scenarios.yaml'), 'utf8')) as Scenario[];
const repos: Repo[] = [];
afterAll(() => repos.forEach((r) => r.cleanup()));

function prRepo(s: { base?: Record<string, string>; pr: Record<string, string | null> }): Repo {
  const r = basePr(s.base ?? {});
  repos.push(r);
  r.commit(s.pr, 'pull request');
  return r;
}

describe('heavy commands a pull request writes', () => {
  it.each(scenarios.map((s) => [s.name, s] as const))('%s', async (_name, s) => {
    const r = prRepo(s);
    const t = testIo(r.dir);
    const code = await run(['--base', 'main', '--format', 'json'], t.io);
    const f = JSON.parse(t.out()) as JsonFinding[];
    expect(f.map((x) => `${x.file}:${x.line} ${x.ruleId} ${x.severity}`)).toEqual(s.expect);
    expect(code).toBe(s.expect.some((e) => e.endsWith(' error')) ? 1 : 0);
    for (const x of f) {
      expect(x.column).toBeGreaterThanOrEqual(1);
      if (x.ruleId !== 'qemu-windows') expect(x.suggestion).toMatch(/^offhost run -- /);
    }
  });
});

describe('output', () => {
  it('github annotations by default in GitHub Actions, with a step summary of every finding', async () => {
    const files: Record<string, string> = {};
    for (let i = 0; i < 12; i++) files[`scripts/s${i}.sh`] = '#!/bin/bash\nemulator -avd Pixel\n';
    files['scripts/we,ird: name %25.sh'] = 'make build-safe\nlb build\n';
    const r = prRepo({ pr: files });
    const summary = join(mkdtempSync(join(tmpdir(), 'offhost-sum-')), 'summary.md');
    writeFileSync(summary, '');
    const t = testIo(r.dir, { GITHUB_ACTIONS: 'true', GITHUB_STEP_SUMMARY: summary });
    const code = await run(['--base', 'main'], t.io);
    expect(code).toBe(1);
    const lines = t.out().trimEnd().split('\n');
    expect(lines).toHaveLength(13);
    expect(lines.every((l) => l.startsWith('::error file='))).toBe(true);
    expect(lines).toContain(
      "::error file=scripts/we%2Cird%3A name %2525.sh,line=2,endLine=2,col=1,endColumn=9,title=offhost live-build::shell script: `lb build` runs heavy work on the laptop instead of its VM: " +
        'ISO builds with live-build run on a VM (s.khost1.dev-linux-iso) or on s.khost1 directly, never on the laptop (POLICY R1).%0AUse instead: offhost run -- \'lb build\'',
    );
    const md = readFileSync(summary, 'utf8');
    expect(md.split('\n').filter((l) => l.startsWith('| error'))).toHaveLength(13);
    expect(md).toContain('`scripts/we,ird: name %25.sh`');
  });

  it('sarif validates, and --sarif writes it beside another format', async () => {
    const r = prRepo({ pr: { 'x.sh': 'make build-safe\n', [active()]: lockText({ vm: 's.khost1.dev-linux-gui' }) } });
    const out = join(mkdtempSync(join(tmpdir(), 'offhost-sarif-')), 'r.sarif');
    const t = testIo(r.dir);
    expect(await run(['--base', 'main', '--format', 'sarif', '--sarif', out], t.io)).toBe(1);
    const doc = JSON.parse(t.out());
    expect(validateSarif(doc)).toEqual([]);
    expect(JSON.parse(readFileSync(out, 'utf8'))).toEqual(doc);
    expect(doc.runs[0].tool.driver.rules.map((x: { id: string }) => x.id)).toEqual(['lock-name-mismatch']);
    // x.sh runs in the repository root: no Koda build there, so only the lock finding.
  });

  it('hostile file names survive git quoting (newline, tab, quote, backslash, UTF-8)', async () => {
    const name = 'odd\nna\tme "q" \\ é.sh';
    const r = prRepo({ pr: { [name]: '#!/bin/bash\nemulator -avd X\n' } });
    const t = testIo(r.dir);
    await run(['--base', 'main', '--format', 'json'], t.io);
    expect((JSON.parse(t.out()) as JsonFinding[]).map((x) => [x.file, x.line])).toEqual([[name, 2]]);
  });
});

describe('lock hygiene through the command', () => {
  it('the clock: --now decides at head, exit 1 on errors, 0 when clean', async () => {
    const r = basePr();
    repos.push(r);
    r.commit({ [active()]: lockText({ ttl: 60 }) }, 'acquire', '2026-05-19T22:31:00Z');
    const live = testIo(r.dir);
    expect(await run(['--base', 'main', '--now', '2026-05-19T23:00:00Z'], live.io)).toBe(0);
    expect(live.out()).toBe('');
    const late = testIo(r.dir);
    expect(await run(['--base', 'main', '--now', '2026-05-20T09:00:00Z', '--format', 'json'], late.io)).toBe(1);
    expect((JSON.parse(late.out()) as JsonFinding[]).map((x) => x.ruleId)).toEqual(['lock-expired']);
    r.commit({ [archive()]: { from: active() } }, 'release', '2026-05-19T23:20:00Z');
    const done = testIo(r.dir);
    expect(await run(['--base', 'main', '--now', '2026-05-20T09:00:00Z'], done.io)).toBe(0);
  });
});

describe('errors exit 2 with a clear message', () => {
  it('bad base ref', async () => {
    const r = prRepo({ pr: { 'a.txt': 'a\n' } });
    const t = testIo(r.dir);
    expect(await main(['ci', '--base', 'no-such-branch'], t.io)).toBe(2);
    expect(t.err()).toContain("offhost ci: bad base 'no-such-branch': not a commit in this repository");
  });
  it('not a repository', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'offhost-norepo-'));
    const t = testIo(dir);
    expect(await main(['ci', '--base', 'main'], t.io)).toBe(2);
    expect(t.err()).toMatch(/offhost ci: .* is not inside a git repository/);
  });
  it('unreadable config', async () => {
    const r = prRepo({ pr: { 'offhost.config.yaml': 'scan: [\n' } });
    const t = testIo(r.dir);
    expect(await main(['ci', '--base', 'main'], t.io)).toBe(2);
    expect(t.err()).toContain('offhost.config.yaml');
  });
  it('no base', async () => {
    const r = prRepo({ pr: { 'a.txt': 'a\n' } });
    const t = testIo(r.dir);
    expect(await main(['ci'], t.io)).toBe(2);
    expect(t.err()).toContain('--base REF is required');
  });
});

describe('the bundle, as a whole process', () => {
  const bin = join(ROOT, 'dist', 'offhost.mjs');
  it.skipIf(!existsSync(bin))('node dist/offhost.mjs ci', () => {
    const r = prRepo({ pr: { 'engines/lang/koda/b.sh': 'make build\n' } });
    const res = spawnSync(process.execPath, [bin, 'ci', '--base', 'main', '--format', 'json'], {
      cwd: r.dir,
      encoding: 'utf8',
      env: { PATH: process.env.PATH, HOME: '/home/koder', CI: 'true' },
    });
    expect(res.stderr).toBe('');
    expect(res.status).toBe(1);
    const f = JSON.parse(res.stdout) as JsonFinding[];
    expect(f.map((x) => [x.file, x.line, x.ruleId, x.suggestion])).toEqual([['engines/lang/koda/b.sh', 1, 'koda-make', "offhost run -- 'make build'"]]);
  });
});
