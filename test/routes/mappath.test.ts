import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/errors.js';
import { mapPath } from '../../src/routes/index.js';

const KODER = [{ from: '/home/koder/dev/koder', to: '/srv/koder' }];

describe('mapPath', () => {
  it('maps the prefix itself and paths below it', () => {
    expect(mapPath('/home/koder/dev/koder', KODER)).toBe('/srv/koder');
    expect(mapPath('/home/koder/dev/koder/engines/lang/koda', KODER)).toBe('/srv/koder/engines/lang/koda');
    expect(mapPath('/home/koder/dev/koder/', KODER)).toBe('/srv/koder/');
  });

  it('matches on whole segments only: koder2 is not below koder', () => {
    expect(mapPath('/home/koder/dev/koder2', KODER)).toBe('/home/koder/dev/koder2');
    expect(mapPath('/home/koder/dev/koder2/x', KODER)).toBe('/home/koder/dev/koder2/x');
    expect(mapPath('/home/koder/dev/kode', KODER)).toBe('/home/koder/dev/kode');
  });

  it('is the identity when nothing matches or there are no mappings', () => {
    expect(mapPath('/etc/x', KODER)).toBe('/etc/x');
    expect(mapPath('/home/koder/dev/koder/x', [])).toBe('/home/koder/dev/koder/x');
  });

  it('takes the longest matching prefix, whatever the order', () => {
    const maps = [
      { from: '/home/koder', to: '/h' },
      { from: '/home/koder/dev/koder/engines', to: '/engines' },
      { from: '/home/koder/dev/koder', to: '/srv/koder' },
    ];
    expect(mapPath('/home/koder/dev/koder/engines/lang/koda', maps)).toBe('/engines/lang/koda');
    expect(mapPath('/home/koder/dev/koder/meta', maps)).toBe('/srv/koder/meta');
    expect(mapPath('/home/koder/.cache', maps)).toBe('/h/.cache');
    expect(mapPath('/home/koder/dev/koder/engines/lang/koda', [...maps].reverse())).toBe('/engines/lang/koda');
  });

  it('ignores trailing slashes on from and to', () => {
    expect(mapPath('/home/koder/dev/koder/x', [{ from: '/home/koder/dev/koder/', to: '/srv/koder/' }])).toBe('/srv/koder/x');
  });

  it('maps the root as a prefix of every absolute path', () => {
    expect(mapPath('/a/b', [{ from: '/', to: '/mnt/laptop' }])).toBe('/mnt/laptop/a/b');
    expect(mapPath('/', [{ from: '/', to: '/mnt/laptop' }])).toBe('/mnt/laptop');
    expect(mapPath('/a', [{ from: '/a', to: '/' }])).toBe('/');
    expect(mapPath('/a/b', [{ from: '/a', to: '/' }])).toBe('/b');
  });

  it('keeps odd characters in the rest of the path byte for byte', () => {
    expect(mapPath("/home/koder/dev/koder/a b/'$x'/\n/é", KODER)).toBe("/srv/koder/a b/'$x'/\n/é");
  });

  it('identity mapping (bind mount at the same path, POLICY R6)', () => {
    expect(mapPath('/home/koder/dev/koder/x', [{ from: '/home/koder/dev/koder', to: '/home/koder/dev/koder' }])).toBe('/home/koder/dev/koder/x');
  });

  it('refuses an empty from or to', () => {
    expect(() => mapPath('/x', [{ from: '', to: '/y' }])).toThrow(ConfigError);
    expect(() => mapPath('/x', [{ from: '/x', to: '' }])).toThrow(ConfigError);
  });
});
