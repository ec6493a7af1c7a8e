// Bundles the CLI into dist/: one entry file plus a lazily loaded chunk per subcommand, so that
// start-up parses only what a subcommand needs. The built-in rule pack is compiled and self-tested here
// once and embedded in the bundle; the YAML/zod/picomatch loader goes to dist/config-loader.cjs and is
// only required when a config file exists.
import { build } from 'esbuild';
import { rmSync, mkdirSync, readFileSync, writeFileSync, chmodSync, copyFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { dirname, join } from 'node:path';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const dist = join(root, 'dist');
rmSync(dist, { recursive: true, force: true });
mkdirSync(dist, { recursive: true });

const common = { absWorkingDir: root, bundle: true, platform: 'node', target: 'node20', legalComments: 'none', logLevel: 'warning' };

// Layout of dist/: offhost.cjs (the executable: a loader), hot.cjs (+ hot.cjs.cache), commands/*.mjs and
// chunks/*.mjs (cold subcommands), config-loader.cjs, builtin-pack.json.

// 1. The config loader, as CommonJS so the bundle can require() it synchronously on demand.
await build({ ...common, entryPoints: ['src/policy/config-loader-entry.ts'], outfile: 'dist/config-loader.cjs', format: 'cjs', minifySyntax: true });

// 2. Compile and self-test the built-in pack (a small bundle run once, here).
await build({ ...common, entryPoints: ['scripts/compile-builtin.ts'], outfile: 'dist/.compile-builtin.mjs', format: 'esm',
  banner: { js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);" } });
const { compileBuiltin } = await import(pathToFileURL(join(dist, '.compile-builtin.mjs')).href);
const builtin = compileBuiltin(join(root, 'rules', 'builtin.yaml'));
rmSync(join(dist, '.compile-builtin.mjs'));
writeFileSync(join(dist, 'builtin-pack.json'), JSON.stringify(builtin));

/** An esbuild plugin that swaps every module whose path matches `filter` for `contents`. */
function swapModule(name, filter, contents) {
  return {
    name,
    setup(b) {
      b.onResolve({ filter }, () => ({ path: name, namespace: 'offhost' }));
      b.onLoad({ filter: new RegExp(`^${name}$`), namespace: 'offhost' }, () => ({ resolveDir: root, loader: 'js', contents }));
    },
  };
}

const lazyLoaderCjs = swapModule('lazy-config-loader-cjs', /layer-loader\.js$/, `
        let mod = null;
        const load = () => (mod ??= require(require('node:path').join(__dirname, 'config-loader.cjs')));
        export function loadLayer(file) { return load().loadLayer(file); }
        export function builtinLayerFromSource() { throw new Error('the built-in pack is compiled into the bundle'); }
      `);
// 3'. The CLI. layer-loader.ts is swapped for a stub that requires dist/config-loader.cjs lazily.
const lazyLoader = swapModule('lazy-config-loader', /layer-loader\.js$/, `
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
      `);
const banner = {
  // Bundled CommonJS dependencies call require(); give the ESM files one.
  js: "import { createRequire as __offhostCreateRequire } from 'node:module'; const require = __offhostCreateRequire(import.meta.url);",
};
// The pack as JSON.parse of a string (V8 reads a large JSON string faster than the same object literal),
// declared in each output file's banner.
const define = { __OFFHOST_BUILTIN__: '__offhostBuiltin' };
// Non-ASCII escaped, as esbuild does for the code it writes.
const asciiOnly = (s) => s.replace(/[^\x00-\x7f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
const builtinDecl = `var __offhostBuiltin = JSON.parse(${asciiOnly(JSON.stringify(JSON.stringify(builtin)))});`;
const COLD = ['rules', 'lock', 'run', 'runs', 'lint', 'init', 'scan', 'ci', 'hook'];

// 3. The hot bundles, each ONE CommonJS file run by the loader (dist/offhost.cjs) from V8's code cache:
// dist/hook.cjs for `offhost hook` alone, dist/hot.cjs with the dispatcher + check, explain, shell.
// Cold commands (and `hook` when main() is reached some other way) are imported through the loader.
const coldLoader = swapModule('cold-loader', /^\.\/cold\.js$/, `export function loadCold(name) { return globalThis.__offhostImport(name); }`);
// In the hot bundles, built-ins loaded on first use go through the bundle's own CommonJS require.
const lazyBuiltinCjs = swapModule('lazy-builtin-cjs', /lazy-builtin\.js$/, `export function requireBuiltin(name) { return require(name); }`);
const hotOptions = {
  ...common,
  format: 'cjs',
  minifySyntax: true,
  minify: process.env.OFFHOST_NO_MINIFY !== "1",
  define: { ...define, 'import.meta.url': 'globalThis.__offhostMetaUrl' },
  // import.meta.url computed on first use (node:url costs half a millisecond at start-up).
  // Written already wrapped as the CommonJS function the loader runs: V8 compiles the file's text as it is
  // (no 150 KB concatenation and copy at every start, before the code cache can even be checked).
  banner: { js: "(function (exports, require, module, __filename, __dirname) {\nObject.defineProperty(globalThis, '__offhostMetaUrl', { configurable: true, get: () => require('node:url').pathToFileURL(__filename).href });\n" + builtinDecl },
  footer: { js: '\n})' },
  plugins: [lazyLoaderCjs, coldLoader, lazyBuiltinCjs],
};
await build({ ...hotOptions, entryPoints: ['src/cli/bin.ts'], outfile: 'dist/hot.cjs' });
// 3''. The agent hook alone (dist/hook.cjs): less code to load before every command an agent runs.
await build({ ...hotOptions, entryPoints: ['src/cli/hook-bin.ts'], outfile: 'dist/hook.cjs' });
copyFileSync(join(root, 'src/cli/loader.cjs'), join(dist, 'offhost.cjs'));
writeFileSync(join(dist, 'offhost.cjs'), '#!/usr/bin/env node\n' + readFileSync(join(dist, 'offhost.cjs'), 'utf8'));
chmodSync(join(dist, 'offhost.cjs'), 0o755);
// dist/offhost.mjs: the same executable for those who call it by that name.
writeFileSync(join(dist, 'offhost.mjs'), "#!/usr/bin/env node\nimport { createRequire } from 'node:module';\ncreateRequire(import.meta.url)('./offhost.cjs');\n");
chmodSync(join(dist, 'offhost.mjs'), 0o755);

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
  banner: { js: banner.js + "\n" + builtinDecl },
});
// 5. Warm V8's code cache for the hot paths (the loader writes dist/hot.cjs.cache, dist/hook.cjs.cache on exit).
for (const args of [['--warm-cache'], ['hook', '--warm-cache']]) {
  const warm = spawnSync(process.execPath, [join(dist, 'offhost.cjs'), ...args], { cwd: dist, env: { ...process.env, HOME: '/home/koder' }, encoding: 'utf8' });
  if (warm.status !== 0) throw new Error(`warming the code cache (${args.join(' ')}) failed: ${warm.stderr}`);
}
