// The guard's figures: classification throughput and per-command latency over the corpus, the
// pathological lines (linear time), and `offhost check` as a whole process against `node -e 0`,
// measured alternately in the same run (a ratio, so a noisy shared machine cancels out).
import { benchGuard, root } from './load-guard.mjs';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parse as parseYaml } from 'yaml';

const { loadGuard, tmp } = await benchGuard('offhost-bench-');

const env = { HOME: '/home/koder', PATH: process.env.PATH };
const guard = loadGuard({ cwd: '/home/koder/dev/koder', env, role: 'laptop' });
const corpus = [];
for (const g of ['true-positives', 'false-positives', 'bypasses', 'edge-cases']) {
  for (const e of parseYaml(readFileSync(join(root, 'fixtures/corpus', `${g}.yaml`), 'utf8'))) {
    corpus.push({ line: e.line, cwd: e.cwd ?? '/home/koder/dev/koder' });
  }
}
// Two sets: every corpus line under 4 KB (the corpus includes deliberately pathological lines: 300-deep
// nesting, 1-2 KB lines), and the command lines agents really send (up to 300 characters).
const sets = [
  ['corpus lines < 4 KB', corpus.filter((e) => e.line.length < 4096)],
  ['agent-sized lines <= 300 chars', corpus.filter((e) => e.line.length <= 300)],
];
// The classifier alone (files: false): scripts a line runs are judged by name. With the disk (what the
// guard does by default), a line that runs a file (`./gradlew`, `bash x.sh`, `/usr/bin/env`, `npm run`)
// also pays for reading it: measured as its own row.
function measure(lines, files = false) {
  const at = (e) => ({ cwd: e.cwd, ...(files ? {} : { files: false }) });
  for (let i = 0; i < 3; i++) for (const e of lines) guard.classify(e.line, at(e));
  const rounds = 60;
  const t0 = process.hrtime.bigint();
  for (let r = 0; r < rounds; r++) for (const e of lines) guard.classify(e.line, at(e));
  const ns = Number(process.hrtime.bigint() - t0);
  const lat = [];
  for (let r = 0; r < 20; r++) {
    for (const e of lines) {
      const s = process.hrtime.bigint();
      guard.classify(e.line, at(e));
      lat.push(Number(process.hrtime.bigint() - s) / 1000);
    }
  }
  lat.sort((a, b) => a - b);
  const pct = (p) => lat[Math.min(lat.length - 1, Math.floor((p / 100) * lat.length))];
  return { perSec: (rounds * lines.length) / (ns / 1e9), p50: pct(50), p99: pct(99) };
}

function timeOne(line, n = 5) {
  let best = Infinity;
  for (let i = 0; i < n; i++) {
    const s = process.hrtime.bigint();
    guard.classify(line, { files: false });
    best = Math.min(best, Number(process.hrtime.bigint() - s) / 1e6);
  }
  return best;
}
const long = 'echo ' + 'abcdefgh '.repeat(100 * 1024 / 9) + '&& make build-safe';
const nested = 'echo ' + '$('.repeat(40) + 'make build-safe';
const longTime = timeOne(long);
const nestedTime = timeOne(nested);

console.log(`corpus: ${corpus.length} lines`);
for (const [name, lines] of sets) {
  const m = measure(lines);
  console.log(`${name} (${lines.length}): ${Math.round(m.perSec).toLocaleString('en-US')} commands/s (target >= 100,000); p50 ${m.p50.toFixed(1)} us, p99 ${m.p99.toFixed(1)} us (target p99 < 50 us)`);
}
{
  const lines = sets[1][1];
  const m = measure(lines, true);
  console.log(`agent-sized lines with disk access for the files they run (${lines.length}): ${Math.round(m.perSec).toLocaleString('en-US')} commands/s; p50 ${m.p50.toFixed(1)} us, p99 ${m.p99.toFixed(1)} us (no target)`);
}
console.log(`100 KB line: ${longTime.toFixed(2)} ms; 40 nested unclosed $(: ${nestedTime.toFixed(3)} ms (target < 20 ms each)`);

// Whole process: offhost check against node -e 0, alternately.
const bin = join(root, 'dist', 'offhost.cjs');
const wall = (args) => {
  const s = process.hrtime.bigint();
  const r = spawnSync(process.execPath, args, { env: { ...env, OFFHOST_ROLE: 'laptop' }, cwd: tmp, encoding: 'utf8' });
  const ms = Number(process.hrtime.bigint() - s) / 1e6;
  return { ms, status: r.status, stderr: r.stderr };
};
const base = [];
const check = [];
for (let i = 0; i < 3; i++) {
  wall(['-e', '0']);
  wall([bin, 'check', 'ls -la']);
}
for (let i = 0; i < 30; i++) {
  base.push(wall(['-e', '0']).ms);
  const r = wall([bin, 'check', 'cd ~/dev/koder/engines/lang/koda && make build-safe 2>&1 | tail -50']);
  if (r.status !== 3) throw new Error(`offhost check exited ${r.status}, expected 3 (reroute): ${r.stderr}`);
  check.push(r.ms);
}
const median = (a) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)];
console.log(`whole process: node -e 0 ${median(base).toFixed(1)} ms, offhost check ${median(check).toFixed(1)} ms, ratio ${(median(check) / median(base)).toFixed(2)} (target <= 1.3)`);
rmSync(tmp, { recursive: true, force: true });
