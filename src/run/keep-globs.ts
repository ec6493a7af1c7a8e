// The `keep:` globs of a VM (what `offhost run --clean` keeps in the VM's copy: ./ignored.ts), checked
// by the config schema: no dependency here, so the config loader takes nothing else with it.

/**
 * Kept by `--clean` unless the VM's `keep:` says otherwise (a list replaces this one): dependency caches
 * a build fills from a lock file, never build outputs (`build/`, `target/`, `*.o` go).
 */
export const DEFAULT_KEEP = ['node_modules', '.venv', '.gradle', '.dart_tool', '.pub-cache'] as const;

/**
 * Why a `keep:` glob is refused, or null. A glob without `/` names a file or directory anywhere (find
 * -name); one with `/` is a path from the tree's root (find -path, where `*` also matches `/`). Never
 * absolute, never `..`: nothing outside the VM's copy can be named.
 */
export function keepGlobProblem(glob: string): string | null {
  if (glob === '') return 'a keep glob is not empty';
  if (/[\0\n\r]/.test(glob)) return 'a keep glob holds no NUL or line break';
  if (glob.startsWith('/')) return 'a keep glob is relative to the VM copy\'s root (no leading /)';
  if (glob.endsWith('/')) return 'a keep glob names a path without a trailing / (a directory it names is kept whole)';
  const segs = glob.split('/');
  if (segs.some((s) => s === '..' || s === '.' || s === '')) return 'a keep glob has no ., .. or empty path segment';
  return null;
}

