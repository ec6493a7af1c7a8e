// What the VM's copy holds beyond the source set (issue 24): files git ignores are neither synced nor
// verified, so a build on the VM can use outputs only the VM has (a `build/` or `*.o` left by an earlier
// run, or by another branch's). The run's own VM script (./remote.ts, same session, no extra round trip)
// lists every file of the copy that is not in the source set, in one `find` that never follows a symlink
// and never enters a `.git` or a kept path; the laptop keeps those it does not have itself and records
// them, collapsed to the outermost directory the laptop lacks (`engines/lang/koda/build/ (1,204 files)`).
// With `--clean` (or the VM's `clean: true`) the script removes those files before the build, keeping
// what the VM's `keep:` globs name (dependency caches), and says what it removed.
//
// `sync: shared` has no VM-side copy: the VM builds in the laptop's own tree, whose ignored files are the
// laptop's, so there is nothing VM-only to list or clean.
import { lstatSync } from 'node:fs';
import { join } from 'node:path';
import { quote } from '../routes/quote.js';
export { DEFAULT_KEEP, keepGlobProblem } from './keep-globs.js';

/** How many paths of each list the VM sends (the count is always whole). */
export const SENT_MAX = 50_000;
/** How many collapsed entries the record shows. */
export const SHOWN_MAX = 20;

/** The find expression matching the kept paths (`-name G` or `-path ./G` for each glob), or null for none. */
export function keepExpression(keep: readonly string[]): string | null {
  if (keep.length === 0) return null;
  return `\\( ${keep.map((g) => (g.includes('/') ? `-path ${quote(`./${g}`)}` : `-name ${quote(g)}`)).join(' -o ')} \\)`;
}

/**
 * POSIX sh lines for the VM script, in two parts. `start`, run in the copy's root once the source is
 * placed, lists the copy in the background while the copy is verified (both read the whole tree; on a
 * 10,000-file copy each takes tens of milliseconds): every file that is not in the source set
 * ("$T/list"; in git mode not tracked either), and each kept path. `finish`, run after the fingerprint
 * matched, waits for it and says `x PATH` for each such file, `k PATH` for each kept path, `xn N` and `kn N`
 * (the whole counts), and with `clean` removes the `x` files (then the directories they leave empty) and
 * says `cleaned`. Paths are escaped one a line (`\\` and `\n`). A listing that fails says `xfail WHY`;
 * with `clean` it stops the run (`fail`), since the build would not be clean. The script's exit waits for
 * the listing ($XP), so nothing of it outlives the session.
 */
