// Which file is the running offhost (src/own-executable.ts), on real files and symlinks: an npm
// install reaches dist/offhost.cjs through node_modules/.bin/offhost.
import { afterAll, describe, expect, it } from 'vitest';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ownExecutable, ownExecutableForSettings, runningScript } from '../../src/own-executable.js';
import { offhostExecutable } from '../../src/adapters/run-rewrite.js';

const tmp = realpathSync(mkdtempSync(join(tmpdir(), 'offhost-self-')));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
const pkg = join(tmp, 'node_modules', 'offhost');
mkdirSync(join(pkg, 'dist'), { recursive: true });
mkdirSync(join(tmp, 'node_modules', '.bin'), { recursive: true });
for (const f of ['offhost.cjs', 'offhost.mjs']) writeFileSync(join(pkg, 'dist', f), '');
symlinkSync('../offhost/dist/offhost.cjs', join(tmp, 'node_modules', '.bin', 'offhost'));
symlinkSync('../offhost/dist/offhost.mjs', join(tmp, 'node_modules', '.bin', 'offhost-mjs'));
const cjs = join(pkg, 'dist', 'offhost.cjs');
const mjs = join(pkg, 'dist', 'offhost.mjs');
writeFileSync(join(tmp, 'other.mjs'), '');
mkdirSync(join(tmp, 'lone'), { recursive: true });
writeFileSync(join(tmp, 'lone', 'offhost.mjs'), '');

describe('the running offhost', () => {
  it.each([
    ['the bundle itself', cjs, cjs, cjs, cjs],
    ['through node_modules/.bin (a symlink)', join(tmp, 'node_modules', '.bin', 'offhost'), cjs, cjs, cjs],
    ['the .mjs alias: settings get the .cjs beside it', join(tmp, 'node_modules', '.bin', 'offhost-mjs'), mjs, mjs, cjs],
    ['an .mjs with no .cjs beside it stays itself', join(tmp, 'lone', 'offhost.mjs'), join(tmp, 'lone', 'offhost.mjs'), join(tmp, 'lone', 'offhost.mjs'), join(tmp, 'lone', 'offhost.mjs')],
    ['another script (tests in-process): not offhost', join(tmp, 'other.mjs'), join(tmp, 'other.mjs'), null, join(tmp, 'other.mjs')],
    ['a path that does not exist: resolved as given', '/nonexistent/dist/offhost.cjs', '/nonexistent/dist/offhost.cjs', '/nonexistent/dist/offhost.cjs', '/nonexistent/dist/offhost.cjs'],
    ['an empty argv[1]: no script', '', null, null, null],
  ] as const)('%s', (_what, argv1, script, own, forSettings) => {
    expect(runningScript(argv1)).toBe(script);
    expect(ownExecutable(argv1)).toBe(own);
    expect(ownExecutableForSettings(argv1)).toBe(forSettings);
    expect(offhostExecutable(argv1)).toBe(own ?? 'offhost');
  });
});
