// The command line the doors offer as `rewrite` for a reroute: `offhost run`, which takes the VM lock,
// runs the route's command, keeps the lock's heartbeat fresh and archives the lock at the end (R3/R4).
// Small (quoting and the own executable only) so the hot paths can use it cheaply.
import type { Verdict } from '../types.js';
import { isPlainWord, singleQuote } from '../routes/quote.js';
import { ownExecutable } from '../own-executable.js';

export { singleQuote };

/**
 * The offhost executable to put in a rewrite: the absolute real path of the running script when it is
 * `offhost.cjs`/`offhost.mjs` (a dist build run as `node …/offhost.cjs` or through a symlink), else `offhost` (found
 * on PATH, e.g. an npm-installed bin).
 */
export function offhostExecutable(argv1: string | undefined = process.argv[1]): string {
  return ownExecutable(argv1) ?? 'offhost';
}


/**
 * `<offhost> run [--session '<S>'] [--cwd '<D>'] -- '<LINE>'`: every argument that carries a value (the
 * session, the directory, the command line) POSIX single-quoted; the fixed words `run`, `--session`,
 * `--cwd`, `--` as they are; the executable as it is when it is made of safe characters only
 * ([A-Za-z0-9_@%+:,./-]), else single-quoted. LINE is one argument: offhost run classifies it again and
 * runs it on the route's VM under the VM lock.
 */
export function runRewrite(line: string, opts: { session?: string; cwd?: string; executable?: string } = {}): string {
  const exe = opts.executable ?? offhostExecutable();
  const words = [isPlainWord(exe) ? exe : singleQuote(exe), 'run'];
  if (opts.session) words.push('--session', singleQuote(opts.session));
  if (opts.cwd) words.push('--cwd', singleQuote(opts.cwd));
  words.push('--', singleQuote(line));
  return words.join(' ');
}

/** The guard's verdict as a door answers it: a reroute gets `rewrite` = runRewrite(line), anything else null. */
export function withRunRewrite(v: Omit<Verdict, 'rewrite'>, line: string): Verdict {
  return { ...v, rewrite: v.decision === 'reroute' && v.route ? runRewrite(line) : null };
}
