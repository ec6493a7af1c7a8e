// Whole-process start-up of two or more builds, interleaved in one run (for comparing layouts or commits):
//   node bench/startup-ab.mjs before=/tmp/old/dist/offhost.cjs after=dist/offhost.cjs   [N=100] [CASES=check,hook]
// Not run by `npm run bench` (it needs two builds). docs/BUILD.md quotes its figures.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir, loadavg } from 'node:os';
import { join } from 'node:path';
const bins = Object.fromEntries(process.argv.slice(2).map((a) => a.split('=')));
const home = mkdtempSync(join(tmpdir(), 'offhost-ab-'));
const cwd = join(home, 'dev', 'koder', 'engines', 'lang', 'koda');
mkdirSync(cwd, { recursive: true });
const env = { PATH: process.env.PATH, HOME: home, OFFHOST_ROLE: 'laptop', OFFHOST_AUDIT_LOG: join(home, 'audit.jsonl') };
const ticks = () => { const f = readFileSync('/proc/self/stat', 'utf8'); const r = f.slice(f.lastIndexOf(')') + 2).split(' '); return Number(r[13]) + Number(r[14]); };
const t = (args, input) => { const c = ticks(); const s = process.hrtime.bigint(); const r = spawnSync(process.execPath, args, { input, env, cwd, encoding: 'utf8' }); const ms = Number(process.hrtime.bigint() - s) / 1e6; if (r.status !== 0 && r.status !== 3) throw new Error(args.join(' ') + ': ' + r.stderr); return { ms, cpu: (ticks() - c) * 10 }; };
const med = (a) => { const s = [...a].sort((x, y) => x - y); return s[s.length >> 1]; };
const N = Number(process.env.N ?? 60);
const hookEvent = JSON.stringify({ session_id: 's', cwd, hook_event_name: 'PreToolUse', tool_name: 'Bash', tool_input: { command: 'git status --short && grep -rn "TODO" src | head -20' } });
const cases = {
  check: (bin) => t([bin, 'check', 'cd ~/dev/koder/engines/lang/koda && make build-safe 2>&1 | tail -50']),
  hook: (bin) => t([bin, 'hook', 'claude-code'], hookEvent),
  'lock --help (cold)': (bin) => t([bin, 'lock', '--help']),
};
for (const [name, run] of Object.entries(cases).filter(([n]) => !process.env.CASES || process.env.CASES.split(',').some((c) => n.startsWith(c)))) {
  const res = { 'node -e 0': [] }; for (const k of Object.keys(bins)) res[k] = [];
  for (let i = 0; i < 3; i++) { t(['-e', '0']); for (const b of Object.values(bins)) run(b); }
  const keys = Object.keys(bins);
  for (let i = 0; i < N; i++) {
    res['node -e 0'].push(t(['-e', '0']));
    for (const k of i % 2 ? keys : [...keys].reverse()) res[k].push(run(bins[k]));
  }
  const base = res['node -e 0'];
  const bw = med(base.map((x) => x.ms)); const bc = base.reduce((a, x) => a + x.cpu, 0);
  console.log(`${name} (${N} rounds, load ${loadavg()[0].toFixed(2)}): node -e 0 wall ${bw.toFixed(1)} ms`);
  for (const k of keys) { const w = med(res[k].map((x) => x.ms)); const c = res[k].reduce((a, x) => a + x.cpu, 0); console.log(`  ${k.padEnd(8)} wall ${w.toFixed(1)} ms ratio ${(w / bw).toFixed(2)}; cpu ratio ${(c / bc).toFixed(2)}`); }
}
rmSync(home, { recursive: true, force: true });
