// Which config files are in force for a directory (src/config/discover.ts), on real folders.
import { afterAll, describe, expect, it } from 'vitest';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { configFiles, findProjectConfig, userConfigPath } from '../../src/config/discover.js';
import { ConfigError } from '../../src/errors.js';

const tmp = mkdtempSync(join(tmpdir(), 'offhost-discover-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

function tree(name: string, files: string[]): string {
  const base = join(tmp, name);
  for (const f of files) {
    mkdirSync(join(base, f, '..'), { recursive: true });
    if (!f.endsWith('/')) writeFileSync(join(base, f), 'role: laptop\n');
    else mkdirSync(join(base, f), { recursive: true });
  }
  return base;
}

describe('userConfigPath', () => {
  it.each([
    ['XDG_CONFIG_HOME wins over HOME', { XDG_CONFIG_HOME: '/x/cfg', HOME: '/home/a' }, '/x/cfg/offhost/config.yaml'],
    ['HOME/.config without XDG_CONFIG_HOME', { HOME: '/home/a' }, '/home/a/.config/offhost/config.yaml'],
    ['an empty XDG_CONFIG_HOME counts as unset', { XDG_CONFIG_HOME: '', HOME: '/home/a' }, '/home/a/.config/offhost/config.yaml'],
    ['neither: no user file', {}, null],
  ] as const)('%s', (_what, env, expected) => {
    expect(userConfigPath(env as NodeJS.ProcessEnv)).toBe(expected);
  });
});

describe('findProjectConfig', () => {
  const root = tree('walk', ['repo/offhost.config.yaml', 'repo/a/b/c/', 'repo/inner/offhost.config.yaml', 'repo/inner/x/', 'bare/d/']);
  it.each([
    ['in the directory itself', 'repo', 'repo/offhost.config.yaml'],
    ['from a folder three levels down', 'repo/a/b/c', 'repo/offhost.config.yaml'],
    ['the nearest one, not the outer one', 'repo/inner/x', 'repo/inner/offhost.config.yaml'],
    ['none up to /', 'bare/d', null],
  ] as const)('%s', (_what, cwd, expected) => {
    expect(findProjectConfig(join(root, cwd))).toBe(expected === null ? null : join(root, expected));
  });
  it('a relative cwd is resolved first', () => {
    expect(findProjectConfig(join(root, 'repo', 'a', '..', 'a', 'b'))).toBe(join(root, 'repo/offhost.config.yaml'));
  });
  it('walks up the path as given, also through a symlinked folder', () => {
    const link = join(tmp, 'link-to-c');
    symlinkSync(join(root, 'repo', 'a', 'b', 'c'), link);
    // The link's own parent (tmp) has no config file: the walk is lexical, as the doors pass the cwd.
    expect(findProjectConfig(link)).toBe(null);
  });
});

describe('configFiles', () => {
  const xdg = tree('xdg', ['offhost/config.yaml']);
  const root = tree('layers', ['proj/offhost.config.yaml', 'proj/sub/', 'other.yaml']);
  const env = { XDG_CONFIG_HOME: xdg } as NodeJS.ProcessEnv;
  it('user file, then the project file, lowest layer first', () => {
    expect(configFiles({ cwd: join(root, 'proj/sub'), env })).toEqual([join(xdg, 'offhost/config.yaml'), join(root, 'proj/offhost.config.yaml')]);
  });
  it('--config replaces the project file (resolved against cwd)', () => {
    expect(configFiles({ cwd: join(root, 'proj'), env, configFile: '../other.yaml' })).toEqual([join(xdg, 'offhost/config.yaml'), join(root, 'other.yaml')]);
  });
  it('a user file that does not exist is simply absent', () => {
    expect(configFiles({ cwd: join(root, 'proj'), env: { XDG_CONFIG_HOME: join(tmp, 'nowhere') } })).toEqual([join(root, 'proj/offhost.config.yaml')]);
  });
  it('a --config that does not exist is a ConfigError naming the path, never a silent default', () => {
    let err: unknown;
    try {
      configFiles({ cwd: root, env, configFile: 'missing.yaml' });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).file).toBe(join(root, 'missing.yaml'));
    expect((err as ConfigError).message).toMatch(/missing\.yaml: the config file given with --config does not exist/);
  });
});
