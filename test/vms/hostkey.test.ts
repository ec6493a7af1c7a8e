// The host-key check of `offhost vm status` against a real OpenSSH server on 127.0.0.1: the pinned
// fingerprint passes, another one is refused with its own status (248) before anything is sent.
// (A minimal sshd of this file's own: it only has to present its host key to ssh-keyscan; the shared
// loopback helper of the run work, test/helpers/sshd.ts, replaces it once merged.)
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { missing, onPath, prepareSshd, sshdPath, titled } from '../helpers/tools.js';
import { WAIT_MS } from '../helpers/hang-guard.js';
import { cleanEnv, configure, ensureBuilt, g, offhost } from '../locks/lifecycle-helpers.js';

const SSHD = sshdPath() ?? '/usr/sbin/sshd';
const without = missing('sshd') ?? (onPath('ssh-keyscan') ? null : 'ssh-keyscan is not on PATH (.ci/run installs openssh-client)');
const have = without === null;
let dir: string;
let sshd: ChildProcess | null = null;
let fingerprint = '';
let env: Record<string, string>;
let repo: string;

async function freePort(): Promise<number> {
  return new Promise((res) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const a = s.address();
      s.close(() => res(typeof a === 'object' && a ? a.port : 0));
    });
  });
}

beforeAll(async () => {
  if (!have) return;
  ensureBuilt();
  dir = mkdtempSync(join(tmpdir(), 'offhost-hostkey-'));
  execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', join(dir, 'host_key')]);
  fingerprint = execFileSync('ssh-keygen', ['-lf', join(dir, 'host_key.pub')], { encoding: 'utf8' }).split(' ')[1]!;
  const port = await freePort();
  prepareSshd();
  writeFileSync(join(dir, 'sshd_config'), [`Port ${port}`, 'ListenAddress 127.0.0.1', `HostKey ${join(dir, 'host_key')}`, `PidFile ${join(dir, 'sshd.pid')}`, 'UsePAM no', 'PasswordAuthentication no', 'KbdInteractiveAuthentication no', 'StrictModes no', ''].join('\n'));
  sshd = spawn(SSHD, ['-D', '-e', '-f', join(dir, 'sshd_config')], { stdio: ['ignore', 'ignore', 'pipe'] });
  // The laptop's ssh config, the way a user writes one; OpenSSH reads ~/.ssh/config from the passwd
  // home, so an `ssh` wrapper with -F goes first on PATH.
  writeFileSync(join(dir, 'ssh_config'), `Host khost1\n  HostName 127.0.0.1\n  Port ${port}\n  BatchMode yes\n  StrictHostKeyChecking yes\n  UserKnownHostsFile ${join(dir, 'known_hosts')}\n`);
  mkdirSync(join(dir, 'bin'));
  writeFileSync(join(dir, 'bin', 'ssh'), `#!/bin/sh\nexec /usr/bin/ssh -F '${join(dir, 'ssh_config')}' "$@"\n`);
  chmodSync(join(dir, 'bin', 'ssh'), 0o755);
  for (let i = 0; i < WAIT_MS / 100; i++) {
    try {
      execFileSync('ssh-keyscan', ['-T', '2', '-p', String(port), '127.0.0.1'], { stdio: 'pipe' });
      break;
    } catch {
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  repo = join(dir, 'dev', 'koder');
  mkdirSync(repo, { recursive: true });
  g(repo, 'init', '-q', '-b', 'main');
  configure(repo);
  env = { ...(cleanEnv() as Record<string, string>), HOME: dir, PATH: `${join(dir, 'bin')}:${process.env.PATH}`, OFFHOST_ROLE: 'laptop' };
});
afterAll(() => {
  sshd?.kill('SIGTERM');
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const config = (key: string) =>
  writeFileSync(join(repo, 'offhost.config.yaml'), `vms:\n  - { id: s.khost1.dev-linux-koda, backend: incus, host: khost1, instance: dev-linux-koda, host_key: "${key}" }\n`);

describe.skipIf(!have)(titled('vm status: the host key as pinned (real sshd on loopback)', without), () => {
  it('another key than the pinned one: refused with 248, nothing sent', async () => {
    config('SHA256:' + 'A'.repeat(43));
    const r = await offhost(['vm', 'status', 's.khost1.dev-linux-koda'], { cwd: repo, baseEnv: env });
    expect(r.code, r.stdout + r.stderr).toBe(248);
    expect(r.stdout).toContain(`khost1 (127.0.0.1:`);
    expect(r.stdout).toContain(`presents ${fingerprint}, not the pinned SHA256:${'A'.repeat(43)}: nothing was sent to it`);
    expect(r.stdout).toContain('confirm its new key out of band');
    expect(r.stdout).not.toMatch(/ok\s+host\s/);
  });
  it('the pinned key: the check passes and the preflight goes on (here: no login for us, so the host fails)', async () => {
    config(fingerprint);
    const r = await offhost(['vm', 'status', 's.khost1.dev-linux-koda'], { cwd: repo, baseEnv: env });
    expect(r.stdout).toMatch(new RegExp(`ok\\s+host key\\s+khost1 presents the pinned key ${fingerprint.replace(/[+/]/g, '\\$&')}`));
    expect(r.code, r.stdout).toBe(232);
    expect(r.stdout).toContain('cannot reach khost1 over ssh');
  });
});
