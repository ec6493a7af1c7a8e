// Bundles the CLI into dist/: one entry file plus a lazily loaded chunk per subcommand, so that
// start-up parses only what a subcommand needs. The built-in rule pack is compiled and self-tested here
// once and embedded in the bundle; the YAML/zod/picomatch loader goes to dist/config-loader.cjs and is
// only required when a config file exists.
import { build } from 'esbuild';
import { rmSync, mkdirSync, readFileSync, writeFileSync, chmodSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { dirname, join } from 'node:path';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const dist = join(root, 'dist');
rmSync(dist, { recursive: true, force: true });
mkdirSync(dist, { recursive: true });

const common = { absWorkingDir: root, bundle: true, platform: 'node', target: 'node20', legalComments: 'none', logLevel: 'warning' };

// 1. The config loader, as CommonJS so the bundle can require() it synchronously on demand.
await build({ ...common, entryPoints: ['src/policy/config-loader-entry.ts'], outfile: 'dist/config-loader.cjs', format: 'cjs', minifySyntax: true });

// 2. Compile and self-test the built-in pack (a small bundle run once, here).
await build({ ...common, entryPoints: ['scripts/compile-builtin.ts'], outfile: 'dist/.compile-builtin.mjs', format: 'esm',
  banner: { js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);" } });
const { compileBuiltin } = await import(pathToFileURL(join(dist, '.compile-builtin.mjs')).href);
const builtin = compileBuiltin(join(root, 'rules', 'builtin.yaml'));
rmSync(join(dist, '.compile-builtin.mjs'));
writeFileSync(join(dist, 'builtin-pack.json'), JSON.stringify(builtin));

// 3. The CLI. layer-loader.ts is swapped for a stub that requires dist/config-loader.cjs lazily.
const lazyLoader = {
  name: 'lazy-config-loader',
  setup(b) {
    b.onResolve({ filter: /layer-loader\.js$/ }, () => ({ path: 'lazy-config-loader', namespace: 'offhost' }));
    b.onLoad({ filter: /.*/, namespace: 'offhost' }, () => ({
      resolveDir: root,
      contents: `
        import { createRequire } from 'node:module';
        import { fileURLToPath } from 'node:url';
        import { dirname, join, basename } from 'node:path';
        let mod = null;
        function load() {
          if (mod) return mod;
          let dir = dirname(fileURLToPath(import.meta.url));
          if (basename(dir) === 'chunks' || basename(dir) === 'commands') dir = dirname(dir);
          mod = createRequire(import.meta.url)(join(dir, 'config-loader.cjs'));
          return mod;
        }
        export function loadLayer(file) { return load().loadLayer(file); }
        export function builtinLayerFromSource() { throw new Error('the built-in pack is compiled into the bundle'); }
      `,
      loader: 'js',
    }));
  },
};
const banner = {
  // Bundled CommonJS dependencies call require(); give the ESM files one.
  js: "import { createRequire as __offhostCreateRequire } from 'node:module'; const require = __offhostCreateRequire(import.meta.url);",
};
const define = { __OFFHOST_BUILTIN__: JSON.stringify(builtin) };
const COLD = ['rules', 'lock', 'run', 'lint', 'init', 'scan', 'ci'];
// The entry: dispatcher + hot commands (check, explain, hook, shell) in ONE file, cold commands external.
const coldExternal = {
  name: 'cold-commands-external',
  setup(b) {
    b.onResolve({ filter: /^\.\/commands\/[a-z]+\.js$/ }, (a) => {
      const name = a.path.slice('./commands/'.length, -3);
      return COLD.includes(name) ? { path: `./commands/${name}.mjs`, external: true } : undefined;
    });
  },
};
await build({
  ...common,
  entryPoints: { offhost: 'src/cli/bin.ts' },
  outdir: 'dist',
  outExtension: { '.js': '.mjs' },
  format: 'esm',
  minifySyntax: true,
  define,
  plugins: [lazyLoader, coldExternal],
  banner,
});
// 4. Cold commands: one file each under dist/commands/, shared code split into dist/chunks/.
await build({
  ...common,
  entryPoints: Object.fromEntries(COLD.map((c) => [`commands/${c}`, `src/cli/commands/${c}.ts`])),
  outdir: 'dist',
  outExtension: { '.js': '.mjs' },
  splitting: true,
  format: 'esm',
  minifySyntax: true,
  chunkNames: 'chunks/[name]-[hash]',
  define,
  plugins: [lazyLoader],
  banner,
});
const entry = join(dist, 'offhost.mjs');
writeFileSync(entry, '#!/usr/bin/env node\n' + readFileSync(entry, 'utf8'));
chmodSync(entry, 0o755);
