// Shared set-up for the `offhost run` tests against a real sshd on 127.0.0.1: a laptop (a temp HOME with
// the monorepo, a git repository, and an offhost.config.yaml naming the loopback "VM"), the VM's own
// directory tree, and the built CLI run as a child process with the sshd's ssh first on PATH.
import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BIN, cleanEnv, configure, g, type Result } from '../locks/lifecycle-helpers.js';
import { afterAll, beforeAll } from 'vitest';
import { sshdAvailable, startSshd, type Sshd } from '../helpers/sshd.js';
import { ensureBuilt } from '../locks/lifecycle-helpers.js';
import type { RunRecord } from '../../src/run/record.js';
import { WAIT_MS } from '../helpers/hang-guard.js';

export const LOOP_VM = 's.khost1.dev-linux-loop';
export const LOOP_ACTIVE = `meta/context/notices/vm-active/lock-${LOOP_VM}.md`;

export interface Laptop {
  base: string;
  home: string;
  repo: string;
  /** The VM's own directory tree (guest-local storage). */
  vm: string;
  out: string;
  env: Record<string, string>;
  cleanup(): void;
}

/**
 * A laptop with HOME/dev/koder (files: Makefile, src/version.txt, src/gone.txt, run.sh) and a config
 * routing `make build-safe` (the built-in koda rule, from engines/lang/koda) to the loopback VM with
 * `vm` fields added.
 */
/**
 * One real sshd on loopback for a test file: started before its tests when sshd exists (the tests skip
 * otherwise), stopped after them; `laptop` makes a laptop on it that is removed at the end.
 */
type VmFields = Record<string, unknown> | ((vmRoot: string) => Record<string, unknown>);
type LaptopOptions = { session?: string; env?: Record<string, string>; id?: string };

export function loopbackSshd(): { laptop: (vm: VmFields, opts?: LaptopOptions) => Laptop } {
  let s: Sshd | undefined;
  const made: Laptop[] = [];
  beforeAll(async () => {
    ensureBuilt();
    if (sshdAvailable()) s = await startSshd();
  });
  afterAll(async () => {
    for (const l of made) l.cleanup();
    await s?.stop();
  });
  return {
    laptop: (vm, opts) => {
      if (!s) throw new Error('no sshd was started (the test should have been skipped)');
      const l = laptop(s, vm, opts);
      made.push(l);
      return l;
    },
  };
}

export function laptop(
  s: Sshd,
  vm: VmFields,
  opts: LaptopOptions = {},
): Laptop {
  const base = mkdtempSync(join(tmpdir(), 'offhost-loop-'));
  const home = join(base, 'home');
  const repo = join(home, 'dev', 'koder');
  const koda = join(repo, 'engines', 'lang', 'koda');
  const vmRoot = join(base, 'vm');
  const out = join(base, 'out');
  mkdirSync(koda, { recursive: true });
  mkdirSync(vmRoot);
  mkdirSync(out);
  g(repo, 'init', '-q', '-b', 'main');
  configure(repo);
  writeFileSync(join(koda, 'Makefile'), 'build-safe:\n\t@echo "built $$(cat version.txt) in $$(pwd)"\n');
  writeFileSync(join(koda, 'version.txt'), 'v1\n');
  writeFileSync(join(koda, 'gone.txt'), 'to be deleted\n');
  writeFileSync(join(repo, '.gitignore'), 'build/\n*.log\n');
  writeFileSync(join(repo, 'README.md'), 'monorepo\n');
  const spec = { id: opts.id ?? LOOP_VM, backend: 'ssh', host: s.alias, ...(typeof vm === 'function' ? vm(vmRoot) : vm) };
  writeFileSync(
    join(repo, 'offhost.config.yaml'),
    [
      `vms:`,
      `  - ${JSON.stringify(spec)}`,
      'routes:',
      '  koda:',
      `    vms: [${spec.id}]`,
      // Any `bash -c …` line goes to the VM too: the tests' commands (see `onVm`).
      'rules:',
      '  - id: loop-bash',
      '    description: every bash line goes to the loopback test VM',
      '    policy: R1',
      '    decision: reroute',
      '    route: koda',
      '    message: sent to the loopback VM',
      '    match: { program: [bash] }',
      '    examples: { match: ["bash -c true"] }',
      '',
    ].join('\n'),
  );
  g(repo, 'add', '.');
  g(repo, 'commit', '-q', '-m', 'v1');
  const env = s.env({
    ...(cleanEnv() as Record<string, string>),
    HOME: home,
    OFFHOST_ROLE: 'laptop',
    OFFHOST_SESSION: opts.session ?? 'loop-session',
    OFFHOST_AI: 'claude',
    ...(opts.env ?? {}),
  });
  return { base, home, repo, vm: vmRoot, out, env, cleanup: () => rmSync(base, { recursive: true, force: true }) };
}

