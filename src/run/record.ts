// The evidence each `offhost run` leaves (issue 11 item 5, seed 001): one directory per run under the
// state directory, `runs/<id>/record.json` plus `output.log` (the command's stdout and stderr as they
// arrived) and, on request, `fetched/` (outputs copied back from the VM).
//
// State directory: $OFFHOST_STATE_DIR, else $XDG_STATE_HOME/offhost, else ~/.local/state/offhost.
import { randomBytes } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ignoredText, type IgnoredRecord } from './ignored.js';

export function stateDir(env: NodeJS.ProcessEnv): string {
  if (env.OFFHOST_STATE_DIR) return env.OFFHOST_STATE_DIR;
  if (env.XDG_STATE_HOME && env.XDG_STATE_HOME.startsWith('/')) return join(env.XDG_STATE_HOME, 'offhost');
  return join(env.HOME || '/tmp', '.local', 'state', 'offhost');
}

export function runsDir(env: NodeJS.ProcessEnv): string {
  return join(stateDir(env), 'runs');
}

export interface RunRecord {
  version: 1;
  id: string;
  started: string;
  ended: string | null;
  /** What happened: `exit` (the command ran; its status is `status`), or offhost's own outcome. */
  outcome: string;
  /** The command's own status (null when it did not run or its status never arrived). */
  status: number | null;
  /** offhost run's exit status. */
  exit: number | null;
  detail?: string;
  session: string;
  ai: string;
  laptop: { hostname: string; user: string; cwd: string };
  source: {
    repo: string;
    commit: string | null;
    branch: string | null;
    dirty: string;
    dirtyPaths: string[];
    fingerprint: string;
    files: number;
    mode: 'shared' | 'rsync' | 'git';
    /** git mode: the commit checked out on the VM (HEAD or a snapshot of the dirty tree). */
    ranCommit?: string;
    /** rsync: files sent by the last rsync (null: every file, compared by checksum). */
    sent?: number | null;
    /** rsync: the changed files went inside the run's own session (a tar), not by an rsync of their own. */
    sentInSession?: boolean;
    /** --commit REF: a clean commit was run instead of the working tree. */
    requestedCommit?: string;
  } | null;
  vm: {
    id: string;
    backend: string;
    host?: string;
    instance?: string;
    dir?: string;
    uname?: string;
    osRelease?: Record<string, string>;
  } | null;
  command: { line: string; argv: string[]; cwd: string; env: Record<string, string> };
  lock?: { file: string; took: boolean };
  /** Processes the command left on the VM outside its process group (marker sweep): stopped, or the VM kept held. */
  leftBehind?: { processes: string[]; unstopped: string[]; action: 'stopped' | 'kept-held' };
  /** What the VM's copy holds outside the source set (files git ignores, earlier builds' outputs), and what --clean removed. */
  ignored?: IgnoredRecord;
  log: string;
  fetched?: string[];
}

/**
 * A run's id: its start, to the millisecond, then a random tail. Ids sort as runs started (listRecords,
 * `offhost runs`), so the time must tell apart two runs of one second (a quick rerun, a retry).
 */
export function newRunId(now: Date): string {
  const t = now.toISOString().replace(/[-:]/g, '');
  return `${t}-${randomBytes(3).toString('hex')}`;
}

export function runDir(env: NodeJS.ProcessEnv, id: string): string {
  return join(runsDir(env), id);
}

export function writeRecord(env: NodeJS.ProcessEnv, rec: RunRecord): string {
  const dir = runDir(env, rec.id);
  mkdirSync(dir, { recursive: true });
  const file = join(dir, 'record.json');
  writeFileSync(`${file}.tmp`, `${JSON.stringify(rec, null, 2)}\n`);
  renameSync(`${file}.tmp`, file);
  return file;
}

export function readRecord(env: NodeJS.ProcessEnv, id: string): RunRecord | null {
  if (!/^[0-9T]+(\.[0-9]+)?Z-[0-9a-f]+$/.test(id)) return null;
  try {
    return JSON.parse(readFileSync(join(runDir(env, id), 'record.json'), 'utf8')) as RunRecord;
  } catch {
    return null;
  }
}

