// The config/pack loader (yaml + zod + picomatch). The bundle replaces this module with one that
// require()s dist/config-loader.cjs on first use, so that start-up without a config file never
// evaluates those libraries (see scripts/build.mjs).
export { loadLayer } from './pack.js';
export { builtinLayerFromSource } from './builtin-source.js';
