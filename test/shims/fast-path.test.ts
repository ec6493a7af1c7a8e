// The shims' fast path never skips the judge for a heavy start. Every example line of every deny/reroute
// rule (`examples.match`, and the `not_match` ones for the other direction) runs under real bash with
// the shims first on PATH and a recorder behind every shimmed name; the shims were made with a stand-in
// judge that records what it was asked and allows it. Every recorded start that the rules judge heavy
// must have gone to the judge; light starts may take the fast path (and some do: it is measured).
// The stand-in judge is POSIX sh (with the stand-ins' JSON writer, test/helpers/standins/_lib.awk): the
// installed shims' interpreter line for their judge is pointed at /bin/sh, so a judged start costs no
// node start, and the shims are otherwise as `offhost shim install` wrote them.
import { chmodSync, mkdtempSync, realpathSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync, existsSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { compiledMatch } from '../../src/policy/rule.js';
import { builtinLayer } from '../../src/config/builtin.js';
import { quote } from '../../src/routes/quote.js';
import type { CompiledMatch } from '../../src/policy/rule.js';
import { loadGuard } from '../../src/config/load-guard.js';
import { isHeavy, MODELS, records, STANDINS } from '../corpus/redteam-tree.js';
import { BIN } from './tree.js';
import { standinPath } from '../helpers/standins.js';
import { sampling } from '../helpers/sample.js';

const sample = sampling('full');

const STANDIN_DIR = standinPath();

let base: string;
let home: string;
let root: string;
let koda: string;
let bin: string;
let shims: string;
let judged: string;
let programs: string[];

beforeAll(() => {
  base = realpathSync(mkdtempSync(join(tmpdir(), 'offhost-fast-')));
  home = join(base, 'home');
  root = join(home, 'dev', 'koder');
  koda = join(root, 'engines', 'lang', 'koda');
  mkdirSync(koda, { recursive: true });
  bin = join(base, 'bin');
  shims = join(base, 'shims');
  judged = join(base, 'judged.log');
  mkdirSync(bin);
  // Called as `judge shim judge PROG -- ARGS…`: appends [PROG, "--", ARGS…] as JSON (as JSON.stringify
  // writes it), and allows.
  const judge = join(base, 'judge.sh');
  const judgeAwk = join(base, 'judge.awk');
  writeFileSync(judgeAwk, 'BEGIN { libInit(); printf "%s\\n", jsArr(ARGV, 3, ARGC - 1) >> ENVIRON["FAKE_JUDGE_LOG"]; exit 0 }\n');
  writeFileSync(judge, `#!/bin/sh\nLC_ALL=C exec awk -f ${quote(join(STANDIN_DIR, '_lib.awk'))} -f ${quote(judgeAwk)} -- "$@"\n`);
  chmodSync(judge, 0o755);
  // The plan: which names are shimmed (with qemu-system-* names on PATH).
  const env = { HOME: home, PATH: '/usr/bin:/bin', OFFHOST_ROLE: 'laptop', OFFHOST_SHIM_BIN: judge };
  const list = spawnSync(process.execPath, [BIN, 'shim', 'list', '--dir', shims], { env, encoding: 'utf8' });
  programs = list.stdout.split('\n').filter(Boolean).map((l) => l.split('\t')[0]!);
  expect(programs.length, list.stderr).toBeGreaterThan(20);
  for (const p of programs) symlinkSync(join(STANDINS, '_record'), join(bin, p));
  for (const m of MODELS) if (!existsSync(join(bin, m))) symlinkSync(join(STANDINS, '_models'), join(bin, m));
  const inst = spawnSync(process.execPath, [BIN, 'shim', 'install', '--dir', shims], { env: { ...env, PATH: `${bin}:/usr/bin:/bin` }, encoding: 'utf8' });
  expect(inst.status, inst.stderr).toBe(0);
  let pointed = 0;
  for (const p of programs) {
    const file = join(shims, p);
    const text = readFileSync(file, 'utf8');
    const next = text.replace(/^__oh_node=.*$/m, "__oh_node='/bin/sh'");
    if (next !== text) pointed++;
    writeFileSync(file, next);
  }
  expect(pointed).toBe(programs.length);
});

afterAll(() => {
  if (base) rmSync(base, { recursive: true, force: true });
});

interface Example {
  rule: string;
  line: string;
  cwd: string;
  heavy: boolean;
}

function examples(): Example[] {
  const out: Example[] = [];
  const dirs = (s: string) => s.replaceAll('{koda}', '__KODA__').replaceAll('{root}', '__ROOT__');
  for (const r of builtinLayer().rules) {
    if (r.decision === 'allow' || !r.examples) continue;
    for (const [list, heavy] of [[r.examples.match, true], [r.examples.not_match, false]] as const) {
      for (const ex of list) {
        const e = typeof ex === 'string' ? { line: ex } : ex;
        out.push({ rule: r.id, line: dirs(e.line), cwd: dirs(e.cwd ?? '{root}'), heavy });
      }
    }
  }
  return out;
}

function judgedStarts(): string[] {
  if (!existsSync(judged)) return [];
  return readFileSync(judged, 'utf8').split('\n').filter(Boolean);
}

/** The guard the rules judge a start with, one per directory (what it loads depends on nothing else here). */
const guards = new Map<string, ReturnType<typeof loadGuard>>();
function guardAt(cwd: string, path: string): ReturnType<typeof loadGuard> {
  let g = guards.get(`${cwd}\0${path}`);
  if (!g) guards.set(`${cwd}\0${path}`, (g = loadGuard({ cwd, env: { HOME: home, PATH: path }, role: 'laptop' })));
  return g;
}

describe('the fast path', () => {
  const all = examples();
  let light = 0;
  let fast = 0;

  it.each(all.map((e) => [`${e.rule}: ${e.line}`, e] as const))('%s', (_t, e) => {
    const at = (s: string) => s.replaceAll('__KODA__', koda).replaceAll('__ROOT__', root).replace(/^~(?=\/)/, home).replaceAll(' ~/', ` ${home}/`);
    const cwd = at(e.cwd);
    const log = join(base, `starts-${Math.random().toString(36).slice(2)}.log`);
    writeFileSync(judged, '');
    const env = { HOME: home, PATH: `${shims}:${bin}:/usr/bin:/bin`, OFFHOST_GT_LOG: log, FAKE_JUDGE_LOG: judged, LANG: 'C.UTF-8' };
    spawnSync('bash', ['-c', at(e.line)], { cwd, env, input: '', encoding: 'utf8', timeout: 30_000 });
    const guard = guardAt(cwd, env.PATH);
    const asked = judgedStarts();
    for (const rec of records(log)) {
      const wasJudged = asked.includes(JSON.stringify([rec.name, '--', ...rec.argv]));
      if (isHeavy(rec, guard)) expect(wasJudged, `${rec.name} ${rec.argv.join(' ')} in ${rec.cwd} is heavy and skipped the judge`).toBe(true);
      else {
        light++;
        if (!wasJudged) fast++;
      }
    }
    rmSync(log, { force: true });
  });

  it('is taken by light starts', () => {
    expect(light).toBeGreaterThan(0);
    // The others go to the judge by design: a trigger word (`flutter test`, `xcrun simctl list`), make in
    // the engine, a program heavy at every start but --help/--version (qemu, xvfb-run), docker, and
    // xcodebuild, whose `-destination` words decide (the ios-simulator rule's light examples: 15 of 50 light
    // starts took the fast path after they were added, 30 %), and inline code whose words decide (the
    // inline-code-heavy rule's light examples for groovy, elixir and jshell: 14 of 56, 25 %). A floor, so
    // that the fast path cannot silently stop being taken at all.
    expect(fast, `${fast} of ${light} light starts took the fast path`).toBeGreaterThan(light / 5);
  });
});

/** The words the rules themselves use: option names, subcommands, glob texts, and spellings of them. */
function ruleWords(): string[] {
  const out = new Set<string>(['x', 'build', '--version', '-h', '--help', '/tmp/x', 'a/b', '--', '-', 'http://localhost']);
  const walk = (m: CompiledMatch) => {
    for (const f of [...(m.flags ?? []), ...(m.anyFlag ?? [])]) {
      for (const n of f.names) {
        out.add(n);
        out.add(`${n}=x`);
        out.add(n.toUpperCase());
        if (n.startsWith('--') && n.length > 4) out.add(n.slice(0, 5));
        if (/^-[A-Za-z]$/.test(n)) out.add(`-q${n[1]}v`);
      }
    }
    for (const l of m.subcommands ?? []) for (const g of l) if ('literal' in g) out.add(g.literal);
    for (const g of [...(m.positional?.any ?? []), ...(m.argsContain ?? [])]) {
      if ('literal' in g) out.add(g.literal);
      else if (g.prefix) out.add(`${g.prefix}x`);
    }
    for (const a of m.anyOf ?? []) walk(a);
  };
  for (const r of builtinLayer().rules) if (r.decision !== 'allow') walk(compiledMatch(r));
  return [...out];
}

describe('the fast path, on argv made of the rules\' own words', () => {
  it('starts without the judge only what the judge would allow', () => {
    const list = spawnSync(process.execPath, [BIN, 'shim', 'list', '--dir', shims], { env: { HOME: home, PATH: `${bin}:/usr/bin:/bin`, OFFHOST_ROLE: 'laptop' }, encoding: 'utf8' });
    const fastOnes = list.stdout.split('\n').filter((l) => l.includes('\tfast path')).map((l) => l.split('\t')[0]!);
    expect(fastOnes.length).toBeGreaterThan(10);
    const words = ruleWords();
    const guard = loadGuard({ cwd: root, env: { HOME: home, PATH: `${bin}:/usr/bin:/bin` }, role: 'laptop' });
    let skipped = 0;
    fc.assert(
      fc.property(
        fc.constantFrom(...fastOnes),
        fc.array(fc.constantFrom(...words), { maxLength: 5 }),
        fc.constantFrom(root, koda),
        fc.constantFrom({}, { WLR_BACKENDS: 'headless' }, { MOZ_HEADLESS: '1' }),
        (prog, args, cwd, vars) => {
          writeFileSync(judged, '');
          const log = join(base, 'prop.log');
          writeFileSync(log, '');
          spawnSync(join(shims, prog), args, { cwd, env: { HOME: home, PATH: `${shims}:${bin}:/usr/bin:/bin`, OFFHOST_GT_LOG: log, FAKE_JUDGE_LOG: judged, ...vars }, encoding: 'utf8', timeout: 20_000 });
          if (judgedStarts().length > 0) return;
          skipped++;
          const line = [...Object.entries(vars).map(([k, v]) => `${k}=${v}`), ...[prog, ...args].map(quote)].join(' ');
          expect(guard.classify(line, { cwd, files: false }).decision, `${line} in ${cwd} skipped the judge`).toBe('allow');
        },
      ),
      // The default run makes 100 of them; `npm run test:full` 400 (test/helpers/sample.ts).
      { numRuns: sample.full ? 400 : 100 },
    );
    expect(skipped).toBeGreaterThan(0);
  });
});
