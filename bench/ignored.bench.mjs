// What the listing of the VM copy's files outside the source set (src/run/ignored.ts, issue 24) adds to
// every rsync/git run, against the step it follows in the same VM script: the fingerprint of the source
// set (`xargs sha256sum`). Both run here, in sh, over one copy (10,000 source files in 100 directories
// plus 1,000 VM-only build outputs), alternately, in the same run: a ratio, so a shared machine's load
// cancels out. OFFHOST_BENCH_ITER sets the rounds (default 7); the median is printed.
import { build } from 'esbuild';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const tmp = mkdtempSync(join(tmpdir(), 'offhost-bench-ignored-'));
try {
  await build({ absWorkingDir: root, entryPoints: ['src/run/ignored.ts'], outfile: join(tmp, 'ignored.mjs'), bundle: true, format: 'esm', platform: 'node', target: 'node20', logLevel: 'warning' });
  const { ignoredScript } = await import(pathToFileURL(join(tmp, 'ignored.mjs')).href);
  const copy = join(tmp, 'copy');
  const list = [];
  for (let i = 0; i < 10000; i++) {
    mkdirSync(join(copy, `d${i % 100}`), { recursive: true });
    writeFileSync(join(copy, `d${i % 100}`, `f${i}.c`), `int x${i};\n`);
    list.push(`./d${i % 100}/f${i}.c`);
  }
  mkdirSync(join(copy, 'build'));
  for (let i = 0; i < 1000; i++) writeFileSync(join(copy, 'build', `o${i}.o`), 'o');
  list.sort();
  writeFileSync(join(tmp, 'list'), list.map((p) => `${p}\0`).join(''));
  const pre = ['N=@offhost-0123456789abcdef', 'say() { printf "%s %s\\n" "$N" "$*"; }', 'T=$(mktemp -d)', `cp ${join(tmp, 'list')} "$T/list"`, `cd ${copy}`];
  const scripts = {
    fingerprint: [...pre, 'xargs -0 -r sha256sum -- < "$T/list" | sha256sum > /dev/null', 'rm -rf "$T"'].join('\n'),
    listing: [...pre, ...ignoredScript({ git: false, clean: false, keep: ['node_modules'] }), 'rm -rf "$T"'].join('\n'),
  };
  const times = { fingerprint: [], listing: [] };
  const rounds = Number(process.env.OFFHOST_BENCH_ITER ?? 7);
  for (let i = 0; i < rounds; i++) {
    for (const [k, s] of Object.entries(scripts)) {
      const t0 = process.hrtime.bigint();
      execFileSync('sh', ['-c', s], { maxBuffer: 1 << 26 });
      times[k].push(Number(process.hrtime.bigint() - t0) / 1e6);
    }
  }
  const med = (a) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)];
  console.log(`fingerprint of 10,000 files (the step it follows): ${med(times.fingerprint).toFixed(0)} ms`);
  console.log(`listing of the copy (1,000 VM-only files): ${med(times.listing).toFixed(0)} ms = ${(med(times.listing) / med(times.fingerprint)).toFixed(2)}x the fingerprint (median of ${rounds})`);
} finally {
  rmSync(tmp, { recursive: true, force: true });
}
