// Property: for every backend, a job with hostile argv, directory and environment, rendered and run by
// real bash on the "laptop" with the stand-ins first on PATH, reaches the final program with exactly
// the original argv, in exactly the (mapped) directory, with exactly the job's environment values,
// through the backend's tool (stand-in log), and its exit status comes back unchanged.
import { realpathSync } from 'node:fs';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { renderJob, type Job, type VmSpec } from '../../src/routes/index.js';
import { jobShape, makeWorld, runOnLaptop, type JobShape, type World } from './harness.js';
import { sampling } from '../helpers/sample.js';

// Each run is real bash and the stand-ins: the default run makes 20 per backend, `npm run test:full` 60
// (test/helpers/sample.ts); OFFHOST_ROUTES_RUNS sets another number.
const RUNS = Number(process.env.OFFHOST_ROUTES_RUNS ?? (sampling('full').full ? 60 : 20));
const SEED = Number(process.env.OFFHOST_ROUTES_SEED ?? 20261129);

let world: World;
beforeAll(() => {
  world = makeWorld();
});
afterAll(() => world?.cleanup());

interface Case {
  name: string;
  vm: VmSpec | ((pick: number) => VmSpec);
  /** Tools (and instance / host) the stand-in log must show, in order. */
  via: { tool: string; instance: string }[] | ((vm: VmSpec) => { tool: string; instance: string }[]);
  /** Remote shells to alternate between (OFFHOST_STANDIN_REMOTE_SHELL). */
  shells?: string[];
}

const TEMPLATES = [
  'vm run {instance} {script}',
  'win.sh sh "{script}"',
  "tart-vm.sh exec {instance} -- sh -c {script}",
  'ssh -o BatchMode=yes {host} {script}',
];
const templateVia = (vm: VmSpec) => {
  const t = vm.template!;
  if (t.startsWith('vm ')) return [{ tool: 'vm', instance: 'box' }];
  if (t.startsWith('win.sh')) return [{ tool: 'win.sh', instance: 'win' }];
  if (t.startsWith('tart-vm.sh')) return [{ tool: 'tart-vm.sh', instance: 'box' }];
  return [{ tool: 'ssh', instance: 'khost1' }];
};

const CASES: Case[] = [
  { name: 'incus (local)', vm: { id: 's.khost1.dev-linux-koda', backend: 'incus', instance: 'dev-linux-koda' }, via: [{ tool: 'incus', instance: 'dev-linux-koda' }] },
  {
    name: 'incus behind ssh',
    vm: { id: 's.khost1.dev-linux-koda', backend: 'incus', host: 'khost1', instance: 'dev-linux-koda' },
    via: [{ tool: 'ssh', instance: 'khost1' }, { tool: 'incus', instance: 'dev-linux-koda' }],
    shells: ['/bin/sh', '/bin/bash'],
  },
  { name: 'ssh', vm: { id: 's.khost1.dev-linux-koda', backend: 'ssh', host: 'khost1' }, via: [{ tool: 'ssh', instance: 'khost1' }], shells: ['/bin/sh', '/bin/bash'] },
  { name: 'docker (local)', vm: { id: 'local.ctr', backend: 'docker', instance: 'ctr' }, via: [{ tool: 'docker', instance: 'ctr' }] },
  {
    name: 'docker behind ssh',
    vm: { id: 's.khost1.ctr', backend: 'docker', host: 'khost1', instance: 'ctr' },
    via: [{ tool: 'ssh', instance: 'khost1' }, { tool: 'docker', instance: 'ctr' }],
    shells: ['/bin/sh', '/bin/bash'],
  },
  { name: 'lima', vm: { id: 'lima.landlock-vm', backend: 'lima', instance: 'landlock-vm' }, via: [{ tool: 'limactl', instance: 'landlock-vm' }], shells: ['/bin/sh', '/bin/bash'] },
  { name: 'multipass', vm: { id: 'mp.primary', backend: 'multipass', instance: 'primary' }, via: [{ tool: 'multipass', instance: 'primary' }] },
  { name: 'tart', vm: { id: 'tart.sonoma', backend: 'tart', instance: 'sonoma' }, via: [{ tool: 'tart', instance: 'sonoma' }] },
  {
    name: 'template (vm run / win.sh / tart-vm.sh / ssh)',
    vm: (pick) => ({ id: 'tpl.box', backend: 'template', instance: 'box', host: 'khost1', template: TEMPLATES[pick % TEMPLATES.length]! }),
    via: templateVia,
    shells: ['/bin/sh', '/bin/bash'],
  },
];

function jobFor(shape: JobShape, dir: string): Job {
  const argv0 = world.dumpers[shape.argv0];
  return { argv: [argv0, ...shape.args], cwd: dir, env: { ...shape.env, OFFHOST_T_EXIT: String(shape.exit) } };
}

describe.each(CASES)('backend $name: hostile argv/cwd/env arrive intact', (c) => {
  it(
    `${c.name}: runs exactly the job on the VM and passes the exit status (${RUNS} runs, seeded)`,
    () => {
      fc.assert(
        fc.property(jobShape, fc.nat(), fc.nat(), (shape, pick, shellPick) => {
          const vm = typeof c.vm === 'function' ? c.vm(pick) : c.vm;
          const dir = world.makeDir(shape.segments);
          const job = jobFor(shape, dir);
          const line = renderJob(vm, job);
          const shell = c.shells ? c.shells[shellPick % c.shells.length]! : undefined;
          const r = runOnLaptop(world, line, shell ? { OFFHOST_STANDIN_REMOTE_SHELL: shell } : {});
          const ctx = `\nline: ${line}\nstderr: ${r.stderr}`;
          expect(r.dump, `no dump${ctx}`).not.toBeNull();
          const d = r.dump!;
          expect(d.args, `argv${ctx}`).toEqual(shape.args);
          if (shape.argv0 === 'bare') expect(d.arg0.endsWith('/offhost-dump'), ctx).toBe(true);
          else expect(d.arg0, `argv[0]${ctx}`).toBe(job.argv[0]);
          expect(d.cwd, `cwd${ctx}`).toBe(realpathSync(dir));
          for (const [k, v] of Object.entries(job.env)) expect(d.env[k], `env ${k}${ctx}`).toBe(v);
          expect(r.status, `exit status${ctx}`).toBe(shape.exit);
          const via = typeof c.via === 'function' ? c.via(vm) : c.via;
          expect(
            r.log.map((e) => ({ tool: e.tool, instance: e.instance })),
            `stand-in log${ctx}`,
          ).toEqual(via);
        }),
        { numRuns: RUNS, seed: SEED, endOnFailure: true },
      );
    },
  );
});
