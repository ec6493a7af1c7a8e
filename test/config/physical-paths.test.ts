// Canonical directories: physical, then in the configuration's spelling; path mappings to the VM apply
// to the laptop's physical path as to the configured one.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadGuard } from '../../src/config/load-guard.js';
import { makeCanonicalizer, physicalPath } from '../../src/config/physical-paths.js';

let base: string;
let home: string;
let phys: string;
beforeAll(() => {
  base = realpathSync(mkdtempSync(join(tmpdir(), 'offhost-phys-')));
  home = join(base, 'home');
  phys = join(base, 'data', 'koder');
  mkdirSync(join(phys, 'engines', 'lang', 'koda'), { recursive: true });
  mkdirSync(join(home, 'dev'), { recursive: true });
  symlinkSync(phys, join(home, 'dev', 'koder'));
  symlinkSync(join(phys, 'engines', 'lang', 'koda'), join(home, 'koda'));
});
afterAll(() => rmSync(base, { recursive: true, force: true }));

describe('physicalPath', () => {
  it('resolves symlinks and keeps a missing tail as written', () => {
    expect(physicalPath(join(home, 'dev', 'koder', 'engines'))).toBe(join(phys, 'engines'));
    expect(physicalPath(join(home, 'koda', 'no', 'such'))).toBe(join(phys, 'engines', 'lang', 'koda', 'no', 'such'));
    expect(physicalPath('/no/such/dir')).toBe('/no/such/dir');
    expect(physicalPath(join(home, 'koda', '..'))).toBe(home);
  });
});

describe('makeCanonicalizer', () => {
  it('writes a physical path back in the configured spelling, the most specific directory first', () => {
    const root = join(home, 'dev', 'koder');
    const canon = makeCanonicalizer({ root, home, vars: { root, home, koda: join(root, 'engines', 'lang', 'koda') }, pathMap: [], routes: new Map() });
    expect(canon(join(phys, 'engines', 'lang', 'koda', 'src'))).toBe(join(root, 'engines', 'lang', 'koda', 'src'));
    expect(canon(join(home, 'koda'))).toBe(join(root, 'engines', 'lang', 'koda'));
    expect(canon(root)).toBe(root);
    expect(canon(join(base, 'elsewhere'))).toBe(join(base, 'elsewhere'));
  });
});

describe('the guard with a path mapping', () => {
  it('maps the physical laptop path to the VM path of the configured one', () => {
    writeFileSync(join(phys, 'offhost.config.yaml'), 'path_map:\n  - { from: "~/dev/koder", to: /srv/koder }\n');
    const env = { HOME: home, OFFHOST_ROLE: 'laptop', PATH: '/usr/bin:/bin' };
    for (const cwd of [join(home, 'dev', 'koder', 'engines', 'lang', 'koda'), join(phys, 'engines', 'lang', 'koda'), join(home, 'koda')]) {
      const g = loadGuard({ cwd, env });
      const v = g.classify('make build-safe', { cwd, env, files: false });
      expect(v.decision, cwd).toBe('reroute');
      expect(v.route?.cwd, cwd).toBe('/srv/koder/engines/lang/koda');
      expect(v.route?.command).toContain('/srv/koder/engines/lang/koda');
    }
  });
});

describe('a Mac: /tmp, /var and /etc are symlinks into /private', () => {
  it('a directory under one is judged by its physical path, written back in the configured spelling', () => {
    // <base>/tmp -> <base>/private/tmp, as /tmp -> /private/tmp on macOS.
    mkdirSync(join(base, 'private', 'tmp', 'koder', 'engines', 'lang', 'koda'), { recursive: true });
    symlinkSync(join(base, 'private', 'tmp'), join(base, 'tmp'));
    const root = join(base, 'tmp', 'koder');
    const koda = join(root, 'engines', 'lang', 'koda');
    const canon = makeCanonicalizer({ root, home, vars: { root, home, koda }, pathMap: [], routes: new Map() });
    expect(canon(join(base, 'private', 'tmp', 'koder', 'engines', 'lang', 'koda'))).toBe(koda);
    expect(canon(koda)).toBe(koda);
    expect(physicalPath(koda)).toBe(join(base, 'private', 'tmp', 'koder', 'engines', 'lang', 'koda'));
  });
});
