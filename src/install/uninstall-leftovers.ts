// What else of offhost's `offhost uninstall` finds besides what init wrote (src/install/uninstall.ts):
//   - the `.git/info/exclude` block the lock views add (src/locks/view.ts: a header line, then one `/path`
//     line per view file) and the view files themselves (read-only copies of refs/offhost/locks, written
//     0444): removed, since with the entries gone git would show them as untracked files;
//   - offhost's caches inside the git directory (`.git/offhost/`, `.git/offhost-snapshot.json`, and the same in
//     each worktree's git directory): removed, caches;
//   - ~/.cache/offhost (the compiled config layers, src/config/layer-cache.ts): removed, a cache (another
//     repository still using offhost rebuilds it at its next call); a folder named by OFFHOST_CACHE_DIR is the
//     user's: only said;
// and what it keeps, saying why: refs/offhost/locks (the lock history is the audit trail POLICY R4 asks
// for: never deleted) and the audit log of refusals and reroutes (an audit trail too; per user, shared by
// every repository), each with the command that removes it for whoever really wants it gone.
import { existsSync, lstatSync, readdirSync, readFileSync, rmSync, rmdirSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { runGitSync } from '../git/run.js';
import { cacheDir } from '../config/layer-cache.js';
import { auditLogPath } from '../adapters/audit-log.js';
import type { Plan } from './agent-settings.js';

/** The header src/locks/view.ts writes above its exclude lines (kept in step with it by the uninstall test). */
export const EXCLUDE_HEAD = '# offhost: read-only views of refs/offhost/locks (docs/LOCKS.md)';

/** The exclude file's new text without offhost's block, and the view paths the block listed. */
export function withoutOffhostExcludes(text: string): { text: string; paths: string[] } | null {
  const lines = text.split('\n');
  const i = lines.indexOf(EXCLUDE_HEAD);
  if (i < 0) return null;
  // Later views are appended at the end, after whatever the user added since: every `/…/lock-*.md` line after the header.
  const paths: string[] = [];
  const keep = lines.filter((l, k) => {
    if (k === i) return false;
    if (k > i && /^\/.+\/lock-[^/]+\.md$/.test(l)) {
      paths.push(l.slice(1));
      return false;
    }
    return true;
  });
  return { text: keep.join('\n'), paths };
}

function gitPath(root: string, what: string, env: NodeJS.ProcessEnv): string | null {
  const r = runGitSync(['rev-parse', '--path-format=absolute', what], { cwd: root, env });
  return r.code === 0 ? r.stdout.toString('utf8').trim() : null;
}

export interface Leftovers {
  plans: Plan[];
  kept: string[];
}

export function planLeftovers(root: string, env: NodeJS.ProcessEnv, show: (p: string) => string, homeShow: (p: string) => string): Leftovers {
  const plans: Plan[] = [];
  const kept: string[] = [];
  const commonDir = gitPath(root, '--git-common-dir', env);
  if (commonDir) {
    const exclude = join(commonDir, 'info', 'exclude');
    let text: string | null = null;
    try {
      text = readFileSync(exclude, 'utf8');
    } catch {
      /* no exclude file */
    }
    const cut = text === null ? null : withoutOffhostExcludes(text);
    if (cut) {
      plans.push({ path: exclude, text: cut.text, what: `${show(exclude)}: removed offhost's entries (${cut.paths.length} lock view${cut.paths.length === 1 ? '' : 's'})` });
      for (const p of cut.paths) {
        const abs = join(root, p);
        let st;
        try {
          st = lstatSync(abs);
        } catch {
          continue;
        }
        // A view offhost wrote is a regular file left read-only; anything else there is not ours to delete.
        if (st.isFile() && (st.mode & 0o222) === 0) {
          plans.push({ path: abs, text: null, what: `${show(abs)}: removed (a read-only view of refs/offhost/locks)`, apply: () => removeWithEmptyParents(abs, root) });
        } else kept.push(`not touched: ${show(abs)} (listed as a lock view, but it is not offhost's read-only file: edited by hand?)`);
      }
    }
    // offhost's caches inside the git directory (never seen by git or the tree): the repository's (store id,
    // private temporary files) and each checkout's (index snapshot, hash caches, the view's tracked paths, the
    // git-mode snapshot record), for this checkout and every worktree of it. Caches: the next run rebuilds them.
    const gitDirs = [commonDir];
    try {
      for (const name of readdirSync(join(commonDir, 'worktrees'))) gitDirs.push(join(commonDir, 'worktrees', name));
    } catch {
      /* no worktrees */
    }
    for (const g of gitDirs) {
      for (const [p, what] of [
        [join(g, 'offhost'), "offhost's caches of this checkout and repository (index snapshot, hashes, store id): the next run rebuilds them"],
        [join(g, 'offhost-snapshot.json'), "offhost's record of the last git-mode snapshot: a cache"],
      ] as const) {
        if (!existsSync(p)) continue;
        plans.push({ path: p, text: null, what: `${show(p)}: removed (${what})`, apply: () => rmSync(p, { recursive: true, force: true }) });
      }
    }
    const locks = runGitSync(['rev-parse', '--verify', '--quiet', 'refs/offhost/locks'], { cwd: root, env });
    if (locks.code === 0) kept.push('kept: refs/offhost/locks (the history of every VM lock: the audit trail the policy keeps, R4 "never delete a lock"); `git update-ref -d refs/offhost/locks` removes it (and its remote copy, if pushed: `git push origin :refs/offhost/locks`)');
  }
  const cache = cacheDir(env);
  if (cache && existsSync(cache)) {
    if (env.OFFHOST_CACHE_DIR) kept.push(`not touched: ${homeShow(cache)} (OFFHOST_CACHE_DIR: your folder; offhost's compiled-config cache is in it)`);
    else plans.push({ path: cache, text: null, what: `${homeShow(cache)}: removed (offhost's compiled-config cache, per user: a repository still using offhost rebuilds it)`, apply: () => rmSync(cache, { recursive: true, force: true }) });
  }
  let audit: string | null = null;
  try {
    audit = auditLogPath(env);
  } catch {
    audit = null;
  }
  if (audit && existsSync(audit)) {
    const size = statSync(audit).size;
    kept.push(`kept: ${homeShow(audit)} (${size} bytes: the audit log of what offhost refused and rerouted, per user and shared by every repository; an audit trail, so it is not deleted for you): \`rm ${homeShow(audit)}*\` removes it and its rotations`);
  }
  return { plans, kept };
}

/** Removes a file, then its folders up to (not including) `stop` while they are empty. */
export function removeWithEmptyParents(file: string, stop: string): void {
  rmSync(file, { force: true });
  for (let d = dirname(file); d !== stop && relative(stop, d) !== '' && !relative(stop, d).startsWith('..'); d = dirname(d)) {
    try {
      rmdirSync(d);
    } catch {
      return;
    }
  }
}
