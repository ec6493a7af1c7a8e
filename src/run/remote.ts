// The script `offhost run` runs on the VM, and the reader of what it says back. The backend runs the
// session's bootstrap (`sh -c BOOT`, bootstrapScript below), which may start before the lock is held and
// waits for this script on stdin; the laptop sends it once the lock is held. One script, one session, in
// this order:
//
//   1. `N hello`, the guest's `uname -srm` and os-release lines (evidence from the same session);
//   2. reads the handshake line and the source file list from stdin (refused when the backend does not
//      forward stdin: nothing else could stop the command later);
//   3. brings the guest-local copy up to date where the mode needs it (git: checks the pushed commit out;
//      rsync: deletes files the laptop no longer has);
//   4. recomputes the fingerprint with coreutils and refuses (`N mismatch`, with its manifest) unless it
//      is the laptop's;
//   4b. (rsync, git) lists the copy's files outside the source set (`N x PATH`, kept ones `N k PATH`),
//      and with --clean removes them first (./ignored.ts);
//   5. `N go`, then runs `bash -c LINE` in its own session (setsid), so that the whole process group can
//      be signalled: a watcher reads signal names from stdin (INT, TERM, HUP, KILL) and, at end of file
//      (offhost or the connection gone), terminates the group; leftovers of the group are terminated when
//      the command ends;
//   6. `N exit STATUS` on stdout (right after the command's last byte), after the group is gone.
//
// N is a random nonce, so no output of the command can be taken for a protocol line. Every protocol
// line before `go` is read by offhost and not shown; after `go` the stream is the command's stdout,
// minus the final exit line.
import { randomBytes } from 'node:crypto';
import { quote } from '../routes/quote.js';
import { execWords } from '../routes/script.js';
import { ignoredScript, unescapePath } from './ignored.js';

export interface RemotePlan {
  nonce: string;
  mode: 'shared' | 'rsync' | 'git';
  /** The VM-side root of the source tree. */
  dir: string;
  /** The VM-side working directory (inside `dir`, or elsewhere when the line ran outside the tree). */
  cwd: string;
  /** Length of the NUL-terminated file list that follows the handshake line on stdin. */
  listBytes: number;
  fingerprint: string;
  /** git mode: the bare repository on the VM and the commit to check out (`ref`: where an inline pack's commit is kept). */
  /**
   * `verified`: the laptop's record says this very commit is what the VM's copy was last verified at; the
   * checkout is then skipped when the copy's stat lines are still that verification's (nothing to check out).
   */
  git?: { bare: string; commit: string; ref?: string; verified?: boolean };
  /** rsync mode: where the previous file list is kept (to delete what the laptop deleted). */
  rsyncState?: string;
  /**
   * Length of what follows the file list on stdin: rsync mode, a tar of the changed files (src/routes/tar.ts);
   * git mode, a pack of the commit's objects the VM's repository lacks (then `git.ref` is set to it).
   */
  inlineBytes?: number;
  /** The command's argv (bash -c LINE for a typed line), run with env added. */
  argv: string[];
  env: Record<string, string>;
  /** The command reads the rest of offhost's stdin (else /dev/null; the watcher reads the stream). */
  stdin: boolean;
  /** Seconds between TERM and KILL for the process group. */
  graceSeconds: number;
  /** rsync and git: list the copy's files outside the source set, and with `clean` remove them (./ignored.ts). */
  tree?: { clean: boolean; keep: readonly string[] };
  /** The VM's disk floor (KB free on /tmp): below it the session stops before it touches anything (`diskfull`). */
  diskFloorKb?: number;
  /**
   * rsync and git: where the VM keeps its copy's file hashes between runs (verifyLines), beside the copy on
   * the VM's own disk. Unset (shared): every file is hashed on every run.
   */
  hashCache?: string;
  /**
   * The racy margin's stamp (seconds, find's `%T@`) when the files' times are not the VM's own: a shared
   * tree's, stamped by the laptop as it read them. Unset: the VM stamps a file beside the cache.
   */
  hashStamp?: string;
}

export const HANDSHAKE = 'offhost-run-1';

export function newNonce(): string {
  return `@offhost-${randomBytes(8).toString('hex')}`;
}

/** The run's job id on the VM: the marker every process the command starts carries (OFFHOST_JOB). */
export function jobOf(nonce: string): string {
  return nonce.slice('@offhost-'.length);
}

/**
 * POSIX sh functions over the marker (Linux /proc; GNU or busybox grep with -z): `strays` lists the pids
 * whose environment holds OFFHOST_JOB=J (what the command started, setsid'd and daemons included, unless
 * it cleared its environment); `stop_strays` TERMs them, KILLs what is left after the grace period, and
 * sets LEFT to `stray=PID:NAME,… unstopped=PID,…` (empty when none was found).
 */
