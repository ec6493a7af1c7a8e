// Pieces every backend shares: checking a job, the argv that runs a job's program with its
// environment, the POSIX sh script for backends that go through a shell, and the ssh wrapper.
import { ConfigError } from '../errors.js';
import { quote } from './quote.js';
import type { Job, VmSpec } from './types.js';

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** No lone surrogates: the string survives the trip to UTF-8 bytes (argv) unchanged. */
function wellFormed(s: string): boolean {
  // String.prototype.isWellFormed (Node 20+) is a plain scan; the regex (with a lookbehind) is the fallback.
  const native = (s as { isWellFormed?: () => boolean }).isWellFormed;
  return native ? native.call(s) : !LONE_SURROGATE.test(s);
}

/** Throws ConfigError unless the job can be rendered faithfully. */
export function checkJob(job: Job): void {
  if (!Array.isArray(job.argv) || job.argv.length === 0) throw new ConfigError('route: the job has no argv');
  for (const a of job.argv) {
    if (typeof a !== 'string') throw new ConfigError('route: argv elements must be strings');
    if (a.includes('\0')) throw new ConfigError('route: an argv element contains a NUL byte');
    if (!wellFormed(a)) throw new ConfigError('route: an argv element is not valid Unicode (lone surrogate): it cannot be passed on as UTF-8');
  }
  if (typeof job.cwd !== 'string' || !job.cwd.startsWith('/')) {
    throw new ConfigError(`route: the working directory must be an absolute path, got ${JSON.stringify(job.cwd)}`);
  }
  if (!wellFormed(job.cwd)) throw new ConfigError('route: the working directory is not valid Unicode (lone surrogate)');
  if (job.cwd.includes('\0')) throw new ConfigError('route: the working directory contains a NUL byte');
  for (const [k, v] of Object.entries(job.env ?? {})) {
    if (!ENV_NAME.test(k)) {
      throw new ConfigError(`route: environment variable name ${JSON.stringify(k)} is not a portable name ([A-Za-z_][A-Za-z0-9_]*)`);
    }
    if (typeof v !== 'string' || v.includes('\0') || !wellFormed(v)) {
      throw new ConfigError(`route: environment variable ${k} must be a valid Unicode string without NUL bytes`);
    }
  }
}

/** The VM field a backend needs, or a ConfigError naming it. Rejects values an option parser would take as a flag. */
export function need(vm: VmSpec, field: 'host' | 'instance' | 'template', what?: string): string {
  const v = vm[field];
  if (v === undefined || v === '') {
    throw new ConfigError(`route ${vm.id}: backend ${vm.backend} needs \`${field}\`${what ? ` (${what})` : ''}`);
  }
  checkName(vm, field, v);
  return v;
}

export function checkName(vm: VmSpec, field: string, v: string): void {
  if (v.startsWith('-')) throw new ConfigError(`route ${vm.id}: \`${field}\` must not start with '-': ${JSON.stringify(v)}`);
  if (/[\0\n]/.test(v)) throw new ConfigError(`route ${vm.id}: \`${field}\` contains a NUL or newline`);
}

export function refuseUser(vm: VmSpec, tool: string): void {
  if (vm.user !== undefined && vm.user !== '') {
    throw new ConfigError(
      `route ${vm.id}: \`${tool}\` cannot run as another user; remove \`user\` (or use a backend that supports it: ssh, incus, docker, template)`,
    );
  }
}

/**
 * argv that, run without a shell, runs job.argv with job.env added (execvp semantics for argv[0]):
 *  - env vars go through `env -- K=V …` (env(1) sets any value; the shell's own variables such as a
 *    readonly UID never interfere);
 *  - `env` is also used when argv[0] starts with '-' (so a wrapping `exec` never reads it as an option);
 *  - argv[0] containing '=' would be taken by env(1) (and by `limactl shell`) for an assignment, so it
 *    goes through a tiny trampoline: `sh -c '"$@"' sh argv…` ("$@" is never an assignment word).
 */
export function execWords(argv: readonly string[], env: Record<string, string>): string[] {
  const a0 = argv[0] ?? '';
  const cmd = a0.includes('=') ? ['sh', '-c', '"$@"', 'sh', ...argv] : [...argv];
  const kv = Object.entries(env).map(([k, v]) => `${k}=${v}`);
  if (kv.length > 0 || (cmd[0] ?? '').startsWith('-')) return ['env', '--', ...kv, ...cmd];
  return cmd;
}

/**
 * A POSIX sh script, to be parsed by exactly one shell, that runs the job:
 * `cd -- DIR && exec [env -- K=V …] argv…`. `cd --` copes with any directory; `exec` makes the
 * program's exit status the script's and gives argv[0] execvp semantics (no builtins, functions,
 * keywords or aliases).
 */
export function shScript(job: Job): string {
  return `cd -- ${quote(job.cwd)} && exec ${execWords(job.argv, job.env ?? {}).map(quote).join(' ')}`;
}

/**
 * Laptop argv running `remote` on `host` over ssh. ssh joins everything after the destination with
 * spaces and hands the string to the remote user's shell (`$SHELL -c`), so each remote word is quoted
 * once here; `--` stops ssh from reading a remote word as one of its own options.
 */
export function viaSsh(host: string, remote: readonly string[], sshUser?: string, sshOptions: readonly string[] = []): string[] {
  return ['ssh', ...sshOptions, ...(sshUser ? ['-l', sshUser] : []), host, '--', ...remote.map(quote)];
}
