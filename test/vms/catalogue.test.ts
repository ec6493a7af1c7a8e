// The catalogue's own rules: stg/prd VMs only on a route that declares that scenario (POLICY R2); what
// each built-in VM declares; {root} in mount and smoke.
import { describe, expect, it } from 'vitest';
import { builtinLayer } from '../../src/config/builtin.js';
import { resolveLayers, type Layer } from '../../src/config/resolve.js';
import { configSchema } from '../../src/config/schema.js';

const env = { HOME: '/home/koder' };
function layer(yaml: Record<string, unknown>): Layer {
  const parsed = configSchema.parse(yaml);
  return { ...parsed, file: 'offhost.config.yaml', rules: [] } as Layer;
}

describe('the catalogue', () => {
  it('built-ins declare what they are; the Windows VM is there', () => {
    const c = resolveLayers([builtinLayer()], env);
    const koda = c.vms.get('s.khost1.dev-linux-koda')!;
    expect(koda).toMatchObject({ kind: 'container', arch: 'x86_64', where: 'remote', image: 'images:debian/13', packages: ['nasm', 'gcc', 'binutils', 'make', 'git'] });
    expect(koda.mount).toEqual({ source: '/home/koder/dev/koder', path: '/home/koder/dev/koder', readonly: true, device: 'koder' });
    expect(koda.smoke).toContain('make -n -C /home/koder/dev/koder/engines/lang/koda build-safe');
    expect(c.vms.get('s.khost1.dev-win10')).toMatchObject({ backend: 'template', template: 'win.sh sh {script}', kind: 'vm', arch: 'x86_64', where: 'remote' });
    expect(c.routes.get('koda')!.require).toEqual({ where: 'remote' });
    for (const id of c.vms.keys()) expect(id).toMatch(/^s\.khost1\.dev-/);
  });
  it('a stg VM on a route without a staging scenario is refused', () => {
    const l = layer({ vms: [{ id: 's.khost1.stg-web', backend: 'ssh', host: 'khost1' }], routes: { web: { vms: ['s.khost1.stg-web'] } } });
    expect(() => resolveLayers([builtinLayer(), l], env)).toThrow(/route 'web' names s\.khost1\.stg-web, a staging VM: test VMs are dev \(POLICY R2\); declare `scenario: staging`/);
  });
  it('a prd VM no route declares a production scenario for is refused', () => {
    const l = layer({ vms: [{ id: 's.khost1.prd-web', backend: 'ssh', host: 'khost1' }] });
    expect(() => resolveLayers([builtinLayer(), l], env)).toThrow(/VM s\.khost1\.prd-web is a production VM, and no route declares a production scenario/);
  });
  it('with the scenario declared, the stg VM is accepted', () => {
    const l = layer({ vms: [{ id: 's.khost1.stg-web', backend: 'ssh', host: 'khost1' }], routes: { web: { vms: ['s.khost1.stg-web'], scenario: 'staging' } } });
    expect(resolveLayers([builtinLayer(), l], env).routes.get('web')!.vms).toEqual(['s.khost1.stg-web']);
  });
  it('kind, arch and where are validated', () => {
    expect(configSchema.safeParse({ vms: [{ id: 's.khost1.dev-x', backend: 'ssh', host: 'h', kind: 'jail' }] }).success).toBe(false);
    expect(configSchema.safeParse({ vms: [{ id: 's.khost1.dev-x', backend: 'ssh', host: 'h', arch: 'x86-64!' }] }).success).toBe(false);
    expect(configSchema.safeParse({ routes: { r: { vms: ['s.khost1.dev-x'], require: { kind: 'hypervisor' } } } }).success).toBe(false);
  });
});
