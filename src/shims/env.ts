// The environments offhost run gives the shells it starts (docs/SHIMS.md).
import type { Io } from '../io.js';
import type { Rule } from '../policy/match.js';
import type { Role } from '../types.js';
import { ensureShims } from './ensure.js';
import { pathWithShims, pathWithoutShims } from './install.js';

/**
 * A line run here: the exec-time shims first on PATH in role laptop, so a heavy program the line's text
 * hid is judged when it starts. OFFHOST_SHIMS=off leaves PATH alone; shims that cannot be written are
 * reported and the line still runs (it was judged already).
 */
export function localEnv(io: Pick<Io, 'env' | 'cwd' | 'stderr'>, rules: Rule[], role: Role): NodeJS.ProcessEnv {
  if (role !== 'laptop' || io.env.OFFHOST_SHIMS === 'off') return io.env;
  try {
    return { ...io.env, PATH: pathWithShims(ensureShims(io, rules), io.env.PATH) };
  } catch (err) {
    io.stderr(`offhost run: the exec-time shims are not in place (${(err as Error).message}); running without them\n`);
    return io.env;
  }
}

/**
 * The bash that runs a route's command (ssh/incus/... on this laptop). Nothing in its environment may run
 * code of its own before that command: BASH_ENV/ENV files, exported functions (`ssh() {…}`) and
 * SHELLOPTS/BASHOPTS are dropped (a heavy line could otherwise run here, through the backend's own shell,
 * while its judged copy runs on the VM). The VM side never inherits the laptop's shims either (a backend
 * that passes PATH on, or a local stand-in, would judge the VM's programs as the laptop's).
 */
export function backendEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(env)) {
    if (k === 'BASH_ENV' || k === 'ENV' || k === 'SHELLOPTS' || k === 'BASHOPTS' || k.startsWith('BASH_FUNC_')) continue;
    out[k] = v;
  }
  out.PATH = pathWithoutShims(env.PATH);
  return out;
}
