// Shared by the guard benchmarks: loadGuard() from the sources, bundled once into a temp folder with the
// built-in pack as the real bundle has it (compiled by `npm run build`). Not a benchmark itself (the name
// does not end in .bench.mjs, so scripts/bench.mjs does not run it).
import { build } from 'esbuild';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

export const root = join(dirname(fileURLToPath(import.meta.url)), '..');

/** `{ loadGuard, tmp }`: `tmp` is the bench's own temp folder (the caller removes it). */
export async function benchGuard(prefix) {
  const tmp = mkdtempSync(join(tmpdir(), prefix));
  const out = join(tmp, 'guard.mjs');
  await build({
    absWorkingDir: root,
    entryPoints: ['src/config/load-guard.ts'],
    outfile: out,
    bundle: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    logLevel: 'warning',
    define: { __OFFHOST_BUILTIN__: readFileSync(join(root, 'dist', 'builtin-pack.json'), 'utf8') },
    banner: { js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);" },
  });
  const { loadGuard } = await import(pathToFileURL(out).href);
  return { loadGuard, tmp, remove: () => rmSync(tmp, { recursive: true, force: true }) };
}