export function strayFunctions(job: string, graceSeconds: number): string[] {
  const ticks = Math.max(1, Math.round(graceSeconds)) * 10;
  return [
    `J=${quote(job)}`,
    // One grep; the pids are cut out of its paths by the shell (this runs after every command).
    'strays() { [ -d /proc/self ] || return 0; for f in $(grep -lzxF "OFFHOST_JOB=$J" /proc/[0-9]*/environ 2>/dev/null); do f=${f#/proc/}; f=${f%/environ}; [ "$f" = "$$" ] || echo "$f"; done; }',
    'stop_strays() { LEFT=; s=$(strays); [ -n "$s" ] || return 0; n=; for p in $s; do c=$(cat /proc/$p/comm 2>/dev/null); n="$n,$p:$(printf %s "$c" | tr -c "A-Za-z0-9._-" _)"; done; ' +
      `kill -s TERM $s 2>/dev/null; i=0; while [ -n "$(strays)" ] && [ $i -lt ${ticks} ]; do sleep 0.1; i=$((i+1)); done; ` +
      'l=$(strays | tr "\n" " "); if [ -n "${l% }" ]; then kill -s KILL $l 2>/dev/null; sleep 0.3; l=$(strays | tr "\n" ","); fi; LEFT="stray=${n#,} unstopped=${l%,}"; LEFT=${LEFT% }; }',
  ];
}

/**
 * The stat line of a file, followed through symlinks as sha256sum follows them: its mode in hex (`8…` for a
 * regular file), device, inode, size, permission bits in octal, mtime and ctime in whole seconds, and the
 * path as listed. `stat -c` (GNU coreutils or busybox); a path that cannot be stat'ed has no line.
 */
const STAT_ARGS = `stat -L -c '%f %d:%i:%s:%a:%Y:%Z %n' --`;
/** The stat line of every listed file, in the list's order, into $T/stat. */
const STAT1 = `xargs -0 -r ${STAT_ARGS} < "$T/list" > "$T/stat" 2>/dev/null`;
/** From this many bytes of file list (about 2,000 files) the VM stats the list in parts, side by side. */
export const PARALLEL_STAT_BYTES = 64 * 1024;

/**
 * One sh command (run in the copy's root) writing $T/stat: a long list is stat'ed in parts, one find per
 * CPU (up to 4), the parts' lines put back in order; one CPU, or a split without -n, is one find.
 */
function statCommand(listBytes: number): string {
  if (listBytes < PARALLEL_STAT_BYTES) return STAT1;
  return [
    // The CPU count the bootstrap read while it waited (B_P), else read now.
    'P=${B_P:-$(nproc 2>/dev/null)}; case $P in \'\'|*[!0-9]*) P=1;; esac; [ "$P" -gt 4 ] && P=4;',
    `if [ "$P" -gt 1 ] && { for f in "$T"/part.*; do [ -e "$f" ] && rm -f -- "$T"/part.*; break; done; } && split -t '\\0' -n l/$P -d "$T/list" "$T/part." 2>/dev/null; then pids=; for f in "$T"/part.*; do xargs -0 -r ${STAT_ARGS} < "$f" > "$f.stat" 2>/dev/null & pids="$pids $!"; done; wait $pids; cat "$T"/part.*.stat > "$T/stat"; else ${STAT1}; fi`,
  ].join(' ');
}

/**
 * The copy's manifest (src/routes/source.ts's format: `sha256  ./path` lines in the list's order, then
 * `--exec--` and the paths whose owner may execute them) into $T/manifest, and its sha256 into $fp.
 *
 * Without a cache every file is hashed. With one (`cache`: a file on the VM's disk beside the copy), a
 * file is hashed again unless its stat line is the one recorded with its hash: type, device, inode, size,
 * mode, mtime and ctime (followed through symlinks as sha256sum follows them) and path, as `stat -L -c`
 * prints them (STAT_ARGS; times in whole seconds). A hash is recorded only when the file's times are more
 * than 3 s (wider than any filesystem's timestamp tick; 4 s on the whole seconds, so a fraction cut off
 * never narrows it) older than the stamp of the run that hashed it: a file written in the same tick as it
 * was hashed can change again without its times changing (git's "racy" entry), so it is hashed again next
 * time; a write after that lands at least 3 s later, in another second. A write to a file always sets its ctime to the current time, which no one can set back,
 * so an unchanged stat line means unchanged content. The stamp is a file touched beside the cache before
 * anything is listed (the time of the filesystem the copy lives on), or for a shared tree the laptop's
 * stamp of its own read (`stamp`: the files' times are the laptop's). A cache that cannot be read or written
 * only costs the hashing; records are appended, and the cache is written whole again only when over a
 * third of it no longer holds.
 * Paths cannot hold a newline (the laptop refuses them: source.ts), so the lists here are one path a line.
 *
 * One awk reads the stat lines, looks each up whole in the cache, has sha256sum hash the rest (one
 * xargs, from awk's END), and prints the manifest in the list's order.
 *
 * A run whose every file was cached or recorded (none racy, none unreadable) also keeps its stat lines
 * and its manifest beside the cache (`$C.last-stat`, `$C.last-manifest`): the next run whose stat lines
 * are those, byte for byte (one cmp), has that manifest without awk, which is the cache's own rule applied
 * to the whole list at once. The stat file is removed first and written last, so a pair a killed session
 * left half-written is never used.
 *
 * The manifest's path is left in $M.
 */
