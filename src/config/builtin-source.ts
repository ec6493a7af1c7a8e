// The built-in pack read from rules/builtin.yaml. Used by the build (which compiles it once into the
// bundle) and by tests running from source; the bundled CLI never reads the YAML at start-up.
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';
import { existsSync } from 'node:fs';
import { loadLayer } from './pack.js';
import type { Layer } from './resolve.js';

export function builtinPackPath(): string {
  // src/config/ (source) or dist/ (bundle): walk up to the package root that holds rules/builtin.yaml.
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 4; i++) {
    const p = join(dir, 'rules', 'builtin.yaml');
    if (existsSync(p)) return p;
    dir = dirname(dir);
  }
  throw new Error('rules/builtin.yaml not found next to offhost');
}

export function builtinLayerFromSource(): Layer {
  const layer = loadLayer(builtinPackPath());
  return { ...layer, file: '<built-in>', rules: layer.rules.map((r) => ({ ...r, source: { file: 'rules/builtin.yaml', ...(r.source?.line ? { line: r.source.line } : {}) } })) };
}
