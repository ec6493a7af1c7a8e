// `offhost ci` over a large pull request: 500 commits touching 1,000 lock files (500 VMs, each acquired,
// heartbeated and released into the archive) and 1,000 shell scripts (30 lines each; one in 25 writes a
// Koda build into the engine folder). The repository is built with one `git fast-import`. Times
// `node dist/offhost.cjs ci --base main --head pr --format json` as a whole process (median of 3).
// Target: under 10 s.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const bin = join(root, 'dist', 'offhost.cjs');
const COMMITS = 500;
const N = 'meta/context/notices';
const T0 = Date.parse('2026-05-19T08:00:00Z') / 1000;

const dir = mkdtempSync(join(tmpdir(), 'offhost-ci-bench-'));
const git = (args, input) => {
  const r = spawnSync('git', args, { cwd: dir, input, maxBuffer: 1 << 30 });
  if (r.status !== 0) throw new Error(`git ${args.join(' ')}: ${r.stderr}`);
  return r.stdout.toString();
};
const iso = (s) => new Date(s * 1000).toISOString().replace(/\.000Z$/, 'Z');
const vm = (i) => `s.khost1.dev-bench-${i}`;
const lock = (i, heartbeat) =>
  `---\nvm: ${vm(i)}\nsession: bench-${i}\nai: claude\nstarted: ${iso(T0 + i * 60)}\nreason: |\n  bench run ${i}\n${heartbeat ? `heartbeat: ${iso(heartbeat)}\n` : ''}ttl_minutes: 120\n---\nrunning the bench suite ${i}\n`;
const script = (n) => {
  const lines = ['#!/usr/bin/env bash', 'set -euo pipefail', `# script ${n}`];
  for (let k = 0; k < 26; k++) lines.push(k % 3 ? `echo "step ${k} of ${n}"` : `grep -rn "TODO ${k}" src || true`);
  lines.push(n % 25 === 0 ? 'make build-safe' : 'git log --oneline -3');
  return lines.join('\n') + '\n';
};

const t0 = performance.now();
git(['init', '-q', '-b', 'main']);
const parts = [];
const data = (s) => `data ${Buffer.byteLength(s)}\n${s}\n`;
const commit = (ref, mark, time, msg, from, ops) => {
  parts.push(`commit ${ref}\nmark :${mark}\ncommitter Bench <bench@example.com> ${time} +0000\n${data(msg)}${from ? `from :${from}\n` : ''}${ops.join('')}`);
};
const M = (path, content) => `M 100644 inline ${path}\n${data(content)}`;
const D = (path) => `D ${path}\n`;
commit('refs/heads/main', 1, T0 - 3600, 'base', null, [M('README.md', '# bench\n'), M('engines/lang/koda/README.md', '# koda\n')]);
for (let i = 0; i < COMMITS; i++) {
  const time = T0 + i * 60 + 30;
  const ops = [
    M(`engines/lang/koda/scripts/s${2 * i}.sh`, script(2 * i)),
    M(`engines/lang/koda/scripts/s${2 * i + 1}.sh`, script(2 * i + 1)),
    M(`${N}/vm-active/lock-${vm(i)}.md`, lock(i)),
  ];
  if (i >= 1) ops.push(M(`${N}/vm-active/lock-${vm(i - 1)}.md`, lock(i - 1, time)));
  if (i >= 2) {
    ops.push(D(`${N}/vm-active/lock-${vm(i - 2)}.md`));
    ops.push(M(`${N}/vm-active-archive/lock-${vm(i - 2)}-${iso(time).slice(0, 10)}.md`, lock(i - 2, time - 60)));
  }
  commit('refs/heads/pr', i + 2, time, `bench commit ${i}`, i === 0 ? 1 : i + 1, ops);
}
git(['fast-import', '--quiet'], parts.join(''));
git(['symbolic-ref', 'HEAD', 'refs/heads/pr']);
git(['reset', '-q', '--hard']);
const built = performance.now() - t0;

const now = iso(T0 + COMMITS * 60 + 120);
const times = [];
let last;
for (let k = 0; k < 3; k++) {
  const s = performance.now();
  last = spawnSync(process.execPath, [bin, 'ci', '--base', 'main', '--head', 'pr', '--format', 'json', '--now', now], {
    cwd: dir,
    env: { PATH: process.env.PATH, HOME: '/home/koder', CI: 'true' },
    maxBuffer: 1 << 30,
  });
  times.push(performance.now() - s);
}
if (last.status !== 1 || !last.stdout.length) {
  console.error(`unexpected exit ${last.status}: ${last.stderr}`);
  process.exitCode = 1;
}
const footer = spawnSync(process.execPath, [bin, 'ci', '--base', 'main', '--head', 'pr', '--now', now], {
  cwd: dir,
  env: { PATH: process.env.PATH, HOME: '/home/koder', CI: 'true' },
  maxBuffer: 1 << 30,
}).stderr.toString().trim();
const findings = last.stdout.length ? JSON.parse(last.stdout.toString()) : [];
const byRule = {};
for (const f of findings) byRule[f.ruleId] = (byRule[f.ruleId] ?? 0) + 1;
times.sort((a, b) => a - b);
const ms = (x) => `${(x / 1000).toFixed(2)} s`;
console.log(`repository: ${COMMITS} commits, 1,000 lock files, 1,000 scripts (built in ${ms(built)} with git fast-import)`);
console.log(`offhost ci --format json, whole process: median ${ms(times[1])} (min ${ms(times[0])}, max ${ms(times[2])}); target < 10 s`);
console.log(`findings: ${findings.length} ${JSON.stringify(byRule)}`);
console.log(footer);
if (process.env.KEEP) console.log(dir); else rmSync(dir, { recursive: true, force: true });
