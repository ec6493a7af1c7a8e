// offhost's version: package.json's, the one home of it. The build defines __OFFHOST_VERSION__ from
// package.json; from source (tests) package.json is read as a module (esbuild drops this branch).
declare const __OFFHOST_VERSION__: string | undefined;

export const VERSION: string =
  typeof __OFFHOST_VERSION__ !== 'undefined' ? __OFFHOST_VERSION__ : ((await import('../package.json', { with: { type: 'json' } })).default as { version: string }).version;
