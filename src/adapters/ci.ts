// `offhost ci`: the pull-request policy check. Two parts, one list of findings:
//
// 1. Lock hygiene, commit by commit. Every commit in `base..head` (all of them, oldest first in
//    topological order: commits brought in from other branches that are not in base are part of the pull
//    request too) is checked as `offhost lint --staged` would have checked it: its lock transition (parent
//    -> commit) through `transitionFindings`, with CI's severity for time-dependent findings (`error`).
//    Each transition is judged at the instant the commit was made (its committer time, capped at CI's
//    clock): liveness of a replaced lock and expiry of an added one are facts of that moment, and judging
//    an old commit at CI time would flag every lock a pull request correctly took and released once its
//    ttl has passed, and would miss a steal of a lock that has expired since. CI's clock is the reference
//    for the state at head (below), where it decides.
//    Merge commits: only the lock changes the merge itself makes (paths whose content differs from every
//    parent: conflict resolutions, "evil" merges) are checked, against the first parent; changes that come
//    cleanly from a parent were checked in that parent's own commits (or are in base already).
// 2. The state at head, judged at CI's clock (`--now`): every active VM lock the pull request touches
//    (`--all-locks`: every active VM lock) must parse, match its file name, not be in the future and not
//    have expired. A finding at head replaces the same rule's finding for the same file in the commits.
// 3. Heavy commands the pull request writes: lines added in `merge-base(base, head)..head`, scanned in the
//    files `Scanner` knows, classified as on a laptop.
//
// Git is driven in batches: one `rev-list`, one `diff-tree --stdin` for every commit's lock changes, one
// `ls-tree` per parent outside the range (normally one), one `diff --raw` and one `diff -U0` for the scan,
// and one `cat-file --batch` per phase for every blob: the process count does not grow with the commits or
// the files.
import { GitError } from '../errors.js';
import { catFileInput, EMPTY_TREE, parseCatFileBatch, parseRawEntries, splitZ, type RawChange } from '../git/plumbing.js';
import { runGitSync } from '../git/run.js';
import { lintLockContent } from '../locks/lint.js';
import { classifyPath, DEFAULT_NOTICES_DIR } from '../locks/paths.js';
import { transitionFindings } from '../locks/transition.js';
import type { Finding } from '../types.js';
import type { Scanner } from './scan.js';

export interface CiOptions {
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** null: every commit reachable from head (the lock ref's whole history). */
  base: string | null;
  head?: string;
  /** Check the state at head too (default true; off for the lock ref, where expired locks await gc). */
  checkHead?: boolean;
  /** CI's clock. */
  now: Date;
  noticesDir?: string;
  skewSeconds?: number;
  /** Check every active lock at head, not only those the pull request touches. */
  allLocks?: boolean;
  /** The heavy-command scanner; null skips the scan. */
  scanner: Scanner | null;
}

export interface CiResult {
  root: string;
  base: string;
  head: string;
  mergeBase: string;
  commits: number;
  findings: Finding[];
  stats: { lockChanges: number; scannedFiles: number; gitProcesses: number };
}

const ZERO = /^0+$/;

class Git {
  processes = 0;
  constructor(
    readonly cwd: string,
    private readonly env: NodeJS.ProcessEnv,
  ) {}

  run(args: string[], input?: string | Buffer): { code: number; stdout: Buffer; stderr: string } {
    this.processes++;
    return runGitSync(args, { cwd: this.cwd, env: this.env, extra: { GIT_LITERAL_PATHSPECS: '1' }, input: input ?? '' });
  }

  ok(args: string[], input?: string | Buffer): Buffer {
    const r = this.run(args, input);
    if (r.code !== 0) throw new GitError(`git ${args[0]} failed: ${r.stderr.trim().split('\n')[0] || `exit ${r.code}`}`);
    return r.stdout;
  }

