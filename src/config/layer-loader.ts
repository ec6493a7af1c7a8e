// The config/pack loader (yaml + zod + picomatch), loaded on first use so that start-up without a
// config file never evaluates those libraries. From source it is imported as a module; in the bundles
// (__OFFHOST_BUNDLE__ defined) it is dist/config-loader.cjs, require()d by path on first use, and esbuild
// drops the source branch (scripts/build.mjs checks that the hot bundle contains no yaml, zod or commander).
declare const __OFFHOST_BUNDLE__: 'hot' | 'cold' | undefined;
declare const require: NodeJS.Require;
declare const __dirname: string;

type LoaderModule = typeof import('./pack.js') & Partial<typeof import('./builtin-source.js')>;

const fromSource: LoaderModule | null =
  typeof __OFFHOST_BUNDLE__ === 'undefined' ? { ...(await import('./pack.js')), ...(await import('./builtin-source.js')) } : null;
let bundled: LoaderModule | null = null;

function loader(): LoaderModule {
  if (fromSource) return fromSource;
  bundled ??= require(`${__dirname}/config-loader.cjs`) as LoaderModule;
  return bundled;
}

export function layerFromText(file: string, text: string): ReturnType<LoaderModule['layerFromText']> {
  return loader().layerFromText(file, text);
}

export function loadLayer(file: string): ReturnType<LoaderModule['loadLayer']> {
  return loader().loadLayer(file);
}

/** The built-in pack read from rules/builtin.yaml (from source only: the bundles embed it compiled). */
export function builtinLayerFromSource(): ReturnType<NonNullable<LoaderModule['builtinLayerFromSource']>> {
  const f = loader().builtinLayerFromSource;
  if (!f) throw new Error('the built-in pack is compiled into the bundle');
  return f();
}
