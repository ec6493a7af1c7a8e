// The command line the doors offer as `rewrite` for a reroute: `offhost run`, which takes the VM lock,
// runs the route's command, keeps the lock's heartbeat fresh and archives the lock at the end (R3/R4).
// Standalone (no imports beyond node:fs/path) so the hot paths can use it cheaply.
import { realpathSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Verdict } from '../types.js';

/** POSIX single quoting: 'text', each ' written as '\''. Every shell reads it back as exactly `s`. */
export function singleQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

/**
 * The offhost executable to put in a rewrite: the absolute real path of the running script when it is
 * `offhost.cjs`/`offhost.mjs` (a dist build run as `node …/offhost.cjs` or through a symlink), else `offhost` (found
 * on PATH, e.g. an npm-installed bin).
 */
let cached: { argv1: string | undefined; exe: string } | null = null;

export function offhostExecutable(argv1: string | undefined = process.argv[1]): string {
  if (cached && cached.argv1 === argv1) return cached.exe;
  const exe = findExecutable(argv1);
  cached = { argv1, exe };
  return exe;
}

function findExecutable(argv1: string | undefined): string {
  if (!argv1) return 'offhost';
  let p = resolve(argv1);
  try {
    p = realpathSync(p);
  } catch {
    /* keep the resolved path */
  }
  return /(^|\/)offhost\.[cm]js$/.test(p) ? p : 'offhost';
}

const SAFE_WORD = /^[A-Za-z0-9_@%+:,./-]+$/;

/**
 * `<offhost> run [--session '<S>'] [--cwd '<D>'] -- '<LINE>'`: every argument that carries a value (the
 * session, the directory, the command line) POSIX single-quoted; the fixed words `run`, `--session`,
 * `--cwd`, `--` as they are; the executable as it is when it is made of safe characters only
 * ([A-Za-z0-9_@%+:,./-]), else single-quoted. LINE is one argument: offhost run classifies it again and
 * runs it on the route's VM under the VM lock.
 */
export function runRewrite(line: string, opts: { session?: string; cwd?: string; executable?: string } = {}): string {
  const exe = opts.executable ?? offhostExecutable();
  const words = [SAFE_WORD.test(exe) ? exe : singleQuote(exe), 'run'];
  if (opts.session) words.push('--session', singleQuote(opts.session));
  if (opts.cwd) words.push('--cwd', singleQuote(opts.cwd));
  words.push('--', singleQuote(line));
  return words.join(' ');
}

/** The guard's verdict as a door answers it: a reroute gets `rewrite` = runRewrite(line), anything else null. */
export function withRunRewrite(v: Omit<Verdict, 'rewrite'>, line: string): Verdict {
  return { ...v, rewrite: v.decision === 'reroute' && v.route ? runRewrite(line) : null };
}
