// The loopback sshd's VM home (test/helpers/sshd.ts): every session's HOME is the server's own folder, so
// the rc files bash sources when sshd runs it are the VM's, never the laptop user's. (The rest of the helper
// is tested in test/run/sshd.test.ts.)
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { basename, join } from 'node:path';
import { startSshd, type Sshd } from './sshd.js';
import { missing, titled } from './tools.js';

const noSshd = missing('sshd');
let s: Sshd;
let own: Sshd;
const tmp = mkdtempSync(join(tmpdir(), 'offhost-sshd-home-'));

beforeAll(async () => {
  if (noSshd) return;
  s = await startSshd({ remoteEnv: { PATH: '/usr/bin:/bin' } });
  own = await startSshd({ alias: 'offhost-own-home', remoteEnv: { HOME: tmp } });
});
afterAll(async () => {
  await s?.stop();
  await own?.stop();
  rmSync(tmp, { recursive: true, force: true });
});

describe.skipIf(noSshd)(titled('the loopback VM has its own home', noSshd), () => {
  it('a session runs with HOME at vmHome and the PATH the test gave, whatever the user’s rc files add', () => {
    const out = execFileSync('ssh', [s.alias, '--', 'printf "%s\\n" "$HOME" "$PATH"'], { env: s.env(), encoding: 'utf8' });
    expect(out).toBe(`${s.vmHome}\n/usr/bin:/bin\n`);
  });

  it('the rc file bash sources for an ssh session is the one in vmHome', () => {
    // Shows the mechanism the VM home relies on: bash run by sshd reads $HOME/.bashrc, so a home of the
    // VM's own keeps the laptop user's out.
    writeFileSync(join(s.vmHome, '.bashrc'), 'export OFFHOST_VM_RC=read\n');
    const out = execFileSync('ssh', [s.alias, '--', 'echo "${OFFHOST_VM_RC:-unread}"'], { env: s.env(), encoding: 'utf8' });
    // Where the login shell (sshd runs the command through it) is not bash, no rc file is read at all.
    expect(out.trim()).toBe(basename(userInfo().shell ?? '') === 'bash' ? 'read' : 'unread');
    rmSync(join(s.vmHome, '.bashrc'));
  });

  it('remoteEnv.HOME wins over the VM home', () => {
    const out = execFileSync('ssh', [own.alias, '--', 'echo "$HOME"'], { env: own.env(), encoding: 'utf8' });
    expect(out.trim()).toBe(tmp);
    expect(own.vmHome).toBe(tmp);
  });
});