export function verifyLines(cache: string | undefined, stamp?: string, listBytes = 0): string[] {
  if (cache === undefined) {
    return [`fp=$( { xargs -0 -r sha256sum -- < "$T/list" 2>/dev/null; echo --exec--; xargs -0 -r sh -c 'find -L "$@" -prune -perm -100 -print 2>/dev/null' sh < "$T/list"; } | tee "$T/manifest" | sha256sum)`, 'fp=${fp%% *}; M="$T/manifest"'];
  }
  // The cache: `offhost-vm-hashes 3` (3: whole-second stat lines from `stat -c`; 2 held find's), then `HASH X<TAB>STATLINE` (X: 1 when the owner may execute it).
  // New records are appended (an edit between runs writes a line, not the whole cache); the lines that no
  // longer hold (a file changed or gone) stay unused until they are over a third of the cache, when it is
  // written again whole, without them, under a name of its own and renamed over the old one.
  const manifest = [
    'BEGIN { nc = 0; ok = 0',
    '  if ((getline h < C) > 0 && h == "offhost-vm-hashes 3") { ok = 1; while ((getline l < C) > 0) if (index(l, "\\t") == 67) { c[substr(l, 68)] = substr(l, 1, 66); nc++ } }',
    '  close(C); trust = (S == "") ? -1 : S - 4 }',
    '{ n++; L[n] = $0',
    '  reg = (substr($0, 1, 1) == "8" && substr($0, 5, 1) == " ")',
    '  if (reg && ($0 in c)) { H[n] = c[$0]; hit++ }',
    '  else { H[n] = ""; if (reg) { r = substr($0, 6); i = index(r, " "); print substr(r, i + 1) > TODO; nt++',
    '    split(substr(r, 1, i - 1), f, ":"); if (f[5] + 0 < trust && f[6] + 0 < trust) nk++ } } }',
    'END {',
    '  if (nt > 0) { close(TODO); system(ENVIRON["OFFHOST_HASH"]); while ((getline l < NEWF) > 0) if (length(l) > 66) s[substr(l, 67)] = substr(l, 1, 64) }',
    '  dead = nc - hit; full = (S != "" && ((!ok && nk > 0) || (ok && dead > 16 && dead * 3 > nc))); app = (S != "" && ok && !full && nk > 0)',
    '  if (full) print "offhost-vm-hashes 3" > NEXT',
    '  all = (S != ""); for (k = 1; k <= n; k++) { r = substr(L[k], 6); i = index(r, " "); key = substr(r, 1, i - 1); p = substr(r, i + 1); keep = 0',
    '    if (H[k] != "") { h = substr(H[k], 1, 64); x = substr(H[k], 66, 1); keep = 1 }',
    '    else { split(key, f, ":"); m = f[4]; x = (length(m) >= 3 && substr(m, length(m) - 2, 1) ~ /[1357]/) ? 1 : 0; h = ""',
    '      if (substr(L[k], 1, 1) == "8" && substr(L[k], 5, 1) == " " && (p in s)) { h = s[p]; keep = (f[5] + 0 < trust && f[6] + 0 < trust) ? 2 : 0 } }',
    '    if (!keep || h == "") all = 0',
    '    if (h != "") { print h "  " p; if (full && keep) printf "%s %s\\t%s\\n", h, x, L[k] > NEXT; else if (app && keep == 2) printf "%s %s\\t%s\\n", h, x, L[k] >> C }',
    '    if (x == "1") e[++ne] = p }',
    '  print "--exec--"; for (i = 1; i <= ne; i++) print e[i]',
    '  if (full) close(NEXT); if (app) close(C); if (all) printf "" > ALL }',
  ].join('\n');
  return [
    `C=${quote(cache)}`,
    stamp !== undefined
      ? `S=${quote(stamp)}; [ -d "\${C%/*}" ] || mkdir -p "\${C%/*}" 2>/dev/null`
      : // Touched before anything is stat'ed; its time is read only when the records are (below). `true`, not
        // `:`: a redirection a special builtin cannot make ends a POSIX shell.
        '{ true > "$C.stamp"; } 2>/dev/null && S=stamp || S=',
    // Unless the git checkout's check stat'ed the copy already (above, in supervisorScript).
    `[ -f "$T/stat" ] || { ${statCommand(listBytes)}; }`,
    // The next cache (and the last run's pair) is written under a name of this session's own, then renamed
    // over the old one; what a killed session left is removed (the VM's lock keeps two runs off one copy at once).
    'for f in "$C".next.* "$C".last-*.*; do [ -e "$f" ] && rm -f -- "$C".next.* "$C".last-*.* 2>/dev/null; break; done',
    // Every stat line as the last fully recorded run saw it: that run's manifest, and its fingerprint (the
    // first line of $C.last-stat, before the stat lines: LAST_STAT_SKIP).
    `if [ -f "$C.last-stat" ] && [ -f "$C.last-manifest" ] && ${sameAsLastStat('"$C.last-stat"')} && IFS= read -r fp < "$C.last-stat" && [ \${#fp} -eq 64 ] && case $fp in *[!0-9a-f]*) false;; esac; then M="$C.last-manifest"; else`,
    // The stamp's time (find's %T@: seconds and their fraction).
    '[ "$S" = stamp ] && { S=$(find "$C.stamp" -maxdepth 0 -printf "%T@" 2>/dev/null) || S=; }',
    // A folder the cache cannot be written in: no cache written (awk would stop at the first line it cannot write).
    '[ -n "$S" ] && [ -w "${C%/*}" ] && { [ ! -e "$C" ] || [ -w "$C" ]; } || S=',
    `fp=$(OFFHOST_HASH='tr "\\n" "\\0" < "$T/todo" | xargs -0 -r sha256sum -- > "$T/new" 2>/dev/null' T="$T" awk -v C="$C" -v S="$S" -v NEXT="$C.next.$$" -v TODO="$T/todo" -v NEWF="$T/new" -v ALL="$T/all" ${quote(manifest)} "$T/stat" | tee "$T/manifest" | sha256sum)`,
    '[ -s "$C.next.$$" ] && mv -f "$C.next.$$" "$C" 2>/dev/null',
    'M="$T/manifest"; fp=${fp%% *}',
    // Every file cached or recorded: this run's stat lines and manifest are kept for the next (the stat
    // file last, its first line the manifest's fingerprint).
    'if [ -f "$T/all" ]; then { rm -f "$C.last-stat" && cp "$M" "$C.last-manifest.$$" && mv -f "$C.last-manifest.$$" "$C.last-manifest" && { printf "%s\\n" "$fp" && cat "$T/stat"; } > "$C.last-stat.$$" && mv -f "$C.last-stat.$$" "$C.last-stat"; } 2>/dev/null; fi',
    'fi',
  ];
}

