// Lifecycle of stand-in limactl and tart with state ($OFFHOST_STANDIN_STATE): create/clone, list, start,
// stop, delete, and the check `shell`/`exec` make (the instance exists and runs). Messages as the real
// tools print them (limactl: cmd/limactl/*.go; tart: Sources/tart/Commands/*.swift), as far as offhost reads them.
import { fail, log } from './_lib.mjs';
import { readState, writeState } from './_state.mjs';

const MSG = {
  limactl: {
    missing: (n) => `instance "${n}" does not exist, run \`limactl create ${n}\` to create a new instance`,
    stopped: (n) => `instance "${n}" is stopped, run \`limactl start ${n}\` to start the instance`,
    deleteRunning: (n) => `failed to delete instance "${n}": expected status "Stopped", got "Running" (Hint: use --force)`,
  },
  tart: {
    missing: (n) => `Error: the specified VM "${n}" does not exist`,
    stopped: (n) => `Error: VM "${n}" is not running`,
    deleteRunning: (n) => `Error: VM "${n}" is running, stop it first`,
  },
};

/** Handles a lifecycle subcommand; returns true when it did (the process then exits). */
export function lifecycle(tool, sub, args) {
  const state = readState(tool);
  const m = MSG[tool];
  const names = args.filter((a) => !a.startsWith('-'));
  const done = () => { writeState(tool, state); process.exit(0); };
  switch (sub) {
    case 'create':
    case 'clone': {
      const name = tool === 'tart' ? names[1] : (args.find((a) => a.startsWith('--name='))?.slice(7) ?? names[0]);
      if (!name) fail(tool, 'missing name', 1);
      if (state.instances[name]) fail(tool, `instance "${name}" already exists`, 1);
      state.instances[name] = { status: 'Stopped', arch: process.env.OFFHOST_STANDIN_ARCH || 'aarch64' };
      log({ tool, sub, instance: name, argv: args });
      done();
      break;
    }
    case 'list':
    case 'ls': {
      const json = args.includes('--json') || args.includes('--format=json') || (args.includes('--format') && args[args.indexOf('--format') + 1] === 'json');
      const rows = Object.entries(state.instances).map(([name, i]) => ({ name, status: i.status, arch: i.arch, State: i.status === 'Running' ? 'running' : 'stopped', Name: name }));
      process.stdout.write(json ? (tool === 'tart' ? JSON.stringify(rows) + '\n' : rows.map((r) => JSON.stringify(r)).join('\n') + (rows.length ? '\n' : '')) : rows.map((r) => `${r.name} ${r.status}`).join('\n') + '\n');
      process.exit(0);
      break;
    }
    case 'start':
    case 'run':
    case 'stop':
    case 'delete':
    case 'rm':
    case 'remove': {
      const name = names[0];
      const i = state.instances[name];
      if (!i) fail(tool, m.missing(name), 1);
      log({ tool, sub, instance: name, argv: args });
      if (sub === 'start' || sub === 'run') i.status = 'Running';
      else if (sub === 'stop') i.status = 'Stopped';
      else {
        if (i.status === 'Running' && !args.includes('--force') && !args.includes('-f')) fail(tool, m.deleteRunning(name), 1);
        delete state.instances[name];
      }
      done();
      break;
    }
    default:
      return false;
  }
  return true;
}

/** Refuses `shell`/`exec` on an instance that does not exist or does not run. */
export function requireRunning(tool, name) {
  const i = readState(tool).instances[name];
  if (!i) fail(tool, MSG[tool].missing(name), 1);
  if (i.status !== 'Running') fail(tool, MSG[tool].stopped(name), 1);
}
