// A container's paths and the laptop's: only a bind mount joins them (src/shell/container-view.ts).
import { describe, expect, it } from 'vitest';
import { containerFiles, laptopPath, nestedView, OPAQUE_CONTAINER, type ContainerView } from '../../src/shell/container-view.js';
import type { FileAccess } from '../../src/shell/file-access.js';

const view: ContainerView = {
  workdir: '/src',
  mounts: [
    { target: '/src', host: '/home/koder/dev/koder' },
    { target: '/src/engines/lang/koda/out', host: null }, // a named volume over part of the mount
    { target: '/', host: null },
  ],
};

describe('laptopPath', () => {
  it.each([
    ['/src', '/home/koder/dev/koder'],
    ['/src/', '/home/koder/dev/koder'],
    ['/src/engines/lang/koda', '/home/koder/dev/koder/engines/lang/koda'],
    // Built to fool a prefix test: /srcx is not under /src.
    ['/srcx/engines/lang/koda', null],
    // The longest mount wins, and a mount with no known host hides the one below it.
    ['/src/engines/lang/koda/out/bin', null],
    ['/tmp', null],
    [null, null],
  ])('%s -> %s', (p, want) => {
    expect(laptopPath(view, p)).toBe(want);
  });

  it('a container with no mounts shown has no laptop paths at all', () => {
    expect(laptopPath(OPAQUE_CONTAINER, '/home/koder/dev/koder/engines/lang/koda')).toBeNull();
  });

  it('a container started inside another maps through the outer one', () => {
    const inner = nestedView(view, { workdir: '/k', mounts: [{ target: '/k', host: '/src/engines/lang/koda' }, { target: '/t', host: '/tmp' }] });
    expect(laptopPath(inner, '/k/sub')).toBe('/home/koder/dev/koder/engines/lang/koda/sub');
    expect(laptopPath(inner, '/t')).toBeNull();
  });
});

describe('containerFiles', () => {
  const disk: FileAccess = {
    read: (p) => (p === '/home/koder/dev/koder/Makefile' ? { kind: 'text', text: 'all:\n' } : { kind: 'missing' }),
    list: (d) => (d === '/home/koder/dev/koder' ? ['Makefile'] : null),
  };
  const files = containerFiles(disk, view);
  it('reads through the mount, and nothing else: the laptop file spelled like a container path is not read', () => {
    expect(files.read('/src/Makefile')).toEqual({ kind: 'text', text: 'all:\n' });
    expect(files.read('/home/koder/dev/koder/Makefile').kind).toBe('unreadable');
    expect(files.list!('/src')).toEqual(['Makefile']);
    expect(files.list!('/etc')).toBeNull();
  });
});