/**
 * `$C.last-stat` starts with the fingerprint of `$C.last-manifest` (64 hex digits and a newline), so that
 * a run whose stat lines are the last run's takes that fingerprint without hashing the manifest again
 * (sha256sum of a 10,000-line manifest: 6 ms on the bench's VM). The stat lines follow; cmp skips the line.
 * A file in the older format (stat lines only) never yields a fingerprint: its first line is no hash.
 */
export const LAST_STAT_SKIP = 65;
function sameAsLastStat(file: string): string {
  return `cmp -s "$T/stat" ${file} 0 ${LAST_STAT_SKIP} 2>/dev/null`;
}

/** Prints how the VM gives a command INT and QUIT back: `env` (GNU coreutils 8.31+), `perl`, or nothing. */
const DEFAULT_SIGNALS_PROBE = 'if env --default-signal=INT,QUIT >/dev/null 2>&1; then echo env; elif command -v perl >/dev/null 2>&1; then echo perl; fi';

/** The last line of the framed supervisor script: what tells the bootstrap the script arrived whole. */
function endLine(nonce: string): string {
  return `: offhost-end-${jobOf(nonce)}`;
}

/**
 * The session's own script (`sh -c BOOT`): it waits for the supervisor script on stdin (a line with its
 * length in bytes, then the script, whose last line is `: offhost-end-JOB`) and runs it. At end of input
 * it says `nostdin` and exits having done nothing; a script that did not arrive whole is refused (`fail`)
 * and nothing runs.
 * So the session can be opened while the laptop still reads its source and takes the lock (the login
 * shell's start-up on the VM then overlaps that work): nothing of the run happens on the VM before the
 * supervisor script arrives, and that is only sent once the lock is held.
 *
 * While it waits, it reads what the supervisor would otherwise read first, one process each (7 ms on the
 * bench's VM): the kernel (B_U), `df` of /tmp (B_D), the CPU count (B_P), how a command gets INT and QUIT
 * back (B_DS: env or perl), and a private temporary directory (B_T, removed if no script comes). None of
 * it reads or writes the copy. The supervisor reads again what is unset (it also runs without the bootstrap).
 */
