// Stand-in for the checked-in Tart helper (seed 001): `tart-vm.sh exec NAME -- cmd…` runs cmd in the
// guest as an argv (no re-splitting), guest home, fresh environment; exit status passed through.
import { checkInstance, cleanEnv, execAndExit, fail, log, vmHome } from './_lib.mjs';

const [sub, name, dashdash, ...cmd] = process.argv.slice(2);
if (sub !== 'exec' || !name || dashdash !== '--' || cmd.length === 0) fail('tart-vm.sh', 'usage: tart-vm.sh exec <name> -- <cmd...>', 2);
checkInstance('tart-vm.sh', name);
log({ tool: 'tart-vm.sh', instance: name, argv: cmd, cwd: vmHome() });
execAndExit('tart-vm.sh', cmd, { cwd: vmHome(), env: cleanEnv() });
