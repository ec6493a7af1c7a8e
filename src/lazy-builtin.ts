// A Node built-in module loaded on first use instead of at start-up (node:child_process costs ~0.5 ms,
// node:module itself ~0.25 ms; the hot paths rarely need either). The hot bundles swap this module for
// one that calls their CommonJS `require` directly (scripts/build.mjs), so node:module is not loaded there.
import { createRequire } from 'node:module';

let req: NodeJS.Require | undefined;

export function requireBuiltin<T>(name: `node:${string}`): T {
  req ??= createRequire(import.meta.url);
  return req(name) as T;
}
