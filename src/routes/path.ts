// Laptop path -> VM path (POLICY R6: the VM sees the monorepo at the same path through a bind mount,
// or somewhere else through NFS or its own clone; the mapping is configuration).
import { ConfigError } from '../errors.js';

function trimTrailingSlashes(p: string): string {
  return p.replace(/\/+$/, '');
}

/**
 * Longest-prefix match on whole path segments: `from` = /home/koder/dev/koder maps
 * /home/koder/dev/koder and /home/koder/dev/koder/x, never /home/koder/dev/koder2. `from` = / maps every
 * absolute path. The rest of the path is kept byte for byte (no normalisation of `..` or `//`: the
 * caller gives an absolute, normalised path). Identity when nothing matches. Ties: the first mapping.
 */
export function mapPath(path: string, mappings: readonly { from: string; to: string }[]): string {
  let best: { from: string; to: string } | null = null;
  for (const m of mappings) {
    if (typeof m.from !== 'string' || m.from === '') throw new ConfigError('path mapping: `from` must be a non-empty path');
    if (typeof m.to !== 'string' || m.to === '') throw new ConfigError('path mapping: `to` must be a non-empty path');
    const from = trimTrailingSlashes(m.from); // '' for '/'
    const matches = from === '' ? path.startsWith('/') : path === from || path.startsWith(`${from}/`);
    if (matches && (best === null || from.length > best.from.length)) best = { from, to: m.to };
  }
  if (best === null) return path;
  const rest = best.from === '' && path === '/' ? '' : path.slice(best.from.length); // '' or '/…'
  const to = trimTrailingSlashes(best.to);
  const out = to + rest;
  return out === '' ? '/' : out;
}
