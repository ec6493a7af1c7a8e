// The command line the guard returns as `rewrite` for a reroute: `offhost run`, which takes the VM lock,
// runs the route's command, keeps the lock's heartbeat fresh and archives the lock at the end (R3/R4).
// Standalone (no imports beyond node:fs/path) so the guard's hot path can use it cheaply.
import { realpathSync } from 'node:fs';
import { resolve } from 'node:path';

/** POSIX single quoting: 'text', each ' written as '\''. Every shell reads it back as exactly `s`. */
export function singleQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

/**
 * The offhost executable to put in a rewrite: the absolute real path of the running script when it is
 * `offhost.mjs` (a dist build run as `node …/offhost.mjs` or through a symlink), else `offhost` (found
 * on PATH, e.g. an npm-installed bin).
 */
export function offhostExecutable(argv1: string | undefined = process.argv[1]): string {
  if (!argv1) return 'offhost';
  let p = resolve(argv1);
  try {
    p = realpathSync(p);
  } catch {
    /* keep the resolved path */
  }
  return p.endsWith('offhost.mjs') ? p : 'offhost';
}

/**
 * `'<offhost>' 'run' ['--session' '<S>'] ['--cwd' '<D>'] '--' '<LINE>'`: every word POSIX single-quoted,
 * LINE passed as one argument (offhost run classifies it again and runs it on the route's VM under its lock).
 */
export function runRewrite(line: string, opts: { session?: string; cwd?: string; executable?: string } = {}): string {
  const words = [opts.executable ?? offhostExecutable(), 'run'];
  if (opts.session) words.push('--session', opts.session);
  if (opts.cwd) words.push('--cwd', opts.cwd);
  words.push('--', line);
  return words.map(singleQuote).join(' ');
}
