// The default run's samples (test/helpers/sample.ts): which cases a stride takes, and that every file
// that samples runs in full in a package.json script that sets its switch, and that .ci/run runs it.
import { describe, expect, it } from 'vitest';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { SWITCHES, type SwitchName, sampling } from './sample.js';

const ROOT = join(import.meta.dirname, '..', '..');

/** The switches a test file's source asks for: each `sampling('name')` call. */
export function switchesIn(source: string): SwitchName[] {
  const names = [...source.matchAll(/\bsampling\(\s*(['"])(\w+)\1/g)].map((m) => m[2]!);
  for (const n of names) if (!(n in SWITCHES)) throw new Error(`unknown sampling switch ${n}`);
  return [...new Set(names)].sort() as SwitchName[];
}

/**
 * The test files a package.json script runs with `setting` in its environment: 'all' for the whole suite
 * (`setting npm test`, `setting vitest run` with no file), the files named after `setting vitest run`, or null
 * when the script runs no vitest with that setting.
 */
export function scriptFiles(line: string, setting: string): 'all' | string[] | null {
  const m = new RegExp(`(?:^|&&\\s*)${setting.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\s+(npm test|vitest run)((?:\\s+[^\\s&|;]+)*)\\s*$`).exec(line.trim());
  if (!m) return null;
  const files = m[2]!.split(/\s+/).filter(Boolean);
  if (m[1] === 'npm test') return files.length ? null : 'all';
  return files.length ? files : 'all';
}

/** A shell script runs `npm run NAME` as a command of its own on some line (alone, or after `&&`). */
export function runsScript(script: string, name: string): boolean {
  return script.split('\n').some((l) => l.split(/\s*&&\s*/).some((cmd) => cmd.trim() === `npm run ${name}`));
}

describe('pick', () => {
  const items = Array.from({ length: 10 }, (_, i) => i);

  it('takes every stride-th case from the offset, plus the ones always kept', () => {
    const s = sampling('full', {});
    expect(s.full).toBe(false);
    expect(s.pick(items, 4)).toEqual([0, 4, 8]);
    expect(s.pick(items, 4, { offset: 2 })).toEqual([2, 6]);
    expect(s.pick(items, 4, { offset: 6 })).toEqual([2, 6]);
    expect(s.pick(items, 4, { always: (x) => x === 5 })).toEqual([0, 4, 5, 8]);
    expect(s.pick(items, 1)).toEqual(items);
    expect(() => s.pick(items, 0)).toThrow(/stride/);
    expect(() => s.pick(items, 1.5)).toThrow(/stride/);
  });

  it('takes everything when its switch is on, and only its own switch counts', () => {
    expect(sampling('full', { OFFHOST_TEST_FULL: '1' }).pick(items, 4)).toEqual(items);
    expect(sampling('redteam', { OFFHOST_REDTEAM: 'full' }).pick(items, 4)).toEqual(items);
    expect(sampling('redteam', { OFFHOST_TEST_FULL: '1' }).pick(items, 4)).toEqual([0, 4, 8]);
    expect(sampling('full', { OFFHOST_TEST_FULL: 'yes' }).full).toBe(false);
  });

  it('says how many run and which script runs them all', () => {
    expect(sampling('full', {}).scope(3, 10)).toBe('a sample: 3 of 10 (npm run test:full runs them all)');
    expect(sampling('redteam', {}).scope(3, 10)).toBe('a sample: 3 of 10 (npm run test:redteam runs them all)');
    expect(sampling('full', {}).scope(10, 10)).toBe('all 10');
    expect(sampling('full', { OFFHOST_TEST_FULL: '1' }).scope(10, 10)).toBe('all 10');
  });
});

describe('fullOnly', () => {
  const ran: string[] = [];
  sampling('full', {}).fullOnly('without its switch: reported skipped, never run', () => {
    throw new Error('a fullOnly test ran without its switch');
  });
  sampling('full', { OFFHOST_TEST_FULL: '1' }).fullOnly('under its switch: runs', () => {
    ran.push('under the switch');
  });
  sampling('full', { OFFHOST_TEST_FULL: '1' }).fullOnly('under its switch: through the base the file gives', () => ran.push('not this one'), undefined, (title, fn, timeout) => it.skip(title, fn, timeout));
  it('ran exactly the one under its switch with plain it', () => {
    expect(ran).toEqual(['under the switch']);
  });
});

describe('every sampled file runs in full in CI', () => {
  it('the script readers take what runs, not a name like it', () => {
    const S = 'OFFHOST_TEST_FULL=1';
    expect(scriptFiles('OFFHOST_TEST_FULL=1 npm test', S)).toBe('all');
    expect(scriptFiles('OFFHOST_TEST_FULL=1 vitest run', S)).toBe('all');
    expect(scriptFiles('npm run build && OFFHOST_TEST_FULL=1 vitest run a.test.ts b.test.ts', S)).toEqual(['a.test.ts', 'b.test.ts']);
    for (const fooling of [
      'OFFHOST_TEST_FULL=10 npm test', // another value
      'XOFFHOST_TEST_FULL=1 npm test', // another variable
      'OFFHOST_TEST_FULL=1 echo; npm test', // the setting is for echo
      'npm test OFFHOST_TEST_FULL=1', // an argument, not the environment
      'OFFHOST_TEST_FULL=1 npm test -- a.test.ts', // a filter: not every file
      'OFFHOST_TEST_FULL=1 npm test && exit 0', // something after it
      'OFFHOST_TEST_FULL=1 npm testing',
    ])
      expect(scriptFiles(fooling, S), fooling).toBeNull();
    expect(runsScript('set -e\nnpm ci\nnpm run typecheck && npm run test:full\n', 'test:full')).toBe(true);
    expect(runsScript('npm run test:redteam\n', 'test:red')).toBe(false);
    expect(runsScript('# npm run test:full\n', 'test:full')).toBe(false);
    expect(runsScript('echo npm run test:full\n', 'test:full')).toBe(false);
    expect(runsScript('npm run test:full-ish\n', 'test:full')).toBe(false);
  });

  it('the scanner finds the calls, not the import or a name like it', () => {
    const fooling = [
      "import { sampling } from '../helpers/sample.js';",
      "const a = sampling('full');",
      'const b = sampling( "redteam" );',
      "const c = mysampling('full'); // a call of another function",
      'const d = sampling;',
    ].join('\n');
    expect(switchesIn(fooling)).toEqual(['full', 'redteam']);
    expect(switchesIn("sampling('full'); sampling('full')")).toEqual(['full']);
    expect(switchesIn("import { sampling } from './sample.js';")).toEqual([]);
    expect(() => switchesIn("sampling('everything')")).toThrow(/unknown/);
  });

  it("each file that samples is in the script that sets its switch, and .ci/run runs that script", () => {
    const scripts = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;
    const ci = readFileSync(join(ROOT, '.ci', 'run'), 'utf8');
    const files = (readdirSync(join(ROOT, 'test'), { recursive: true }) as string[]).filter((f) => f.endsWith('.test.ts')).map((f) => join('test', f)).filter((f) => f !== join('test', 'helpers', 'sample.test.ts')); // not this file's own examples
    const users: Record<string, string[]> = {};
    for (const f of files) for (const name of switchesIn(readFileSync(join(ROOT, f), 'utf8'))) (users[name] ??= []).push(f);
    // The files that use the helper: this test would pass vacuously if the scan found nothing.
    expect(Object.keys(users).sort()).toEqual(['full', 'redteam']);
    for (const [name, using] of Object.entries(users)) {
      const { env, value, script } = SWITCHES[name as SwitchName];
      const line = scripts[script];
      expect(line, `package.json has no ${script} script`).toBeDefined();
      const files = scriptFiles(line!, `${env}=${value}`);
      expect(files, `${script} does not set ${env}=${value} for a vitest run`).not.toBeNull();
      // `npm test` is every file only while its script is a plain `vitest run`.
      if (files === 'all' && /\bnpm test\b/.test(line!)) expect(scripts.test, 'npm test filters files').toBe('vitest run');
      if (files !== 'all') {
        for (const f of files!) expect(existsSync(join(ROOT, f)), `${script} lists ${f}, which does not exist`).toBe(true);
        expect(using.map((f) => relative('.', f)).filter((f) => !files!.includes(f)), `files sampling with '${name}' that ${script} does not run`).toEqual([]);
      }
      expect(runsScript(ci, script), `.ci/run does not run ${script}`).toBe(true);
    }
  });
});
