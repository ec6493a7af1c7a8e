// Compiled config layers kept between processes (src/config/layer-cache.ts), through the built executable:
// a project with a config pays for YAML + zod once per text, never on every hook call. Run from a copy of
// dist/ so that the config compiler can be taken away: a second call that still answers has used the
// cache; a changed config that still answers would have used a stale entry.
import { afterAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { layerFromText } from '../../src/config/pack.js';

const tmp = mkdtempSync(join(tmpdir(), 'offhost-layer-cache-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
const DIST = join(tmp, 'dist');
cpSync(resolve('dist'), DIST, { recursive: true });
const BIN = join(DIST, 'offhost.cjs');
const HOME = join(tmp, 'home');
const ROOT = join(HOME, 'dev/koder');
const KODA = join(ROOT, 'engines/lang/koda');
mkdirSync(KODA, { recursive: true });
const CACHE = join(HOME, '.cache', 'offhost');
const CONFIG = join(ROOT, 'offhost.config.yaml');

const configText = (flag: string) => `root: ~/dev/koder
rules:
  - id: cargo-release
    description: release builds
    policy: R1
    decision: deny
    message: release builds are not for the laptop
    match: { program: cargo, subcommands: [[build]], flags: [{ names: ${flag} }] }
    examples: { match: [cargo build ${flag}], not_match: [cargo build] }
`;

function check(line: string, env: Record<string, string> = {}) {
  const r = spawnSync(process.execPath, [BIN, 'check', '--json', line], { cwd: KODA, env: { PATH: process.env.PATH!, HOME, OFFHOST_ROLE: 'laptop', ...env }, encoding: 'utf8' });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr, decision: r.status === 2 ? null : (JSON.parse(r.stdout) as { decision: string; rule?: string }).decision };
}
const withoutCompiler = <T>(f: () => T): T => {
  renameSync(join(DIST, 'config-loader.cjs'), join(DIST, 'config-loader.off'));
  try {
    return f();
  } finally {
    renameSync(join(DIST, 'config-loader.off'), join(DIST, 'config-loader.cjs'));
  }
};

describe('compiled config layers are kept per text', () => {
  it('the second call needs no config compiler; a changed text is compiled again', () => {
    writeFileSync(CONFIG, configText('--release'));
    expect(check('cargo build --release').decision).toBe('deny');
    expect(readdirSync(CACHE).filter((f) => f.startsWith('layer-'))).toHaveLength(1);
    // The compiler gone: the same text still judges, from the cache (layer and self-test).
    withoutCompiler(() => {
      expect(check('cargo build --release').decision).toBe('deny');
      expect(check('cargo build').decision).toBe('allow');
      // One byte changed: the entry is not used, and without the compiler the call fails closed (exit 2).
      writeFileSync(CONFIG, configText('--profile'));
      const r = check('cargo build --release');
      expect(r.status).toBe(2);
      expect(r.decision).toBe(null);
    });
    expect(check('cargo build --profile').decision).toBe('deny');
    expect(check('cargo build --release').decision).toBe('allow');
  });

  it('a broken or foreign entry is ignored and compiled again; OFFHOST_NO_CACHE=1 compiles every time', () => {
    writeFileSync(CONFIG, configText('--locked'));
    expect(check('cargo build --locked').decision).toBe('deny');
    const entry = readdirSync(CACHE).map((f) => join(CACHE, f)).find((f) => f.includes('layer-') && readFileSync(f, 'utf8').includes('--locked'))!;
    // Another build's entry (same key): not used.
    const e = JSON.parse(readFileSync(entry, 'utf8'));
    writeFileSync(entry, JSON.stringify({ ...e, build: 'another-build', value: { ...e.value, rules: [] } }));
    withoutCompiler(() => expect(check('cargo build --locked').status).toBe(2));
    expect(check('cargo build --locked').decision).toBe('deny');
    writeFileSync(entry, '{ not json');
    expect(check('cargo build --locked').decision).toBe('deny');
    expect(JSON.parse(readFileSync(entry, 'utf8')).key).toContain('--locked');
    withoutCompiler(() => expect(check('cargo build --locked', { OFFHOST_NO_CACHE: '1' }).status).toBe(2));
  });

  it('a config with an error is never kept: it is reported on every call', () => {
    writeFileSync(CONFIG, configText('--release').replace('decision: deny', 'decision: maybe'));
    for (let i = 0; i < 2; i++) {
      const r = check('ls');
      expect(r.status).toBe(2);
      expect(r.stderr).toContain('offhost.config.yaml');
    }
    // A rule that misses its own example: the self-test fails on every call, not only the first.
    writeFileSync(CONFIG, configText('--release').replace('match: [cargo build --release]', 'match: [cargo test]'));
    for (let i = 0; i < 2; i++) expect(check('ls').status).toBe(2);
  });

  it('old entries are pruned past 256, the one just written kept', () => {
    mkdirSync(CACHE, { recursive: true });
    const old = new Date(Date.now() - 86_400_000);
    for (let i = 0; i < 300; i++) {
      const f = join(CACHE, `layer-${i.toString(16).padStart(16, '0')}.json`);
      writeFileSync(f, '{}');
      utimesSync(f, old, old);
    }
    writeFileSync(CONFIG, configText('--offline'));
    expect(check('cargo build --offline').decision).toBe('deny');
    const left = readdirSync(CACHE).filter((f) => /^(layer|selftest)-/.test(f));
    expect(left.length).toBeLessThanOrEqual(256);
    expect(left.length).toBeGreaterThanOrEqual(128);
    withoutCompiler(() => expect(check('cargo build --offline').decision).toBe('deny'));
  });

  it('an unwritable cache only costs speed', () => {
    writeFileSync(CONFIG, configText('--frozen'));
    const file = join(tmp, 'not-a-dir');
    writeFileSync(file, '');
    expect(check('cargo build --frozen', { OFFHOST_CACHE_DIR: join(file, 'x') }).decision).toBe('deny');
    expect(existsSync(join(file, 'x'))).toBe(false);
  });
});

describe('a layer survives the JSON it is kept as', () => {
  // Every config the project ships or documents: what the cache stores must be what the compiler gave.
  const texts: [string, string][] = [
    ['README example', readFileSync('README.md', 'utf8').match(/```yaml\n(vms:[\s\S]*?)```/)![1]!],
    ['reference example', readFileSync('docs/REFERENCE.md', 'utf8').match(/```yaml\n(root: ~\/src\/koder[\s\S]*?)```/)![1]!],
    ['scan fixture', readFileSync('fixtures/scan/heavy/offhost.config.yaml', 'utf8')],
    ['rules with every matcher', configText('--release')],
  ];
  it.each(texts)('%s', (_, text) => {
    expect(parseYaml(text)).toBeTruthy();
    const layer = layerFromText('/p/offhost.config.yaml', text);
    expect(JSON.parse(JSON.stringify(layer))).toEqual(layer);
  });
});
