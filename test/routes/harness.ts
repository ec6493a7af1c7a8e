// Test harness for the route backends: a temp "world" (laptop dirs, a VM home, stand-in log, argv
// dumpers), a runner that hands a rendered command line to real bash with the stand-ins first on PATH,
// and hostile-string generators for fast-check.
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { readStandinLog, standinEnv, type StandinLogEntry } from '../helpers/standins.js';

// The final program: prints $0, argc, every argument, the physical working directory and the whole
// environment, each NUL-terminated, then exits with $OFFHOST_T_EXIT. Plain sh so a run stays cheap.
const DUMPER = `#!/bin/sh
printf '%s\\0' "$0" "$#"
for a in "$@"; do printf '%s\\0' "$a"; done
d=$(pwd -P; printf x); d=\${d%x}; d=\${d%?}
printf '%s\\0' "$d"
env -0
exit "\${OFFHOST_T_EXIT:-0}"
`;

export const DUMPER_NAME = 'offhost-dump';
/** A directory name that puts '=', quotes, '$', spaces and UTF-8 into argv[0]. */
const HOSTILE_BIN = "b i=n $'q' \"é\" -x";

export interface World {
  root: string;
  home: string;
  log: string;
  /** Dumper paths: absolute plain, absolute hostile (contains '='), and bare (found on PATH). */
  dumpers: { plain: string; hostile: string; bare: string };
  env(extra?: Record<string, string>): Record<string, string>;
  /** Creates root/work/<segments…> and returns its absolute path. */
  makeDir(segments: string[]): string;
  cleanup(): void;
}

export function makeWorld(): World {
  const root = realpathSync(mkdtempSync(join(tmpdir(), 'offhost-routes-')));
  const home = join(root, 'vm-home');
  const laptop = join(root, 'laptop');
  mkdirSync(home);
  mkdirSync(laptop);
  const bin = join(root, 'bin');
  const hostileBin = join(root, HOSTILE_BIN);
  for (const dir of [bin, hostileBin]) {
    mkdirSync(dir);
    writeFileSync(join(dir, DUMPER_NAME), DUMPER);
    chmodSync(join(dir, DUMPER_NAME), 0o755);
  }
  const log = join(root, 'standin.log');
  let n = 0;
  return {
    root,
    home,
    log,
    dumpers: { plain: join(bin, DUMPER_NAME), hostile: join(hostileBin, DUMPER_NAME), bare: DUMPER_NAME },
    env: (extra = {}) => standinEnv({ log, home, extraPath: [bin], env: extra }),
    makeDir(segments) {
      const dir = join(root, 'work', String(n++), ...segments);
      mkdirSync(dir, { recursive: true });
      return dir;
    },
    cleanup: () => rmSync(root, { recursive: true, force: true }),
  };
}

export interface Dump {
  arg0: string;
  args: string[];
  cwd: string;
  env: Record<string, string>;
}

export interface RunResult {
  status: number | null;
  stdout: Buffer;
  stderr: string;
  dump: Dump | null;
  log: StandinLogEntry[];
}

function parseDump(out: Buffer): Dump | null {
  const fields: string[] = [];
  let start = 0;
  for (let i = 0; i < out.length; i++) {
    if (out[i] === 0) {
      fields.push(out.subarray(start, i).toString('utf8'));
      start = i + 1;
    }
  }
  if (fields.length < 3) return null;
  const arg0 = fields[0]!;
  const argc = Number(fields[1]);
  const args = fields.slice(2, 2 + argc);
  const cwd = fields[2 + argc]!;
  const env: Record<string, string> = {};
  for (const kv of fields.slice(3 + argc)) {
    const k = kv.indexOf('=');
    if (k > 0) env[kv.slice(0, k)] = kv.slice(k + 1);
  }
  return { arg0, args, cwd, env };
}

/** Runs `line` with real bash (as the laptop would), from a laptop directory, stand-ins first on PATH. */
export function runOnLaptop(world: World, line: string, extraEnv: Record<string, string> = {}): RunResult {
  rmSync(world.log, { force: true });
  const r = spawnSync('bash', ['-c', line], {
    cwd: join(world.root, 'laptop'),
    env: world.env(extraEnv),
    encoding: 'buffer',
    timeout: 60_000,
  });
  return {
    status: r.status,
    stdout: r.stdout,
    stderr: r.stderr.toString('utf8'),
    dump: parseDump(r.stdout),
    log: readStandinLog(world.log),
  };
}

// ---- hostile strings -------------------------------------------------------------------------

export const HOSTILE_PIECES = [
  ' ', '  ', '"', "'", '$', '$HOME', '${x}', '$(id)', '`id`', '`', '*', '?', '[a]', ';', '|', '&', '&&',
  '\n', '\t', '\r', '-', '--', '-n', '-e', '\\', '\\\\', '\\n', '!', '!!', '~', '~root', 'é', '日本語', '🙂',
  '%', '%s', '%%', '{}', '{a,b}', '=', 'a=b', '#', '(', ')', '<', '>', "'\\''", '"\'"', '\u00a0', 'x', 'EOF',
  'if', 'time', 'in', '!', '[[',
];

const piece = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...HOSTILE_PIECES) },
  { weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength: 3 }) },
);

/** Any string a command line could carry (no NUL), biased to shell-special characters; may be ''. */
export const hostileString = fc
  .array(piece, { maxLength: 6 })
  .map((a) => a.join(''))
  .filter((s) => !s.includes('\0'));

/** A directory name: hostile, but not '', '.', '..', no '/', and short enough for any filesystem. */
export const hostileSegment = hostileString
  .map((s) => s.replaceAll('/', ''))
  .filter((s) => s !== '' && s !== '.' && s !== '..' && Buffer.byteLength(s) <= 100);

export const envKey = fc.stringMatching(/^[A-Z_][A-Z0-9_]{0,5}$/).map((k) => `T_${k}`);

export const hostileEnv = fc
  .uniqueArray(fc.tuple(envKey, hostileString), { selector: (t) => t[0], maxLength: 3 })
  .map((pairs) => Object.fromEntries(pairs) as Record<string, string>);

export const jobShape = fc.record({
  argv0: fc.constantFrom('plain', 'hostile', 'bare') as fc.Arbitrary<'plain' | 'hostile' | 'bare'>,
  args: fc.array(hostileString, { maxLength: 6 }),
  segments: fc.array(hostileSegment, { minLength: 1, maxLength: 3 }),
  env: hostileEnv,
  exit: fc.integer({ min: 0, max: 125 }),
});
export type JobShape = typeof jobShape extends fc.Arbitrary<infer T> ? T : never;
