// A real OpenSSH server on 127.0.0.1 for tests: `/usr/sbin/sshd -D -e -f <cfg>` on a free port, with a
// host key and a user key made here (ssh-keygen), AuthorizedKeysFile in the temp dir, key-only login for
// the current user (root in CI: `PermitRootLogin prohibit-password`, only in this test sshd's config).
//
// The laptop side is configured the way a user would: a `Host <alias>` entry (HostName, Port, User,
// IdentityFile, UserKnownHostsFile, BatchMode) in an ssh config file. OpenSSH reads ~/.ssh/config from
// the passwd home, not $HOME, so a test cannot point it at a temp HOME: `binDir` holds an `ssh` that runs
// `/usr/bin/ssh -F <config> "$@"`; put it first on PATH (`env()`) and `ssh <alias>`, rsync's `-e ssh`
// and offhost's rendered ssh lines all reach this server through that config.
//
// The "VM" is this machine seen through sshd: commands run as the login user with sshd's environment
// (PATH and any `remoteEnv` set with the server's SetEnv), so a test gives it its own directory tree and
// its own tool directory (`remoteEnv.PATH`, e.g. with the stand-in `incus` first).
//
// The VM has a home of its own (`vmHome`, an empty folder: HOME in every session unless `remoteEnv`
// sets one), not the laptop user's: sshd runs each session's command through the login shell, and bash
// run by sshd sources ~/.bashrc, so the laptop user's rc files would run in every session and change the
// VM's PATH (on the development machine root's ~/.bashrc runs `pyenv init`, about 1 s per session).
//
//   const s = await startSshd({ remoteEnv: { PATH: `${standinPath()}:/usr/bin:/bin` } });
//   execFileSync('ssh', [s.alias, '--', 'uname -srm'], { env: s.env(process.env) });
//   await s.stop();
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { onPath, prepareSshd, sshdPath, toolProblem } from './tools.js';
import { WAIT_MS } from './hang-guard.js';

export const SSHD = sshdPath() ?? '/usr/sbin/sshd';
export const SSH = process.env.OFFHOST_TEST_SSH ?? onPath('ssh') ?? '/usr/bin/ssh';

/** True when sshd, ssh and ssh-keygen work here (`.ci/run` installs openssh-server): test/helpers/tools.ts. */
export function sshdAvailable(): boolean {
  return toolProblem('sshd') === null;
}

export interface Sshd {
  /** The ssh config Host alias for this server: `ssh <alias> -- CMD`. */
  alias: string;
  host: '127.0.0.1';
  port: number;
  /** The login user (the current user). */
  user: string;
  /** Temp dir holding keys, configs and logs (removed by stop()). */
  dir: string;
  /** The laptop-side ssh config file (`ssh -F`). */
  sshConfig: string;
  /** Directory with the `ssh` wrapper (`/usr/bin/ssh -F sshConfig "$@"`): put it first on PATH. */
  binDir: string;
  /** The server's public host key line (`ssh-ed25519 AAAA… comment`) and its SHA256 fingerprint. */
  hostKey: string;
  hostKeyFingerprint: string;
  /** The user's private key file. */
  identity: string;
  /** HOME of every session on the server (an empty folder in `dir`), unless `remoteEnv` sets HOME. */
  vmHome: string;
  /** known_hosts with this server's key for `[127.0.0.1]:port` (used by the alias). */
  knownHosts: string;
  /** `base` with binDir first on PATH. */
  env(base?: NodeJS.ProcessEnv): Record<string, string>;
  /** The server's log so far. */
  log(): string;
  /** The listener's pid (each connection is served by processes it forked: `connections()`). */
  pid: number;
  /** The pids of the processes serving this server's open connections (Linux: /proc). */
  connections(): number[];
  /**
   * Stops the listener and the processes serving its open connections (an offhost master is kept ten
   * minutes after its last client: it ends with its connection) and removes `dir`.
   */
  stop(opts?: { keepDir?: boolean }): Promise<void>;
}

