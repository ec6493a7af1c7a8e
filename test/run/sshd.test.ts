// The loopback sshd test helper itself: key login through the alias, strict host-key checking, the
// session environment, and rsync over it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startSshd, type Sshd } from '../helpers/sshd.js';
import { missing, titled } from '../helpers/tools.js';
import { standinPath, writeIncusState } from '../helpers/standins.js';

let s: Sshd;
const tmp = mkdtempSync(join(tmpdir(), 'offhost-sshd-test-'));
const state = join(tmp, 'incus-state.json');
const noSshd = missing('sshd');
beforeAll(async () => {
  if (noSshd) return;
  writeIncusState(state, { 'dev-linux-koda': 'RUNNING', 'dev-linux-gui': 'STOPPED' });
  s = await startSshd({ remoteEnv: { OFFHOST_TEST_MARK: 'on the vm side', PATH: `${standinPath()}:/usr/local/bin:/usr/bin:/bin`, OFFHOST_STANDIN_INCUS_STATE: state } });
});
afterAll(async () => {
  await s?.stop();
  rmSync(tmp, { recursive: true, force: true });
});

describe.skipIf(noSshd)(titled('test sshd on loopback', noSshd), () => {
  it('logs in by key through the Host alias and runs the command with the session environment', () => {
    const out = execFileSync('ssh', [s.alias, '--', 'echo "$OFFHOST_TEST_MARK"; id -un; pwd'], { env: s.env(), encoding: 'utf8' });
    expect(out.split('\n').slice(0, 2)).toEqual(['on the vm side', s.user]);
  });

  it('passes the remote exit status through', () => {
    const r = spawnSync('ssh', [s.alias, '--', 'exit 42'], { env: s.env() });
    expect(r.status).toBe(42);
  });

  it('refuses a host key that is not the pinned one (strict checking)', () => {
    const other = join(tmp, 'other_known_hosts');
    writeFileSync(other, `[127.0.0.1]:${s.port} ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHh0aGlzIGlzIG5vdCB0aGUgc2VydmVyJ3Mga2V5ISE=\n`);
    const r = spawnSync('ssh', ['-o', `UserKnownHostsFile=${other}`, s.alias, '--', 'true'], { env: s.env(), encoding: 'utf8' });
    expect(r.status).toBe(255);
    expect(r.stderr).toMatch(/Host key verification failed|REMOTE HOST IDENTIFICATION HAS CHANGED/);
  });

  it('refuses a key it does not know (no password fallback)', () => {
    const key = join(tmp, 'stranger');
    execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', key]);
    const r = spawnSync('ssh', ['-o', `IdentityFile=${key}`, '-o', 'IdentitiesOnly=yes', '-i', key, '-F', '/dev/null', '-p', String(s.port), '-o', `UserKnownHostsFile=${s.knownHosts}`, '-o', 'BatchMode=yes', `${s.user}@127.0.0.1`, 'true'], { encoding: 'utf8' });
    expect(r.status).toBe(255);
    expect(r.stderr).toContain('Permission denied');
  });

  it.skipIf(missing('rsync'))(titled('carries rsync (the ssh on PATH is the configured one)', missing('rsync')), () => {
    const src = join(tmp, 'src');
    const dst = join(tmp, 'vm', 'copy');
    mkdirSync(join(src, 'sub'), { recursive: true });
    mkdirSync(join(tmp, 'vm'));
    writeFileSync(join(src, 'sub', 'f.txt'), 'hello\n');
    execFileSync('rsync', ['-a', `${src}/`, `${s.alias}:${dst}/`], { env: s.env() });
    expect(readFileSync(join(dst, 'sub', 'f.txt'), 'utf8')).toBe('hello\n');
  });

  it('reaches the stand-in incus on the VM host side, which keeps state and refuses what the real one refuses', () => {
    const run = (cmd: string) => spawnSync('ssh', [s.alias, '--', cmd], { env: s.env(), encoding: 'utf8' });
    const first = run('incus exec dev-linux-koda -- echo in-koda');
    expect(first.stdout, first.stderr).toBe('in-koda\n');
    const missing = run('incus exec dev-linux-nope -- true');
    expect(missing.status).toBe(1);
    expect(missing.stderr).toContain('Instance not found');
    const stopped = run('incus exec dev-linux-gui -- true');
    expect(stopped.status).toBe(1);
    expect(stopped.stderr).toContain('Instance is not running');
    expect(run('incus start dev-linux-gui').status).toBe(0);
    expect(run('incus exec dev-linux-gui -- echo up').stdout).toBe('up\n');
    expect(run('incus start dev-linux-gui').stderr).toContain('already running');
  });
});
