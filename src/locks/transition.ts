// Findings for a change of the lock tree (before -> after), as a commit or a pull request makes it: the R3/R4
// protocol seen from outside. Pure: the caller reads the two states (git index vs HEAD, or two commits).
import type { Finding, Lock } from '../types.js';
import { formatDuration, lockState } from './expiry.js';
import { lintLockContent, type LockCheckContext } from './lint.js';
import { parseLockText, readFrontmatterLoose } from './parse.js';
import { archiveLockPath, classifyPath, type PathClass } from './paths.js';
import { formatUtc } from './schema.js';

export type TransitionContext = LockCheckContext;

/**
 * `before` and `after` map repository-relative paths to file contents. They must hold every path the change
 * touches (added, modified, deleted) and every active VM lock and component lock of each state (the whole
 * notices tree is fine; unchanged archives may be left out). Findings are reported for the changed paths:
 * schema, file name, expiry and future timestamps of added/modified active locks; a live lock of another
 * session replaced (lock-stolen); session/started changed in place (lock-identity-changed); heartbeat moving
 * backwards; an active lock deleted without its archive appearing in the same change (a rename
 * active -> archive is the release); an archive file changed or deleted (append-only); R7: a component lock
 * released while the same session still holds a VM lock in the after-state (release-order).
 */
