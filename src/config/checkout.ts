// Which checkout of the monorepo a directory is in (issue 20): found by what a checkout is, not where it
// lives. A command's checkout is the nearest directory above its physical working directory that
//   - is the configured `root` or one of `roots:` (the canonical checkout POLICY R6 names, and any the user
//     lists: guarded whatever they hold, even before they exist), or
//   - holds one of the `markers` (built-in: `engines/lang/koda`, the Koda engine's folder).
// So the canonical checkout, a worktree inside it (`.claude/worktrees/NAME`: its own top holds the marker,
// and it is nearer than the outer checkout), a worktree beside it, a second clone, a bare repository's
// worktrees, a copy and a symlink to any of them (physical paths) are all found, with no git process and
// no read of `.git` on the hot path: one existence test per ancestor and marker.
//
// The rules are written once, against `{root}`: a command in another checkout is also judged as the same
// place under `{root}` (its *rule-space* directory, SimpleCommand.ruleCwd), so `{koda}/**` matches
// `<any checkout>/engines/lang/koda`. Its own directory stays what it is: the scripts it runs are read
// there, and the VM is sent there (never to the canonical checkout's files).
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { isUnderPath, physicalPath } from './physical-paths.js';

/** What decides which checkouts are the monorepo's (src/config/resolve.ts ResolvedConfig has these). */
export interface CheckoutIdentity {
  root: string | null;
  roots: string[];
  markers: string[];
}

export interface MonorepoCheckout {
  /** The checkout's top directory (physical). */
  top: string;
  /** Why it is the monorepo's: it is `root`, it is listed in `roots:`, or it holds a marker. */
  why: 'root' | 'roots' | 'marker';
  /** The marker it holds (why = marker). */
  marker?: string;
}

/** A directory's rule-space spelling: the same place under `{root}`, when it is in another checkout. */
export type RuleSpace = (dir: string) => string | undefined;

/**
 * A finder of the monorepo checkout holding a directory: `find(dir)` gives it, or null. `dir` is absolute;
 * `physical` resolves symlinks (the guard passes its memoised one: the roots are resolved once per finder,
 * and a directory the guard has already resolved costs nothing more); `exists` tests a marker (the disk).
 */
export function checkoutFinder(id: CheckoutIdentity, physical: (p: string) => string = physicalPath, exists: (p: string) => boolean = existsSync): (dir: string) => MonorepoCheckout | null {
  let listed: Map<string, 'root' | 'roots'> | null = null;
  return (dir) => {
    if (listed === null) {
      listed = new Map();
      if (id.root !== null) listed.set(physical(id.root), 'root');
      for (const r of id.roots) if (!listed.has(physical(r))) listed.set(physical(r), 'roots');
    }
    let a = physical(dir);
    for (;;) {
      const why = listed.get(a);
      if (why) return { top: a, why };
      for (const m of id.markers) if (exists(a === '/' ? `/${m}` : `${a}/${m}`)) return { top: a, why: 'marker', marker: m };
      const up = dirname(a);
      if (up === a) return null;
      a = up;
    }
  };
}

/** The monorepo checkout holding `dir` (absolute), or null: checkoutFinder for one directory. */
export function monorepoCheckoutOf(dir: string, id: CheckoutIdentity, physical: (p: string) => string = physicalPath, exists: (p: string) => boolean = existsSync): MonorepoCheckout | null {
  return checkoutFinder(id, physical, exists)(dir);
}

/**
 * The rule-space directory of each directory judged (memoised: a hook or shell process judges few): for a
 * directory in a monorepo checkout other than `root`, the same place under `root`; otherwise undefined
 * (the directory is already in the rules' terms, or in no checkout of the monorepo).
 */
export function makeRuleSpace(id: CheckoutIdentity, physical: (p: string) => string = physicalPath, exists: (p: string) => boolean = existsSync): RuleSpace {
  if (id.root === null) return () => undefined;
  const root = id.root;
  const find = checkoutFinder(id, physical, exists);
  const cache = new Map<string, string | undefined>();
  return (dir) => {
    if (cache.has(dir)) return cache.get(dir);
    const c = find(dir);
    let out: string | undefined;
    if (c !== null && c.why !== 'root') {
      const p = physical(dir);
      out = root + (c.top === '/' ? p : p.slice(c.top.length));
    }
    if (cache.size > 1000) cache.clear();
    cache.set(dir, out);
    return out;
  };
}

/** What git says a directory's top level is, read from `.git` itself (no git process): for reports. */
export interface GitCheckout {
  /** The worktree's top directory (physical). */
  top: string;
  kind: 'main worktree' | 'linked worktree' | 'submodule';
  /** The repository's own git directory (for a linked worktree: the main one's, whose worktrees share one lock store). */
  commonDir: string;
  /** For a linked worktree: its main worktree's top, or null when the repository is bare. */
  mainTop?: string | null;
}

function readGitFile(file: string): string | null {
  try {
    const m = /^gitdir: (.+)$/m.exec(readFileSync(file, 'utf8'));
    return m ? m[1]!.trim() : null;
  } catch {
    return null;
  }
}

/** The git worktree holding `dir`: the nearest `.git` directory or file above its physical path. */
export function gitCheckoutOf(dir: string): GitCheckout | null {
  let a = physicalPath(dir);
  for (;;) {
    const dotGit = join(a, '.git');
    const st = statSync(dotGit, { throwIfNoEntry: false });
    if (st?.isDirectory()) return { top: a, kind: 'main worktree', commonDir: dotGit };
    if (st?.isFile()) {
      const target = readGitFile(dotGit);
      if (target !== null) {
        const gitDir = isAbsolute(target) ? target : resolve(a, target);
        let common = gitDir;
        try {
          common = resolve(gitDir, readFileSync(join(gitDir, 'commondir'), 'utf8').trim());
        } catch {
          /* no commondir: a submodule, or an old layout */
        }
        if (common === gitDir) return { top: a, kind: 'submodule', commonDir: gitDir };
        // The main worktree is the common dir's parent, unless the repository is bare (core.bare, or no .git name).
        const bare = !common.endsWith('/.git') || /^\s*bare\s*=\s*true\s*$/m.test(safeRead(join(common, 'config')));
        return { top: a, kind: 'linked worktree', commonDir: common, mainTop: bare ? null : dirname(common) };
      }
    }
    const up = dirname(a);
    if (up === a) return null;
    a = up;
  }
}

function safeRead(f: string): string {
  try {
    return readFileSync(f, 'utf8');
  } catch {
    return '';
  }
}

/** The `origin` (else first) remote URL of a git directory's config, or null: for reports. */
export function remoteUrlOf(commonDir: string): string | null {
  const text = safeRead(join(commonDir, 'config'));
  const urls: { name: string; url: string }[] = [];
  let remote: string | null = null;
  for (const line of text.split('\n')) {
    const section = /^\s*\[\s*remote\s+"([^"]*)"\s*\]/.exec(line);
    if (section) remote = section[1]!;
    else if (/^\s*\[/.test(line)) remote = null;
    else if (remote !== null) {
      const m = /^\s*url\s*=\s*(.+?)\s*$/.exec(line);
      if (m) urls.push({ name: remote, url: m[1]! });
    }
  }
  return (urls.find((u) => u.name === 'origin') ?? urls[0])?.url ?? null;
}

export { isUnderPath };
