// The optional system tools some tests drive for real (.ci/run installs them all): each is probed by really
// using it (tmux starts a server, gdb runs a program, sshd serves a login), not by its name on PATH alone,
// since a tool can be installed and still not work here (tmux on a machine without ptys: "server exited
// unexpectedly"). A test that needs one skips, with the reason in its title, where the probe fails.
//
// Each tool is probed when a test first asks, once per `vitest run`: the result is kept in a folder that
// test/helpers/global-setup.ts makes and hands to every worker (vitest's provide/inject), and that prints
// the missing tools once, at the end of the run. A file run some other way probes in its own process. Tools are looked up on PATH only: a PATH without a tool hides it (how
// test/helpers/tools.test.ts proves that the suite skips rather than fails without them). sshd, which a
// user's PATH often lacks (/usr/sbin), is found through `ssh`'s directory's sibling sbin too, unless
// OFFHOST_TEST_SSHD names it.
import { spawnSync } from 'node:child_process';
import { accessSync, constants, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { readResult, writeResult } from './tool-results.js';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { inject } from 'vitest';

/** The tools probed. `script` is util-linux's (a pty for the zsh widget test). */
export const TOOLS = [
  'tmux', 'zsh', 'fish', 'sshd', 'rsync', 'gdb', 'perf', 'script', 'make', 'python3', 'perl', 'vim', 'zip', 'fakeroot', 'm4', 'dc',
  'setarch', 'linux64', 'choom', 'ssh-agent', 'logsave', 'capsh', 'start-stop-daemon', 'tclsh', 'less',
] as const;
export type Tool = (typeof TOOLS)[number];

/** Each tool's problem, or null when it works. */
export type ToolReport = Record<Tool, string | null>;

declare module 'vitest' {
  export interface ProvidedContext {
    offhostToolResults: string;
  }
}

/** The absolute path of `name` on `path` (an executable file), or null. */
export function onPath(name: string, path = process.env.PATH ?? ''): string | null {
  for (const dir of path.split(delimiter)) {
    if (!dir) continue;
    const f = join(dir, name);
    try {
      accessSync(f, constants.X_OK);
      return f;
    } catch {
      /* not here */
    }
  }
  return null;
}

/** sshd: OFFHOST_TEST_SSHD, else on PATH, else the sbin beside the directory of the `ssh` on PATH. */
export function sshdPath(env: NodeJS.ProcessEnv = process.env): string | null {
  if (env.OFFHOST_TEST_SSHD) return env.OFFHOST_TEST_SSHD;
  const found = onPath('sshd', env.PATH);
  if (found) return found;
  const ssh = onPath('ssh', env.PATH);
  if (!ssh) return null;
  const sbin = join(dirname(dirname(ssh)), 'sbin', 'sshd');
  try {
    accessSync(sbin, constants.X_OK);
    return sbin;
  } catch {
    return null;
  }
}

/**
 * What sshd needs before it starts, as test/helpers/sshd.ts starts it: run as root, its privilege-separation
 * directory (/run/sshd, made by the service unit on a machine that runs sshd as a service, absent on a fresh
 * machine or container that only installed the package). The probe makes it too, so that it tests the sshd
 * the tests will start, not a missing directory.
 */
export function prepareSshd(): void {
  if (process.getuid?.() === 0) mkdirSync('/run/sshd', { recursive: true, mode: 0o755 });
}

/** A hang guard for each probe (a generous bound, not a measurement). */
const PROBE_TIMEOUT = 20_000;

function tried(cmd: string, args: string[], opts: { input?: string; env?: NodeJS.ProcessEnv; expect?: RegExp } = {}): string | null {
  const r = spawnSync(cmd, args, { encoding: 'utf8', timeout: PROBE_TIMEOUT, input: opts.input ?? '', env: opts.env ?? process.env });
  const said = `${r.stdout ?? ''}${r.stderr ?? ''}`.trim().split('\n').slice(-2).join(' / ');
  if (r.error) return `${cmd} could not run: ${r.error.message}`;
  if (opts.expect ? !opts.expect.test(said + (r.stdout ?? '')) : r.status !== 0) return `\`${[cmd, ...args].join(' ')}\` failed (status ${r.status ?? r.signal}): ${said || 'no output'}`;
  return null;
}

function probeTmux(tmux: string): string | null {
  const dir = mkdtempSync(join(tmpdir(), 'offhost-tmux-probe-'));
  const sock = join(dir, 's');
  try {
    const started = tried(tmux, ['-S', sock, '-f', '/dev/null', 'new-session', '-d', '-s', 'probe', 'sleep 30']);
    if (started) return `tmux is installed but cannot start a server here: ${started}`;
    const alive = tried(tmux, ['-S', sock, 'has-session', '-t', 'probe']);
    return alive ? `tmux started no lasting server: ${alive}` : null;
  } finally {
    spawnSync(tmux, ['-S', sock, 'kill-server'], { timeout: PROBE_TIMEOUT });
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Tools in sbin, which a user's PATH often lacks (the corpus names them by their full path). */
const SBIN: ReadonlySet<Tool> = new Set(['logsave', 'capsh', 'start-stop-daemon']);

/** Probes one tool for real; null when it works. */
export function probeTool(tool: Tool, env: NodeJS.ProcessEnv = process.env): string | null {
  const path = tool === 'sshd' ? sshdPath(env) : SBIN.has(tool) ? onPath(tool, `${env.PATH ?? ''}:/usr/sbin:/sbin`) : onPath(tool, env.PATH);
  if (!path) return `${tool} is not on PATH (.ci/run installs it)`;
  switch (tool) {
    case 'tmux':
      return probeTmux(path);
    case 'zsh':
      return tried(path, ['-f', '-c', 'exit 0']);
    case 'fish':
      return tried(path, ['--no-config', '-c', 'exit 0']);
    case 'sshd': {
      for (const t of ['ssh', 'ssh-keygen']) if (!onPath(t, env.PATH)) return `${t} is not on PATH (.ci/run installs openssh-client)`;
      // -t: checks its configuration and keys; a real start is what test/helpers/sshd.ts does.
      prepareSshd();
      const dir = mkdtempSync(join(tmpdir(), 'offhost-sshd-probe-'));
      try {
        const key = join(dir, 'k');
        const made = tried('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', key]);
        if (made) return made;
        return tried(path, ['-t', '-f', '/dev/null', '-o', `HostKey=${key}`, '-o', 'UsePAM=no', '-o', `PidFile=${join(dir, 'pid')}`]);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    }
    case 'rsync':
      return tried(path, ['--version']);
    case 'gdb':
      // The corpus has gdb run a program: that needs ptrace, which a container may forbid.
      return tried(path, ['-nx', '-batch', '-ex', 'run', '--args', '/bin/sh', '-c', 'exit 3'], { expect: /exited with code 03/ });
    case 'perf':
      return tried(path, ['stat', '-x,', '-e', 'task-clock', '--', '/bin/sh', '-c', 'echo perf-probe-ran'], { expect: /perf-probe-ran/ });
    case 'script':
      return tried(path, ['-qec', 'exit 0', '/dev/null']);
    case 'make':
    case 'm4':
    case 'zip':
      return tried(path, ['--version']);
    case 'python3':
      return tried(path, ['-c', 'pass']);
    case 'perl':
      return tried(path, ['-e', '1']);
    case 'vim':
      return tried(path, ['-es', '-N', '-u', 'NONE', '-c', 'qa!']);
    case 'fakeroot':
    case 'setarch':
    case 'linux64':
    case 'ssh-agent':
      return tried(path, tool === 'ssh-agent' ? ['/bin/true'] : tool === 'setarch' ? ['x86_64', '/bin/true'] : ['/bin/true']);
    case 'choom':
      return tried(path, ['-n', '0', '--', '/bin/true']);
    case 'logsave':
      return tried(path, ['/dev/null', '/bin/true']);
    case 'capsh':
      return tried(path, ['--', '-c', 'exit 0']);
    case 'start-stop-daemon':
      return tried(path, ['--version']);
    case 'dc':
      return tried(path, ['-e', '1 p'], { expect: /^1/ });
    case 'tclsh':
      // The corpus gives tclsh its program on standard input.
      return tried(path, [], { input: 'puts tclsh-probe-ran\n', expect: /tclsh-probe-ran/ });
    case 'less':
      // The corpus has less run its input preprocessor (LESSOPEN) with its output not a terminal.
      return tried(path, ['/dev/null'], { env: { ...env, LESSOPEN: '|echo less-probe-ran %s' }, expect: /less-probe-ran/ });
  }
}

/** The provided name of the folder of this run's probe results (test/helpers/tool-results.ts). */
const RESULTS = 'offhostToolResults';

let local: Partial<ToolReport> | undefined;

function resultsDir(): string | undefined {
  try {
    return inject(RESULTS);
  } catch {
    return undefined; // not inside a vitest worker
  }
}

/** The problem with `tool` in this run, or null when it works: probed once per run, when first asked. */
export function toolProblem(tool: Tool): string | null {
  local ??= {};
  if (tool in local) return local[tool]!;
  const dir = resultsDir();
  const known = dir ? readResult(dir, tool) : undefined;
  if (known !== undefined) return (local[tool] = known);
  const problem = probeTool(tool);
  if (dir) writeResult(dir, tool, problem);
  return (local[tool] = problem);
}

/** Why the tests needing `tools` cannot run here, or null. Use as `describe.skipIf(missing(...))`. */
export function missing(...tools: Tool[]): string | null {
  const why = tools.map(toolProblem).filter((x): x is string => x !== null);
  return why.length ? why.join('; ') : null;
}

/** A describe title with the reason it is skipped, if it is. */
export function titled(title: string, why: string | null): string {
  return why ? `${title} (skipped: ${why})` : title;
}

/** Other names a tool is run by (vim's ex mode). */
const ALIASES: Record<string, Tool> = { ex: 'vim' };

/**
 * The probed tools a command line names as a word (`gdb -batch …`, `/usr/sbin/logsave …`, `| m4`): what a
 * corpus line needs to run as written. A word that merely contains a name (`gdbserver`, `make-foo`,
 * `--dc`) does not count; the name inside a quoted string does (`bash -c 'perl …'` runs perl too).
 */
export function toolsIn(line: string): Tool[] {
  const names = [...TOOLS, ...Object.keys(ALIASES)].sort((a, b) => b.length - a.length);
  const re = new RegExp(`(?<![\\w.-])(?:/[\\w.-]+)*/?(${names.map((n) => n.replace(/[-.]/g, '\\$&')).join('|')})(?![\\w.-])`, 'g');
  const found = new Set<Tool>();
  for (const m of line.matchAll(re)) {
    const name = m[1]!;
    found.add(ALIASES[name] ?? (name as Tool));
  }
  return [...found].sort();
}
