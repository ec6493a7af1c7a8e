// The fault-injection suite (scripts/fault-inject.mjs) with a small trial count: real git, real offhost
// processes killed with SIGKILL at random points, the human on HEAD, clones of a bare remote. The large
// run is `npm run bench` (bench/fault-inject.bench.mjs). A failure names the seed that replays it.
import { beforeAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { ROOT, cleanEnv, ensureBuilt } from './lifecycle-helpers.js';
import { sampling } from '../helpers/sample.js';

/** The default run kills the four lock commands mid-way (`--only crash`); `npm run test:full` adds the human, race and push scenarios. */
const sample = sampling('full');
const GROUPS = sample.full ? ['crash:acquire', 'crash:gc', 'crash:heartbeat', 'crash:release', 'human', 'push:crash', 'push:race', 'race'] : ['crash:acquire', 'crash:gc', 'crash:heartbeat', 'crash:release'];

beforeAll(() => ensureBuilt());

describe('fault injection (small)', () => {
  it('zero double ownership, lock paths in user commits, changes to user work, stuck states; same outcome whatever the human does', () => {
    const seed = process.env.OFFHOST_FAULT_SEED ?? String(Date.now() % 1_000_000);
    const r = spawnSync(process.execPath, [join(ROOT, 'scripts', 'fault-inject.mjs'), '--trials', process.env.OFFHOST_FAULT_TRIALS ?? '1', '--seed', seed, '--json', ...(sample.full ? [] : ['--only', 'crash'])], {
      cwd: ROOT,
      env: cleanEnv(),
      encoding: 'utf8',
      timeout: 240_000,
    });
    const out = JSON.parse(r.stdout) as { results: Record<string, Record<string, number>>; failures: string[] };
    expect(out.failures, `replay: node scripts/fault-inject.mjs --seed ${seed}`).toEqual([]);
    for (const [scenario, counts] of Object.entries(out.results)) {
      expect(counts.trials, scenario).toBeGreaterThan(0);
      for (const [k, v] of Object.entries(counts)) if (k !== 'trials' && k !== 'killedMidway') expect(v, `${scenario} ${k} (seed ${seed})`).toBe(0);
    }
    expect(Object.keys(out.results).sort()).toEqual(GROUPS);
    expect(r.status).toBe(0);
  });
});