export function bootstrapScript(nonce: string): string {
  const q = quote;
  return [
    'B_U=$(uname -srm 2>/dev/null); B_D=$(df -Pk /tmp 2>/dev/null); B_P=$(nproc 2>/dev/null)',
    `B_DS=$(${DEFAULT_SIGNALS_PROBE})`,
    'B_T=$(mktemp -d 2>/dev/null) || B_T=',
    // Until the supervisor sets its own (which removes $T, the same directory).
    'trap \'[ -n "$B_T" ] && rm -rf "$B_T"\' EXIT',
    // No length line: the backend passed no input on (or the run stopped before its lock, when nobody
    // reads this any more). Said as `nostdin`, as the supervisor says it, never taken for a VM not reached.
    `IFS= read -r n || { printf "%s hello\\n%s nostdin\\n" ${q(nonce)} ${q(nonce)}; exit 0; }`,
    `case $n in ''|*[!0-9]*) printf "%s hello\\n%s nostdin\\n" ${q(nonce)} ${q(nonce)}; exit 0;; esac`,
    's=$(dd bs="$n" count=1 iflag=fullblock 2>/dev/null)',
    `case $s in *${q(endLine(nonce))}) ;; *) printf "%s hello\\n%s fail %s\\n" ${q(nonce)} ${q(nonce)} "the VM script did not arrive whole (dd with iflag=fullblock needed on the VM)"; exit 0;; esac`,
    'eval "$s"',
  ].join('\n');
}

/** The bytes the bootstrap reads (./bootstrapScript): the length line, then the script and its end line. */
export function framedScript(script: string, nonce: string): Buffer {
  const body = Buffer.from(`${script}\n${endLine(nonce)}\n`, 'utf8');
  return Buffer.concat([Buffer.from(`${body.length}\n`), body]);
}

/** Where the VM keeps the command's process-group id while it runs (for a kill from another session). */
export function pgidFile(nonce: string): string {
  return `/tmp/offhost-run${nonce.slice('@offhost'.length)}.pgid`;
}

