'use strict';
// The `offhost` executable: runs the hot bundle (dist/hot.cjs) from V8's code cache when there is one, so
// that the commands run before every agent command start without compiling their code again. The cache
// is written at build time (`--warm-cache`) and rewritten here when V8 rejects it (another Node version);
// a cache that cannot be written (read-only install) only costs speed, never correctness. The hot bundle
// require()s dist/cold.cjs with this file's `require` when a cold command runs.
// Only modules Node has already loaded are required here (node:module alone costs a quarter millisecond).
// Run as a program, this file starts as sh (its first two lines, written by scripts/build.mjs from
// src/cli/launcher.sh.txt; to Node they are a string and a comment): sh moves NODE_EXTRA_CA_CERTS aside
// into OFFHOST_NODE_EXTRA_CA_CERTS and execs Node on this file. With it set, Node 20 reads every
// certificate in it before the first line of offhost (about 40 ms, docs/PERFORMANCE.md); offhost makes
// no TLS connection of its own. It is put back here, before anything is spawned, so that every child (git,
// ssh, rsync, the user's command) gets the environment the user set, unset stays unset and empty empty.
// Run as `node offhost.cjs`, Node has already paid for it, and nothing changes.
if (process.env.OFFHOST_NODE_EXTRA_CA_CERTS !== undefined) {
  if (process.env.NODE_EXTRA_CA_CERTS === undefined) process.env.NODE_EXTRA_CA_CERTS = process.env.OFFHOST_NODE_EXTRA_CA_CERTS;
  delete process.env.OFFHOST_NODE_EXTRA_CA_CERTS;
}
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

const warming = process.argv[2] === '--warm-cache';
// The commands with a bundle of their own (`ownBundle` in src/cli/commands-table.ts): the hook and the
// shell door, which run before every command an agent executes; dist/hook.cjs holds the hook and the
// guard, without the other doors, and dist/shell.cjs the same for the shell door. Every other command
// starts in dist/hot.cjs.
const OWN_BUNDLES = new Set(['hook', 'shell']);
const command = process.argv[warming ? 3 : 2];
const main = OWN_BUNDLES.has(command) ? `${command}.cjs` : 'hot.cjs';
/** Code caches to write when this process exits: missing, rejected by this V8, or being warmed. */
const toWrite = [];
process.once('exit', () => {
  if (toWrite.length === 0) return;
  for (const [script, cacheFile] of toWrite) {
    const tmp = `${cacheFile}.${process.pid}.tmp`;
    try {
      fs.writeFileSync(tmp, script.createCachedData());
      fs.renameSync(tmp, cacheFile);
    } catch {
      // Read-only install (run uncached) or a full disk: leave no half-written file behind.
      try {
        fs.unlinkSync(tmp);
      } catch {
        // never written
      }
    }
  }
  pruneStaleTemps(new Set(toWrite.map(([, cacheFile]) => path.dirname(cacheFile))));
});

/**
 * Removes, in the folders it wrote to, `<file>.cache.<pid>.tmp` files of processes killed while writing (older than a minute, so a
 * writer that is still going keeps its own). Runs only when this process wrote a cache, which is rare.
 */
function pruneStaleTemps(dirs) {
  const old = Date.now() - 60_000;
  for (const dir of dirs) {
    let names;
    try {
      names = fs.readdirSync(dir);
    } catch {
      continue; // an unreadable directory: nothing to prune
    }
    for (const name of names) {
      if (!/\.cache\.\d+\.tmp$/.test(name)) continue;
      const file = path.join(dir, name);
      try {
        if (fs.statSync(file).mtimeMs < old) fs.unlinkSync(file);
      } catch {
        // removed by another process meanwhile
      }
    }
  }
}

/**
 * Runs dist/<name> (written by the build as a CommonJS module function, or wrapped as one with `wrap`) from
 * its code cache, with `req` as its require; returns its exports. The hot bundle loads the program families it needs this way
 * (scripts/lazy-families.mjs), each with its own cache, so that a start deserializes only what it runs.
 */
function loadScript(name, req, { args = [], warm = false, wrap = false } = {}) {
  const file = path.join(__dirname, name);
  const cacheFile = `${file}.cache`;
  const text = fs.readFileSync(file, 'utf8'); // (Node's one-call fast path: quicker than a Buffer read)
  // A plain CommonJS file (dist/cold.cjs, which lint's workers also start on) gets its function wrapper here.
  const source = wrap ? `(function (exports, require, module, __filename, __dirname) {${text}\n})` : text;
  let cachedData;
  try {
    cachedData = fs.readFileSync(cacheFile);
  } catch {
    cachedData = undefined;
  }
  const script = new vm.Script(source, { filename: file, cachedData });
  // A warm-up rewrites its bundle's cache; a program family's cache is written when missing or rejected
  // (the first warm-up writes them all).
  if (cachedData === undefined || script.cachedDataRejected || (warming && warm)) toWrite.push([script, cacheFile]);
  const mod = { exports: {} };
  script.runInThisContext()(mod.exports, req, mod, file, __dirname, ...args);
  return mod.exports;
}

// The hot bundle (or the hook's): its `require` is this file's (same directory).
loadScript(main, require, { args: [loadScript], warm: true });
