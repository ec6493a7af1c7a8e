// offhost's version: package.json's, the one home of it. The build defines __OFFHOST_VERSION__ from
// package.json; from source (tests) package.json is read as a module (esbuild drops this branch).
declare const __OFFHOST_VERSION__: string | undefined;

export const VERSION: string =
  typeof __OFFHOST_VERSION__ !== 'undefined' ? __OFFHOST_VERSION__ : ((await import('../package.json', { with: { type: 'json' } })).default as { version: string }).version;

declare const __OFFHOST_BUILD_ID__: string | undefined;
/**
 * Which build this is: a hash of the sources and the rule pack, defined by scripts/build.mjs; null when
 * running from source. What offhost keeps on disk between runs (compiled config layers) is keyed by it,
 * so a rebuild with the same version number never reads what another build compiled.
 */
export const BUILD_ID: string | null = typeof __OFFHOST_BUILD_ID__ !== 'undefined' ? __OFFHOST_BUILD_ID__ : null;
