// The command-line corpus (fixtures/corpus/*.yaml) run through the guard: one test per entry.
// The corpus is the spec of what the guard decides (POLICY.md R1, R2, R5); see each entry's `why`.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { loadGuard } from '../src/config/load-guard.js';
import type { Entry } from './corpus/redteam-tree.js';

const CORPUS = fileURLToPath(new URL('../fixtures/corpus/', import.meta.url));
const HOME = '/home/koder';
const ROOT = '/home/koder/dev/koder';
const KEYS = new Set(['line', 'cwd', 'env', 'role', 'expect', 'rule', 'why', 'files', 'bash', 'fail_closed']);

/** Group name -> minimum number of entries. */
const GROUPS: Record<string, number> = {
  'true-positives': 80,
  'false-positives': 80,
  bypasses: 100,
  'edge-cases': 60,
};
const TOTAL_MIN = 300;
/** The red-team corpus (fixtures/corpus/redteam/), also run under real bash by test/corpus/ground-truth.test.ts. */
const REDTEAM_MIN: Record<string, number> = { 'redteam/true-positives': 60, 'redteam/false-positives': 60, 'redteam/bypasses': 60, 'redteam/edge-cases': 40 };

function load(group: string): Entry[] {
  const text = readFileSync(join(CORPUS, `${group}.yaml`), 'utf8');
  const data: unknown = parse(text);
  if (!Array.isArray(data)) throw new Error(`${group}.yaml: expected a YAML list`);
  return data.map((raw, i) => {
    const e = raw as Entry;
    const where = `${group}.yaml entry ${i + 1}`;
    for (const k of Object.keys(e)) if (!KEYS.has(k)) throw new Error(`${where}: unknown key '${k}'`);
    if (typeof e.line !== 'string') throw new Error(`${where}: 'line' must be a string`);
    if (!['allow', 'deny', 'reroute'].includes(e.expect)) throw new Error(`${where}: bad expect '${String(e.expect)}'`);
    if (typeof e.why !== 'string' || e.why === '') throw new Error(`${where}: 'why' is required`);
    if (e.role !== undefined && !['laptop', 'vm', 'ci'].includes(e.role)) throw new Error(`${where}: bad role '${e.role}'`);
    return e;
  });
}

/** A readable, bounded test name: control characters made visible, long lines cut. */
function title(group: string, line: string): string {
  const shown = line
    .replace(/\\/g, '\\\\')
    .replace(/\n/g, '\\n')
    .replace(/\t/g, '\\t')
    .replace(/\0/g, '\\0')
    .replace(/[\u0001-\u001f\u007f]/g, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
  const cut = shown.length > 100 ? `${shown.slice(0, 97)}… (${line.length} chars)` : shown;
  return `${group}: ${cut === '' ? '(empty line)' : cut}`;
}

const corpus = Object.keys(GROUPS).map((group) => ({ group, entries: load(group) }));
const redteam = Object.keys(REDTEAM_MIN).map((group) => ({ group, entries: load(group) }));

describe('corpus size', () => {
  for (const { group, entries } of corpus) {
    it(`${group} has at least ${GROUPS[group]} entries`, () => {
      expect(entries.length).toBeGreaterThanOrEqual(GROUPS[group]!);
    });
  }
  for (const { group, entries } of redteam) {
    it(`${group} has at least ${REDTEAM_MIN[group]} entries`, () => {
      expect(entries.length).toBeGreaterThanOrEqual(REDTEAM_MIN[group]!);
    });
  }
  it(`the corpus has at least ${TOTAL_MIN} entries in all`, () => {
    expect(corpus.reduce((n, g) => n + g.entries.length, 0)).toBeGreaterThanOrEqual(TOTAL_MIN);
  });
});

for (const { group, entries } of [...corpus, ...redteam]) {
  describe(group, () => {
    for (const e of entries) {
      // Lines whose verdict needs the disk (a Makefile's prerequisites, git's top level) are judged over a
      // real tree by test/corpus/ground-truth.test.ts.
      if (e.files) continue;
      it(title(group, e.line), () => {
        // HOME must be exactly /home/koder for the Koda paths to resolve; the role is always explicit
        // because CI sets CI=true (which would otherwise make every decision an allow).
        const env: NodeJS.ProcessEnv = { HOME, PATH: process.env.PATH, ...e.env };
        const guard = loadGuard({ cwd: e.cwd ?? ROOT, env, role: e.role ?? 'laptop' });
        // Judged without reading files: the corpus's directories are hypothetical, and on a machine where
        // they exist (the laptop itself) the verdicts must not depend on what is there. Reading scripts,
        // package.json files and Makefiles is tested over real files in test/policy/script-files.test.ts.
        const verdict = guard.classify(e.line, { files: false });
        const context = `why: ${e.why}\nguard said: ${verdict.decision} (${verdict.rule ?? 'no rule'}): ${verdict.reason}`;
        expect(verdict.decision, context).toBe(e.expect);
        if (e.rule !== undefined) expect(verdict.rule, context).toBe(e.rule);
      });
    }
  });
}
