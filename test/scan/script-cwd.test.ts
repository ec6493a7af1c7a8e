// scan and ci judge a script where it is run from, as check does: from the repository root, and from its
// own folder; the idioms by which a script finds its own folder are resolved. Real git repository at
// ~/dev/koder (HOME in a temp folder), the built CLI for check, scan and ci alike.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';

const BIN = join(import.meta.dirname, '..', '..', 'dist', 'offhost.cjs');

const SCRIPTS: Record<string, string> = {
  // The case: from the root this builds Koda; from scripts/ it would not.
  'scripts/e2e.sh': '#!/bin/bash\ncd engines/lang/koda && make build-safe\n',
  // The everyday idiom: the repository root, wherever it is run from.
  'scripts/root.sh': '#!/bin/bash\nset -e\ncd "$(dirname "$0")/.."\ncd engines/lang/koda && make build-safe\n',
  'scripts/canonical.sh': '#!/bin/bash\nHERE="$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" &> /dev/null && pwd)"\ncd "$HERE/../engines/lang/koda"\nmake build-safe\n',
  // Run from its own folder (next to the code it builds).
  'engines/lang/koda/build.sh': '#!/bin/sh\nmake build-safe\n',
  // Light from anywhere.
  'scripts/light.sh': '#!/bin/bash\ncd "$(dirname "$0")"\nmake build-safe\n',
};

let home: string;
let repo: string;
let env: NodeJS.ProcessEnv;
const offhost = (args: string[], cwd = repo) => spawnSync(process.execPath, [BIN, ...args], { cwd, env, encoding: 'utf8' });

beforeAll(() => {
  home = realpathSync(mkdtempSync(join(tmpdir(), 'offhost-cwd-')));
  repo = join(home, 'dev', 'koder');
  env = { PATH: process.env.PATH, HOME: home, OFFHOST_ROLE: 'laptop', GIT_CONFIG_NOSYSTEM: '1', GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@e', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@e' };
  mkdirSync(join(repo, 'engines', 'lang', 'koda'), { recursive: true });
  const git = (...a: string[]) => execFileSync('git', a, { cwd: repo, env, encoding: 'utf8' });
  git('init', '-q', '-b', 'main');
  writeFileSync(join(repo, 'README.txt'), 'x\n');
  git('add', '-A');
  git('commit', '-qm', 'base');
  for (const [p, t] of Object.entries(SCRIPTS)) {
    mkdirSync(dirname(join(repo, p)), { recursive: true });
    writeFileSync(join(repo, p), t);
  }
  git('add', '-A');
  git('commit', '-qm', 'scripts');
});

type F = { file: string; line: number; ruleId: string; severity: string; message: string };

describe('a script is judged where it runs', () => {
  it('scan agrees with check run from the root and from the script folder', () => {
    const scan = offhost(['scan', '--format', 'json']);
    const findings = JSON.parse(scan.stdout) as F[];
    const byFile = Object.fromEntries(findings.map((f) => [f.file, f]));
    // check, from each place the script may be run from: what scan must find
    const check = (file: string, fromOwnFolder: boolean) =>
      fromOwnFolder ? offhost(['check', '--cwd', dirname(join(repo, file)), `bash ./${file.split('/').pop()}`]).status : offhost(['check', `bash ${file}`]).status;
    expect([check('scripts/e2e.sh', false), check('scripts/e2e.sh', true)]).toEqual([3, 0]);
    expect([check('engines/lang/koda/build.sh', false), check('engines/lang/koda/build.sh', true)]).toEqual([0, 3]);
    // (check itself does not resolve `$(dirname "$0")` yet: the walker cannot run dirname. scan does.)
    // The idioms resolve: errors, not "cannot tell statically" warnings.
    for (const f of ['scripts/e2e.sh', 'scripts/root.sh', 'scripts/canonical.sh', 'engines/lang/koda/build.sh']) {
      expect(byFile[f]).toMatchObject({ ruleId: 'koda-make', severity: 'error' });
    }
    expect(byFile['scripts/light.sh']).toBeUndefined();
    // Where it was found, said when only one of the two places gives it.
    expect(byFile['scripts/e2e.sh']!.message).toMatch(/^shell script \(run from the repository root\): `make build-safe` runs heavy work/);
    expect(byFile['engines/lang/koda/build.sh']!.message).toMatch(/^shell script \(run from engines\/lang\/koda\/\): /);
    expect(byFile['scripts/root.sh']!.message).toMatch(/^shell script: /);
  });

  it('ci judges the lines a pull request adds the same way', () => {
    const ci = offhost(['ci', '--base', 'HEAD~1', '--format', 'json']);
    expect(ci.status, ci.stderr).toBe(1);
    const files = (JSON.parse(ci.stdout) as F[]).map((f) => `${f.file}:${f.line} ${f.ruleId} ${f.severity}`).sort();
    expect(files).toEqual(['engines/lang/koda/build.sh:2 koda-make error', 'scripts/canonical.sh:4 koda-make error', 'scripts/e2e.sh:2 koda-make error', 'scripts/root.sh:4 koda-make error']);
  });

  it('a warning says "cannot tell statically" once, and gives no suggestion repeating the reason', () => {
    writeFileSync(join(repo, 'scripts', 'vague.sh'), '#!/bin/sh\ncd "$WHERE" && make build-safe\n');
    const f = (JSON.parse(offhost(['scan', '--format', 'json', 'scripts/vague.sh']).stdout) as (F & { suggestion?: string })[])[0]!;
    expect(f.severity).toBe('warning');
    expect(f.message.match(/cannot tell statically/g)).toHaveLength(1);
    expect(f.suggestion ?? null).toBeNull();
  });
});