/** Every process descended from `pid` (Linux: /proc; elsewhere none). */
export function descendants(pid: number): number[] {
  let entries: string[];
  try {
    entries = readdirSync('/proc').filter((e) => /^\d+$/.test(e));
  } catch {
    return [];
  }
  const children = new Map<number, number[]>();
  for (const e of entries) {
    try {
      const st = readFileSync(`/proc/${e}/stat`, 'utf8');
      const ppid = Number(st.slice(st.lastIndexOf(')') + 2).split(' ')[1]);
      children.set(ppid, [...(children.get(ppid) ?? []), Number(e)]);
    } catch {
      /* gone meanwhile */
    }
  }
  const out: number[] = [];
  const todo = [pid];
  while (todo.length) for (const c of children.get(todo.pop()!) ?? []) out.push(c), todo.push(c);
  return out;
}

export interface SshdOptions {
  alias?: string;
  /** Environment of every session (sshd_config SetEnv); values must not contain `"` or newlines. */
  remoteEnv?: Record<string, string>;
  /** Extra sshd_config lines. */
  serverConfig?: string[];
  /** Extra lines for the alias's Host block of the laptop-side config. */
  clientConfig?: string[];
  /** Host key type (default ed25519). */
  hostKeyType?: 'ed25519' | 'ecdsa' | 'rsa';
}

async function freePort(): Promise<number> {
  return new Promise((res, rej) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', rej);
    srv.listen(0, '127.0.0.1', () => {
      const a = srv.address();
      const port = typeof a === 'object' && a ? a.port : 0;
      srv.close(() => res(port));
    });
  });
}

function keygen(file: string, type: string, comment: string): void {
  execFileSync('ssh-keygen', ['-q', '-t', type, '-N', '', '-C', comment, '-f', file], { stdio: ['ignore', 'ignore', 'pipe'] });
}

export function fingerprintOf(pubFile: string): string {
  // `256 SHA256:abc… comment (ED25519)`
  return execFileSync('ssh-keygen', ['-l', '-E', 'sha256', '-f', pubFile], { encoding: 'utf8' }).split(' ')[1]!;
}

