// Which file is the running offhost: the one home of that fact. Rewrites name it (`<offhost> run -- …`),
// the hook re-runs it for a line too large to classify in-process, `offhost init` writes it into agent
// settings and shell snippets. Only realpath is touched, and only on first use (a millisecond per call
// otherwise, on every hook call).
import { existsSync, realpathSync } from 'node:fs';
import { resolve } from 'node:path';

/** The built executable's names: dist/offhost.cjs, and dist/offhost.mjs (its thin ES-module alias). */
const OFFHOST_SCRIPT = /(^|\/)offhost\.[cm]js$/;

let cached: { argv1: string | undefined; real: string | null } | null = null;

/** The running script (process.argv[1]) resolved through symlinks (node_modules/.bin/offhost -> dist/offhost.cjs). */
export function runningScript(argv1: string | undefined = process.argv[1]): string | null {
  if (cached && cached.argv1 === argv1) return cached.real;
  let real: string | null = null;
  if (argv1) {
    real = resolve(argv1);
    try {
      real = realpathSync(real);
    } catch {
      /* keep the resolved path */
    }
  }
  cached = { argv1, real };
  return real;
}

/** The running offhost bundle's executable, or null when offhost runs in-process (tests, from source). */
export function ownExecutable(argv1: string | undefined = process.argv[1]): string | null {
  const real = runningScript(argv1);
  return real !== null && OFFHOST_SCRIPT.test(real) ? real : null;
}

/**
 * What to write into settings that call offhost later: the running script, as dist/offhost.cjs when it
 * was started through the .mjs alias (the CommonJS executable starts faster).
 */
export function ownExecutableForSettings(argv1: string | undefined = process.argv[1]): string | null {
  const real = runningScript(argv1);
  if (real === null) return null;
  const cjs = real.replace(/offhost\.mjs$/, 'offhost.cjs');
  return cjs !== real && existsSync(cjs) ? cjs : real;
}
