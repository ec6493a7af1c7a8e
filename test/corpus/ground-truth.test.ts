// Real bash as the ground truth of the red-team corpus (fixtures/corpus/redteam/*.yaml): each line runs
// under bash in a fresh temp tree (test/corpus/redteam-tree.ts: the monorepo as a real git repo, the Koda
// engine with a real Makefile run by real GNU make), with stand-in heavy programs on PATH that record their
// argv and physical working directory (test/helpers/standins/laptop/). Then the static verdict, judged on
// the same tree with file access, must agree with what bash did: a heavy program started => the line is
// refused or rerouted; nothing heavy started => the line is allowed (unless the entry says offhost fails
// closed there because the line is dynamic). A recorded program is heavy when the rules judge its real
// argv and directory heavy (what the exec-time layer sees); the Koda compiler stand-in is heavy wherever
// it runs.
//
// Each line costs a copy of the tree and a few processes: the default run (`npm test`) takes every
// STRIDE-th line of each group and every fail-closed line (test/helpers/sample.ts); `npm run test:redteam`
// runs them all. Every line is still judged in the default run, in process: with the disk, on the
// template itself (the guard only reads it), offhost allows exactly the lines the corpus expects allowed
// (test/corpus.test.ts checks each exact verdict without the disk).
import { rmSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadGuard } from '../../src/config/load-guard.js';
import { missing, toolsIn } from '../helpers/tools.js';
import { sampling } from '../helpers/sample.js';
import { GIT_IDENTITY, GROUPS, type Laptop, isHeavy, loadGroup, makeLaptop, makeRun, records, runIn } from './redteam-tree.js';

let laptop: Laptop;
let counter = 0;
const sample = sampling('redteam');
/** The default run's stride; test/e2e/redteam-wrapper.test.ts samples other lines (its own offset). */
const STRIDE = 4;
let linesRun = 0;

beforeAll(() => {
  laptop = makeLaptop();
});

afterAll(() => {
  if (laptop) rmSync(laptop.base, { recursive: true, force: true });
  if (linesRun) console.log(`ground truth: ${linesRun} red-team lines run under bash${sample.full ? ' (every line)' : ' (a sample; npm run test:redteam runs every line)'}`);
});

describe('every line, judged with the disk in process', () => {
  for (const group of GROUPS) {
    it(`${group}: allowed exactly when the corpus expects it allowed`, () => {
      const wrong: string[] = [];
      for (const e of loadGroup(group)) {
        const { line, cwd, home, env: own } = runIn(laptop.template, e);
        const env: NodeJS.ProcessEnv = { HOME: home, PATH: `${laptop.bin}:/usr/bin:/bin`, TERM: 'dumb', LANG: 'C.UTF-8', ...GIT_IDENTITY, ...own };
        const verdict = loadGuard({ cwd, env: { HOME: home, PATH: env.PATH }, role: 'laptop' }).classify(line, { cwd, env });
        if ((verdict.decision === 'allow') !== (e.expect === 'allow')) wrong.push(`expected ${e.expect}, got ${verdict.decision} (${verdict.rule ?? 'no rule'}): ${e.line}`);
      }
      expect(wrong).toEqual([]);
    });
  }
});

for (const group of GROUPS) {
  const entries = loadGroup(group);
  const chosen = sample.pick(entries, STRIDE, { always: (e) => e.fail_closed === true });
  describe(`ground truth: ${group}, ${sample.scope(chosen.length, entries.length)} lines`, () => {
    for (const e of chosen) {
      const title = `${group}: ${e.line.replace(/\n/g, '\\n').slice(0, 110)}`;
      if (e.bash) {
        it.skip(`${title} (not run: ${e.bash})`, () => {});
        continue;
      }
      // A line naming an optional tool this machine lacks (gdb, vim, m4...: .ci/run installs them) cannot
      // show what bash does with it.
      const lacking = missing(...toolsIn(e.line));
      if (lacking) {
        it.skip(`${title} (skipped: ${lacking})`, () => {});
        continue;
      }
      it(title, () => {
        const run = makeRun(laptop, join(laptop.base, 'runs', String(++counter)), e);
        const { line, cwd } = run;
        const log = join(run.dir, 'heavy.log');
        const env: NodeJS.ProcessEnv = { HOME: run.home, PATH: `${laptop.bin}:/usr/bin:/bin`, TMPDIR: join(run.dir, 'tmp'), OFFHOST_GT_LOG: log, TERM: 'dumb', LANG: 'C.UTF-8', ...GIT_IDENTITY, ...run.env };
        const r = spawnSync('bash', ['-c', line], { cwd, env, input: '', encoding: 'utf8', timeout: 20_000 });
        linesRun++;
        const ran = records(log);
        const guard = loadGuard({ cwd, env: { HOME: run.home, PATH: env.PATH }, role: 'laptop' });
        const heavy = ran.filter((rec) => isHeavy(rec, guard));
        const verdict = guard.classify(line, { cwd, env: { ...env, OFFHOST_GT_LOG: undefined } });
        const context = [
          `why: ${e.why}`,
          `bash ran (status ${r.status}${r.error ? ` ${r.error.message}` : ''}${r.signal ? `, ${r.signal}` : ''}): ${ran.map((x) => `${x.name} ${x.argv.join(' ')} @${x.cwd.replace(run.dir, '')}`).join('; ') || 'nothing heavy or light recorded'}`,
          `heavy: ${heavy.length ? 'yes' : 'no'}; offhost said: ${verdict.decision} (${verdict.rule ?? 'no rule'}): ${verdict.reason.slice(0, 300)}`,
          `stderr: ${(r.stderr ?? '').slice(0, 400)}`,
          `stdout: ${(r.stdout ?? '').slice(0, 200)}; line as run: ${line.slice(0, 300)}`,
        ].join('\n');
        if (heavy.length) expect(verdict.decision, context).not.toBe('allow');
        else if (!e.fail_closed) expect(verdict.decision, context).toBe('allow');
        else expect(verdict.decision, context).not.toBe('allow');
        rmSync(run.dir, { recursive: true, force: true });
      });
    }
  });
}
