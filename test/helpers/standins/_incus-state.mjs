// Stand-in incus with state ($OFFHOST_STANDIN_STATE set): launch, list (table and --format json), info,
// start, stop, delete, config device add|remove|show, snapshot create|restore|list (and the older
// `incus restore`), exec. Refuses what incus refuses, with its messages: an instance that exists (launch)
// or does not (everything else), exec in a stopped instance, delete of a running one without --force,
// a device that exists, a disk device whose source is missing, a snapshot name taken or absent.
// exec runs in the guest: PATH is the image's programs plus what packages installed, the cwd inside a
// disk device is that device's source, and the guest tools (apt-get, dpkg-query, df, findmnt) read and
// write the same state.
import { existsSync, statSync } from 'node:fs';
import { cleanEnv, execAndExit, fail, log, vmHome } from './_lib.mjs';
import { createGuest, guestPath, readState, removeGuest, writeState } from './_state.mjs';

const T = 'incus';
// Real incus prints `Error: <message>` on stderr, exit 1.
const die = (msg, status = 1) => { process.stderr.write(`Error: ${msg}\n`); process.exit(status); };

function instanceOf(state, name) {
  const i = state.instances[name];
  if (!i) die('Instance not found');
  return i;
}

function listJson(state) {
  return Object.entries(state.instances).map(([name, i]) => ({
    name,
    status: i.status,
    status_code: i.status === 'Running' ? 103 : 102,
    type: i.type,
    architecture: i.architecture,
    config: { 'image.description': i.image },
    devices: i.devices,
    expanded_devices: { root: { type: 'disk', path: '/', pool: 'default' }, ...i.devices },
    snapshots: i.snapshots.map((s) => ({ name: s.name, created_at: s.created_at })),
    state: { status: i.status, disk: { root: { usage: i.disk.used_mb * 1024 * 1024, total: i.disk.size_mb * 1024 * 1024 } } },
  }));
}

function table(state) {
  const names = Object.keys(state.instances);
  const w = Math.max(4, ...names.map((n) => n.length));
  const line = `+-${'-'.repeat(w)}-+---------+-----------------+\n`;
  let out = line + `| ${'NAME'.padEnd(w)} |  STATE  |      TYPE       |\n` + line;
  for (const n of names) {
    const i = state.instances[n];
    out += `| ${n.padEnd(w)} | ${i.status.toUpperCase().padEnd(7)} | ${(i.type === 'virtual-machine' ? 'VIRTUAL-MACHINE' : 'CONTAINER').padEnd(15)} |\n`;
  }
  return out + line;
}

function flagsAndArgs(args) {
  const flags = new Map();
  const pos = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === '--') { pos.push(...args.slice(i + 1)); break; }
    if (a.startsWith('--')) {
      const eq = a.indexOf('=');
      if (eq > 0) flags.set(a.slice(0, eq), a.slice(eq + 1));
      else if (['--format', '-f', '--cwd', '--env', '--user', '--profile', '-p', '-c', '--config', '--storage', '-s', '--type', '-t'].includes(a)) flags.set(a, args[++i]);
      else flags.set(a, true);
      continue;
    }
    if (a === '-f' || a === '-c' || a === '-p' || a === '-s') { flags.set(a === '-f' ? '--format' : a, args[++i]); continue; }
    pos.push(a);
  }
  return { flags, pos };
}

