// Host-key pinning for every ssh `offhost run` renders (issue 11 item 6, seed 003). A VM with
// `host_key:` gets a known_hosts file holding exactly that key, under an alias of its own, and ssh is
// told to trust nothing else:
//
//   -o HostKeyAlias=offhost-<vm id> -o UserKnownHostsFile=<pinned file> -o GlobalKnownHostsFile=/dev/null
//   -o StrictHostKeyChecking=yes -o CheckHostIP=no -o HostKeyAlgorithms=<the pinned key's type>
//
// `host_key` is a public key line (written as it is) or a `SHA256:` fingerprint; for a fingerprint the
// key is fetched once with ssh-keyscan at the address `ssh -G` resolves the host to, kept only when its
// fingerprint is the pinned one, and cached. A server presenting another key then fails ssh's own
// strict check on every connection, which offhost reports as a host-key mismatch.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { VmSpec } from './types.js';

const run = promisify(execFile);

export class HostKeyError extends Error {
  constructor(
    message: string,
    readonly kind: 'mismatch' | 'unreachable',
  ) {
    super(message);
    this.name = 'HostKeyError';
  }
}

/** `SHA256:…` of a base64 key blob, as ssh-keygen -l prints it. */
export function fingerprintOfBlob(b64: string): string {
  return `SHA256:${createHash('sha256').update(Buffer.from(b64, 'base64')).digest('base64').replace(/=+$/, '')}`;
}

function algorithmsFor(type: string): string {
  if (type === 'ssh-rsa') return 'rsa-sha2-512,rsa-sha2-256,ssh-rsa';
  return type;
}

/** The ssh destination offhost talks to for this VM (incus/docker: the VM host), or null (no ssh). */
export function sshDestination(vm: VmSpec): string | null {
  if (vm.backend === 'ssh') return vm.host ?? vm.instance ?? null;
  if ((vm.backend === 'incus' || vm.backend === 'docker') && vm.host) return vm.host;
  return null;
}

async function resolveHost(dest: string, env: NodeJS.ProcessEnv): Promise<{ host: string; port: string }> {
  const r = await run('ssh', ['-G', dest], { env, encoding: 'utf8' });
  let host = dest;
  let port = '22';
  for (const line of r.stdout.split('\n')) {
    const [k, v] = [line.slice(0, line.indexOf(' ')), line.slice(line.indexOf(' ') + 1)];
    if (k === 'hostname') host = v;
    if (k === 'port') port = v;
  }
  return { host, port };
}

/**
 * ssh options pinning the VM's host key, or [] when it pins none. `stateDir` holds the pinned files.
 * Throws HostKeyError when the server's key is not the pinned one (or cannot be fetched to check it).
 */
export async function pinnedSshOptions(vm: VmSpec, env: NodeJS.ProcessEnv, stateDir: string): Promise<string[]> {
  const pin = vm.host_key;
  if (!pin) return [];
  const dest = sshDestination(vm);
  if (!dest) return [];
  const alias = `offhost-${vm.id}`;
  const dir = join(stateDir, 'known_hosts');
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `${vm.id}`);
  let type: string;
  let blob: string;
  if (!pin.startsWith('SHA256:')) {
    [type, blob] = pin.split(' ') as [string, string];
  } else {
    const cached = readKnown(file, alias);
    if (cached && fingerprintOfBlob(cached.blob) === pin) ({ type, blob } = cached);
    else {
      const { host, port } = await resolveHost(dest, env);
      let out: string;
      try {
        out = (await run('ssh-keyscan', ['-T', '10', '-p', port, host], { env, encoding: 'utf8' })).stdout;
      } catch (err) {
        throw new HostKeyError(`cannot fetch the host key of ${dest} (${host}:${port}) to check it against the pinned ${pin}: ${(err as Error).message.trim()}`, 'unreachable');
      }
      const offered = out
        .split('\n')
        .filter((l) => l && !l.startsWith('#'))
        .map((l) => l.split(' '))
        .filter((w) => w.length >= 3)
        .map((w) => ({ type: w[1]!, blob: w[2]!, fp: fingerprintOfBlob(w[2]!) }));
      if (offered.length === 0) throw new HostKeyError(`${dest} (${host}:${port}) offered no host key to ssh-keyscan; pinned ${pin}`, 'unreachable');
      const match = offered.find((k) => k.fp === pin);
      if (!match) {
        throw new HostKeyError(
          `the host key of ${dest} (${host}:${port}) is not the pinned one: pinned ${pin}, the server offers ${offered.map((k) => `${k.type} ${k.fp}`).join(', ')}. Nothing was run. If the VM was rebuilt, check its new key out of band and update host_key.`,
          'mismatch',
        );
      }
      ({ type, blob } = match);
    }
  }
  const text = `${alias} ${type} ${blob}\n`;
  let current: string | null = null;
  try {
    current = readFileSync(file, 'utf8');
  } catch {
    /* absent */
  }
  if (current !== text) {
    writeFileSync(`${file}.tmp`, text);
    renameSync(`${file}.tmp`, file);
  }
  return [
    '-o', `HostKeyAlias=${alias}`,
    '-o', `UserKnownHostsFile=${file}`,
    '-o', 'GlobalKnownHostsFile=/dev/null',
    '-o', 'StrictHostKeyChecking=yes',
    '-o', 'CheckHostIP=no',
    '-o', `HostKeyAlgorithms=${algorithmsFor(type)}`,
  ];
}

function readKnown(file: string, alias: string): { type: string; blob: string } | null {
  try {
    const [a, type, blob] = readFileSync(file, 'utf8').trim().split(' ');
    return a === alias && type && blob ? { type, blob } : null;
  } catch {
    return null;
  }
}

/** Keepalives and no prompts: a hung connection is given up on, a passphrase prompt fails instead of waiting. */
export function connectionSshOptions(vm: VmSpec): string[] {
  const interval = vm.keepalive_seconds ?? 15;
  return ['-o', 'BatchMode=yes', '-o', `ServerAliveInterval=${interval}`, '-o', 'ServerAliveCountMax=3'];
}

/** ssh's own words for a host key it refused. */
export const HOST_KEY_FAILURE = /Host key verification failed|REMOTE HOST IDENTIFICATION HAS CHANGED|No (ED25519|RSA|ECDSA) host key is known|host key for .* has changed/i;
