// Bundles the CLI into dist/ (the layout and the reasons for it: docs/BUILD.md). Every bundle is
// CommonJS: the hot one runs from V8's code cache (src/cli/loader.cjs), the cold ones are require()d by it.
//   dist/offhost.cjs            the executable: a loader that runs dist/hot.cjs from its code cache
//   dist/hot.cjs (+ .cache)     the dispatcher and the hot commands (`hot: true` in src/cli/commands-table.ts)
//   dist/cold.cjs               every other command, require()d when one of them runs
//   dist/config-loader.cjs      yaml + zod + picomatch: compiles a config file, only when one exists
//   dist/builtin-pack.json      the built-in rule pack, compiled and self-tested here
import { build } from 'esbuild';
import { existsSync, rmSync, mkdirSync, readFileSync, readdirSync, writeFileSync, chmodSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { dirname, join } from 'node:path';
import { warmColdCache } from './warm-cold.mjs';
import { readFamilies, buildLazyFamilies, describeLazyFamilies, familiesModuleSource } from './lazy-families.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const dist = join(root, 'dist');
rmSync(dist, { recursive: true, force: true });
mkdirSync(dist, { recursive: true });

/** package.json's version, defined in every bundle (src/version.ts). */
const { version } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const common = { absWorkingDir: root, bundle: true, platform: 'node', target: 'node20', legalComments: 'none', logLevel: 'warning' };
/** Built and imported here, then deleted: for reading TypeScript sources at build time. */
async function importTs(entry, options = {}) {
  const outfile = join(dist, `.build-${entry.replace(/\W+/g, '-')}.mjs`);
  await build({ ...common, entryPoints: [entry], outfile, format: 'esm', ...options,
    banner: { js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);" } });
  try {
    return await import(pathToFileURL(outfile).href);
  } finally {
    rmSync(outfile);
  }
}

// 1. The command table: which commands are hot (in dist/hot.cjs) and which get a file of their own.
const commandImport = /^\.\/commands\/([a-z][a-z-]*)\.js$/;
const { COMMANDS } = await importTs('src/cli/commands-table.ts', {
  plugins: [{ name: 'commands-external', setup: (b) => b.onResolve({ filter: commandImport }, (a) => ({ path: a.path, external: true })) }],
});
// A command with a bundle of its own (the hook) is, inside hot.cjs, one more command of cold.cjs.
const cold = Object.keys(COMMANDS).filter((name) => !COMMANDS[name].hot);
const ownBundles = Object.keys(COMMANDS).filter((name) => COMMANDS[name].ownBundle);

// 2. Compile and self-test the built-in pack.
const { compileBuiltin } = await importTs('scripts/compile-builtin.ts');
const builtin = compileBuiltin(join(root, 'rules', 'builtin.yaml'));
writeFileSync(join(dist, 'builtin-pack.json'), JSON.stringify(builtin));

// What every bundle defines: __OFFHOST_BUNDLE__ tells the sources which bundle they are in (and that they
// are bundled: src/config/layer-loader.ts, src/cli/main.ts); import.meta.url is computed on first use
// (node:url costs half a millisecond at start-up). Every bundle lives in dist/ itself, so `__dirname` is dist/.
const importMeta = "var __offhostImportMeta = { get url() { return require('node:url').pathToFileURL(__filename).href; } };";
// The build's identity: a hash of every source file, the pack and the version (src/version.ts BUILD_ID).
// What offhost keeps on disk between runs is keyed by it (src/config/layer-cache.ts).
const buildId = (() => {
  const h = createHash('sha256').update(version);
  const walk = (dir) => readdirSync(join(root, dir), { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1)).forEach((e) => {
    const rel = `${dir}/${e.name}`;
    if (e.isDirectory()) walk(rel);
    else h.update(rel).update(readFileSync(join(root, rel)));
  });
  walk('src');
  walk('rules');
  return h.digest('hex').slice(0, 16);
})();
const bundleOptions = (kind) => ({
  ...common,
  format: 'cjs',
  minifySyntax: true,
  metafile: true,
  // import() of what stays outside a bundle becomes require(): one module system.
  supported: { 'dynamic-import': false },
  define: { __OFFHOST_BUNDLE__: JSON.stringify(kind), __OFFHOST_VERSION__: JSON.stringify(version), __OFFHOST_BUILD_ID__: JSON.stringify(buildId), 'import.meta': '__offhostImportMeta', __OFFHOST_BUILTIN__: '__offhostPack.layer' },
});
/** The table's imports of the other kind of command stay external: main() never follows them (src/cli/main.ts). */
const otherCommandsExternal = (kind) => ({
  name: 'other-commands-external',
  setup(b) {
    b.onResolve({ filter: commandImport }, (a) => {
      const name = commandImport.exec(a.path)[1];
      const isCold = cold.includes(name);
      return a.importer.endsWith(join('src', 'cli', 'commands-table.ts')) && isCold === (kind === 'hot') ? { path: a.path, external: true } : undefined;
    });
  },
});

// Every bundle is minified (OFFHOST_NO_MINIFY=1 leaves them readable): less to read, decode and scan at each start.
const minifyBundles = process.env.OFFHOST_NO_MINIFY !== '1';

// 3. The config loader, require()d by path on first use (src/config/layer-loader.ts).
await build({ ...bundleOptions('loader'), minify: minifyBundles, entryPoints: ['src/config/config-loader-entry.ts'], outfile: 'dist/config-loader.cjs' });

// 4. The hot bundle, ONE CommonJS file run by the loader (dist/offhost.cjs) from V8's code cache. The pack
// is in it as JSON.parse of a string (V8 reads a large JSON string faster than the same object literal);
// non-ASCII escaped, as esbuild does for the code it writes.
// The hot bundle's copy leaves out the rules' examples: they are checked here at build time, and only the
// cold `rules` command shows them (from builtin-pack.json, which keeps them).
// 4a. The program families no other core code imports are bundled alone, each into dist/programs/<file>.cjs
// (scripts/lazy-families.mjs); the hot bundle gets a table that loads them on first use. Which families
// other code imports is read from a build of the hot bundle without them.
const familiesTs = join(root, 'src', 'shell', 'programs', 'families.ts');
const replaceFamilies = (contents) => ({
  name: 'lazy-families',
  setup(b) {
    b.onLoad({ filter: /[\\/]src[\\/]shell[\\/]programs[\\/]families\.ts$/ }, (a) => (a.path === familiesTs ? { contents, loader: 'js', resolveDir: dirname(familiesTs) } : undefined));
  },
});
const families = readFamilies(root);
const withoutFamilies = await build({
  ...bundleOptions('hot'), entryPoints: ['src/cli/bin.ts'], write: false, outfile: 'dist/hot.cjs',
  plugins: [otherCommandsExternal('hot'), replaceFamilies('export const FAMILIES = [];')],
});
const coreInputs = Object.values(withoutFamilies.metafile.outputs)[0].inputs;
const eagerFiles = new Set(families.order.map((f) => f.file).filter((f) => coreInputs[`src/shell/programs/${f}.ts`]?.bytesInOutput > 0));
const lazyFiles = [...new Set(families.order.map((f) => f.file))].filter((f) => !eagerFiles.has(f));
const core = new Set(Object.entries(coreInputs).filter(([, v]) => v.bytesInOutput > 0).map(([f]) => f));
const familyDeps = await buildLazyFamilies({ root, lazyFiles, options: { ...bundleOptions('hot'), minify: minifyBundles }, core });
const described = await describeLazyFamilies({ lazyFiles, importFamily: (entry) => importTs(entry) });
const familiesSource = familiesModuleSource({ root, families, eagerFiles, described, deps: familyDeps });

// Each rule's conditions are kept as their JSON text, parsed when the rule is first matched
// (src/policy/rule.ts compiledMatch): a start parses a sixth of the pack it used to.
const hotPack = { ...builtin, rules: builtin.rules.map((r) => ({ ...r, match: JSON.stringify(r.match), examples: { match: [], not_match: [] } })) };
const asciiOnly = (s) => s.replace(/[^\x00-\x7f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
const hot = await build({
  ...bundleOptions('hot'),
  minify: minifyBundles,
  entryPoints: ['src/cli/bin.ts'],
  outfile: 'dist/hot.cjs',
  // Written already wrapped as the CommonJS function the loader runs: V8 compiles the file's text as it is
  // (no 150 KB concatenation and copy at every start, before the code cache can even be checked).
  banner: { js: `(function (exports, require, module, __filename, __dirname, __offhostLoadScript) {\n${importMeta}\nvar __offhostPack = { layer: JSON.parse(${asciiOnly(JSON.stringify(JSON.stringify(hotPack)))}) };` },
  footer: { js: '\n})' },
  plugins: [otherCommandsExternal('hot'), replaceFamilies(familiesSource)],
});
// 4b. The commands with a bundle of their own (`ownBundle` in the table: the hook and the shell door),
// dist/<name>.cjs from src/cli/<name>-bin.ts: that door and the guard, without the other doors and the
// command table (the loader runs it for `offhost <name>`; docs/BUILD.md has why and the measurement).
const hotBanner = `(function (exports, require, module, __filename, __dirname, __offhostLoadScript) {\n${importMeta}\nvar __offhostPack = { layer: JSON.parse(${asciiOnly(JSON.stringify(JSON.stringify(hotPack)))}) };`;
const bundles = [['hot.cjs', hot]];
for (const name of ownBundles) {
  const bundle = await build({
    ...bundleOptions('hot'),
    minify: minifyBundles,
    entryPoints: [`src/cli/${name}-bin.ts`],
    outfile: `dist/${name}.cjs`,
    banner: { js: hotBanner },
    footer: { js: '\n})' },
    plugins: [replaceFamilies(familiesSource)],
  });
  // It holds its own door alone.
  const otherDoors = Object.keys(bundle.metafile.inputs).filter((f) => f.startsWith('src/cli/commands/') && f !== `src/cli/commands/${name}.ts`);
  if (otherDoors.length > 0) throw new Error(`dist/${name}.cjs must hold the ${name} command alone, but bundles: ${otherDoors.join(', ')}`);
  bundles.push([`${name}.cjs`, bundle]);
}
for (const [name, bundle] of bundles) {
  // None may carry the cold dependencies: they cost start-up on every agent command.
  const forbidden = /(^|\/)node_modules\/(zod|yaml|commander)\//;
  const leaked = Object.keys(bundle.metafile.inputs).filter((f) => forbidden.test(f));
  if (leaked.length > 0) throw new Error(`dist/${name} must not contain zod, yaml or commander, but bundles:\n  ${leaked.join('\n  ')}`);
  // ... nor a family that is loaded from its own file (two copies of one module would not be one module).
  const doubled = lazyFiles.filter((f) => `src/shell/programs/${f}.ts` in bundle.metafile.inputs);
  if (doubled.length > 0) throw new Error(`dist/${name} must not contain the families it loads from dist/programs/, but bundles: ${doubled.join(', ')}`);
  // OFFHOST_METAFILE=<prefix>: each bundle's esbuild metafile (<prefix><name>.json), to see what its bytes are.
  if (process.env.OFFHOST_METAFILE) writeFileSync(`${process.env.OFFHOST_METAFILE}${name.replace(/\.cjs$/, '')}.json`, JSON.stringify(bundle.metafile));
}

// 5. The cold commands, all in dist/cold.cjs (esbuild splits code for ES modules only; one file keeps
// each dependency once). They read the pack from dist/builtin-pack.json when they need it. Minified as
// the hot bundle is: every cold command reads, decodes and scans this file first, and the unminified one
// (2.3 MB, its comments holding a few non-ASCII characters, so that V8 held it as a two-byte string) cost
// 40 ms of every lock, run or lint call (docs/BUILD.md).
await build({
  ...bundleOptions('cold'),
  minify: minifyBundles,
  entryPoints: ['src/cli/cold.ts'],
  outfile: 'dist/cold.cjs',
  banner: { js: `${importMeta}\nvar __offhostPack = { get layer() { return require('./builtin-pack.json'); } };` },
  plugins: [otherCommandsExternal('cold')],
});

// 6. The executable.
// Run as a program it is sh, which hides NODE_EXTRA_CA_CERTS from offhost's own Node and execs Node on this
// same file (src/cli/launcher.sh.txt); to Node, its sh is a string and comments. The rest of the file is,
// to sh, the body of a here-document that is never used, closed by the last line, so that the whole file
// is a script sh (and offhost's guard, when a command runs it by its path) reads without error.
const launcher = readFileSync(join(root, 'src/cli/launcher.sh.txt'), 'utf8');
const shEnd = /<<'([^']+)'\n$/.exec(launcher)[1];
const loaderText = readFileSync(join(root, 'src/cli/loader.cjs'), 'utf8');
if (loaderText.split('\n').includes(shEnd)) throw new Error(`src/cli/loader.cjs has a line ${shEnd}, which ends the launcher's here-document early`);
writeFileSync(join(dist, 'offhost.cjs'), `${launcher}${loaderText.replace(/\n?$/, '\n')}${shEnd}\n`);
chmodSync(join(dist, 'offhost.cjs'), 0o755);
// dist/offhost.mjs: the same executable for those who call it by that name.
writeFileSync(join(dist, 'offhost.mjs'), "#!/usr/bin/env node\nimport { createRequire } from 'node:module';\ncreateRequire(import.meta.url)('./offhost.cjs');\n");
chmodSync(join(dist, 'offhost.mjs'), 0o755);

// 7. Warm V8's code caches (the loader writes dist/<bundle>.cjs.cache on exit): each own bundle's with its
// door, hot.cjs's with check (src/cli/warm.ts, src/cli/main.ts).
for (const door of [...ownBundles.map((name) => [name]), []]) {
  const warm = spawnSync(process.execPath, [join(dist, 'offhost.cjs'), '--warm-cache', ...door], { cwd: dist, env: { ...process.env, HOME: '/home/koder' }, encoding: 'utf8' });
  if (warm.status !== 0) throw new Error(`warming the code cache (${door[0] ?? 'check'}) failed: ${warm.stderr}`);
}
// dist/cold.cjs's cache: written by the loader when a cold command finds none (src/cli/main.ts loads it
// through the loader), holding what that command compiled: a whole `offhost run` on this machine
// (scripts/warm-cold.mjs), so that the package ships a cache with the run's pipeline in it.
{
  let note;
  try {
    note = warmColdCache(dist);
  } catch (err) {
    note = `the cold bundle's warm-up could not run (${err.message.split('\n')[0]})`;
  }
  if (note) console.log(`build: ${note}`);
  // Whatever the warm-up did, the package ships a cache: one cold command writes it when it is missing.
  if (!existsSync(join(dist, 'cold.cjs.cache'))) {
    const warm = spawnSync(process.execPath, [join(dist, 'offhost.cjs'), 'lock', '--help'], { cwd: dist, env: { ...process.env, HOME: '/home/koder' }, encoding: 'utf8' });
    if (warm.status !== 0 || !existsSync(join(dist, 'cold.cjs.cache'))) throw new Error(`warming the code cache (cold.cjs) wrote no dist/cold.cjs.cache: ${warm.stderr}`);
  }
}
