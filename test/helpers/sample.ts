// Per-line and per-door loops that start real processes for every case (the red-team corpus under bash
// and through the $SHELL wrapper, the exec-time corpus, the checkout layouts times the doors) take a fixed,
// stratified sample in the default run (`npm test`): every stride-th case of each group, from an offset,
// plus the cases a file marks as always run. The whole set runs under a switch that a script of
// package.json sets, and `.ci/run` runs that script (test/helpers/sample.test.ts checks both):
//
// - `redteam` (OFFHOST_REDTEAM=full, `npm run test:redteam`): the red-team corpus;
// - `full` (OFFHOST_TEST_FULL=1, `npm run test:full`): the other sampled loops.
//
// What is cheap stays whole in the default run: the static verdict of every corpus line is checked in
// process (test/corpus.test.ts).

import { it } from 'vitest';

export const SWITCHES = {
  redteam: { env: 'OFFHOST_REDTEAM', value: 'full', script: 'test:redteam' },
  full: { env: 'OFFHOST_TEST_FULL', value: '1', script: 'test:full' },
} as const;
export type SwitchName = keyof typeof SWITCHES;

/** A test function: vitest's `it`, or one derived from it (`it.skipIf(...)`). */
export type TestFn = (title: string, fn: () => unknown, timeout?: number) => void;

export interface Sampling {
  /** The switch is on: every case runs. */
  full: boolean;
  /**
   * The cases this run takes from one group: all of them under the switch; otherwise those whose index i
   * has i % stride === offset % stride, and those `always` keeps.
   */
  pick<T>(items: readonly T[], stride: number, opts?: { offset?: number; always?: (item: T, i: number) => boolean }): T[];
  /** Says how many of a group's cases run, for a describe title or a summary. */
  scope(chosen: number, total: number): string;
  /**
   * A test the default run leaves to the switch's script: one that repeats, for another case, what a test the
   * default run keeps already does end to end (each file keeps at least one). Under the switch it runs;
   * otherwise it is reported as skipped, its title naming the script that runs it.
   */
  fullOnly(title: string, fn: () => unknown, timeout?: number, base?: TestFn): void;
}

export function sampling(name: SwitchName, env: NodeJS.ProcessEnv = process.env): Sampling {
  const s = SWITCHES[name];
  const full = env[s.env] === s.value;
  return {
    full,
    pick: (items, stride, { offset = 0, always } = {}) => {
      if (!Number.isInteger(stride) || stride < 1) throw new Error(`stride must be a positive integer, not ${stride}`);
      return full ? [...items] : items.filter((item, i) => i % stride === offset % stride || (always?.(item, i) ?? false));
    },
    scope: (chosen, total) => (full || chosen === total ? `all ${total}` : `a sample: ${chosen} of ${total} (npm run ${s.script} runs them all)`),
    // `base`: a file's own `it` (one that skips where a tool is missing), used under the switch.
    fullOnly: (title, fn, timeout, base = it) => (full ? base(title, fn, timeout) : it.skip(`${title} (npm run ${s.script} runs it)`, fn)),
  };
}
