// A Node built-in module loaded on first use instead of at start-up (node:child_process costs ~0.5 ms,
// node:module itself ~0.25 ms; the hot paths rarely need either). process.getBuiltinModule (Node 20.16+)
// needs no require() at all, from source or bundled; on an older Node 20 the bundles (CommonJS) have theirs.
declare const require: NodeJS.Require;

export function requireBuiltin<T>(name: `node:${string}`): T {
  const get = (process as { getBuiltinModule?: (id: string) => unknown }).getBuiltinModule;
  return (get ? get(name) : require(name)) as T;
}
