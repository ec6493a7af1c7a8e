// Which checkout of the monorepo a directory is in (src/config/checkout.ts), on real folders and real git
// repositories: the nearest directory holding a marker or listed as a root, the rule-space directory the
// rules judge, what `.git` says (for reports), and the layers' `root`/`roots`/`markers`.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gitCheckoutOf, makeRuleSpace, monorepoCheckoutOf, remoteUrlOf } from '../../src/config/checkout.js';
import { loadConfig } from '../../src/config/load-config.js';
import { checkoutCheck, standingOf } from '../../src/config/standing.js';
import { ConfigError } from '../../src/errors.js';

const tmp = realpathSync(mkdtempSync(join(tmpdir(), 'offhost-checkout-')));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const KODA = 'engines/lang/koda';
const mk = (...parts: string[]) => {
  const d = join(tmp, ...parts);
  mkdirSync(d, { recursive: true });
  return d;
};
function git(cwd: string, ...args: string[]): void {
  const r = spawnSync('git', args, { cwd, encoding: 'utf8', env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: tmp, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@t', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@t' } });
  if (r.status !== 0) throw new Error(`git ${args.join(' ')}: ${r.stderr}`);
}

describe('monorepoCheckoutOf: the nearest directory that carries the identity', () => {
  const root = join(tmp, 'home', 'dev', 'koder'); // the configured root, missing on purpose
  const id = { root, roots: [root], markers: [KODA] };
  beforeAll(() => {
    mk('wt', 'feature', KODA, 'src');
    mk('wt', 'feature', '.claude', 'worktrees', 'a', KODA);
    mk('wt', 'feature', 'vendor', 'lib', KODA); // a nested copy of the layout
    mk('decoy', 'engines', 'lang', 'koda-old'); // a name that only starts like the marker
    mk('decoy2', 'engines', 'lang');
    writeFileSync(join(tmp, 'decoy2', 'engines', 'lang', 'koda.md'), 'not the engine\n');
    mk('listed', 'sub');
    symlinkSync(join(tmp, 'wt', 'feature', KODA), join(tmp, 'engine-link'));
  });

  it.each([
    ['the configured root, before it exists (POLICY R6 names it)', ['home', 'dev', 'koder', KODA], ['home', 'dev', 'koder'], 'root'],
    ['a checkout holding the engine, from deep inside it', ['wt', 'feature', KODA, 'src'], ['wt', 'feature'], 'marker'],
    ['a worktree inside a checkout: its own top, the nearer one', ['wt', 'feature', '.claude', 'worktrees', 'a', KODA], ['wt', 'feature', '.claude', 'worktrees', 'a'], 'marker'],
    ['a nested copy of the layout is a checkout of its own (fail closed)', ['wt', 'feature', 'vendor', 'lib', KODA], ['wt', 'feature', 'vendor', 'lib'], 'marker'],
    ['the checkout\'s top itself', ['wt', 'feature'], ['wt', 'feature'], 'marker'],
    ['a symlink to the engine: the physical path decides', ['engine-link'], ['wt', 'feature'], 'marker'],
  ] as const)('%s', (_what, dir, top, why) => {
    const c = monorepoCheckoutOf(join(tmp, ...dir), id);
    expect(c?.top).toBe(join(tmp, ...top));
    expect(c?.why).toBe(why);
  });

  it.each([
    ['engines/lang/koda-old is not engines/lang/koda', ['decoy', 'engines', 'lang', 'koda-old']],
    ['engines/lang/koda.md is not engines/lang/koda', ['decoy2', 'engines', 'lang']],
    ['a folder beside the checkout', ['wt']],
  ] as const)('none: %s', (_what, dir) => {
    expect(monorepoCheckoutOf(join(tmp, ...dir), id)).toBe(null);
  });

  it('a `roots:` entry is a checkout whatever it holds', () => {
    const listed = join(tmp, 'listed');
    expect(monorepoCheckoutOf(join(listed, 'sub'), { ...id, roots: [root, listed] })).toEqual({ top: listed, why: 'roots' });
  });

  it('tests one marker path per ancestor, nothing else', () => {
    const seen: string[] = [];
    monorepoCheckoutOf('/a/b/c', { root: '/r', roots: ['/r'], markers: [KODA] }, (p) => p, (p) => (seen.push(p), false));
    expect(seen).toEqual([`/a/b/c/${KODA}`, `/a/b/${KODA}`, `/a/${KODA}`, `/${KODA}`]);
  });
});

describe('makeRuleSpace: a directory of another checkout, as the rules name it', () => {
  it('is the same place under {root}; the root itself and places outside every checkout have none', () => {
    const root = join(tmp, 'rs', 'dev', 'koder');
    mk('rs', 'dev', 'koder', KODA);
    mk('rs', 'My Projects', 'koder', KODA, 'x');
    mk('rs', 'elsewhere');
    const rs = makeRuleSpace({ root, roots: [root], markers: [KODA] });
    expect(rs(join(tmp, 'rs', 'My Projects', 'koder', KODA, 'x'))).toBe(join(root, KODA, 'x'));
    expect(rs(join(tmp, 'rs', 'My Projects', 'koder'))).toBe(root);
    expect(rs(join(root, KODA))).toBe(undefined);
    expect(rs(join(tmp, 'rs', 'elsewhere'))).toBe(undefined);
    // No root configured: nothing to judge against.
    expect(makeRuleSpace({ root: null, roots: [], markers: [KODA] })(join(tmp, 'rs', 'My Projects', 'koder'))).toBe(undefined);
  });
});

