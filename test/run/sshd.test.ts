// The loopback sshd test helper itself: key login through the alias, strict host-key checking, the
// session environment, and rsync over it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startSshd, type Sshd } from '../helpers/sshd.js';

let s: Sshd;
const tmp = mkdtempSync(join(tmpdir(), 'offhost-sshd-test-'));
beforeAll(async () => {
  s = await startSshd({ remoteEnv: { OFFHOST_TEST_MARK: 'on the vm side' } });
});
afterAll(async () => {
  await s?.stop();
  rmSync(tmp, { recursive: true, force: true });
});

describe('test sshd on loopback', () => {
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

  it('carries rsync (the ssh on PATH is the configured one)', () => {
    const src = join(tmp, 'src');
    const dst = join(tmp, 'vm', 'copy');
    mkdirSync(join(src, 'sub'), { recursive: true });
    mkdirSync(join(tmp, 'vm'));
    writeFileSync(join(src, 'sub', 'f.txt'), 'hello\n');
    execFileSync('rsync', ['-a', `${src}/`, `${s.alias}:${dst}/`], { env: s.env() });
    expect(readFileSync(join(dst, 'sub', 'f.txt'), 'utf8')).toBe('hello\n');
  });
});