/**
 * Every ssh call the laptop makes from now on (rsync's and git's included: they run `ssh` from PATH),
 * one line each, through a wrapper put first on the laptop's PATH.
 */
export function recordSsh(l: Laptop): () => string[] {
  const real = join(l.env.PATH!.split(':')[0]!, 'ssh');
  if (!existsSync(real)) throw new Error(`no ssh wrapper at ${real}`);
  const bin = join(l.base, 'rec-bin');
  const log = join(l.base, 'ssh-calls.log');
  mkdirSync(bin);
  writeFileSync(join(bin, 'ssh'), `#!/bin/sh\nprintf '%s\\n' "$*" | tr '\\n' ' ' >> '${log}'; echo >> '${log}'\nexec '${real}' "$@"\n`);
  chmodSync(join(bin, 'ssh'), 0o755);
  l.env.PATH = `${bin}:${l.env.PATH}`;
  return () => (existsSync(log) ? readFileSync(log, 'utf8').split('\n').filter(Boolean) : []);
}

export function kodaDir(l: Laptop): string {
  return join(l.repo, 'engines', 'lang', 'koda');
}

export interface Running {
  child: ReturnType<typeof spawn>;
  done: Promise<Result>;
  stderr: () => string;
  stdout: () => string;
}

/** Starts `offhost run ARGS` (from engines/lang/koda unless cwd is given). */
export function start(l: Laptop, args: string[], opts: { cwd?: string; env?: Record<string, string>; input?: string } = {}): Running {
  const child = spawn(process.execPath, [BIN, 'run', ...args], {
    cwd: opts.cwd ?? kodaDir(l),
    env: { ...l.env, ...(opts.env ?? {}) },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d) => (stdout += d));
  child.stderr!.on('data', (d) => (stderr += d));
  if (opts.input !== undefined) child.stdin!.end(opts.input);
  const done = new Promise<Result>((res) => child.on('close', (code, signal) => res({ code, signal, stdout, stderr })));
  return { child, done, stderr: () => stderr, stdout: () => stdout };
}

export function runOn(l: Laptop, args: string[], opts: { cwd?: string; env?: Record<string, string>; input?: string } = {}): Promise<Result> {
  return start(l, args, { input: '', ...opts }).done.then((r) => {
    if (process.env.DEBUG_RUN) console.log(r.code, r.signal, r.stdout, r.stderr);
    return r;
  });
}

/** The verdict line (the last line offhost run writes on stderr) of a --json run. */
export function verdict(r: Result): { outcome: string; exit: number; status: number | null; run?: string; detail: string } {
  const last = r.stderr.trim().split('\n').pop()!;
  return JSON.parse(last);
}

export function records(l: Laptop): RunRecord[] {
  const dir = join(l.home, '.local', 'state', 'offhost', 'runs');
  let ids: string[] = [];
  try {
    ids = readdirSync(dir).sort();
  } catch {
    return [];
  }
  return ids.map((id) => JSON.parse(readFileSync(join(dir, id, 'record.json'), 'utf8')) as RunRecord);
}

export async function until(cond: () => boolean, ms = WAIT_MS): Promise<void> {
  const startAt = Date.now();
  while (!cond()) {
    if (Date.now() - startAt > ms) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** True while a process with this pid exists (and is not a zombie). */
export function alive(pid: number): boolean {
  try {
    const st = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return st.slice(st.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

/** The pid's ancestors, nearest first, with their command names. */
export function ancestors(pid: number): { pid: number; comm: string }[] {
  const out: { pid: number; comm: string }[] = [];
  let p = pid;
  for (let i = 0; i < 30; i++) {
    let st: string;
    try {
      st = readFileSync(`/proc/${p}/stat`, 'utf8');
    } catch {
      break;
    }
    const ppid = Number(st.slice(st.lastIndexOf(')') + 2).split(' ')[1]);
    if (!ppid) break;
    let comm = '';
    try {
      comm = readFileSync(`/proc/${ppid}/cmdline`, 'utf8').split('\0')[0] ?? '';
    } catch {
      /* gone */
    }
    out.push({ pid: ppid, comm });
    p = ppid;
  }
  return out;
}

/** `bash -c 'SCRIPT'`: a line the test config reroutes to the loopback VM. */
export function onVm(script: string): string {
  return `bash -c '${script.replace(/'/g, `'\\''`)}'`;
}