describe('gitCheckoutOf: what .git says, without git', () => {
  it('main worktree, linked worktree, a bare repository\'s worktree, and the remote URL', () => {
    const main = mk('g', 'koder');
    writeFileSync(join(main, 'f'), 'x\n');
    git(main, 'init', '-q', '-b', 'main');
    git(main, 'add', '-A');
    git(main, 'commit', '-q', '-m', 'i');
    git(main, 'remote', 'add', 'origin', 'git@github.com:koder/koder.git');
    git(main, 'worktree', 'add', '-q', '-b', 'f', join(tmp, 'g', 'feature'));
    git(join(tmp, 'g'), 'clone', '-q', '--bare', main, join(tmp, 'g', 'bare.git'));
    git(join(tmp, 'g', 'bare.git'), 'worktree', 'add', '-q', '-b', 't', join(tmp, 'g', 'task'));
    mk('g', 'feature', 'deep', 'er');
    expect(gitCheckoutOf(join(main))).toEqual({ top: main, kind: 'main worktree', commonDir: join(main, '.git') });
    expect(gitCheckoutOf(join(tmp, 'g', 'feature', 'deep', 'er'))).toEqual({ top: join(tmp, 'g', 'feature'), kind: 'linked worktree', commonDir: join(main, '.git'), mainTop: main });
    expect(gitCheckoutOf(join(tmp, 'g', 'task'))).toMatchObject({ top: join(tmp, 'g', 'task'), kind: 'linked worktree', commonDir: join(tmp, 'g', 'bare.git'), mainTop: null });
    expect(gitCheckoutOf(tmp)).toBe(null);
    expect(remoteUrlOf(join(main, '.git'))).toBe('git@github.com:koder/koder.git');
  });
});

describe('the layers: root, roots, markers', () => {
  it('a project config roots its paths at the folder it is read from (root: .), roots: and markers: add up', () => {
    const home = mk('cfg', 'home');
    mk('cfg', 'home', '.config', 'offhost');
    writeFileSync(join(home, '.config', 'offhost', 'config.yaml'), 'roots: [~/sparse]\nmarkers: [meta/context/notices]\n');
    const wt = mk('cfg', 'wt');
    writeFileSync(join(wt, 'offhost.config.yaml'), 'root: .\n');
    const c = loadConfig({ cwd: wt, env: { HOME: home } });
    expect(c.root).toBe(wt);
    expect(c.vars.koda).toBe(join(wt, KODA));
    expect(c.roots).toEqual([wt, join(home, 'sparse')]);
    expect(c.markers).toEqual([KODA, 'meta/context/notices']);
  });

  it('a marker that climbs out of the checkout is refused with file and line', () => {
    const d = mk('cfg', 'bad');
    writeFileSync(join(d, 'offhost.config.yaml'), 'role: laptop\nmarkers: [../x]\n');
    let err: unknown;
    try {
      loadConfig({ cwd: d, env: { HOME: d } });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).message).toMatch(/markers/);
    expect((err as ConfigError & { line?: number }).line).toBe(2);
  });
});

describe('where offhost stands (explain, doctor)', () => {
  it('names the checkout, and fails doctor\'s check on a checkout that looks like the monorepo without the policy applying', () => {
    const home = mk('st', 'home');
    const real = mk('st', 'koder', KODA);
    const look = mk('st', 'lookalike', 'engines', 'lang');
    for (const d of [join(tmp, 'st', 'koder'), join(tmp, 'st', 'lookalike')]) {
      writeFileSync(join(d, 'README'), 'x\n');
      git(d, 'init', '-q', '-b', 'main');
    }
    const config = loadConfig({ cwd: real, env: { HOME: home } });
    const s = standingOf(real, config);
    expect(s.checkout).toEqual({ top: join(tmp, 'st', 'koder'), why: 'marker', marker: KODA });
    expect(s.ruleCwd).toBe(join(home, 'dev', 'koder', KODA));
    expect(checkoutCheck(real, { HOME: home }, config)).toMatchObject({ area: 'repo', ok: true });
    const bad = checkoutCheck(look, { HOME: home }, config);
    expect(bad.ok).toBe(false);
    expect(bad.detail).toContain('looks like a checkout of the monorepo (it has engines/lang/)');
    expect(bad.fix).toContain(`roots: ["${join(tmp, 'st', 'lookalike')}"]`);
    // A folder in no checkout and unlike the monorepo: a note, not a problem.
    expect(checkoutCheck(mk('st', 'plain'), { HOME: home }, config)).toMatchObject({ ok: true, note: true });
  });
});
