// Scanning a wrapper's argv for its options and the start of the inner command, driven by a Spec: which
// options take a value, which set the directory, which mean nothing runs. Shared by the wrappers
// (wrappers.ts) and the package runners (package-runners.ts).
import type { Field } from './expand.js';

export interface Spec {
  /** Options that take a value (`-u root`, `-uroot`, `--user root`, `--user=root`). */
  value: string[];
  /** Options that set the working directory of the inner command. */
  chdir?: string[];
  /** Options after which no inner command runs. */
  noCommand?: string[];
  /** Leading positionals to skip before the command (timeout's DURATION, taskset's mask...). */
  skip?: number;
  /** NAME=VALUE words before the command are environment. */
  assignments?: boolean;
  /** A value option whose value is a script string for a shell. */
  scriptOption?: string[];
  /** The inner command's remaining words are joined and run by `sh -c` (watch). */
  joinAsScript?: boolean;
}

export function isOpt(f: Field): boolean {
  return f.known && f.value.length > 1 && (f.value.startsWith('-') || f.value.startsWith('+'));
}

export const ASSIGN = /^[A-Za-z_][A-Za-z0-9_]*=/s;

/**
 * Generic option walk: returns the index of the inner command and the options seen, or null when the
 * wrapper runs no command.
 */
export function scan(argv: Field[], spec: Spec): { index: number; opts: [string, Field | null][]; env: [string, Field][] } | null {
  const opts: [string, Field | null][] = [];
  const env: [string, Field][] = [];
  let i = 1;
  let skip = spec.skip ?? 0;
  const valueSet = new Set(spec.value);
  while (i < argv.length) {
    const f = argv[i]!;
    if (f.known && f.value === '--') {
      i++;
      break;
    }
    if (spec.assignments && f.known && f.value === '-') {
      // `env -` is `env -i`.
      opts.push(['-i', null]);
      i++;
      continue;
    }
    if (isOpt(f)) {
      const v = f.value;
      if (v.startsWith('--')) {
        const eq = v.indexOf('=');
        const name = eq < 0 ? v : v.slice(0, eq);
        if (eq >= 0) opts.push([name, { value: v.slice(eq + 1), known: true }]);
        else if (valueSet.has(name)) {
          opts.push([name, argv[i + 1] ?? null]);
          i++;
        } else opts.push([name, null]);
        i++;
        continue;
      }
      // Short cluster: -Eu root, -uroot, -n19.
      let j = 1;
      while (j < v.length) {
        const name = v[0] + v[j]!;
        if (valueSet.has(name)) {
          if (j + 1 < v.length) opts.push([name, { value: v.slice(j + 1), known: true }]);
          else {
            opts.push([name, argv[i + 1] ?? null]);
            i++;
          }
          break;
        }
        opts.push([name, null]);
        j++;
      }
      i++;
      continue;
    }
    if (spec.assignments && f.known && ASSIGN.test(f.value)) {
      const eq = f.value.indexOf('=');
      env.push([f.value.slice(0, eq), { value: f.value.slice(eq + 1), known: true }]);
      i++;
      continue;
    }
    if (spec.assignments && !f.known && /^[A-Za-z_][A-Za-z0-9_]*=/.test(f.value)) {
      i++;
      continue;
    }
    if (skip > 0) {
      skip--;
      i++;
      continue;
    }
    break;
  }
  if (spec.noCommand && opts.some(([n]) => spec.noCommand!.includes(n))) return null;
  return { index: i, opts, env };
}

