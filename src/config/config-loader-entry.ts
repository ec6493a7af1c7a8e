// Entry of dist/config-loader.cjs: what the bundle require()s when a config file exists.
export { loadLayer, layerFromText } from './pack.js';
