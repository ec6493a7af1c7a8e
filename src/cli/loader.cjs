'use strict';
// The `offhost` executable: runs the hot bundle (dist/hot.cjs) from V8's code cache when there is one, so
// that the commands run before every agent command start without compiling their code again. The cache
// is written at build time (`--warm-cache`) and rewritten here when V8 rejects it (another Node version);
// a cache that cannot be written (read-only install) only costs speed, never correctness. The hot bundle
// require()s a cold command's file (dist/commands/<name>.cjs) with this file's `require`.
// Only modules Node has already loaded are required here (node:module alone costs a quarter millisecond).
const fs = require('node:fs');
const path = require('node:path');
const vm = require('node:vm');

// V8's baseline compiler (Sparkplug) compiles, on the main thread, the functions a process calls a few
// times: in a process that lives a few milliseconds that is pure cost (measured: 1.5-1.9 ms of a hook
// call, a quarter of offhost's whole overhead). It is turned off before anything of offhost is compiled,
// so that the code caches are written and read under the same flags; TurboFan still optimizes what runs
// long (lint, ci). process.binding('v8') is the flag setter without loading node:v8 (1.5 ms); it is a
// documented deprecation whose warning is silenced here. Measured on Node 20; applied on 20, 22 and 24,
// whose V8s have the same flag; elsewhere nothing is changed (and a failure here only costs speed).
if (/^v(20|22|24)\./.test(process.version)) {
  const quiet = process.noDeprecation;
  process.noDeprecation = true;
  try {
    process.binding('v8').setFlagsFromString('--no-sparkplug');
  } catch {
    // A Node without it: only speed is lost.
  } finally {
    process.noDeprecation = quiet;
  }
}

const file = path.join(__dirname, 'hot.cjs');
const cacheFile = `${file}.cache`;
const warming = process.argv[2] === '--warm-cache';
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