/** Every run's record, oldest first (unreadable ones skipped). */
export function listRecords(env: NodeJS.ProcessEnv): RunRecord[] {
  let ids: string[];
  try {
    ids = readdirSync(runsDir(env));
  } catch {
    return [];
  }
  return ids
    .sort()
    .map((id) => readRecord(env, id))
    .filter((r): r is RunRecord => r !== null);
}

/** os-release lines -> fields (quotes removed). */
export function parseOsRelease(lines: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const l of lines) {
    const m = /^([A-Z0-9_]+)=(.*)$/.exec(l.trim());
    if (!m) continue;
    let v = m[2]!;
    if (/^".*"$|^'.*'$/.test(v)) v = v.slice(1, -1).replace(/\\(["\\$`])/g, '$1');
    out[m[1]!] = v;
  }
  return out;
}

/** The architecture a run on this guest covers, from its `uname -srm` (arm64 and aarch64 are one). */
export function coveredArch(uname: string | undefined): string | null {
  const m = uname?.trim().split(/\s+/).at(-1);
  if (!m || uname!.trim().split(/\s+/).length < 3) return null;
  return m === 'arm64' ? 'aarch64' : m === 'amd64' ? 'x86_64' : m;
}

/** The record as markdown, for the lock archive and `offhost runs show`. */
export function recordText(r: RunRecord): string {
  const lines = [
    `Run ${r.id}: ${r.outcome}${r.status !== null ? ` (command status ${r.status})` : ''}${r.exit !== null ? `, offhost exit ${r.exit}` : ''}`,
    `- command: \`${r.command.line}\``,
    `- cwd on the VM: ${r.command.cwd}${Object.keys(r.command.env).length ? `; env: ${Object.entries(r.command.env).map(([k, v]) => `${k}=${v}`).join(' ')}` : ''}`,
    `- started ${r.started}, ended ${r.ended ?? '(running)'}`,
    `- session ${r.session} (${r.ai}) on ${r.laptop.hostname} as ${r.laptop.user}, from ${r.laptop.cwd}`,
  ];
  if (r.source) {
    lines.push(
      `- source: ${r.source.repo} at ${r.source.commit ?? '(no commit)'} on ${r.source.branch ?? '(detached)'}, ${r.source.dirty}; fingerprint ${r.source.fingerprint} (${r.source.files} files, sync ${r.source.mode}${r.source.ranCommit && r.source.ranCommit !== r.source.commit ? `, ran commit ${r.source.ranCommit}` : ''})`,
    );
  }
  if (r.vm) {
    lines.push(
      `- vm: ${r.vm.id} (${r.vm.backend}${r.vm.host ? ` on ${r.vm.host}` : ''}${r.vm.instance ? `, ${r.vm.instance}` : ''})${r.vm.dir ? `, tree at ${r.vm.dir}` : ''}`,
      `- guest: ${r.vm.uname ?? '(not reached)'}${r.vm.osRelease?.PRETTY_NAME ? `; ${r.vm.osRelease.PRETTY_NAME}` : ''}`,
    );
    // What the run is evidence for: the guest's own architecture (an arm64 guest, say Lima or Tart on
    // Apple silicon, is no x86_64 evidence, whatever the catalogue says).
    const arch = coveredArch(r.vm.uname);
    if (arch) lines.push(`- architecture covered: ${arch}${arch === 'aarch64' ? ' (not x86_64)' : ''}`);
  }
  if (r.ignored) {
    const none = r.ignored.listed ? `none outside the source set that the laptop lacks${r.ignored.kept.count ? ` (${r.ignored.kept.count} kept paths)` : ''}` : (r.ignored.note ?? 'not listed');
    lines.push(`- ignored files on the VM: ${ignoredText(r.ignored) ?? none}`);
  }
  if (r.detail) lines.push(`- detail: ${r.detail.split('\n').join(' / ')}`);
  lines.push(`- log: ${r.log}`);
  if (r.fetched?.length) lines.push(`- fetched: ${r.fetched.join(', ')}`);
  return `${lines.join('\n')}\n`;
}