export function ignoredScript(p: { git: boolean; clean: boolean; keep: readonly string[] }): { start: string[]; finish: string[] } {
  const keep = keepExpression(p.keep);
  const find = `find . -name .git -prune -o ${keep ? `${keep} -prune -fprint0 "$T/kept" -o ` : ''}! -type d -print0 > "$T/found" 2> "$T/find.err"`;
  // The laptop sends the list sorted bytewise (as LC_ALL=C sort does): in rsync mode it is the known set as it is.
  const known = p.git ? `{ cat "$T/list"; git ls-files -z | sed -z 's|^|./|'; } | LC_ALL=C sort -z -u > "$T/known"` : null;
  const knownFile = known ? '"$T/known"' : '"$T/list"';
  const failed = p.clean
    ? 'say fail "--clean: could not list the copy\'s ignored files: $(head -c 300 "$T/find.err" | tr "\\n" " ")"; exit 0'
    : 'say xfail "$(head -c 300 "$T/find.err" | tr "\\n" " ")"';
  const start = [
    ': > "$T/kept"',
    `{ if ${find} && ${known ? `${known} && ` : ''}LC_ALL=C sort -z "$T/found" | LC_ALL=C comm -z -23 - ${knownFile} > "$T/extra"; then echo 0; else echo 1; fi > "$T/x.rc"; } &`,
    'XP=$!',
  ];
  const finish = [
    // One path a line: backslash and newline escaped; the nonce first, as every protocol line.
    `xsay() { LC_ALL=C sed -z -e 's/\\\\/\\\\\\\\/g' -e 's/\\n/\\\\n/g' -e "s|^|$N $1 |" -e ${SENT_MAX}q | tr '\\0' '\\n'; }`,
    'xcount() { LC_ALL=C grep -zc "" "$1"; }',
    'wait "$XP"; XP=; rc=1; [ -f "$T/x.rc" ] && read -r rc < "$T/x.rc"',
    'if [ "$rc" = 0 ]; then',
  ];
  if (p.clean) {
    finish.push(
      '  xargs -0 -r rm -f -- < "$T/extra" || { say fail "--clean: could not remove the copy\'s ignored files"; exit 0; }',
      // The directories those files leave empty go too (deepest first; rmdir -p stops at one that is not empty, and at `.`).
      '  sed -z "s|/[^/]*\\$||" "$T/extra" | LC_ALL=C sort -z -u -r | xargs -0 -r rmdir -p --ignore-fail-on-non-empty -- 2>/dev/null; say cleaned',
    );
  }
  // Empty lists (the common case) are said without starting sed, tr and grep for them.
  finish.push('  if [ -s "$T/extra" ]; then xsay x < "$T/extra"; say xn "$(xcount "$T/extra")"; else say xn 0; fi', '  if [ -s "$T/kept" ]; then xsay k < "$T/kept"; say kn "$(xcount "$T/kept")"; else say kn 0; fi', `else ${failed}; fi`);
  return { start, finish };
}

