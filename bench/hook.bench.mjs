// The hook as a whole process: wall time of one `node dist/offhost.cjs hook claude-code` call with a
// typical allowed Bash command on stdin, against `node -e 0`, run alternately (so both see the same machine
// load), N pairs. Prints both medians and their ratio (target: at most 1.3).
//   node bench/hook.bench.mjs [pairs]        (npm run bench runs it after a build)
//   OFFHOST_BENCH_BIN=/copy/of/dist/offhost.cjs node bench/hook.bench.mjs   (bench a private copy of dist)
import { spawnSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const bin = process.env.OFFHOST_BENCH_BIN || join(root, 'dist', 'offhost.cjs');
if (!existsSync(bin)) {
  console.error('dist/offhost.cjs is missing: run `npm run build` first');
  process.exit(1);
}
const pairs = Number(process.argv[2]) || 30;
const home = mkdtempSync(join(tmpdir(), 'offhost-bench-'));
const cwd = join(home, 'dev', 'koder', 'engines', 'lang', 'koda');
mkdirSync(cwd, { recursive: true });
const event = JSON.stringify({
  session_id: 'bench-session',
  transcript_path: join(home, 't.jsonl'),
  cwd,
  permission_mode: 'default',
  hook_event_name: 'PreToolUse',
  tool_name: 'Bash',
  tool_input: { command: 'git status --short && grep -rn "TODO" src | head -20', description: 'status' },
  tool_use_id: 'toolu_bench',
});
const env = { PATH: process.env.PATH, HOME: home, OFFHOST_ROLE: 'laptop', OFFHOST_AUDIT_LOG: join(home, 'audit.jsonl') };

// CPU time of waited-for children (Linux /proc/self/stat cutime + cstime, in clock ticks): less sensitive to
// other load on the machine than wall time, so it is printed too.
function childTicks() {
  try {
    const f = readFileSync('/proc/self/stat', 'utf8');
    const rest = f.slice(f.lastIndexOf(')') + 2).split(' ');
    return Number(rest[13]) + Number(rest[14]);
  } catch {
    return NaN;
  }
}
const TICK_MS = 10; // USER_HZ is 100 on Linux

function time(args, input) {
  const c0 = childTicks();
  const t0 = process.hrtime.bigint();
  const r = spawnSync(process.execPath, args, { input, env, encoding: 'utf8' });
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  if (r.status !== 0) throw new Error(`${args.join(' ')} exited ${r.status}: ${r.stderr}`);
  return { ms, cpuMs: (childTicks() - c0) * TICK_MS, stdout: r.stdout };
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

// Warm-up (file cache), and check that the call is the no-output allow it should be.
const first = time([bin, 'hook', 'claude-code'], event);
if (first.stdout !== '') throw new Error(`expected no output for an allowed command, got ${first.stdout}`);
time(['-e', '0']);

const hook = [];
const bare = [];
let hookCpu = 0;
let bareCpu = 0;
for (let i = 0; i < pairs; i++) {
  const b = time(['-e', '0']);
  const h = time([bin, 'hook', 'claude-code'], event);
  bare.push(b.ms);
  hook.push(h.ms);
  bareCpu += b.cpuMs;
  hookCpu += h.cpuMs;
}
const mh = median(hook);
const mb = median(bare);
console.log(`hook claude-code (allowed Bash command), ${pairs} pairs alternating with node -e 0; load average ${loadavg()[0].toFixed(2)}`);
console.log(`  node -e 0                 wall median ${mb.toFixed(1)} ms   cpu mean ${(bareCpu / pairs).toFixed(1)} ms`);
console.log(`  offhost hook claude-code  wall median ${mh.toFixed(1)} ms   cpu mean ${(hookCpu / pairs).toFixed(1)} ms`);
console.log(`  ratio                     wall ${(mh / mb).toFixed(2)} (target <= 1.3)   cpu ${(hookCpu / bareCpu).toFixed(2)}`);

// The rarer answers, for the record (no target): a reroute (the Koda build, answered with the rewritten
// command) and a deny (a local Windows VM).
const otherEvent = (command) => JSON.stringify({ ...JSON.parse(event), tool_input: { command, description: 'x' } });
for (const [what, command] of [['reroute', 'make build-safe 2>&1 | tail -50'], ['deny', 'qemu-system-x86_64 -hda win10.qcow2']]) {
  const ev = otherEvent(command);
  const out = time([bin, 'hook', 'claude-code'], ev).stdout;
  if (!out.includes('"permissionDecision"')) throw new Error(`expected a decision for ${command}, got ${out}`);
  const h2 = [];
  const b2 = [];
  for (let i = 0; i < Math.max(10, pairs >> 2); i++) {
    b2.push(time(['-e', '0']).ms);
    h2.push(time([bin, 'hook', 'claude-code'], ev).ms);
  }
  console.log(`  ${`hook, ${what}`.padEnd(26)}wall median ${median(h2).toFixed(1)} ms against ${median(b2).toFixed(1)} ms: ratio ${(median(h2) / median(b2)).toFixed(2)} (no target)`);
}

// The hook as a program, as the Claude Code project hook runs it (`node_modules/.bin/offhost hook ...`: the
// executable's #! line, sh first, which hides NODE_EXTRA_CA_CERTS from offhost's own Node: docs/BUILD.md),
// without NODE_EXTRA_CA_CERTS and, when this machine sets it, with it, against `node -e 0` in the same
// environment. Run as `node offhost.cjs` (the rows above), Node reads that file before offhost starts.
{
  const spawnMs = (file, args, input, e) => {
    const t0 = process.hrtime.bigint();
    const r = spawnSync(file, args, { input, env: e, encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`${file} ${args.join(' ')} exited ${r.status}: ${r.stderr}`);
    return Number(process.hrtime.bigint() - t0) / 1e6;
  };
  const envs = [['NODE_EXTRA_CA_CERTS unset', env]];
  if (process.env.NODE_EXTRA_CA_CERTS) envs.push([`NODE_EXTRA_CA_CERTS=${process.env.NODE_EXTRA_CA_CERTS}`, { ...env, NODE_EXTRA_CA_CERTS: process.env.NODE_EXTRA_CA_CERTS }]);
  for (const [what, e] of envs) {
    const rows = { bare: [], program: [], node: [] };
    for (let i = 0; i < Math.max(10, pairs >> 1); i++) {
      rows.bare.push(spawnMs(process.execPath, ['-e', '0'], undefined, e));
      rows.program.push(spawnMs(bin, ['hook', 'claude-code'], event, e));
      rows.node.push(spawnMs(process.execPath, [bin, 'hook', 'claude-code'], event, e));
    }
    const mb3 = median(rows.bare);
    console.log(`  hook as a program, ${what}: wall median ${median(rows.program).toFixed(1)} ms (as node offhost.cjs ${median(rows.node).toFixed(1)} ms) against node -e 0 ${mb3.toFixed(1)} ms: ratio ${(median(rows.program) / mb3).toFixed(2)} (as node offhost.cjs ${(median(rows.node) / mb3).toFixed(2)})`);
  }
}

// A project with an offhost.config.yaml (what a team has): the compiled layer is kept between calls
// (src/config/layer-cache.ts); without that cache every call loads the YAML reader and zod.
{
  const chome = mkdtempSync(join(tmpdir(), 'offhost-bench-config-'));
  const ccwd = join(chome, 'dev', 'koder', 'engines', 'lang', 'koda');
  mkdirSync(ccwd, { recursive: true });
  writeFileSync(join(chome, 'dev', 'koder', 'offhost.config.yaml'), [
    'root: ~/dev/koder',
    'paths: { web: "{root}/apps/web" }',
    'vms:',
    '  - { id: s.khost1.dev-linux-koda-2, backend: incus, host: khost1, instance: dev-linux-koda-2 }',
    'routes:',
    '  koda: { vms: [s.khost1.dev-linux-koda, s.khost1.dev-linux-koda-2] }',
    'rules:',
    '  - id: cargo-release',
    '    description: release builds of the whole workspace',
    '    policy: R1',
    '    decision: reroute',
    '    route: koda',
    '    message: release builds run on the VM',
    '    match: { program: cargo, subcommands: [[build]], flags: [{ names: --release }] }',
    '    examples: { match: [cargo build --release], not_match: [cargo build] }',
    '',
  ].join('\n'));
  const cevent = JSON.stringify({ ...JSON.parse(event), cwd: ccwd });
  const cenv = { ...env, HOME: chome };
  const timeIn = (e, args, input) => {
    const c0 = childTicks();
    const t0 = process.hrtime.bigint();
    const r = spawnSync(process.execPath, args, { input, env: e, cwd: ccwd, encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`${args.join(' ')} exited ${r.status}: ${r.stderr}`);
    return { ms: Number(process.hrtime.bigint() - t0) / 1e6, cpuMs: (childTicks() - c0) * TICK_MS };
  };
  const rows = { cached: [[], 0], uncached: [[], 0], bare: [[], 0] };
  timeIn(cenv, [bin, 'hook', 'claude-code'], cevent); // compiles and keeps the layer
  const n = Math.max(10, pairs >> 1);
  for (let i = 0; i < n; i++) {
    for (const [k, e, args, input] of [['bare', cenv, ['-e', '0']], ['cached', cenv, [bin, 'hook', 'claude-code'], cevent], ['uncached', { ...cenv, OFFHOST_NO_CACHE: '1' }, [bin, 'hook', 'claude-code'], cevent]]) {
      const t = timeIn(e, args, input);
      rows[k][0].push(t.ms);
      rows[k][1] += t.cpuMs;
    }
  }
  const mb2 = median(rows.bare[0]);
  for (const k of ['cached', 'uncached']) {
    console.log(`  ${`hook, project config${k === 'uncached' ? ' (no cache)' : ''}`.padEnd(34)}wall median ${median(rows[k][0]).toFixed(1)} ms against ${mb2.toFixed(1)} ms: ratio ${(median(rows[k][0]) / mb2).toFixed(2)}   cpu ${(rows[k][1] / rows.bare[1]).toFixed(2)}`);
  }
  rmSync(chome, { recursive: true, force: true });
}
