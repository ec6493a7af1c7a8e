// Stand-in for the Windows VM driver (seed 003): `win.sh sh "CMD"` runs CMD with the VM's msys2 bash
// over ssh (here: bash -c, guest home, fresh environment); exit status passed through.
import { cleanEnv, execAndExit, fail, log, vmHome } from './_lib.mjs';

const [sub, line, ...extra] = process.argv.slice(2);
if (sub !== 'sh' || line === undefined || extra.length > 0) fail('win.sh', 'usage: win.sh sh "<command>"', 2);
log({ tool: 'win.sh', instance: process.env.CBM_VM_HOST || 'win', argv: ['bash', '-c', line], cwd: vmHome() });
execAndExit('win.sh', ['/bin/bash', '--noprofile', '--norc', '-c', line], { cwd: vmHome(), env: cleanEnv() });
