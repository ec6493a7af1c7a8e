// What protecting catalogue VMs costs the guard (src/vms/protect.ts): classify() on lines that name no
// catalogue instance (the common case: a set lookup per command), on lines that name one with no lock
// file, and with a live lock file another session holds (read + frontmatter). Same process, same run,
// alternating rounds; reported as microseconds per line and as ratios to the first row.
import { build } from 'esbuild';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const tmp = mkdtempSync(join(tmpdir(), 'offhost-bench-vms-'));
const out = join(tmp, 'guard.mjs');
await build({
  absWorkingDir: root,
  entryPoints: ['src/policy/guard.ts'],
  outfile: out,
  bundle: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  logLevel: 'warning',
  define: { __OFFHOST_BUILTIN__: readFileSync(join(root, 'dist', 'builtin-pack.json'), 'utf8') },
  banner: { js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);" },
});
const { loadGuard } = await import(pathToFileURL(out).href);

const repo = join(tmp, 'repo');
mkdirSync(join(repo, 'meta/context/notices/vm-active'), { recursive: true });
execFileSync('git', ['init', '-q', repo]);
writeFileSync(
  join(repo, 'meta/context/notices/vm-active/lock-s.khost1.dev-linux-gui.md'),
  `---\nvm: s.khost1.dev-linux-gui\nsession: other\nai: claude\nstarted: ${new Date().toISOString().replace(/\.\d+Z$/, 'Z')}\nreason: bench\n---\n`,
);
const env = { HOME: '/home/koder', PATH: process.env.PATH, OFFHOST_SESSION: 'me' };
const guard = loadGuard({ cwd: repo, env, role: 'laptop' });
const rows = [
  ['no catalogue name (git status && make test)', 'git status && make test'],
  ['incus, not a catalogue instance', 'incus exec some-other -- make build-safe'],
  ['catalogue instance, no lock file', 'ssh khost1 -- incus exec dev-linux-koda -- make build-safe'],
  ['catalogue instance, held by another session', 'ssh khost1 -- incus exec dev-linux-gui -- make build-safe'],
];
const at = { cwd: repo, env, files: false };
const N = 3000;
const totals = rows.map(() => 0);
for (let round = 0; round < 6; round++) {
  rows.forEach(([, line], i) => {
    const t0 = process.hrtime.bigint();
    for (let k = 0; k < N; k++) guard.classify(line, at);
    if (round > 0) totals[i] += Number(process.hrtime.bigint() - t0);
  });
}
const us = totals.map((t) => t / (5 * N) / 1000);
console.log('protecting catalogue VMs: guard.classify per line');
rows.forEach(([name], i) => console.log(`  ${name.padEnd(46)} ${us[i].toFixed(1).padStart(7)} us   x${(us[i] / us[0]).toFixed(2)}`));
rmSync(tmp, { recursive: true, force: true });
