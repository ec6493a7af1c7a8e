'use strict';
// The `offhost` executable: runs the hot bundle (dist/hot.cjs) from V8's code cache when there is one,
// so that the command run before every agent command starts without compiling its code again. The cache
// is written at build time (`--warm-cache`) and rewritten here when V8 rejects it (another Node version);
// a cache that cannot be written (read-only install) only costs speed, never correctness.
const fs = require('node:fs');
const path = require('node:path');
const vm = require('node:vm');
const Module = require('node:module');
const { pathToFileURL } = require('node:url');

const file = path.join(__dirname, 'hot.cjs');
const cacheFile = path.join(__dirname, 'hot.cjs.cache');
const source = fs.readFileSync(file, 'utf8');
let cachedData;
try {
  cachedData = fs.readFileSync(cacheFile);
} catch {
  cachedData = undefined;
}
const script = new vm.Script(Module.wrap(source), { filename: file, cachedData });
// Cold subcommands are ES modules (dist/commands/*.mjs); code in a vm.Script cannot import() by itself.
globalThis.__offhostImport = (name) => import(pathToFileURL(path.join(__dirname, 'commands', `${name}.mjs`)).href);
if (cachedData === undefined || script.cachedDataRejected || process.argv[2] === '--warm-cache') {
  process.once('exit', () => {
    try {
      const tmp = `${cacheFile}.${process.pid}.tmp`;
      fs.writeFileSync(tmp, script.createCachedData());
      fs.renameSync(tmp, cacheFile);
    } catch {
      // Read-only install: run uncached.
    }
  });
}
const mod = { exports: {} };
script.runInThisContext()(mod.exports, Module.createRequire(file), mod, file, __dirname);