/** The POSIX sh script (one word for `sh -c`). */
export function supervisorScript(p: RemotePlan): string {
  const q = quote;
  // Every process the command starts inherits the marker (unless it clears its environment).
  const words = execWords(p.argv, { ...p.env, OFFHOST_JOB: jobOf(p.nonce) });
  const cmd = words.map(q).join(' ');
  // With GNU env, the one `env` both gives INT and QUIT back and sets the variables (one exec less).
  const envCmd = (words[0] === 'env' && words[1] === '--' ? ['env', '--default-signal=INT,QUIT', ...words.slice(1)] : ['env', '--default-signal=INT,QUIT', '--', ...words]).map(q).join(' ');
  const grace = Math.max(1, Math.round(p.graceSeconds));
  // What the copy holds beyond the source set (outputs of earlier builds), listed while the copy is
  // verified, and said (or removed) once it is: ./ignored.ts.
  const listing = p.tree && p.mode !== 'shared' ? ignoredScript({ git: p.mode === 'git', clean: p.tree.clean, keep: p.tree.keep }) : null;
  const lines = [
    `N=${q(p.nonce)}`,
    'say() { printf "%s %s\\n" "$N" "$*"; }',
    ...strayFunctions(jobOf(p.nonce), p.graceSeconds),
    'say hello',
    'say uname "${B_U-$(uname -srm 2>/dev/null)}"',
    'for f in /etc/os-release /usr/lib/os-release; do if [ -r "$f" ]; then while IFS= read -r l || [ -n "$l" ]; do say os "$l"; done < "$f"; break; fi; done',
    // The preflight's disk check, again, before anything is written (it may have been read a minute ago:
    // src/vms/probe-reuse.ts). `df` is reported either way, for the next run's preflight.
    ...(p.diskFloorKb !== undefined
      ? [
          // The fourth field (available KB) by the shell's own splitting, globbing off: no awk to start.
          // `df -P` prints a header line and one line for /tmp: the last line, by the shell's own expansion.
          `D=\${B_D-$(df -Pk /tmp 2>/dev/null)}; D=\${D##*'\n'}; say df "$D"; fourth() { A=$4; }; set -f; fourth $D; set +f`,
          `case "$A" in ''|*[!0-9]*) say diskfull "?"; exit 0;; esac; [ "$A" -ge ${Math.ceil(p.diskFloorKb)} ] || { say diskfull "$A"; exit 0; }`,
        ]
      : []),
    'T=${B_T:-$(mktemp -d 2>/dev/null)}; [ -n "$T" ] || { say fail "cannot make a temporary directory on the VM"; exit 0; }',
    // A listing still running in the background ($XP, ./ignored.ts) ends before the script does; the
    // command's group id file ($PG) goes with the temporary directory, in one process.
    'trap \'[ -n "$XP" ] && wait "$XP"; rm -rf "$T" ${PG:+"$PG"}\' EXIT',
    'IFS= read -r hs || hs=',
    `[ "$hs" = ${q(HANDSHAKE)} ] || { say nostdin; exit 0; }`,
    p.listBytes > 0
      ? `dd bs=${p.listBytes} count=1 iflag=fullblock of="$T/list" 2>/dev/null; w=$(wc -c < "$T/list" 2>/dev/null); [ "\${w##* }" = ${p.listBytes} ] || { say fail "the file list did not arrive whole (dd with iflag=fullblock needed on the VM)"; exit 0; }`
      : ': > "$T/list"',
  ];
  if (p.mode === 'git' && p.git) {
    const bare = q(p.git.bare);
    const dir = q(p.dir);
    const sha = q(p.git.commit);
    lines.push(
      'command -v git >/dev/null 2>&1 || { say missing "git is not installed on the VM (sync: git needs it)"; exit 0; }',
      // The objects the VM's repository lacks, sent in this session (a thin pack on the commit it verified).
      ...(p.inlineBytes && p.git.ref
        ? [
            `dd bs=${p.inlineBytes} count=1 iflag=fullblock of="$T/in.pack" 2>/dev/null; w=$(wc -c < "$T/in.pack" 2>/dev/null); [ "\${w##* }" = ${p.inlineBytes} ] || { say fail "the commit's objects did not arrive whole"; exit 0; }`,
            `git --git-dir=${bare} unpack-objects -q < "$T/in.pack" 2>"$T/pack.err" && git --git-dir=${bare} update-ref ${q(p.git.ref)} ${sha} 2>>"$T/pack.err" || { say fail "could not store the pushed commit: $(head -c 300 "$T/pack.err" | tr '\n' ' ')"; exit 0; }`,
          ]
        : []),
      // The commit last verified here, its HEAD still, and every file's stat line what that run kept: a
      // checkout would change nothing (its stat of every file is saved; verifyLines uses those lines). Any
      // other case checks out (the fingerprint below decides either way).
      ...(p.git.verified && p.hashCache !== undefined
        ? [
            `co=1; if [ -f ${dir}/.git ] && [ -f ${q(`${p.hashCache}.last-stat`)} ]; then IFS= read -r g < ${dir}/.git; g=\${g#gitdir: }; case $g in /*) ;; *) g=${dir}/$g;; esac; h=; [ -f "$g/HEAD" ] && IFS= read -r h < "$g/HEAD"; if [ "$h" = ${sha} ]; then ( cd -- ${dir} && ${statCommand(p.listBytes)} ) && ${sameAsLastStat(q(`${p.hashCache}.last-stat`))} && co=; fi; fi`,
            'if [ -n "$co" ]; then rm -f "$T/stat"',
          ]
        : []),
      `if [ -e ${dir}/.git ]; then git -C ${dir} checkout -q -f --detach ${sha} >"$T/git.log" 2>&1; else mkdir -p "$(dirname ${dir})" && git --git-dir=${bare} worktree add -q -f --detach ${dir} ${sha} >"$T/git.log" 2>&1; fi || { say fail "git checkout of the pushed commit failed on the VM: $(tr '\\n' ' ' < "$T/git.log")"; exit 0; }`,
      ...(p.git.verified && p.hashCache !== undefined ? ['fi'] : []),
    );
  }
  if (p.mode === 'rsync' && p.rsyncState) {
    const st = q(p.rsyncState);
    // Files the laptop no longer has (in the previous list, not in this one) are deleted from the copy.
    lines.push(
      `[ -d ${q(p.dir)} ] || { say nodir; exit 0; }`,
      // The files changed since the last verified copy, sent in this session (-p modes, -o not the laptop's owner).
      ...(p.inlineBytes
        ? [
            `dd bs=${p.inlineBytes} count=1 iflag=fullblock of="$T/in.tar" 2>/dev/null; w=$(wc -c < "$T/in.tar" 2>/dev/null); [ "\${w##* }" = ${p.inlineBytes} ] || { say fail "the changed files did not arrive whole"; exit 0; }`,
            `tar -xpof "$T/in.tar" -C ${q(p.dir)} 2>"$T/tar.err" || { say fail "could not unpack the changed files: $(head -c 300 "$T/tar.err" | tr '\n' ' ')"; exit 0; }`,
          ]
        : []),
      // The same list as last time (the common case): nothing to delete, nothing to save (one cmp).
      `if [ -f ${st} ] && cmp -s ${st} "$T/list" 2>/dev/null; then :; else`,
      `  if [ -f ${st} ]; then ( cd -- ${q(p.dir)} && LC_ALL=C comm -z -23 ${st} "$T/list" | xargs -0 -r rm -f -- ) || { say fail "could not delete files removed on the laptop"; exit 0; }; fi`,
      `  cp "$T/list" ${st}.new && mv -f ${st}.new ${st} || { say fail "could not save the file list"; exit 0; }`,
      'fi',
    );
  }
  lines.push(
    `cd -- ${q(p.dir)} 2>/dev/null || { say nodir; exit 0; }`,
    'command -v sha256sum >/dev/null 2>&1 || { say missing "sha256sum (coreutils) is not installed on the VM"; exit 0; }',
    ...(listing?.start ?? []),
    ...verifyLines(p.hashCache, p.hashStamp, p.listBytes),
    'say fp "$fp"',
    `if [ "$fp" != ${q(p.fingerprint)} ]; then while IFS= read -r l; do say m "$l"; done < "$M"; say mismatch; exit 0; fi`,
    // What the copy holds beyond the source set (outputs of earlier builds), before the build: listed, or removed.
    ...(listing?.finish ?? []),
    `cd -- ${q(p.cwd)} 2>/dev/null || { say nocwd; exit 0; }`,
    'command -v setsid >/dev/null 2>&1 || { say missing "setsid (util-linux) is not installed on the VM"; exit 0; }',
    // A command started with & by a non-interactive shell has SIGINT and SIGQUIT ignored (POSIX), and an
    // ignored signal stays ignored across exec: give them back their default first.
    `DS=\${B_DS-$(${DEFAULT_SIGNALS_PROBE})}`,
    'case $DS in env|perl) ;; *) say missing "env --default-signal (GNU coreutils 8.31+) or perl is needed on the VM to pass Ctrl-C on"; exit 0;; esac',
    `PG=${q(pgidFile(p.nonce))}`,
    'exec 3<&0',
    'say go',
    // Its own session and process group: pid = pgid (a background child is never a group leader, so
    // setsid(1) does not fork).
    `if [ "$DS" = env ]; then setsid ${envCmd} ${p.stdin ? '<&3' : '</dev/null'} 3<&- & else setsid perl -e '$SIG{INT}=$SIG{QUIT}=q(DEFAULT);exec(@ARGV)or(die(q(exec:),$!))' ${cmd} ${p.stdin ? '<&3' : '</dev/null'} 3<&- & fi`,
    'pid=$!',
    'echo "$pid" > "$PG"',
    ...(p.stdin
      ? ['w=']
      : [
          // At end of input (offhost or the connection gone) the group and every process with the marker go.
          `( while IFS= read -r s; do case $s in INT|TERM|HUP|KILL) kill -s "$s" -- "-$pid" 2>/dev/null;; esac; done; kill -s TERM -- "-$pid" 2>/dev/null; x=$(strays); [ -n "$x" ] && kill -s TERM $x 2>/dev/null; sleep ${grace}; kill -s KILL -- "-$pid" 2>/dev/null; x=$(strays); [ -n "$x" ] && kill -s KILL $x 2>/dev/null ) <&3 >/dev/null 2>&1 &`,
          'w=$!',
        ]),
    'exec 3<&-',
    'wait "$pid"; st=$?',
    // Whatever the command left behind in its group goes with it: the VM is held only while work runs.
    `if kill -s 0 -- "-$pid" 2>/dev/null; then kill -s TERM -- "-$pid" 2>/dev/null; i=0; while kill -s 0 -- "-$pid" 2>/dev/null && [ $i -lt ${grace * 10} ]; do sleep 0.1; i=$((i+1)); done; kill -s KILL -- "-$pid" 2>/dev/null; fi`,
    // What left the group (setsid, daemons) but carries the marker counts as the run too: stopped here,
    // and named on the exit line; what survives KILL keeps the VM held (the laptop reads `unstopped=`).
    'stop_strays',
    '[ -n "$w" ] && kill "$w" 2>/dev/null',
    // No newline before it: the nonce is found wherever it starts, so the command's output is kept exactly.
    'printf "%s exit %s %s\\n" "$N" "$st" "$LEFT"',
    'exit "$st"',
  );
  return lines.join('\n');
}

