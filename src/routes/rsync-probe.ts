// Which rsync the laptop has, and whether it takes the options `sync: rsync` uses (issue 26).
//
// macOS 15 and later ship openrsync as /usr/bin/rsync (`rsync --version` says `openrsync: protocol
// version 29`, "rsync version 2.6.9 compatible"); Linux and Homebrew have GNU rsync (`rsync  version
// 3.x  protocol version 3x`). openrsync takes a subset of GNU rsync's options, and which subset depends on
// its version: the first openrsync (2019) took only -e -l -n -p -r -t -v --delete --rsync-path; the one
// Apple ships (KlaraSystems/openrsync, main.c rsync_lopts) takes every option in RSYNC_OPTIONS. So the
// options are not assumed from the name: the installed rsync is asked to parse them (a dry run of a local
// copy of nothing), and one that refuses any is refused here, before a run, with the fix.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** The options rsyncTree (./sync.ts) passes, each as the probe gives it (a value where one is needed). */
export const RSYNC_OPTIONS: readonly string[] = ['-a', '--from0', '--files-from=-', '--checksum', '--ignore-times', '--no-owner', '--no-group', '-e', 'ssh', '--rsync-path=rsync'];

export interface RsyncInfo {
  /** The program run (`rsync`, found on PATH). */
  program: string;
  kind: 'gnu' | 'openrsync' | 'unknown' | 'missing';
  /** What `--version` says, in a few words: `GNU rsync 3.2.7 (protocol 31)`, `openrsync (protocol 29)`. */
  describe: string;
  /** Options of RSYNC_OPTIONS it refuses (empty: it takes them all). */
  refused: string[];
}

const RUN = { encoding: 'utf8' as const, timeout: 15_000, input: '' };

/** Asks the rsync on `env`'s PATH what it is and whether it parses RSYNC_OPTIONS. */
export function probeRsync(env: NodeJS.ProcessEnv, program = 'rsync'): RsyncInfo {
  const v = spawnSync(program, ['--version'], { ...RUN, env });
  if (v.error) return { program, kind: 'missing', describe: `no ${program} on PATH`, refused: [...RSYNC_OPTIONS.filter((o) => o.startsWith('-'))] };
  // openrsync printed its version on stderr before it was fixed to print on stdout.
  const text = `${v.stdout ?? ''}\n${v.stderr ?? ''}`;
  let kind: RsyncInfo['kind'] = 'unknown';
  let describe = (text.trim().split('\n')[0] ?? '').trim() || `${program} --version printed nothing`;
  const open = /openrsync:?\s+protocol version (\d+)/i.exec(text);
  const gnu = /\brsync\s+version\s+v?([0-9][0-9A-Za-z.+-]*)\s+protocol version (\d+)/.exec(text);
  if (open) ((kind = 'openrsync'), (describe = `openrsync (protocol ${open[1]})`));
  else if (gnu) ((kind = 'gnu'), (describe = `GNU rsync ${gnu[1]} (protocol ${gnu[2]})`));
  const dir = mkdtempSync(join(tmpdir(), 'offhost-rsync-probe-'));
  try {
    const dry = (opts: readonly string[]) => spawnSync(program, ['-n', ...opts, './', `${dir}/dest/`], { ...RUN, env, cwd: dir });
    if (dry(RSYNC_OPTIONS).status === 0) return { program, kind, describe, refused: [] };
    // Which ones: each alone (with -a, which every rsync takes, so that a copy has something to do).
    const refused: string[] = [];
    for (let i = 0; i < RSYNC_OPTIONS.length; i++) {
      const o = RSYNC_OPTIONS[i]!;
      if (!o.startsWith('-')) continue;
      const withValue = o === '-e' ? [o, RSYNC_OPTIONS[i + 1]!] : [o];
      if (dry(o === '-a' ? withValue : ['-r', ...withValue]).status !== 0) refused.push(o.replace(/=.*/, ''));
    }
    // Refused as a whole but each option taken alone: the combination (say it as that).
    return { program, kind, describe, refused: refused.length ? refused : ['(this combination)'] };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Null when `sync: rsync` can use this rsync; else what is wrong and the fix, in one message. */
export function rsyncProblem(info: RsyncInfo): string | null {
  if (info.refused.length === 0) return null;
  const fix =
    'install GNU rsync and put it ahead of /usr/bin on PATH (macOS: `brew install rsync`, which installs /opt/homebrew/bin/rsync; Debian/Ubuntu: `apt install rsync`), or use `sync: git` for this VM';
  if (info.kind === 'missing') return `sync: rsync needs rsync on this machine, and there is none on PATH; ${fix}`;
  return `sync: rsync needs an rsync that takes ${RSYNC_OPTIONS.filter((o) => o.startsWith('-')).map((o) => o.replace(/=.*/, '')).join(' ')}; the one on PATH (${info.describe}) refuses ${info.refused.join(' ')}; ${fix}`;
}

const RSYNC_KEEP_MS = 24 * 3600_000;

/** The file `rsync` names on env's PATH, as an identity that changes when the program does; null when there is none. */
function rsyncIdentity(env: NodeJS.ProcessEnv): string | null {
  for (const d of (env.PATH ?? '').split(':')) {
    if (!d.startsWith('/')) continue;
    const f = join(d, 'rsync');
    try {
      const st = statSync(f);
      if (!st.isFile() || (st.mode & 0o111) === 0) continue;
      const real = realpathSync(f);
      const rs = statSync(real);
      return JSON.stringify([f, real, rs.ino, rs.size, rs.mtimeMs, rs.ctimeMs, st.ctimeMs]);
    } catch {
      continue;
    }
  }
  return null;
}

/**
 * probeRsync, kept in `stateDir/probe/rsync.json` and asked again only when the program `rsync` on PATH is
 * another file (path, inode, size, times), or after a day. A refusing rsync is never kept (its user may be
 * fixing it).
 */
export function probeRsyncKept(env: NodeJS.ProcessEnv, stateDir: string, now: () => number = Date.now): RsyncInfo {
  const id = rsyncIdentity(env);
  const f = join(stateDir, 'probe', 'rsync.json');
  if (id !== null) {
    try {
      const kept = JSON.parse(readFileSync(f, 'utf8')) as { id: string; at: number; info: RsyncInfo };
      const age = now() - kept.at;
      if (kept.id === id && age >= 0 && age < RSYNC_KEEP_MS && kept.info.refused.length === 0) return kept.info;
    } catch {
      /* none kept, or unreadable: ask rsync */
    }
  }
  const info = probeRsync(env);
  if (id !== null && info.refused.length === 0) {
    try {
      mkdirSync(join(stateDir, 'probe'), { recursive: true });
      const tmp = `${f}.${process.pid}.tmp`;
      writeFileSync(tmp, JSON.stringify({ id, at: now(), info }));
      renameSync(tmp, f);
    } catch {
      /* not kept: asked again next time */
    }
  }
  return info;
}
