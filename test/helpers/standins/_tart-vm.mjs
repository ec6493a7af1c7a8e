// Stand-in for the checked-in Tart helper (seed 001): `tart-vm.sh exec NAME -- cmd…` runs cmd in the
// guest as an argv (no re-splitting), guest home, fresh environment; exit status passed through.
// With $OFFHOST_STANDIN_STATE: `up NAME IMAGE`, `down NAME` (keeps the disk), `rm NAME`, and `exec`
// refuses a guest that is not up.
import { checkInstance, cleanEnv, execAndExit, fail, log, vmHome } from './_lib.mjs';
import { readState, writeState } from './_state.mjs';

const [sub, name, ...rest] = process.argv.slice(2);
const stateful = !!process.env.OFFHOST_STANDIN_STATE;
if (stateful && sub !== 'exec') {
  const state = readState('tart-vm');
  log({ tool: 'tart-vm.sh', sub, instance: name, argv: rest });
  if (!name) fail('tart-vm.sh', `usage: tart-vm.sh ${sub} <name>`, 2);
  const g = state.instances[name];
  if (sub === 'up') {
    if (!rest[0]) fail('tart-vm.sh', 'usage: tart-vm.sh up <name> <image>', 2);
    if (g?.running) fail('tart-vm.sh', `${name} is already running`, 1);
    state.instances[name] = { image: rest[0], running: true };
  } else if (sub === 'down') {
    if (!g) fail('tart-vm.sh', `no VM named ${name}`, 1);
    g.running = false;
  } else if (sub === 'rm') {
    if (!g) fail('tart-vm.sh', `no VM named ${name}`, 1);
    delete state.instances[name];
  } else fail('tart-vm.sh', `stand-in: unsupported ${sub}`, 2);
  writeState('tart-vm', state);
  process.exit(0);
}
const [dashdash, ...cmd] = rest;
if (sub !== 'exec' || !name || dashdash !== '--' || cmd.length === 0) fail('tart-vm.sh', 'usage: tart-vm.sh exec <name> -- <cmd...>', 2);
if (stateful && !readState('tart-vm').instances[name]?.running) fail('tart-vm.sh', `${name} is not running (tart-vm.sh up ${name} <image>)`, 1);
checkInstance('tart-vm.sh', name);
log({ tool: 'tart-vm.sh', instance: name, argv: cmd, cwd: vmHome() });
execAndExit('tart-vm.sh', cmd, { cwd: vmHome(), env: cleanEnv() });
