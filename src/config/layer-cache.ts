// Compiled config layers, kept on disk between processes. Compiling an offhost.config.yaml needs the YAML
// reader and the zod schema (dist/config-loader.cjs, 1 MB): measured at 60-65 ms of CPU on every hook and
// check call of a project that has a config, against 6-7 ms for the whole guard. A layer depends only on
// the file's path, its exact text and offhost's build (src/config/pack.ts is pure in them), so an entry
// is used only when all three are equal to what is on disk now; anything else compiles again. The
// rules' self-test (which also depends on the variables of every layer and HOME) is kept the same way.
//
// Entries are keyed by the build (BUILD_ID, a hash of offhost's sources and pack): from source (tests,
// development) nothing is cached. Where: $OFFHOST_CACHE_DIR, else $XDG_CACHE_HOME/offhost, else
// ~/.cache/offhost; OFFHOST_NO_CACHE=1 turns it off. A cache that cannot be
// read or written only costs speed; a broken entry is ignored and rewritten. Failures are never kept: a
// config with an error is compiled (and reported) on every call. The cache is not a trust boundary of its
// own: whoever can write it can as well write the user config beside it (docs/CONTRACTS.md).
import { mkdirSync, readdirSync, readFileSync, renameSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BUILD_ID } from '../version.js';
import type { Layer } from './resolve.js';

export function cacheDir(env: NodeJS.ProcessEnv): string | null {
  if (BUILD_ID === null || env.OFFHOST_NO_CACHE === '1') return null;
  if (env.OFFHOST_CACHE_DIR) return env.OFFHOST_CACHE_DIR;
  const base = env.XDG_CACHE_HOME || (env.HOME ? join(env.HOME, '.cache') : null);
  return base ? join(base, 'offhost') : null;
}

/** A file name for a key (FNV-1a, 2 x 32 bits: the entry holds the whole key and is compared in full). */
function nameOf(kind: string, key: string): string {
  let a = 0x811c9dc5;
  let b = 0x01000193 ^ key.length;
  for (let i = 0; i < key.length; i++) {
    const c = key.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193);
    b = Math.imul(b ^ c, 0x5bd1e995) ^ (b >>> 15);
  }
  return `${kind}-${(a >>> 0).toString(16).padStart(8, '0')}${(b >>> 0).toString(16).padStart(8, '0')}.json`;
}

interface Entry<T> {
  build: string;
  key: string;
  value: T;
}

function read<T>(dir: string, kind: string, key: string): T | undefined {
  let e: Entry<T>;
  try {
    e = JSON.parse(readFileSync(join(dir, nameOf(kind, key)), 'utf8')) as Entry<T>;
  } catch {
    return undefined;
  }
  return e && e.build === BUILD_ID && e.key === key ? e.value : undefined;
}

function write<T>(dir: string, kind: string, key: string, value: T): void {
  const file = join(dir, nameOf(kind, key));
  const tmp = `${file}.${process.pid}.tmp`;
  try {
    mkdirSync(dir, { recursive: true });
    writeFileSync(tmp, JSON.stringify({ build: BUILD_ID!, key, value } satisfies Entry<T>));
    renameSync(tmp, file);
    prune(dir);
  } catch {
    // Read-only or full: the next call compiles again.
  }
}

/** Every edit of a config leaves an entry behind: past MAX_ENTRIES, the oldest half goes (on a miss only). */
const MAX_ENTRIES = 256;
function prune(dir: string): void {
  const names = readdirSync(dir).filter((n) => /^(layer|selftest)-[0-9a-f]{16}\.json$/.test(n));
  if (names.length <= MAX_ENTRIES) return;
  const aged = names.map((n) => ({ n, t: statSync(join(dir, n)).mtimeMs })).sort((a, b) => a.t - b.t);
  for (const { n } of aged.slice(0, names.length - MAX_ENTRIES / 2)) unlinkSync(join(dir, n));
}

/** The layer compiled from `file` whose text is `text`: from the cache, or `compile()` and kept. */
export function cachedLayer(file: string, text: string, env: NodeJS.ProcessEnv, compile: () => Layer): Layer {
  const dir = cacheDir(env);
  if (!dir) return compile();
  const key = `${file}\n${text}`;
  const hit = read<Layer>(dir, 'layer', key);
  if (hit !== undefined) return hit;
  const layer = compile();
  write(dir, 'layer', key, layer);
  return layer;
}

/** Runs `test` (the user rules' self-test, which throws on a failure) unless it passed for this very key. */
export function cachedSelfTest(key: string, env: NodeJS.ProcessEnv, test: () => void): void {
  const dir = cacheDir(env);
  if (!dir) return test();
  if (read<true>(dir, 'selftest', key) === true) return;
  test();
  write(dir, 'selftest', key, true);
}