/** A VM path as the script escaped it, back to its name (`./` taken off). */
export function unescapePath(line: string): string {
  return line.replace(/\\(\\|n)/g, (_m, c: string) => (c === 'n' ? '\n' : '\\')).replace(/^\.\//, '');
}

/** A path, or a directory (ending in `/`) standing for the files under it. */
export interface PathGroup {
  path: string;
  files: number;
}

export interface IgnoredRecord {
  mode: 'shared' | 'rsync' | 'git';
  /** The VM's copy was listed (false: shared, or the listing failed: `error`). */
  listed: boolean;
  note?: string;
  error?: string;
  /** The globs --clean keeps. */
  keep: string[];
  clean: boolean;
  /** Files the VM's copy has outside the source set that the laptop does not have (after cleaning: none). */
  vmOnly: { count: number; shown: PathGroup[]; partial?: true };
  /** Paths kept (a kept directory is one entry, not entered). */
  kept: { count: number; paths: string[] };
  /** --clean: the files removed before the build. */
  removed?: { count: number; shown: PathGroup[]; partial?: true };
}

/**
 * Groups paths (relative to the tree's root) under the outermost directory the laptop does not have,
 * else each path on its own; sorted, the first `max` kept. Linear: one lstat per distinct directory.
 */
export function collapse(laptopRoot: string, paths: readonly string[], max = SHOWN_MAX): PathGroup[] {
  const isDir = new Map<string, boolean>();
  const here = (rel: string): boolean => {
    let v = isDir.get(rel);
    if (v === undefined) {
      try {
        v = lstatSync(join(laptopRoot, rel)).isDirectory();
      } catch {
        v = false;
      }
      isDir.set(rel, v);
    }
    return v;
  };
  const groups = new Map<string, number>();
  for (const p of paths) {
    const segs = p.split('/');
    let key = p;
    for (let i = 1; i < segs.length; i++) {
      const dir = segs.slice(0, i).join('/');
      if (!here(dir)) {
        key = `${dir}/`;
        break;
      }
    }
    groups.set(key, (groups.get(key) ?? 0) + 1);
  }
  return [...groups.keys()]
    .sort()
    .slice(0, max)
    .map((path) => ({ path, files: groups.get(path)! }));
}

/** True when the laptop has something at this path of its tree (a file, a link, a directory). */
function onLaptop(laptopRoot: string, rel: string): boolean {
  try {
    lstatSync(join(laptopRoot, rel));
    return true;
  } catch {
    return false;
  }
}

/** The record's `ignored` from what the VM said (`tree`: the preamble's listing) and the laptop's tree. */
export function ignoredRecord(
  laptopRoot: string,
  mode: 'rsync' | 'git',
  o: { clean: boolean; keep: readonly string[] },
  tree: { extra: string[]; extraCount: number; kept: string[]; keptCount: number; cleaned: boolean; error?: string } | undefined,
): IgnoredRecord {
  const base = { mode, keep: [...o.keep], clean: o.clean };
  if (!tree || tree.error !== undefined) {
    return { ...base, listed: false, error: tree?.error || 'the VM did not list its copy', vmOnly: { count: 0, shown: [] }, kept: { count: 0, paths: [] } };
  }
  const kept = { count: tree.keptCount, paths: tree.kept.slice(0, SHOWN_MAX) };
  const partial = tree.extraCount > tree.extra.length ? ({ partial: true } as const) : {};
  if (tree.cleaned) {
    return { ...base, listed: true, vmOnly: { count: 0, shown: [] }, kept, removed: { count: tree.extraCount, shown: collapse(laptopRoot, tree.extra), ...partial } };
  }
  const vmOnly = tree.extra.filter((p) => !onLaptop(laptopRoot, p));
  return { ...base, listed: true, vmOnly: { count: vmOnly.length + (tree.extraCount - tree.extra.length), shown: collapse(laptopRoot, vmOnly), ...partial }, kept };
}

export function sharedIgnored(clean: boolean): IgnoredRecord {
  return {
    mode: 'shared',
    listed: false,
    note: "sync shared: the VM builds in the laptop's own tree, so its ignored files are the laptop's; none is VM-only, and --clean has nothing to remove (offhost never deletes in the laptop's tree)",
    keep: [],
    clean,
    vmOnly: { count: 0, shown: [] },
    kept: { count: 0, paths: [] },
  };
}

const n = (x: number) => x.toLocaleString('en-US');

export function groupsText(groups: readonly PathGroup[], count: number): string {
  const shown = groups.map((g) => (g.path.endsWith('/') ? `${JSON.stringify(g.path).slice(1, -1)} (${n(g.files)} file${g.files === 1 ? '' : 's'})` : JSON.stringify(g.path).slice(1, -1)));
  const listed = groups.reduce((s, g) => s + g.files, 0);
  return `${shown.join(', ')}${listed < count ? ', ...' : ''}`;
}

/** One line for the record's text and the run's stderr, or null when there is nothing to say. */
export function ignoredText(r: IgnoredRecord): string | null {
  if (r.mode === 'shared') return r.clean ? `--clean: ${r.note}` : null;
  if (!r.listed) return `ignored files: the VM's copy could not be listed (${r.error}): it may hold build outputs the laptop does not`;
  const kept = r.kept.count ? `; kept ${n(r.kept.count)} (${r.kept.paths.map((p) => p.replace(/^\.\//, '')).join(', ')}${r.kept.count > r.kept.paths.length ? ', ...' : ''})` : '';
  if (r.removed) return `--clean removed ${n(r.removed.count)} file${r.removed.count === 1 ? '' : 's'} outside the source set from the VM's copy before the build${r.removed.count ? `: ${groupsText(r.removed.shown, r.removed.count)}` : ''}${kept}`;
  if (r.vmOnly.count === 0) return null;
  return `the VM's copy has ${n(r.vmOnly.count)} file${r.vmOnly.count === 1 ? '' : 's'} outside the source set that the laptop does not have (ignored, or left by earlier builds), which the build may use: ${groupsText(r.vmOnly.shown, r.vmOnly.count)}${kept} (--clean removes them before the build)`;
}
