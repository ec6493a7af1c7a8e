// What an exec-time shim adds to a program's start: wall time of `make --version` started through the
// shim against the real make started directly, run alternately (same machine load), N rounds. Two cases:
//   fast path: outside every directory a make rule names: the shim execs make without starting node;
//   judged:    in the Koda engine (`make --version` there is allowed, but only the judge can say so): the
//              shim starts `offhost shim judge`, then execs make.
// Then the same for the other programs' fast paths (argument rules, no directory): `lb`, `chromium` and
// `emulator` stand-ins (each /usr/bin/true under that name: their own start-up is not measured, only what
// the shim adds to a start) through the shim with light arguments (fast path: `lb config`, `chromium
// --version`, `emulator -list-avds`) and with an argument a rule needs that the judge then allows
// (`lb build --help`, `chromium --headless --version`... judged).
// Prints the medians and the ratios shim/direct.
//   node bench/shim.bench.mjs [rounds]        (npm run bench runs it after a build)
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const bin = process.env.OFFHOST_BENCH_BIN || join(root, 'dist', 'offhost.cjs');
if (!existsSync(bin)) {
  console.error('dist/offhost.cjs is missing: run `npm run build` first');
  process.exit(1);
}
const make = ['/usr/bin/make', '/bin/make', '/usr/local/bin/make'].find((p) => existsSync(p));
if (!make) {
  console.log('shim: skipped (no make installed to start)');
  process.exit(0);
}
const rounds = Number(process.argv[2]) || 30;
const home = mkdtempSync(join(tmpdir(), 'offhost-bench-shim-'));
const koda = join(home, 'dev', 'koder', 'engines', 'lang', 'koda');
const elsewhere = join(home, 'elsewhere');
mkdirSync(koda, { recursive: true });
mkdirSync(elsewhere);
const shims = join(home, 'shims');
const fakes = join(home, 'bin');
mkdirSync(fakes);
const trueBin = ['/usr/bin/true', '/bin/true'].find((p) => existsSync(p));
for (const p of ['lb', 'chromium', 'emulator']) symlinkSync(trueBin, join(fakes, p));
const env = { PATH: `${shims}:${fakes}:${dirname(make)}:/usr/bin:/bin`, HOME: home, OFFHOST_ROLE: 'laptop', OFFHOST_SHIM_BIN: bin };
const inst = spawnSync(process.execPath, [bin, 'shim', 'install', '--dir', shims], { env, encoding: 'utf8' });
if (inst.status !== 0) throw new Error(`shim install: ${inst.stderr}`);

function time(cmd, cwd) {
  const t0 = process.hrtime.bigint();
  const r = spawnSync(cmd, ['--version'], { cwd, env: { ...env, PWD: cwd }, encoding: 'utf8' });
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  if (r.status !== 0 || !/GNU Make/.test(r.stdout)) throw new Error(`${cmd} --version in ${cwd}: status ${r.status}: ${r.stderr}`);
  return ms;
}
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

const shim = join(shims, 'make');
for (const cwd of [elsewhere, koda]) {
  time(make, cwd);
  time(shim, cwd);
}
const direct = [];
const fast = [];
const judged = [];
for (let i = 0; i < rounds; i++) {
  direct.push(time(make, elsewhere));
  fast.push(time(shim, elsewhere));
  judged.push(time(shim, koda));
}
const d = median(direct);
const f = median(fast);
const j = median(judged);
console.log(`make --version, ${rounds} rounds, medians:`);
console.log(`  direct ${make}: ${d.toFixed(2)} ms`);
console.log(`  through the shim, fast path (no node): ${f.toFixed(2)} ms   ratio ${(f / d).toFixed(2)}`);
console.log(`  through the shim, judged (offhost shim judge, then make): ${j.toFixed(2)} ms   ratio ${(j / d).toFixed(2)}`);

// The argument-rule fast paths.
function run(cmd, args, cwd) {
  const t0 = process.hrtime.bigint();
  const r = spawnSync(cmd, args, { cwd, env: { ...env, PWD: cwd }, encoding: 'utf8' });
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')}: status ${r.status}: ${r.stderr}`);
  return ms;
}
const cases = [
  ['lb', ['config'], ['build', '--help']],
  ['chromium', ['--version'], ['--headless', '--version']],
  ['emulator', ['-list-avds'], ['-avd', 'Pixel_7', '-help']],
];
const few = Math.max(5, Math.round(rounds / 3));
console.log(`other programs (a stand-in /usr/bin/true under each name), ${rounds} rounds fast, ${few} judged, medians:`);
for (const [prog, light, judgedArgs] of cases) {
  const real = join(fakes, prog);
  const viaShim = join(shims, prog);
  run(real, light, elsewhere);
  run(viaShim, light, elsewhere);
  const dd = [];
  const ff = [];
  const jj = [];
  for (let i = 0; i < rounds; i++) {
    dd.push(run(real, light, elsewhere));
    ff.push(run(viaShim, light, elsewhere));
    if (i < few) jj.push(run(viaShim, judgedArgs, elsewhere));
  }
  const [d2, f2, j2] = [median(dd), median(ff), median(jj)];
  console.log(`  ${prog}: direct ${d2.toFixed(2)} ms; fast path (\`${prog} ${light.join(' ')}\`) ${f2.toFixed(2)} ms ratio ${(f2 / d2).toFixed(2)}; judged (\`${prog} ${judgedArgs.join(' ')}\`) ${j2.toFixed(2)} ms ratio ${(j2 / d2).toFixed(2)}`);
}
rmSync(home, { recursive: true, force: true });