export function transitionFindings(before: Map<string, string>, after: Map<string, string>, ctx: TransitionContext): Finding[] {
  const findings: Finding[] = [];
  const dir = ctx.noticesDir;
  const skew = ctx.skewSeconds === undefined ? {} : { skewSeconds: ctx.skewSeconds };
  const changed = [...new Set([...before.keys(), ...after.keys()])].filter((p) => before.get(p) !== after.get(p)).sort();
  const classes = new Map<string, PathClass>(changed.map((p) => [p, classifyPath(p, dir)]));

  // Archives added by this change, with the session their content names (when readable).
  const addedArchives = changed
    .filter((p) => classes.get(p)!.kind === 'archive' && !before.has(p) && after.has(p))
    .map((p) => {
      const fm = readFrontmatterLoose(after.get(p)!);
      const vm = typeof fm?.vm === 'string' ? fm.vm : classes.get(p)!.vm;
      const session = typeof fm?.session === 'string' ? fm.session : undefined;
      return { path: p, vm, session };
    });
  const archivedIn = (vm: string, session: string | undefined): boolean =>
    addedArchives.some((a) => a.vm === vm && (a.session === undefined || session === undefined || a.session === session));
  const suggestArchive = (vm: string, kind: 'released' | 'expired'): string => {
    try {
      return archiveLockPath(vm, ctx.now, kind, (p) => after.has(p), dir);
    } catch {
      return `vm-active-archive/lock-${vm}-${kind === 'expired' ? 'expired-' : ''}<YYYY-MM-DD>.md`;
    }
  };

  for (const p of changed) {
    const cls = classes.get(p)!;
    const b = before.get(p);
    const a = after.get(p);
    if (cls.kind === 'active') {
      let afterLock: Lock | null = null;
      if (a !== undefined) {
        const r = lintLockContent(p, a, 'active', ctx);
        afterLock = r.lock;
        findings.push(...r.findings);
      }
      const beforeLock = b !== undefined ? parseLockText(b, p).lock : null;
      const vm = beforeLock?.vm ?? cls.vm ?? '';
      if (b !== undefined && a === undefined) {
        if (!archivedIn(vm, beforeLock?.session)) {
          const expired = beforeLock ? lockState(beforeLock, ctx.now, skew).state === 'expired' : false;
          findings.push({
            file: p,
            ruleId: 'lock-deleted-unarchived',
            severity: 'error',
            message: `active lock${beforeLock ? ` of session ${beforeLock.session}` : ''} is deleted without its archive: a lock is never deleted, it is moved to the archive (the audit trail, POLICY R4)`,
            suggestion: `git mv ${p} ${suggestArchive(vm, expired ? 'expired' : 'released')} (or: offhost lock release ${vm})`,
          });
        }
      }
      if (beforeLock && afterLock) {
        const sameSession = beforeLock.session === afterLock.session;
        const sameStart = beforeLock.started.getTime() === afterLock.started.getTime();
        if (!sameSession || !sameStart) {
          const st = lockState(beforeLock, ctx.now, skew);
          if (!sameSession && st.state !== 'expired') {
            findings.push({
              file: p,
              line: afterLock.positions.session ?? 1,
              column: 1,
              ruleId: 'lock-stolen',
              severity: 'error',
              message:
                `replaces the live lock of session ${beforeLock.session} (${beforeLock.ai}, since ${formatUtc(beforeLock.started)}, for: ${oneLine(beforeLock.reason)}; ` +
                `expires at ${formatUtc(st.expiresAt)}, in ${formatDuration(st.expiresAt.getTime() - ctx.now.getTime())}): another session holds this VM`,
              suggestion: `wait for it (offhost lock acquire ${beforeLock.vm} --wait), use another VM, or ask ${beforeLock.session} to release it`,
            });
          } else if (!archivedIn(beforeLock.vm, beforeLock.session)) {
            const what = !sameSession
              ? `session changed in place from ${beforeLock.session} to ${afterLock.session}`
              : `started changed in place from ${formatUtc(beforeLock.started)} to ${formatUtc(afterLock.started)}`;
            findings.push({
              file: p,
              line: (!sameSession ? afterLock.positions.session : afterLock.positions.started) ?? 1,
              column: 1,
              ruleId: 'lock-identity-changed',
              severity: 'error',
              message: `${what}: a lock's session and started never change; the previous hold must be archived before a new one is written`,
              suggestion: `move the old lock to ${suggestArchive(beforeLock.vm, st.state === 'expired' ? 'expired' : 'released')} in the same commit, then write the new lock`,
            });
          }
        } else if (beforeLock.heartbeat && (!afterLock.heartbeat || afterLock.heartbeat.getTime() < beforeLock.heartbeat.getTime())) {
          findings.push({
            file: p,
            line: afterLock.positions.heartbeat ?? afterLock.positions.session ?? 1,
            column: 1,
            ruleId: 'lock-heartbeat-backwards',
            severity: 'error',
            message: afterLock.heartbeat
              ? `heartbeat moves backwards from ${formatUtc(beforeLock.heartbeat)} to ${formatUtc(afterLock.heartbeat)}: a heartbeat only moves forward`
              : `heartbeat ${formatUtc(beforeLock.heartbeat)} was removed: a heartbeat only moves forward`,
            suggestion: `write the current UTC time: heartbeat: ${formatUtc(ctx.now)}`,
          });
        }
      }
    } else if (cls.kind === 'archive') {
      if (b !== undefined) {
        findings.push({
          file: p,
          ruleId: 'archive-modified',
          severity: 'error',
          message: `archived lock is ${a === undefined ? 'deleted' : 'changed'}: the archive is append-only (the audit trail, POLICY R4)`,
          suggestion: `restore it (git restore --staged --worktree --source=HEAD -- ${p}) and put new notes in a new file`,
        });
      } else if (a !== undefined) {
        findings.push(...lintLockContent(p, a, 'archive', ctx).findings);
      }
    } else if (cls.kind === 'component') {
      if (b !== undefined && a === undefined) {
        const fm = readFrontmatterLoose(b);
        const session = typeof fm?.session === 'string' ? fm.session : null;
        if (session) {
          for (const [q, text] of after) {
            if (classifyPath(q, dir).kind !== 'active') continue;
            const held = parseLockText(text, q).lock;
            if (held && held.session === session) {
              findings.push({
                file: p,
                ruleId: 'release-order',
                severity: 'error',
                message: `component lock ${cls.slug} is released while session ${session} still holds the VM lock ${held.vm} (${q}): release in reverse order of acquisition, the VM lock first (POLICY R7)`,
                suggestion: `release the VM lock first (offhost lock release ${held.vm}), then the component lock`,
              });
            }
          }
        }
      }
    }
  }
  return findings;
}

function oneLine(s: string): string {
  const t = s.replace(/\s+/g, ' ').trim();
  return t.length > 80 ? `${t.slice(0, 77)}...` : t;
}
