// The exec-time corpus (fixtures/exec-corpus/*.yaml) through the $SHELL wrapper with real bash, in a
// plain and a symlinked checkout: no heavy stand-in starts on the laptop for a heavy line (it runs "on the VM" through
// the stand-in incus, or the line is refused), and a light line runs here, never rerouted or refused.
// Each line costs several node starts (the wrapper, `offhost run`, the VM stand-ins): the default run
// takes every STRIDE-th line of each group in each layout, from a different offset per layout, so the two
// layouts run different lines (test/helpers/sample.ts); `npm run test:full` runs every line in both.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { readStandinLog } from '../helpers/standins.js';
import { sampling } from '../helpers/sample.js';
import { ROOT, SHELL, type Layout, type Tree, clearHeavy, heavyRuns, laptopEnv, makeTree } from '../shims/tree.js';

interface Entry {
  line: string;
  cwd: 'koda' | 'koda-physical' | 'koda-link' | 'root' | 'elsewhere';
  expect: 'vm' | 'refused' | 'off-laptop' | 'local' | 'harmless';
  runs?: string;
  why: string;
}

const GROUPS = ['true-positives', 'false-positives', 'bypasses', 'edge-cases'] as const;
const corpus = Object.fromEntries(GROUPS.map((g) => [g, parse(readFileSync(join(ROOT, 'fixtures', 'exec-corpus', `${g}.yaml`), 'utf8')) as Entry[]]));
const sample = sampling('full');
const STRIDE = 8;
const LAYOUTS: Layout[] = ['symlinked', 'plain'];
let linesRun = 0;
afterAll(() => {
  if (linesRun) console.log(`exec corpus: ${linesRun} line runs through the $SHELL wrapper${sample.full ? ' (every line in both layouts)' : ' (a sample; npm run test:full runs every line in both layouts)'}`);
});

describe.each(LAYOUTS.map((layout, n) => [layout, n] as const))('a %s checkout', (layout, n) => {
  let t: Tree;
  beforeAll(() => {
    t = makeTree(layout);
  });
  afterAll(() => t.cleanup());

  function dirOf(e: Entry): string {
    return { koda: t.koda, 'koda-physical': t.physicalKoda, 'koda-link': t.kodaLink, root: t.root, elsewhere: t.elsewhere }[e.cwd];
  }

  for (const group of GROUPS) {
    const chosen = sample.pick(corpus[group]!, STRIDE, { offset: (n * STRIDE) / LAYOUTS.length });
    describe(`${group}, ${sample.scope(chosen.length, corpus[group]!.length)} lines`, () => {
      it.each(chosen.map((e) => [e.line.replace(/\n/g, '\\n'), e] as const))('%s', (_name, e) => {
        const cwd = dirOf(e);
        clearHeavy(t);
        const before = readStandinLog(t.standinLog).length;
        const r = spawnSync(SHELL, ['-c', e.line], { cwd, env: laptopEnv(t, { PWD: cwd, SHELL, OFFHOST_SESSION: 'corpus' }), encoding: 'utf8', timeout: 60_000 });
        linesRun++;
        const runs = heavyRuns(t);
        const remote = readStandinLog(t.standinLog).slice(before).filter((x) => x.tool === 'incus' || x.tool === 'ssh');
        const seen = `status ${r.status}\nheavy: ${JSON.stringify(runs)}\nstderr: ${r.stderr}`;
        // Never a heavy start on the laptop for a heavy line.
        if (e.expect !== 'local') expect(runs.filter((h) => h.laptop), seen).toEqual([]);
        switch (e.expect) {
          case 'vm':
            expect(r.status, seen).toBe(0);
            expect(runs.length, seen).toBeGreaterThan(0);
            break;
          case 'refused':
            expect(r.status, seen).toBe(126);
            expect(runs, seen).toEqual([]);
            break;
          case 'off-laptop':
            expect(r.status === 126 || runs.length > 0, `neither refused nor run on the VM\n${seen}`).toBe(true);
            break;
          case 'harmless':
            expect(r.status, seen).toBe(0);
            expect(runs, seen).toEqual([]);
            break;
          case 'local':
            expect(r.status, seen).toBe(0);
            expect(remote, seen).toEqual([]);
            expect(runs.every((h) => h.laptop), seen).toBe(true);
            if (e.runs) expect(runs.map((h) => h.prog), seen).toContain(e.runs);
            break;
        }
      });
    });
  }
});