// ---------------------------------------------------------------------------------------------------
// Reading the stream

export interface Preamble {
  hello: boolean;
  uname?: string;
  osRelease: string[];
  fingerprint?: string;
  /** How the preamble ended: go (the command started), or why it did not. */
  end?: 'go' | 'mismatch' | 'nodir' | 'nocwd' | 'nostdin' | 'fail' | 'missing' | 'diskfull';
  /** The guest's `df -Pk /tmp` line, when the session checked the disk. */
  df?: string;
  failure?: string;
  /** The VM's manifest (on mismatch). */
  manifest: string[];
  /** rsync and git: the copy's files outside the source set (`x`), the kept paths (`k`), their counts; `cleaned` once removed. */
  tree?: { extra: string[]; extraCount: number; kept: string[]; keptCount: number; cleaned: boolean; error?: string };
}

/**
 * Splits the VM's stdout: protocol lines up to `go` (kept in `preamble`), then the command's output
 * (passed to `out`) with the final `N exit S\n` taken off. Only the longest tail that could still
 * become the exit marker is held back, so output is passed on as it comes.
 */
export class StreamReader {
  readonly preamble: Preamble = { hello: false, osRelease: [], manifest: [] };
  exitStatus: number | null = null;
  /** Processes the command left outside its group (found by the marker): stopped, or not. */
  strays: { found: string[]; unstopped: string[] } = { found: [], unstopped: [] };
  private pre = '';
  private inPreamble = true;
  private held = '';
  private readonly marker: string;
  constructor(
    private readonly nonce: string,
    private readonly out: (chunk: Buffer) => void,
    private readonly onEnd: () => void = () => undefined,
  ) {
    this.marker = `${nonce} exit `;
  }

