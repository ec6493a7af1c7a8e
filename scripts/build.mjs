// Bundles the CLI into dist/ (one entry file plus lazily loaded chunks per subcommand) so that
// start-up parses only what a subcommand needs, and precompiles the built-in rule packs.
import { build } from 'esbuild';
import { rmSync, mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const dist = join(root, 'dist');
rmSync(dist, { recursive: true, force: true });
mkdirSync(dist, { recursive: true });

await build({
  absWorkingDir: root,
  entryPoints: { offhost: 'src/cli/bin.ts' },
  outdir: 'dist',
  outExtension: { '.js': '.mjs' },
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  minifySyntax: true,
  legalComments: 'none',
  chunkNames: 'chunks/[name]-[hash]',
  banner: {
    // Some bundled CommonJS dependencies call require(); give ESM chunks one.
    js: "import { createRequire as __offhostCreateRequire } from 'node:module'; const require = __offhostCreateRequire(import.meta.url);",
  },
  logLevel: 'warning',
});
// The shebang goes on the entry file only.
import { readFileSync, writeFileSync, chmodSync } from 'node:fs';
const entry = join(dist, 'offhost.mjs');
writeFileSync(entry, '#!/usr/bin/env node\n' + readFileSync(entry, 'utf8'));
chmodSync(entry, 0o755);
