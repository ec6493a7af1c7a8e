// Parse and classification throughput of this tree against another checkout, interleaved in one process
// (a noisy shared machine slows both alike; the best round is the least disturbed):
//   node bench/guard-ab.mjs /path/to/other/checkout [ROUNDS]
// Not run by `npm run bench` (it needs a second tree). Needs `npm run build` here (the compiled pack).
import { build } from 'esbuild';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parse as parseYaml } from 'yaml';

const here = join(dirname(fileURLToPath(import.meta.url)), '..');
const other = process.argv[2];
const rounds = Number(process.argv[3]) || 200;
if (!other || !existsSync(join(other, 'src'))) throw new Error('usage: node bench/guard-ab.mjs /path/to/other/checkout [ROUNDS]');
const pack = readFileSync(join(here, 'dist', 'builtin-pack.json'), 'utf8');
const tmp = mkdtempSync(join(tmpdir(), 'offhost-guard-ab-'));
async function load(root, name) {
  // The guard's loader moved from src/policy/guard.ts to src/config/load-guard.ts.
  const guardEntry = existsSync(join(root, 'src/config/load-guard.ts')) ? 'src/config/load-guard.ts' : 'src/policy/guard.ts';
  const out = {};
  for (const [key, entry] of [['parser', 'src/shell/parser.ts'], ['guard', guardEntry]]) {
    const outfile = join(tmp, `${name}-${key}.mjs`);
    await build({ absWorkingDir: root, nodePaths: [join(here, 'node_modules')], entryPoints: [entry], outfile, bundle: true, format: 'esm', platform: 'node', target: 'node20', logLevel: 'error',
      define: { __OFFHOST_BUILTIN__: pack }, banner: { js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);" } });
    out[key] = await import(pathToFileURL(outfile).href);
  }
  return out;
}
const A = await load(other, 'other');
const B = await load(here, 'here');
const env = { HOME: '/home/koder', PATH: process.env.PATH };
const guards = [A, B].map((m) => m.guard.loadGuard({ cwd: '/home/koder/dev/koder', env, role: 'laptop' }));
const lines = [];
for (const g of ['true-positives', 'false-positives', 'bypasses', 'edge-cases']) {
  for (const e of parseYaml(readFileSync(join(here, 'fixtures/corpus', `${g}.yaml`), 'utf8'))) if (e.line.length < 4096) lines.push({ line: e.line, cwd: e.cwd ?? '/home/koder/dev/koder' });
}
const time = (f) => { const t = process.hrtime.bigint(); for (const e of lines) f(e); return Number(process.hrtime.bigint() - t); };
const cases = {
  parse: [A, B].map((m) => (e) => { try { m.parser.parse(e.line); } catch { /* a parse error is an answer too */ } }),
  classify: guards.map((g) => (e) => g.classify(e.line, { cwd: e.cwd, files: false })),
};
const med = (x) => [...x].sort((p, q) => p - q)[x.length >> 1];
const rate = (ns) => Math.round(lines.length / (ns / 1e9)).toLocaleString('en-US');
for (const [name, [fa, fb]] of Object.entries(cases)) {
  for (let i = 0; i < 10; i++) { time(fa); time(fb); }
  const ta = [], tb = [];
  for (let i = 0; i < rounds; i++) {
    if (i % 2) { ta.push(time(fa)); tb.push(time(fb)); } else { tb.push(time(fb)); ta.push(time(fa)); }
  }
  console.log(`${name} (${lines.length} corpus lines < 4 KB, ${rounds} rounds): other ${rate(Math.min(...ta))}/s best, ${rate(med(ta))}/s median; this tree ${rate(Math.min(...tb))}/s best, ${rate(med(tb))}/s median; time ratio this/other best ${(Math.min(...tb) / Math.min(...ta)).toFixed(3)}, median ${(med(tb) / med(ta)).toFixed(3)}`);
}
rmSync(tmp, { recursive: true, force: true });