  push(chunk: Buffer): void {
    if (this.inPreamble) {
      this.pre += chunk.toString('latin1');
      for (;;) {
        const nl = this.pre.indexOf('\n');
        if (nl === -1) return;
        const line = Buffer.from(this.pre.slice(0, nl), 'latin1').toString('utf8');
        this.pre = this.pre.slice(nl + 1);
        this.line(line);
        if (!this.inPreamble) {
          const rest = this.pre;
          this.pre = '';
          if (rest) this.body(Buffer.from(rest, 'latin1'));
          return;
        }
      }
    }
    this.body(chunk);
  }

  private line(l: string): void {
    const p = this.preamble;
    if (!l.startsWith(`${this.nonce} `)) return; // a login banner or profile output: not ours, not the command's
    const rest = l.slice(this.nonce.length + 1);
    const sp = rest.indexOf(' ');
    const word = sp === -1 ? rest : rest.slice(0, sp);
    const arg = sp === -1 ? '' : rest.slice(sp + 1);
    switch (word) {
      case 'hello':
        p.hello = true;
        break;
      case 'uname':
        p.uname = arg;
        break;
      case 'os':
        p.osRelease.push(arg);
        break;
      case 'fp':
        p.fingerprint = arg;
        break;
      case 'm':
        p.manifest.push(arg);
        break;
      case 'x':
      case 'k':
      case 'xn':
      case 'kn':
      case 'cleaned':
      case 'xfail': {
        const t = (p.tree ??= { extra: [], extraCount: 0, kept: [], keptCount: 0, cleaned: false });
        if (word === 'x') t.extra.push(unescapePath(arg));
        else if (word === 'k') t.kept.push(unescapePath(arg));
        else if (word === 'xn') t.extraCount = Number(arg) || 0;
        else if (word === 'kn') t.keptCount = Number(arg) || 0;
        else if (word === 'cleaned') t.cleaned = true;
        else t.error = arg || 'find failed';
        break;
      }
      case 'go':
        p.end = 'go';
        this.inPreamble = false;
        break;
      case 'mismatch':
      case 'nodir':
      case 'nocwd':
      case 'nostdin':
        p.end = word;
        this.onEnd();
        break;
      case 'df':
        p.df = arg;
        break;
      case 'fail':
      case 'missing':
      case 'diskfull':
        p.end = word;
        p.failure = arg;
        this.onEnd();
        break;
    }
  }

  private body(chunk: Buffer): void {
    if (this.exitStatus !== null) return;
    // latin1 keeps one char per byte, so the command's bytes pass through unchanged.
    let s = this.held + chunk.toString('latin1');
    const at = s.indexOf(this.marker);
    if (at !== -1) {
      const end = s.indexOf('\n', at + this.marker.length);
      if (end !== -1) {
        const [st = '', ...extra] = s.slice(at + this.marker.length, end).split(' ');
        const status = Number(st);
        for (const e of extra) {
          if (e.startsWith('stray=') && e.length > 6) this.strays.found = e.slice(6).split(',');
          if (e.startsWith('unstopped=') && e.length > 10) this.strays.unstopped = e.slice(10).split(',');
        }
        if (at > 0) this.out(Buffer.from(s.slice(0, at), 'latin1'));
        this.held = '';
        this.exitStatus = Number.isInteger(status) ? status : null;
        return;
      }
      // The marker is here but not its end yet: hold from the marker on.
      if (at > 0) this.out(Buffer.from(s.slice(0, at), 'latin1'));
      this.held = s.slice(at);
      return;
    }
    // Hold back the longest suffix that is a prefix of the marker.
    let keep = 0;
    for (let k = Math.min(this.marker.length - 1, s.length); k > 0; k--) {
      if (this.marker.startsWith(s.slice(s.length - k))) {
        keep = k;
        break;
      }
    }
    const emit = s.slice(0, s.length - keep);
    this.held = s.slice(s.length - keep);
    if (emit) this.out(Buffer.from(emit, 'latin1'));
    s = '';
  }

  /** At end of stream: whatever was held back was output after all. */
  end(): void {
    if (this.held && this.exitStatus === null) this.out(Buffer.from(this.held, 'latin1'));
    this.held = '';
  }

  get manifestText(): string {
    return this.preamble.manifest.map((l) => `${l}\n`).join('');
  }
}
