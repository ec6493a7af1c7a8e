// Physical paths at the edge: every door judges the same directory however it was reached.
//
// A symlinked monorepo (~/dev/koder -> /data/koder), a symlink to the engine, the physical path an agent
// reports (agents send getcwd()), the logical $PWD a shell snippet sends: each names one directory, so each
// must get one verdict. The guard turns every directory it judges into its *canonical* spelling: the
// physical path (symlinks resolved), then written back in the spelling the configuration uses when it lies
// under a configured directory (root, `paths`, path mappings, home). Rules (`{koda}/**`) and path mappings
// (laptop path -> VM path, R6) are written in the configuration's spelling, so they apply unchanged, and the
// VM is handed the path it knows (the configured one), never the laptop's physical disk layout.
import { realpathSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type { GuardConfig } from '../policy/guard.js';
import { diskCaseFs, diskCaseRule, foldCase, storedSpelling, type CaseFs, type CaseRule } from '../policy/case-rule.js';

/** The physical path of an absolute path: symlinks resolved; a missing tail is kept as written. */
export function physicalPath(p: string): string {
  const abs = resolve(p);
  let head = abs;
  let tail = '';
  for (;;) {
    try {
      const real = realpathSync.native(head);
      return tail === '' ? real : real === '/' ? `/${tail}` : `${real}/${tail}`;
    } catch {
      const up = dirname(head);
      if (up === head) return abs;
      const name = head.slice(up === '/' ? 1 : up.length + 1);
      tail = tail === '' ? name : `${name}/${tail}`;
      head = up;
    }
  }
}

/** physicalPath, remembered for the lifetime of one guard (a hook or shell process judges few directories). */
export function memoPhysical(): (p: string) => string {
  const seen = new Map<string, string>();
  return (p) => {
    let r = seen.get(p);
    if (r === undefined) {
      r = physicalPath(p);
      if (seen.size < 1000) seen.set(p, r);
    }
    return r;
  };
}

export type Canonicalize = (dir: string) => string;

/**
 * `p` is `dir` or lies under it. The one comparison of paths the guard's directories go through (a
 * case-insensitive file system would change it here, and only here).
 */
export function isUnderPath(p: string, dir: string): boolean {
  return p === dir || p.startsWith(dir === '/' ? '/' : `${dir}/`);
}
const under = isUnderPath;

/** How a canonicalizer learns a volume's case rule and the names stored on it (the disk by default). */
export interface CaseAccess {
  rule: (dir: string) => CaseRule;
  fs: CaseFs;
}
const diskCase: CaseAccess = { rule: diskCaseRule, fs: diskCaseFs };

/**
 * The canonical spelling of a directory for `config`: physical, then mapped back to the configured
 * directory it lies under (the longest one). Cached: a hook or shell process judges few directories.
 * On a case-insensitive volume (src/policy/case-rule.ts) `under` compares folded: a configured directory
 * reached in another case (`~/dev/Koder/Engines/Lang/Koda`) is written in the configuration's spelling,
 * and the names below it in the spelling stored on disk (the one a VM's copy has).
 */
export function makeCanonicalizer(
  config: Pick<GuardConfig, 'root' | 'home' | 'vars' | 'pathMap' | 'routes'>,
  physical: (p: string) => string = physicalPath,
  caseAccess: CaseAccess = diskCase,
): Canonicalize {
  const configured = new Set<string>();
  if (config.root) configured.add(config.root);
  if (config.home) configured.add(config.home);
  for (const v of Object.values(config.vars)) if (v.startsWith('/')) configured.add(v);
  for (const m of config.pathMap) if (m.from.startsWith('/')) configured.add(m.from);
  for (const r of config.routes.values()) for (const m of r.pathMap) if (m.from.startsWith('/')) configured.add(m.from);
  let pairs: { physical: string; spelled: string }[] | null = null;
  let allPairs: { physical: string; folded: string; spelled: string }[] | null = null;
  const getPairs = () => {
    if (pairs) return pairs;
    pairs = [];
    allPairs = [];
    for (const d of configured) {
      const p = physical(d);
      if (p !== d) pairs.push({ physical: p, spelled: d });
      allPairs.push({ physical: p, folded: foldCase(p), spelled: d });
    }
    // The longest physical prefix first: the most specific configured directory wins.
    pairs.sort((a, b) => b.physical.length - a.physical.length);
    allPairs.sort((a, b) => b.physical.length - a.physical.length);
    return pairs;
  };
  const cache = new Map<string, string>();
  return (dir) => {
    const hit = cache.get(dir);
    if (hit !== undefined) return hit;
    const p = physical(dir);
    let out = p;
    if (caseAccess.rule(p) === 'insensitive') out = respell(p);
    else {
      for (const pair of getPairs()) {
        if (under(p, pair.physical)) {
          out = pair.spelled + p.slice(pair.physical.length);
          break;
        }
      }
    }
    if (cache.size > 1000) cache.clear();
    cache.set(dir, out);
    return out;
  };

  /** A physical path on a case-insensitive volume: the configured directory's spelling, then the stored one. */
  function respell(p: string): string {
    getPairs();
    const f = foldCase(p);
    for (const pair of allPairs!) {
      if (under(f, pair.folded)) return storedSpelling(pair.spelled + p.slice(pair.physical.length), pair.spelled.length, caseAccess.fs);
    }
    return storedSpelling(p, 0, caseAccess.fs);
  }
}
