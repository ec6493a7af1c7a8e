// The doors' side of the shims: the directory in place and current before a door starts a shell.
import { existsSync } from 'node:fs';
import type { Io } from '../io.js';
import { UsageError } from '../errors.js';
import type { Rule } from '../policy/match.js';
import { ownExecutable } from '../own-executable.js';
import { NOT_SHIMMED, NOT_SHIMMED_PATTERN } from './plan.js';
import { defaultShimsDir, installShims, readMarker } from './install.js';

/** The offhost executable the shims call (absolute, the CommonJS one: it starts faster). */
export function shimBin(env: NodeJS.ProcessEnv): string {
  const exe = env.OFFHOST_SHIM_BIN || ownExecutable()?.replace(/offhost\.mjs$/, 'offhost.cjs') || 'offhost';
  if (!exe.startsWith('/') || !existsSync(exe)) throw new UsageError(`cannot tell which offhost executable the shims should run (${exe}); set OFFHOST_SHIM_BIN to dist/offhost.cjs`);
  return exe;
}

/** The program names deny/reroute rules spell out (wildcard globs are expanded by the full plan only). */
export function namedPrograms(rules: Rule[]): string[] {
  const out = new Set<string>();
  for (const r of rules) {
    if (r.decision === 'allow') continue;
    for (const n of r.programs.literal) if (!NOT_SHIMMED.has(n) && !NOT_SHIMMED_PATTERN.test(n) && /^[A-Za-z0-9_+-][A-Za-z0-9_.+-]*$/.test(n)) out.add(n);
  }
  return [...out];
}

/**
 * The shim directory, (re)written when it has no shims yet, when they call another offhost or node, or
 * when the rules in force name a program it lacks (a project config adding a rule).
 */
export function ensureShims(io: Pick<Io, 'env' | 'cwd'>, rules: Rule[] | null): string {
  const dir = defaultShimsDir(io.env);
  const m = readMarker(dir);
  const bin = shimBin(io.env);
  // A directory from before the PATH keepers (m.keepers absent) is written again.
  const current = m !== null && m.keepers !== undefined && m.bin === bin && m.node === process.execPath && (rules === null || namedPrograms(rules).every((n) => m.programs.includes(n)));
  if (!current) installShims({ dir, cwd: io.cwd, env: io.env, node: process.execPath, bin });
  return dir;
}
