// The doctor's look at where this clone's locks are shared (docs/LOCKS.md "Which clones share a lock"):
// one finding, for `offhost doctor` (and anything else that wants it). Reads only: opens the store the way
// every lock command does (which may create the empty per-user store), commits nothing.
import { isOffhostError } from '../errors.js';
import { sharingOf } from './lifecycle.js';
import { openLockStore, LOCK_REF } from './store.js';

export interface SharingFinding {
  /** false: some clone or machine that reaches the same VMs does not see these locks, and it can be fixed. */
  ok: boolean;
  /** Informational (ok, but worth knowing: not shared with other machines). */
  note?: boolean;
  detail: string;
  fix?: string;
}

/** Where the locks of the repository at `cwd` are shared; null when `cwd` is in no git repository. */
export async function lockSharingCheck(cwd: string, env: NodeJS.ProcessEnv, settings: { remote?: string; push?: boolean } = {}): Promise<SharingFinding | null> {
  let store;
  try {
    store = await openLockStore({
      repoDir: cwd,
      clock: { now: () => new Date() },
      env,
      view: false,
      share: { remoteName: settings.remote ?? 'origin', configPush: settings.push ?? false, probeRemote: true },
    });
  } catch (err) {
    if (/not inside a git repository/.test((err as Error).message)) return null;
    return { ok: false, detail: `the lock store cannot be opened: ${(err as Error).message}`, fix: isOffhostError(err) ? 'see `offhost lock status`' : 'see git\'s message' };
  }
  const s = sharingOf(store);
  const remoteHolds = s.notes.some((n) => n.includes(`holds ${LOCK_REF}`));
  if (s.mode === 'clone') return { ok: false, detail: `locks: ${s.covers}`, fix: 'make the first commit (then every clone of the repository on this machine shares one store)' };
  if (s.mode === 'user' && remoteHolds) {
    return { ok: false, detail: `locks: ${s.covers}; but the remote already holds ${LOCK_REF}: clones on other machines share theirs there`, fix: 'run any `offhost lock` command (it switches to the remote), or `offhost lock status --push`' };
  }
  if (s.mode === 'user') return { ok: true, note: true, detail: `locks: ${s.covers}` };
  return { ok: true, detail: `locks: ${s.covers}` };
}
