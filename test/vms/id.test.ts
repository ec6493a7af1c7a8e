import { describe, expect, it } from 'vitest';
import { hostsOf, isProductionContainer, isVmId, nextNumberedVmId, parseVmId, vmIdProblem } from '../../src/vms/id.js';
import { vmIdProblem as lockVmIdProblem, isCanonicalVmId } from '../../src/locks/schema.js';
import { activeLockPath } from '../../src/locks/paths.js';
import { configSchema } from '../../src/config/schema.js';

describe('one VM-id grammar (POLICY R2)', () => {
  it('parses s.<host>.<env>-<target>[-<slug>]', () => {
    expect(parseVmId('s.khost1.dev-linux-koda')).toEqual({ host: 'khost1', env: 'dev', name: 'linux-koda', instance: 'dev-linux-koda' });
    expect(parseVmId('s.khost2.stg-web')).toEqual({ host: 'khost2', env: 'stg', name: 'web', instance: 'stg-web' });
    expect(parseVmId('s.khost1.flow')).toBeNull();
    expect(parseVmId('s.khost1.test-linux-koda')).toBeNull();
    expect(parseVmId('dev-linux-koda')).toBeNull();
    expect(parseVmId('s.khost1.dev-')).toBeNull();
    expect(parseVmId('s.KHOST1.dev-x')).toBeNull();
  });
  it('production containers are never test VMs, on any host', () => {
    for (const id of ['s.khost1.flow', 's.khost1.id', 's.khost1.hub', 's.khost1.aivoice', 's.khost2.flow']) {
      expect(isProductionContainer(id)).toBe(true);
      expect(isVmId(id)).toBe(false);
      expect(vmIdProblem(id)).toMatch(/production container/);
    }
  });
  it('limits hosts to the ones the configuration names when asked', () => {
    const hosts = hostsOf(['s.khost2.dev-linux-gui']);
    expect([...hosts].sort()).toEqual(['khost1', 'khost2']);
    expect(isVmId('s.khost2.dev-linux-gui', hosts)).toBe(true);
    expect(isVmId('s.khost3.dev-linux-gui', hosts)).toBe(false);
    expect(vmIdProblem('s.khost3.dev-linux-gui', hosts)).toMatch(/host 'khost3'.*known: khost1, khost2/);
  });
  it('is the grammar config, locks and lock paths use (a VM on another host is accepted by all)', () => {
    const id = 's.khost2.dev-linux-gui';
    expect(isCanonicalVmId(id)).toBe(true);
    expect(lockVmIdProblem(id)).toBeNull();
    expect(activeLockPath(id)).toBe('meta/context/notices/vm-active/lock-s.khost2.dev-linux-gui.md');
    expect(configSchema.safeParse({ vms: [{ id, backend: 'ssh', host: 'khost2' }], routes: { gui: { vms: [id] } } }).success).toBe(true);
    for (const bad of ['s.khost1.flow', 's.khost1.test-linux-koda', 'dev-linux-koda']) {
      expect(isCanonicalVmId(bad)).toBe(false);
      expect(() => activeLockPath(bad)).toThrow(/not a (test VM|canonical)|production container/);
      expect(configSchema.safeParse({ vms: [{ id: bad, backend: 'ssh', host: 'x' }] }).success).toBe(false);
    }
    expect(lockVmIdProblem('dev-linux-koda')).toMatch(/write the full id s\.khost1\.dev-linux-koda/);
    expect(lockVmIdProblem('s.khost1.test-linux-koda')).toMatch(/env 'test' must be dev, stg or prd/);
  });
  it('numbers a new VM of a pool (R4 option b)', () => {
    expect(nextNumberedVmId('s.khost1.dev-linux-koda', new Set(['s.khost1.dev-linux-koda']))).toBe('s.khost1.dev-linux-koda-2');
    expect(nextNumberedVmId('s.khost1.dev-linux-koda', new Set(['s.khost1.dev-linux-koda-2']))).toBe('s.khost1.dev-linux-koda-3');
  });
});