  /** Contents of many blobs with one `cat-file --batch`. */
  blobs(ids: Iterable<string>): Map<string, string> {
    const want = [...new Set([...ids].filter((id) => !ZERO.test(id)))];
    const out = new Map<string, string>();
    if (!want.length) return out;
    const { asked, input } = catFileInput(want);
    for (const [id, b] of parseCatFileBatch(this.ok(['cat-file', '--batch'], input), asked)) out.set(id, b.data.toString('utf8'));
    return out;
  }
}

const rawEntries = parseRawEntries;

export function resolveCommit(git: Git, ref: string, what: string): string {
  if (ref.startsWith('-')) throw new GitError(`bad ${what} '${ref}'`);
  const r = git.run(['rev-parse', '--verify', '--quiet', '--end-of-options', `${ref}^{commit}`]);
  if (r.code !== 0) {
    const shallow = git.run(['rev-parse', '--is-shallow-repository']).stdout.toString().trim() === 'true';
    throw new GitError(
      `bad ${what} '${ref}': not a commit in this repository${shallow ? ' (the clone is shallow: fetch the base, e.g. actions/checkout with fetch-depth: 0)' : ''}`,
    );
  }
  return r.stdout.toString('utf8').trim();
}

export function openGit(cwd: string, env: NodeJS.ProcessEnv): { git: Git; root: string } {
  const probe = new Git(cwd, env);
  const r = probe.run(['rev-parse', '--show-toplevel']);
  if (r.code !== 0) throw new GitError(`${cwd} is not inside a git repository (${r.stderr.trim().split('\n')[0] || 'git rev-parse failed'})`);
  const root = r.stdout.toString('utf8').trim();
  const git = new Git(root, env);
  git.processes = probe.processes;
  return { git, root };
}

export function runCi(opts: CiOptions): CiResult {
  const { git, root } = openGit(opts.cwd, opts.env);
  const notices = (opts.noticesDir ?? DEFAULT_NOTICES_DIR).replace(/\/+$/, '');
  const base = opts.base === null ? null : resolveCommit(git, opts.base, 'base');
  const head = resolveCommit(git, opts.head ?? 'HEAD', 'head');
  const mb = base === null ? null : git.run(['merge-base', base, head]);
  if (mb && mb.code !== 0) throw new GitError(`base ${opts.base} and head ${opts.head ?? 'HEAD'} have no common ancestor`);
  const mergeBase = mb ? mb.stdout.toString('utf8').trim() : EMPTY_TREE;
  const findings: Finding[] = [];
  const ctxBase = { severityForTime: 'error' as const, noticesDir: notices, ...(opts.skewSeconds === undefined ? {} : { skewSeconds: opts.skewSeconds }) };

  // --- 1. commits, oldest first ---------------------------------------------------------------------
  const log = splitZ(git.ok(['log', '-z', '--reverse', '--topo-order', '--format=%H %P%x1f%ct', base === null ? head : `${base}..${head}`, '--']));
  const commits = log.map((rec) => {
    const [ids, ct] = rec.split('\u001f');
    const [sha, ...parents] = ids!.trim().split(' ').filter(Boolean);
    return { sha: sha!, parents, time: new Date(Number(ct) * 1000) };
  });

  // Lock changes of every (commit, parent) pair with one diff-tree.
  const pairs: { sha: string; parent: string | null }[] = [];
  for (const c of commits) {
    if (c.parents.length === 0) pairs.push({ sha: c.sha, parent: null });
    for (const p of c.parents) pairs.push({ sha: c.sha, parent: p });
  }
  const diffs = new Map<string, RawChange[]>(); // `${sha} ${parent}` -> changes
  if (pairs.length) {
    const input = pairs.map((p) => (p.parent ? `${p.sha} ${p.parent}` : p.sha)).join('\n') + '\n';
    const tokens = splitZ(git.ok(['diff-tree', '--stdin', '-r', '-z', '--raw', '--no-renames', '--root', '--always', '--no-abbrev', '--', notices], input));
    let i = 0;
    for (const p of pairs) {
      if (tokens[i] !== p.sha) throw new GitError(`unexpected diff-tree output at ${p.sha}`);
      const { changes, next } = rawEntries(tokens, i + 1);
      diffs.set(`${p.sha} ${p.parent ?? ''}`, changes);
      i = next;
    }
  }

  const inRange = new Set(commits.map((c) => c.sha));
  const isState = (path: string) => {
    const k = classifyPath(path, notices).kind;
    return k === 'active' || k === 'component';
  };
  // Lock state (active + component locks: path -> blob id) of the parents outside the range.
  const states = new Map<string, Map<string, string>>();
  const outside = [...new Set(commits.flatMap((c) => c.parents).filter((p) => !inRange.has(p)))];
  for (const p of outside) {
    const tokens = splitZ(git.ok(['ls-tree', '-r', '-z', '--full-tree', p, '--', `${notices}/vm-active`, `${notices}/active`]));
    const m = new Map<string, string>();
    for (const t of tokens) {
      const tab = t.indexOf('\t');
      const [, type, id] = t.slice(0, tab).split(' ');
      const path = t.slice(tab + 1);
      if (type === 'blob' && isState(path)) m.set(path, id!);
    }
    states.set(p, m);
  }
  // Every blob the transitions need, in one cat-file.
  const ids = new Set<string>();
  for (const m of states.values()) for (const id of m.values()) ids.add(id);
  let lockChanges = 0;
  for (const ch of diffs.values()) {
    for (const c of ch) {
      if (classifyPath(c.path, notices).kind === 'other') continue;
      lockChanges++;
      ids.add(c.oldId);
      ids.add(c.newId);
    }
  }
  const text = git.blobs(ids);
  const content = (id: string | undefined) => (id === undefined || ZERO.test(id) ? undefined : text.get(id));

  // Children count, to drop states no longer needed.
  const pending = new Map<string, number>();
  for (const c of commits) for (const p of c.parents) pending.set(p, (pending.get(p) ?? 0) + 1);
  const transitionFound: Finding[] = [];
  for (const c of commits) {
    const p1 = c.parents[0] ?? null;
    const parentState = p1 ? states.get(p1) ?? new Map<string, string>() : new Map<string, string>();
    const first = diffs.get(`${c.sha} ${p1 ?? ''}`) ?? [];
    // Paths the commit itself changes: for a merge, those that differ from every parent.
    let effective = first.filter((x) => classifyPath(x.path, notices).kind !== 'other');
    if (c.parents.length > 1) {
      const others = c.parents.slice(1).map((p) => new Set((diffs.get(`${c.sha} ${p}`) ?? []).map((x) => x.path)));
      effective = effective.filter((x) => others.every((s) => s.has(x.path)));
    }
    // The commit's own state (all changes against the first parent).
    const state = new Map(parentState);
    for (const x of first) {
      if (!isState(x.path)) continue;
      if (ZERO.test(x.newId)) state.delete(x.path);
      else state.set(x.path, x.newId);
    }
    states.set(c.sha, state);
    if (effective.length) {
      const before = new Map<string, string>();
      const after = new Map<string, string>();
      for (const [path, id] of parentState) {
        const t = content(id);
        if (t !== undefined) {
          before.set(path, t);
          after.set(path, t);
        }
      }
      for (const x of effective) {
        const o = content(x.oldId);
        const n = content(x.newId);
        if (o === undefined) before.delete(x.path);
        else before.set(x.path, o);
        if (n === undefined) after.delete(x.path);
        else after.set(x.path, n);
      }
      const when = new Date(Math.min(c.time.getTime(), opts.now.getTime()));
      for (const f of transitionFindings(before, after, { ...ctxBase, now: when })) {
        transitionFound.push({ ...f, message: `commit ${c.sha.slice(0, 12)}: ${f.message}` });
      }
    }
    for (const p of c.parents) {
      const n = (pending.get(p) ?? 1) - 1;
      pending.set(p, n);
      if (n === 0) states.delete(p);
    }
  }

  // --- 2 & 3. what the pull request changes: merge-base..head -----------------------------------------
  // Renames are followed for the scan (a moved script adds only the lines it changes); the lock checks
  // below look at both paths of a rename through the per-commit transitions already.
  const raw = splitZ(git.ok(['diff', '--raw', '-z', '-M', '--no-abbrev', '--no-ext-diff', '--no-textconv', mergeBase, head, '--']));
  const prChanges = rawEntries(raw, 0).changes;


  // 2. state at head.
  const headState = states.get(head);
  let headLocks: Map<string, string>;
  if (headState && !opts.allLocks) headLocks = headState;
  else {
    headLocks = new Map();
    const tokens = splitZ(git.ok(['ls-tree', '-r', '-z', '--full-tree', head, '--', `${notices}/vm-active`]));
    for (const t of tokens) {
      const tab = t.indexOf('\t');
      const [, type, id] = t.slice(0, tab).split(' ');
      if (type === 'blob') headLocks.set(t.slice(tab + 1), id!);
    }
  }
  const touched = new Set(prChanges.map((x) => x.path));
  const headPaths = opts.checkHead === false ? [] : [...headLocks.keys()].filter((p) => classifyPath(p, notices).kind === 'active' && (opts.allLocks || touched.has(p)));
  const headText = git.blobs(headPaths.map((p) => headLocks.get(p)!).filter((id) => !text.has(id)));
  const headFound: Finding[] = [];
  for (const p of headPaths.sort()) {
    const id = headLocks.get(p)!;
    const t = text.get(id) ?? headText.get(id);
    if (t === undefined) continue;
    for (const f of lintLockContent(p, t, 'active', { ...ctxBase, now: opts.now }).findings) {
      headFound.push({ ...f, message: `at head: ${f.message}` });
    }
  }
  const atHead = new Set(headFound.map((f) => `${f.file}\u0000${f.ruleId}`));
  findings.push(...transitionFound.filter((f) => !atHead.has(`${f.file}\u0000${f.ruleId}`)), ...headFound);

  // 3. heavy commands added.
  let scannedFiles = 0;
  if (opts.scanner) {
    const scanner = opts.scanner;
    const candidates = prChanges.filter((x) => !ZERO.test(x.newId) && x.status !== 'D' && scanner.wants(x.path) && !x.path.startsWith(`${notices}/`));
    if (candidates.length) {
      // Both sides of a rename, so that git pairs them and reports only the lines that changed.
      const added = addedLines(git, mergeBase, head, [...new Set(candidates.flatMap((c) => [c.path, c.oldPath]))]);
      const withLines = candidates.filter((c) => added.get(c.path)?.size);
      const blobs = git.blobs(withLines.map((c) => c.newId));
      for (const c of withLines) {
        const t = blobs.get(c.newId);
        if (t === undefined) continue;
        scannedFiles++;
        findings.push(...scanner.scan({ path: c.path, text: t, lines: added.get(c.path)! }));
      }
    }
  }

  return {
    root,
    base: base ?? EMPTY_TREE,
    head,
    mergeBase,
    commits: commits.length,
    findings,
    stats: { lockChanges, scannedFiles, gitProcesses: git.processes },
  };
}

/** Lines added per path in `from..to`, from one `git diff -U0`. */
function addedLines(git: Git, from: string, to: string, paths: string[]): Map<string, Set<number>> {
  const out = new Map<string, Set<number>>();
  const CHUNK = 2000;
  for (let k = 0; k < paths.length; k += CHUNK) {
    const buf = git.ok([
      '-c', 'core.quotePath=false',
      'diff', '-U0', '-M', '--no-color', '--no-ext-diff', '--no-textconv', '--src-prefix=a/', '--dst-prefix=b/',
      from, to, '--', ...paths.slice(k, k + CHUNK),
    ]);
    let current: Set<number> | null = null;
    for (const line of buf.toString('utf8').split('\n')) {
      if (line.startsWith('+++ ')) {
        // Git ends the name with a tab when it holds a space (GNU diff's convention).
        const p = line.slice(4).replace(/\t$/, '');
        if (p === '/dev/null') current = null;
        else {
          const path = unquoteC(p).replace(/^b\//, '');
          current = out.get(path) ?? new Set();
          out.set(path, current);
        }
      } else if (line.startsWith('@@ ') && current) {
        const m = /^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@/.exec(line);
        if (!m) continue;
        const start = Number(m[1]);
        const count = m[2] === undefined ? 1 : Number(m[2]);
        for (let l = start; l < start + count; l++) current.add(l);
      }
    }
  }
  return out;
}

/** Git's C-style quoting of unusual paths (`"a\tb\303\251"`). */
export function unquoteC(s: string): string {
  if (!s.startsWith('"') || !s.endsWith('"')) return s;
  const body = s.slice(1, -1);
  const bytes: number[] = [];
  for (let i = 0; i < body.length; i++) {
    const c = body[i]!;
    if (c !== '\\') {
      bytes.push(...Buffer.from(c, 'utf8'));
      continue;
    }
    const n = body[++i]!;
    if (/[0-7]/.test(n)) {
      bytes.push(parseInt(body.slice(i, i + 3), 8));
      i += 2;
    } else bytes.push(({ n: 10, t: 9, r: 13, a: 7, b: 8, f: 12, v: 11 } as Record<string, number>)[n] ?? n.charCodeAt(0));
  }
  return Buffer.from(bytes).toString('utf8');
}
