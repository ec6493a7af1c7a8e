// The built-in rule pack as a Layer: compiled and self-tested by the build (embedded in the hot bundle,
// dist/builtin-pack.json for the cold one); read from rules/builtin.yaml when running from source.
import type { Layer } from './resolve.js';
import { builtinLayerFromSource } from './layer-loader.js';

declare const __OFFHOST_BUILTIN__: Layer | undefined;

let builtinCache: Layer | null = null;
export function builtinLayer(): Layer {
  builtinCache ??= typeof __OFFHOST_BUILTIN__ !== 'undefined' ? __OFFHOST_BUILTIN__ : builtinLayerFromSource();
  return builtinCache;
}
