// Start-up of two or more builds as offhost's own part of a process: from the first line of the loader
// (dist/offhost.cjs) to the process's 'exit' event, without node's boot, which is the same for every build
// and carries most of the machine's noise. Each build is copied into a temporary folder and its loader
// given a timer; the builds run alternately, N rounds. Prints the median and the quartiles per build.
//   node bench/startup-phases.mjs before=/tmp/old/dist after=dist   [N=40] [CASES=hook,check,check-allow]
// Not run by `npm run bench` (it needs two builds). docs/BUILD.md quotes its figures.
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir, loadavg } from 'node:os';
import { join, resolve } from 'node:path';

const builds = process.argv.slice(2).map((a) => {
  const [name, dir] = a.split('=');
  if (!name || !dir) throw new Error(`expected name=dist-folder, got ${a}`);
  return { name, dir: resolve(dir) };
});
if (builds.length === 0) throw new Error('usage: node bench/startup-phases.mjs name=dist-folder [name=dist-folder ...]');
const work = mkdtempSync(join(tmpdir(), 'offhost-phases-'));
const home = join(work, 'home');
const cwd = join(home, 'dev', 'koder', 'engines', 'lang', 'koda');
mkdirSync(cwd, { recursive: true });
const out = join(work, 'times.txt');

// The timer: the loader's first statement reads the clock; its 'exit' listener (registered first, so it
// runs before the loader's own, which writes code caches) appends the elapsed milliseconds to a file.
const TIMER = `const __offhostT0 = process.hrtime.bigint(); process.once('exit', () => require('node:fs').appendFileSync(${JSON.stringify(out)}, String(Number(process.hrtime.bigint() - __offhostT0) / 1e6) + '\\n'));\n`;
for (const b of builds) {
  const copy = join(work, b.name);
  cpSync(b.dir, copy, { recursive: true });
  const loader = join(copy, 'offhost.cjs');
  const text = readFileSync(loader, 'utf8');
  const at = text.indexOf("'use strict';");
  if (at < 0) throw new Error(`${loader}: no 'use strict' line to put the timer after`);
  writeFileSync(loader, text.slice(0, at + 13) + '\n' + TIMER + text.slice(at + 13));
  b.bin = loader;
}

// A checkout of the monorepo other than the canonical one (a worktree beside it: issue 20), found by its marker.
const worktreeCwd = join(home, 'dev', 'koder-feature', 'engines', 'lang', 'koda');
mkdirSync(worktreeCwd, { recursive: true });
const env = { PATH: process.env.PATH, HOME: home, OFFHOST_ROLE: 'laptop', OFFHOST_AUDIT_LOG: join(home, 'audit.jsonl') };
const event = (command, dir = cwd) => JSON.stringify({ session_id: 's', cwd: dir, hook_event_name: 'PreToolUse', tool_name: 'Bash', tool_input: { command } });
const CASES = {
  hook: { args: ['hook', 'claude-code'], input: event('git status --short && grep -rn "TODO" src | head -20') },
  check: { args: ['check', 'cd ~/dev/koder/engines/lang/koda && make build-safe 2>&1 | tail -50'] },
  'check-allow': { args: ['check', 'git status --short'] },
  'hook-npx': { args: ['hook', 'claude-code'], input: event('timeout 120 npx vitest run test/unit --reporter=dot; echo "exit=$?"') },
  'hook-worktree': { args: ['hook', 'claude-code'], input: event('git status --short && grep -rn "TODO" src | head -20', worktreeCwd), cwd: worktreeCwd },
};
const wanted = (process.env.CASES ?? 'hook,check,check-allow').split(',');
const N = Number(process.env.N ?? 40);

function once(b, c) {
  rmSync(out, { force: true });
  const r = spawnSync(process.execPath, [b.bin, ...c.args], { input: c.input ?? '', env, cwd: c.cwd ?? cwd, encoding: 'utf8' });
  if (r.status !== 0 && r.status !== 3) throw new Error(`${b.name} ${c.args.join(' ')} exited ${r.status}: ${r.stderr}`);
  return Number(readFileSync(out, 'utf8'));
}
const quantile = (xs, q) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))];
};

for (const name of wanted) {
  const c = CASES[name];
  if (!c) throw new Error(`unknown case ${name}; cases: ${Object.keys(CASES).join(', ')}`);
  const times = Object.fromEntries(builds.map((b) => [b.name, []]));
  for (let i = 0; i < 2; i++) for (const b of builds) once(b, c);
  for (let i = 0; i < N; i++) {
    // Every build takes every position in turn.
    for (let j = 0; j < builds.length; j++) {
      const b = builds[(i + j) % builds.length];
      times[b.name].push(once(b, c));
    }
  }
  console.log(`${name} (${N} rounds, load ${loadavg()[0].toFixed(2)}): offhost's part of the process, ms`);
  for (const b of builds) {
    const t = times[b.name];
    // The lowest decile is the least disturbed by other load on the machine; the median is the usual figure.
    console.log(`  ${b.name.padEnd(10)} median ${quantile(t, 0.5).toFixed(2)}   p10 ${quantile(t, 0.1).toFixed(2)}   p25 ${quantile(t, 0.25).toFixed(2)}   p75 ${quantile(t, 0.75).toFixed(2)}`);
  }
}
rmSync(work, { recursive: true, force: true });
