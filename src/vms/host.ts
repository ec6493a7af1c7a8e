// Running a command on a VM's host (the machine its backend runs on): behind `ssh <host> --` when the
// VM names a host, here otherwise. Every call is a real child process; ssh runs in batch mode (never a
// password prompt) with a connect timeout, so an unreachable host is an answer, not a hang.
import { spawn, spawnSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { quote, quoteArgv } from '../routes/quote.js';
import type { VmSpec } from '../routes/types.js';

export interface HostResult {
  status: number;
  stdout: string;
  stderr: string;
  /** The laptop command line that ran (for the runbook and messages). */
  command: string;
}

/** ssh options offhost adds for its own probes: no prompts, bounded connect time. */
export const SSH_PROBE_OPTIONS = ['-o', 'BatchMode=yes', '-o', 'ConnectTimeout=10'];

/** The laptop argv that runs `argv` on the VM's host. */
export function hostArgv(vm: VmSpec, argv: readonly string[]): string[] {
  return vm.host ? ['ssh', ...SSH_PROBE_OPTIONS, ...(vm.sshOptions ?? []), vm.host, '--', ...argv.map(quote)] : [...argv];
}

/** The laptop argv that runs a POSIX sh `script` on the VM's host (one shell parses it there). */
export function hostScriptArgv(vm: VmSpec, script: string): string[] {
  return vm.host ? ['ssh', ...SSH_PROBE_OPTIONS, ...(vm.sshOptions ?? []), vm.host, '--', script] : ['sh', '-c', script];
}

/** Two files for a child's stdout and stderr in a private temporary folder; no fds when none can be made (pipes then). */
function outputFiles(): { dir: string | null; fds: number[] } {
  let dir: string | null = null;
  const fds: number[] = [];
  try {
    dir = mkdtempSync(join(tmpdir(), 'offhost-probe-'));
    fds.push(openSync(join(dir, 'out'), 'w'), openSync(join(dir, 'err'), 'w'));
  } catch {
    for (const fd of fds.splice(0)) closeSync(fd);
  }
  return { dir, fds };
}

export function runOnHost(argv: readonly string[], env: NodeJS.ProcessEnv, timeoutMs = 30 * 60_000): HostResult {
  const command = quoteArgv(argv);
  // Output goes to files, not pipes: spawnSync then returns when the child ends. Through a shared ssh
  // master (src/routes/multiplex.ts) the master holds copies of the client's stdout and stderr until the
  // remote side ends, so with pipes a Ctrl-C that killed the client would still wait for a stalled probe.
  // Pipes only when no temporary file can be made.
  const { dir, fds } = outputFiles();
  try {
    const r = spawnSync(argv[0]!, argv.slice(1), { env, encoding: 'utf8', stdio: ['ignore', fds[0] ?? 'pipe', fds[1] ?? 'pipe'], timeout: timeoutMs, maxBuffer: 64 * 1024 * 1024 });
    const stdout = fds.length ? readFileSync(join(dir!, 'out'), 'utf8') : (r.stdout ?? '');
    const stderr = fds.length ? readFileSync(join(dir!, 'err'), 'utf8') : (r.stderr ?? '');
    if (r.error) {
      const code = (r.error as NodeJS.ErrnoException).code;
      return { status: code === 'ENOENT' ? 127 : code === 'ETIMEDOUT' ? 124 : 126, stdout, stderr: `${r.error.message}\n`, command };
    }
    return { status: r.status ?? 128, stdout, stderr, command };
  } finally {
    for (const fd of fds) closeSync(fd);
    if (dir) rmSync(dir, { recursive: true, force: true });
  }
}

/** ssh's own failure (255) against a command's: the host could not be reached or refused us. */
export function sshFailed(vm: VmSpec, r: HostResult): boolean {
  return vm.host !== undefined && r.status === 255;
}

/** First meaningful line of a tool's stderr, for messages. */
export function firstLine(text: string): string {
  return (
    text
      .split('\n')
      .map((l) => l.trim())
      .find((l) => l !== '') ?? ''
  );
}

/**
 * runOnHost without blocking the process: signals are handled while it runs, and `abort` (a Ctrl-C or a
 * SIGTERM to offhost alone) ends the child at once, answered as status 130. Output goes to files, as above.
 */
export function runOnHostAsync(argv: readonly string[], env: NodeJS.ProcessEnv, timeoutMs = 30 * 60_000, abort?: AbortSignal): Promise<HostResult> {
  const command = quoteArgv(argv);
  const { dir, fds } = outputFiles();
  return new Promise<HostResult>((resolve) => {
    let out = '';
    let err = '';
    let settled = false;
    const child = spawn(argv[0]!, argv.slice(1), { env, stdio: ['ignore', fds[0] ?? 'pipe', fds[1] ?? 'pipe'] });
    child.stdout?.on('data', (d) => (out += d));
    child.stderr?.on('data', (d) => (err += d));
    const timer = setTimeout(() => child.kill('SIGTERM'), timeoutMs);
    const onAbort = () => child.kill('SIGTERM');
    abort?.addEventListener('abort', onAbort, { once: true });
    const done = (status: number, errText?: string) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      abort?.removeEventListener('abort', onAbort);
      for (const fd of fds) closeSync(fd);
      let stdout = out;
      let stderr = err;
      if (fds.length) {
        stdout = readFileSync(join(dir!, 'out'), 'utf8');
        stderr = readFileSync(join(dir!, 'err'), 'utf8');
      }
      if (dir) rmSync(dir, { recursive: true, force: true });
      resolve({ status, stdout, stderr: errText ?? stderr, command });
    };
    child.on('error', (e) => done((e as NodeJS.ErrnoException).code === 'ENOENT' ? 127 : 126, `${e.message}\n`));
    child.on('close', (code, sig) => {
      if (abort?.aborted) done(130);
      else if (sig === 'SIGTERM' && code === null) done(124, `timed out after ${Math.round(timeoutMs / 1000)} s\n`);
      else done(code ?? 128);
    });
    if (abort?.aborted) onAbort();
  });
}
