'use strict';
// The `offhost` executable: runs a hot bundle from V8's code cache when there is one: dist/hook.cjs for
// `offhost hook …` (the agent hook, nothing else in it), dist/hot.cjs for everything else,
// so that the command run before every agent command starts without compiling its code again. The cache
// is written at build time (`--warm-cache`) and rewritten here when V8 rejects it (another Node version);
// a cache that cannot be written (read-only install) only costs speed, never correctness.
// Only modules Node has already loaded are required here (node:module alone costs a quarter millisecond).
const fs = require('node:fs');
const path = require('node:path');
const vm = require('node:vm');

const hookOnly = process.argv[2] === 'hook';
const file = path.join(__dirname, hookOnly ? 'hook.cjs' : 'hot.cjs');
const cacheFile = `${file}.cache`;
const warming = process.argv[hookOnly ? 3 : 2] === '--warm-cache';
const source = fs.readFileSync(file, 'utf8'); // (Node's one-call fast path: quicker than a Buffer read)
let cachedData;
try {
  cachedData = fs.readFileSync(cacheFile);
} catch {
  cachedData = undefined;
}
// The bundle is written as a CommonJS module function (scripts/build.mjs); its `require` is this file's
// (same directory).
const script = new vm.Script(source, { filename: file, cachedData });
// Cold subcommands are ES modules (dist/commands/*.mjs); code in a vm.Script cannot import() by itself.
globalThis.__offhostImport = (name) => import(require('node:url').pathToFileURL(path.join(__dirname, 'commands', `${name}.mjs`)).href);
if (cachedData === undefined || script.cachedDataRejected || warming) {
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
script.runInThisContext()(mod.exports, require, mod, file, __dirname);
