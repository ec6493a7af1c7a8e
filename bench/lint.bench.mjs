// `offhost lint <dir>` over 10,000 lock files, timed as a whole process (start-up included). Target: < 2 s.
// Files: 9,700 valid live locks, 300 with a schema error (so the run exits 1 and prints findings).
import { mkdtempSync, mkdirSync, writeFileSync, rmSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const bin = process.env.OFFHOST_BIN ?? join(root, 'dist', 'offhost.cjs');
const N = Number(process.env.LINT_BENCH_FILES ?? 10_000);
const dir = mkdtempSync(join(tmpdir(), 'offhost-lint-bench-'));
const active = join(dir, 'vm-active');
mkdirSync(active);
for (let i = 0; i < N; i++) {
  const vm = `s.khost1.dev-bench-${i}`;
  const bad = i % 33 === 0;
  writeFileSync(
    join(active, `lock-${vm}.md`),
    `---\nvm: ${vm}\nsession: claude-2026-05-19-bench-${i}\nai: ${bad ? 'Claude' : 'claude'}\nstarted: 2026-05-19T22:${String(i % 60).padStart(2, '0')}:00Z\nreason: |\n  bench lock ${i} (ticket KODA-${i})\nheartbeat: 2026-05-19T23:10:00Z\nttl_minutes: 60\n---\nRunning make build-safe on ${vm}.\n`,
  );
}
const runs = [];
let last;
for (let r = 0; r < 3; r++) {
  const t0 = process.hrtime.bigint();
  last = spawnSync(process.execPath, [bin, 'lint', '--now', '2026-05-19T23:20:00Z', '--format', 'json', dir], { encoding: 'utf8', maxBuffer: 1 << 28 });
  runs.push(Number(process.hrtime.bigint() - t0) / 1e6);
}
rmSync(dir, { recursive: true, force: true });
const findings = last.status === 1 || last.status === 0 ? JSON.parse(last.stdout).length : -1;
const best = Math.min(...runs);
console.log(`lint: ${N} lock files, whole process: best ${best.toFixed(0)} ms, runs ${runs.map((x) => x.toFixed(0)).join(' / ')} ms (exit ${last.status}, ${findings} findings) — target < 2000 ms; load average ${loadavg()[0].toFixed(1)}`);
if (last.status !== 1) {
  console.error(last.stderr);
  process.exitCode = 1;
}
