#!/usr/bin/env node
// The node half of ./incus (which runs it when a state file is set). Stand-in for `incus exec NAME [--cwd D] [--env K=V]… [--user N] [-t|-T|-n] [--mode M] [--] argv…`
// (cobra flags, interspersed until `--`; argv run directly, no shell, fresh environment, default
// directory the home) and `incus list` (a table). Exit status passed through. With
// $OFFHOST_STANDIN_STATE set, a stateful incus (./_incus-state.mjs).
import { checkInstance, cleanEnv, execAndExit, fail, log, requireDir, vmHome } from './_lib.mjs';
import { incusWithState } from './_incus-state.mjs';
import { readFileSync, writeFileSync } from 'node:fs';

const [sub, ...args] = process.argv.slice(2);
// With $OFFHOST_STANDIN_STATE: instances, devices, snapshots and packages kept in that directory.
if (process.env.OFFHOST_STANDIN_STATE) process.exit(incusWithState(sub, args));
// Lighter: with OFFHOST_STANDIN_INCUS_STATE (a JSON file { "NAME": "RUNNING" | "STOPPED", … }) only those
// instances exist, `incus start|stop NAME` change it, exec in a stopped one is refused; exec runs here.
const stateFile = process.env.OFFHOST_STANDIN_INCUS_STATE;
const state = stateFile ? JSON.parse(readFileSync(stateFile, 'utf8')) : null;
const instances = state ? Object.keys(state) : (process.env.OFFHOST_STANDIN_INSTANCES || 'dev-linux-koda,dev-linux-gui,dev-android-emulator,dev-linux-iso').split(',');
// Instances that are virtual machines, not containers (comma-separated; default none): what `list` reports.
const vmInstances = (process.env.OFFHOST_STANDIN_VM_INSTANCES || '').split(',');
if ((sub === 'start' || sub === 'stop') && state) {
  const name = args.find((a) => !a.startsWith('-'));
  if (!name) fail('incus', 'Error: Invalid number of arguments', 1);
  if (!(name in state)) fail('incus', 'Error: Instance not found', 1);
  const want = sub === 'start' ? 'RUNNING' : 'STOPPED';
  if (state[name] === want) fail('incus', `Error: The instance is already ${sub === 'start' ? 'running' : 'stopped'}`, 1);
  state[name] = want;
  writeFileSync(stateFile, JSON.stringify(state));
  log({ tool: 'incus', sub, instance: name, argv: args });
  process.exit(0);
}
if (sub === 'list' || sub === 'ls') {
  log({ tool: 'incus', sub: 'list', argv: args });
  if (args.includes('--format=json') || (args.includes('--format') && args[args.indexOf('--format') + 1] === 'json')) {
    // Without state: a host where every instance runs as provisioned, the monorepo mounted read-only at
    // $OFFHOST_STANDIN_MOUNT (default the VM user's ~/dev/koder, the built-in root).
    const mount = process.env.OFFHOST_STANDIN_MOUNT || `${vmHome()}/dev/koder`;
    const devices = { koder: { type: 'disk', source: mount, path: mount, readonly: 'true' } };
    // A filter word lists the instances whose name starts with it; with no instance list set, any name exists.
    const filter = args.filter((a, i) => !a.startsWith('-') && args[i - 1] !== '--format')[0];
    // As the real incus: only the instances that exist (with a state file, those in it), with their state.
    const names = filter === undefined ? instances : process.env.OFFHOST_STANDIN_INSTANCES || state ? instances.filter((n) => n.startsWith(filter)) : [filter];
    process.stdout.write(JSON.stringify(names.map((name) => ({ name, status: state && state[name] === 'STOPPED' ? 'Stopped' : 'Running', type: vmInstances.includes(name) ? 'virtual-machine' : 'container', architecture: 'x86_64', devices, expanded_devices: devices, snapshots: [] }))) + '\n');
    process.exit(0);
  }
  const w = Math.max(4, ...instances.map((n) => n.length));
  const line = `+-${'-'.repeat(w)}-+---------+-----------------+\n`;
  let out = line + `| ${'NAME'.padEnd(w)} |  STATE  |      TYPE       |\n` + line;
  for (const n of instances) out += `| ${n.padEnd(w)} | ${(state ? state[n] : "RUNNING").padEnd(7)} | CONTAINER       |\n`;
  process.stdout.write(out + line);
  process.exit(0);
}
if (sub !== 'exec') fail('incus', `stand-in: unsupported subcommand ${JSON.stringify(sub)}`, 1);
const positional = [];
const env = {};
let cwd = null;
let user = null;
const VALUE_FLAGS = new Set(['--cwd', '--env', '--user', '--group', '--mode']);
for (let i = 0; i < args.length; i++) {
  const a = args[i];
  if (a === '--') { positional.push(...args.slice(i + 1)); break; }
  if (a.startsWith('--')) {
    const eq = a.indexOf('=');
    const name = eq >= 0 ? a.slice(0, eq) : a;
    if (['--force-interactive', '--force-noninteractive', '--disable-stdin'].includes(name)) continue;
    if (!VALUE_FLAGS.has(name)) fail('incus', `Error: unknown flag: ${name}`, 1);
    let v;
    if (eq >= 0) v = a.slice(eq + 1);
    else { i++; if (i >= args.length) fail('incus', `Error: flag needs an argument: ${name}`, 1); v = args[i]; }
    if (name === '--cwd') cwd = v;
    else if (name === '--env') { const k = v.indexOf('='); env[k >= 0 ? v.slice(0, k) : v] = k >= 0 ? v.slice(k + 1) : ''; }
    else if (name === '--user') user = v;
    continue;
  }
  if (/^-[tTn]+$/.test(a)) continue;
  if (a.startsWith('-') && a !== '-') fail('incus', `Error: unknown shorthand flag: ${JSON.stringify(a)}`, 1);
  positional.push(a);
}
const [name, ...argv] = positional;
if (!name || argv.length === 0) fail('incus', 'Error: Invalid number of arguments', 1);
if (state) {
  if (!(name in state)) fail('incus', 'Error: Instance not found', 1);
  if (state[name] !== 'RUNNING') fail('incus', 'Error: Instance is not running', 1);
} else checkInstance('incus', name);
const dir = cwd ?? vmHome();
requireDir('incus', dir);
log({ tool: 'incus', instance: name, user, argv, cwd: dir, env });
execAndExit('incus', argv, { cwd: dir, env: cleanEnv(env) });