export async function startSshd(opts: SshdOptions = {}): Promise<Sshd> {
  if (!sshdAvailable()) throw new Error(`sshd cannot run here: ${toolProblem('sshd')}`);
  const dir = mkdtempSync(join(tmpdir(), 'offhost-sshd-'));
  const user = userInfo().username;
  const alias = opts.alias ?? 'offhost-test-vm';
  const type = opts.hostKeyType ?? 'ed25519';
  const hostKeyFile = join(dir, `host_${type}`);
  keygen(hostKeyFile, type, 'offhost-test-host');
  const identity = join(dir, 'id_ed25519');
  keygen(identity, 'ed25519', 'offhost-test-user');
  const authorized = join(dir, 'authorized_keys');
  writeFileSync(authorized, readFileSync(`${identity}.pub`));
  chmodSync(authorized, 0o600);
  const hostKey = readFileSync(`${hostKeyFile}.pub`, 'utf8').trim();
  const hostKeyFingerprint = fingerprintOf(`${hostKeyFile}.pub`);
  prepareSshd();

  const binDir = join(dir, 'bin');
  mkdirSync(binDir);
  const vmHome = join(dir, 'vm-home');
  mkdirSync(vmHome);
  const remoteEnv = { HOME: vmHome, ...opts.remoteEnv };
  const sshConfig = join(dir, 'ssh_config');
  const knownHosts = join(dir, 'known_hosts');
  const wrapper = join(binDir, 'ssh');
  writeFileSync(wrapper, `#!/bin/sh\n# The test's ~/.ssh/config (OpenSSH reads the passwd home's, not $HOME's).\nexec '${SSH}' -F '${sshConfig}' "$@"\n`);
  chmodSync(wrapper, 0o755);

  let lastErr = '';
  for (let attempt = 0; attempt < 5; attempt++) {
    const port = await freePort();
    const serverConfig = join(dir, 'sshd_config');
    writeFileSync(
      serverConfig,
      [
        `Port ${port}`,
        'ListenAddress 127.0.0.1',
        `HostKey ${hostKeyFile}`,
        `PidFile ${join(dir, 'sshd.pid')}`,
        `AuthorizedKeysFile ${authorized}`,
        'StrictModes no',
        'PubkeyAuthentication yes',
        'PasswordAuthentication no',
        'KbdInteractiveAuthentication no',
        'HostbasedAuthentication no',
        'UsePAM no',
        // Root in CI: key-only login, and only for this test server.
        'PermitRootLogin prohibit-password',
        `AllowUsers ${user}`,
        'PermitUserEnvironment no',
        'PrintMotd no',
        'PrintLastLog no',
        'Banner none',
        'MaxStartups 64:30:128',
        'MaxSessions 64',
        'LogLevel INFO',
        'Subsystem sftp internal-sftp',
        // One SetEnv line: sshd keeps the first SetEnv line and ignores later ones.
        `SetEnv ${Object.entries(remoteEnv)
          .map(([k, v]) => {
            if (/["\n]/.test(v)) throw new Error(`remoteEnv ${k}: value must not contain " or newline`);
            return `${k}="${v}"`;
          })
          .join(' ')}`,
        ...(opts.serverConfig ?? []),
        '',
      ].join('\n'),
    );
    writeFileSync(knownHosts, `[127.0.0.1]:${port} ${hostKey.split(' ').slice(0, 2).join(' ')}\n`);
    writeFileSync(
      sshConfig,
      [
        `Host ${alias}`,
        '  HostName 127.0.0.1',
        `  Port ${port}`,
        `  User ${user}`,
        `  IdentityFile ${identity}`,
        '  IdentitiesOnly yes',
        `  UserKnownHostsFile ${knownHosts}`,
        '  GlobalKnownHostsFile /dev/null',
        '  StrictHostKeyChecking yes',
        '  BatchMode yes',
        '  LogLevel ERROR',
        ...(opts.clientConfig ?? []).map((l) => `  ${l}`),
        '',
      ].join('\n'),
    );
    // The log goes to a file (-E): a test blocked in a synchronous call must not leave sshd blocked on a pipe.
    const logFile = join(dir, `sshd-${port}.log`);
    const child: ChildProcess = spawn(SSHD, ['-D', '-E', logFile, '-f', serverConfig], { stdio: 'ignore' });
    const readLog = () => {
      try {
        return readFileSync(logFile, 'utf8');
      } catch {
        return '';
      }
    };
    let log = '';
    const ready = await (async () => {
      for (let i = 0; i < WAIT_MS / 50; i++) {
        log = readLog();
        if (log.includes(`Server listening on 127.0.0.1 port ${port}`)) return true;
        if (child.exitCode !== null || child.signalCode !== null) return false;
        await new Promise((r) => setTimeout(r, 50));
      }
      return false;
    })();
    if (!ready) {
      lastErr = log;
      child.kill('SIGKILL');
      if (/Address already in use|Bind to port/.test(log)) continue; // lost the port race: another one
      break;
    }
    const s: Sshd = {
      alias,
      host: '127.0.0.1',
      port,
      user,
      dir,
      sshConfig,
      binDir,
      hostKey,
      hostKeyFingerprint,
      identity,
      vmHome: remoteEnv.HOME,
      knownHosts,
      env: (base = process.env) => {
        const out: Record<string, string> = {};
        for (const [k, v] of Object.entries(base)) if (v !== undefined) out[k] = v;
        out.PATH = `${binDir}:${base.PATH ?? '/usr/bin:/bin'}`;
        return out;
      },
      log: readLog,
      pid: child.pid!,
      connections: () => descendants(child.pid!),
      stop: async ({ keepDir = false } = {}) => {
        const serving = descendants(child.pid!);
        if (child.exitCode === null && child.signalCode === null) {
          const gone = new Promise((r) => child.once('exit', r));
          child.kill('SIGTERM');
          await gone;
        }
        for (const p of serving) {
          try {
            process.kill(p, 'SIGCONT'); // a test may have stopped one
            process.kill(p, 'SIGTERM');
          } catch {
            /* ended already */
          }
        }
        if (!keepDir) rmSync(dir, { recursive: true, force: true });
      },
    };
    return s;
  }
  rmSync(dir, { recursive: true, force: true });
  throw new Error(`sshd did not start:\n${lastErr}`);
}