export function incusWithState(sub, args) {
  const state = readState(T);
  const { flags, pos } = flagsAndArgs(args);
  log({ tool: T, sub, argv: args });
  const out = (s) => process.stdout.write(s);
  switch (sub) {
    case 'list':
    case 'ls': {
      const fmt = flags.get('--format');
      const filter = pos[0];
      if (filter !== undefined) for (const n of Object.keys(state.instances)) if (!n.startsWith(filter)) delete state.instances[n];
      if (fmt === 'json') out(JSON.stringify(listJson(state)) + '\n');
      else if (fmt === 'csv') for (const [n, i] of Object.entries(state.instances)) out(`${n},${i.status.toUpperCase()}\n`);
      else out(table(state));
      return 0;
    }
    case 'launch': {
      const [image, name] = pos;
      if (!image || !name) die('Invalid number of arguments');
      if (state.instances[name]) die('Failed creating instance record: Add instance info to the database: This "instances" entry already exists');
      if (!/^[a-z0-9-]+:./.test(image)) die(`Failed instance creation: Failed getting remote image info: The requested image couldn't be found`);
      const vm = flags.has('--vm');
      state.instances[name] = {
        status: 'Running',
        type: vm ? 'virtual-machine' : 'container',
        architecture: process.env.OFFHOST_STANDIN_ARCH || 'x86_64',
        image,
        devices: {},
        snapshots: [],
        packages: [],
        disk: { size_mb: Number(process.env.OFFHOST_STANDIN_DISK_MB || 10240), used_mb: 900 },
      };
      createGuest(T, name);
      writeState(T, state);
      out(`Launching ${name}\n`);
      return 0;
    }
    case 'info': {
      const i = instanceOf(state, pos[0]);
      out(`Name: ${pos[0]}\nStatus: ${i.status.toUpperCase()}\nType: ${i.type}\nArchitecture: ${i.architecture}\n`);
      return 0;
    }
    case 'start': {
      const i = instanceOf(state, pos[0]);
      if (i.status === 'Running') die('The instance is already running');
      i.status = 'Running';
      writeState(T, state);
      return 0;
    }
    case 'stop': {
      const i = instanceOf(state, pos[0]);
      if (i.status !== 'Running') die('The instance is already stopped');
      i.status = 'Stopped';
      writeState(T, state);
      return 0;
    }
    case 'delete':
    case 'rm': {
      const i = instanceOf(state, pos[0]);
      if (i.status === 'Running' && !flags.has('--force') && !args.includes('-f')) die('The instance is currently running, stop it first or pass --force');
      delete state.instances[pos[0]];
      removeGuest(T, pos[0]);
      writeState(T, state);
      return 0;
    }
    case 'restore':
      return snapshot(state, ['restore', ...pos], flags);
    case 'snapshot':
      return snapshot(state, pos, flags);
    case 'config': {
      const [verb, what, name, dev, type, ...kv] = pos;
      if (verb !== 'device') die(`stand-in: unsupported \`incus config ${verb}\``);
      const i = instanceOf(state, name);
      if (what === 'show' || what === 'list') {
        if (what === 'list') for (const d of Object.keys(i.devices)) out(`${d}\n`);
        else for (const [d, spec] of Object.entries(i.devices)) out(`${d}:\n${Object.entries(spec).map(([k, v]) => `  ${k}: ${JSON.stringify(v)}\n`).join('')}`);
        return 0;
      }
      if (what === 'remove') {
        if (!i.devices[dev]) die('Device doesn\'t exist');
        delete i.devices[dev];
        writeState(T, state);
        return 0;
      }
      if (what !== 'add') die(`stand-in: unsupported \`incus config device ${what}\``);
      if (!dev || !type) die('Invalid number of arguments');
      if (i.devices[dev]) die('The device already exists');
      const spec = { type };
      for (const p of kv) {
        const eq = p.indexOf('=');
        if (eq < 0) die(`No value found in "${p}"`);
        spec[p.slice(0, eq)] = p.slice(eq + 1);
      }
      if (type === 'disk') {
        if (!spec.path) die(`Invalid devices: Device validation failed for "${dev}": Disk entry is missing the required "path" or "source" property`);
        if (i.status === 'Running' && !existsSync(spec.source ?? '')) die(`Failed to start device "${dev}": Missing source path "${spec.source}" for disk "${dev}"`);
      }
      i.devices[dev] = spec;
      writeState(T, state);
      out(`Device ${dev} added to ${name}\n`);
      return 0;
    }
    case 'exec':
      return exec(state, args);
    default:
      die(`stand-in: unsupported subcommand ${JSON.stringify(sub)}`);
  }
}

function snapshot(state, pos, flags) {
  const [verb, name, snap] = pos;
  const i = instanceOf(state, name);
  if (verb === 'create') {
    const s = snap ?? `snap${i.snapshots.length}`;
    if (i.snapshots.some((x) => x.name === s)) die(`Failed creating instance snapshot record "${s}": Add instance snapshot info to the database: This "instance_snapshots" entry already exists`);
    i.snapshots.push({ name: s, created_at: new Date().toISOString(), packages: [...i.packages], used_mb: i.disk.used_mb });
    writeState(T, state);
    return 0;
  }
  if (verb === 'restore') {
    const s = i.snapshots.find((x) => x.name === snap);
    if (!s) die('Instance snapshot not found');
    i.packages = [...s.packages];
    i.disk.used_mb = s.used_mb;
    writeState(T, state);
    return 0;
  }
  if (verb === 'list') {
    for (const s of i.snapshots) process.stdout.write(`${s.name},${s.created_at}\n`);
    return 0;
  }
  if (verb === 'delete') {
    const at = i.snapshots.findIndex((x) => x.name === snap);
    if (at < 0) die('Instance snapshot not found');
    i.snapshots.splice(at, 1);
    writeState(T, state);
    return 0;
  }
  die(`stand-in: unsupported \`incus snapshot ${verb}\``);
}

function exec(state, args) {
  const positional = [];
  const env = {};
  let cwd = null;
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === '--') { positional.push(...args.slice(i + 1)); break; }
    if (a === '--cwd') { cwd = args[++i]; continue; }
    if (a === '--env') { const v = args[++i]; const k = v.indexOf('='); env[v.slice(0, k)] = v.slice(k + 1); continue; }
    if (a === '--user' || a === '--group' || a === '--mode') { i++; continue; }
    if (/^-[tTn]+$/.test(a) || a.startsWith('--force') || a === '--disable-stdin') continue;
    if (a.startsWith('-')) die(`unknown flag: ${a}`);
    positional.push(a);
  }
  const [name, ...argv] = positional;
  if (!name || argv.length === 0) die('Invalid number of arguments');
  const inst = instanceOf(state, name);
  if (inst.status !== 'Running') die('Instance is not running');
  // A disk device shows its source at its path (POLICY R6: the same path when source == path).
  let dir = cwd ?? vmHome();
  for (const d of Object.values(inst.devices)) {
    if (d.type !== 'disk' || !d.source) continue;
    if (dir === d.path || dir.startsWith(`${d.path}/`)) dir = d.source + dir.slice(d.path.length);
  }
  let ok = false;
  try { ok = statSync(dir).isDirectory(); } catch {}
  if (!ok) die(`Failed to change directory to "${cwd ?? dir}": no such file or directory`, 1);
  log({ tool: T, instance: name, argv, cwd: dir, env });
  const guestEnv = cleanEnv({ ...env, OFFHOST_STANDIN_GUEST: name, OFFHOST_STANDIN_NODE: process.execPath });
  guestEnv.PATH = guestPath(T, name);
  execAndExit(T, argv, { cwd: dir, env: guestEnv });
}
