// The lock store: the authoritative lock history on its own ref, `refs/offhost/locks`, whose commits hold
// `<notices>/vm-active/`, `vm-active-archive/`, `active/` and `archive/` as POLICY R3/R4/R7 lay them out.
//
// Every lock operation is ONE transaction (transact): read the ref's tip, decide on what it holds, build
// a commit with plumbing, move the ref with a compare-and-swap; if another writer moved it first, read
// again and decide again. With a remote, the tip is the remote's (ls-remote + fetch before deciding), the
// swap is `push --force-with-lease=REF:OLD`, and the local ref follows the remote. A crash before the ref
// moves changed nothing (at most unreachable objects, which git gc prunes); after it, everything. The
// user's HEAD, index and working tree are never read for a decision (except, read-only, locks committed by
// hand to the branch: legacy.ts) and never written (except the ignored read-only view: view.ts).
import { hostname } from 'node:os';
import { GitError, LockError, isOffhostError } from '../errors.js';
import type { Clock } from '../types.js';
import {
  buildCommit,
  casRef,
  fetchRef,
  hasObject,
  openRepoAt,
  pushLease,
  readRef,
  readPaths,
  readTree,
  remoteRef,
  removeStaleTemp,
  type Repo,
} from '../git/ref-tree.js';
import { runGit } from '../git/run.js';
import { ACTIVE_DIR, ARCHIVE_DIR, COMPONENT_DIR, DEFAULT_NOTICES_DIR } from './paths.js';
import { refreshView, type ViewProblem } from './view.js';

export const LOCK_REF = 'refs/offhost/locks';

export interface LockStoreOptions {
  /** Any folder inside the repository. */
  repoDir: string;
  /** Relative to the repository root; default meta/context/notices. */
  noticesDir?: string;
  clock: Clock;
  /** A remote to coordinate with (push/fetch refs/offhost/locks); null/undefined: this clone only. */
  remote?: string | null;
  skewSeconds?: number;
  env?: NodeJS.ProcessEnv;
  /** Progress and warnings (stderr in the CLI). */
  log?: (line: string) => void;
  /** Commit message template: {action} {target} {session}; default `offhost: {action} {target} ({session})`. */
  messageTemplate?: string;
  /** Keep the read-only view at the policy's paths (default true). */
  view?: boolean;
  /** Give up a transaction that keeps losing the compare-and-swap after this long (default 60 s). */
  deadlineMs?: number;
}

/** What a transaction reads: the files of the lock ref's tip under the active folders. */
export interface Snapshot {
  tip: string | null;
  /** Active VM and component locks: path -> bytes. */
  files: Map<string, Buffer>;
  /** The archive paths (VM and component) at this tip, read on first use. */
  archiveNames(): Promise<Set<string>>;
  /** Bytes of some paths at this tip (archives, for the legacy check). */
  read(paths: string[]): Promise<Map<string, Buffer>>;
}

/** What a decision returns: a result, and the file changes that make it true (none: nothing to write). */
export interface Plan<R> {
  result: R;
  changes?: Map<string, string | null>;
  action?: string;
  target?: string;
  session?: string;
}

export interface Committed {
  commit: string | null;
  pushed: boolean;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export class LockStore {
  readonly nd: string;
  readonly dirs: { active: string; archive: string; components: string; componentArchive: string };
  /** What this store found and repaired (stale private files, a stale ref lock, dead claims, ...). */
  readonly recovered: string[] = [];
  viewProblems: ViewProblem[] = [];

  constructor(
    readonly repo: Repo,
    readonly opts: LockStoreOptions,
  ) {
    const nd = (opts.noticesDir ?? DEFAULT_NOTICES_DIR).replace(/\\/g, '/').replace(/^\.\/+/, '').replace(/\/+$/, '');
    if (nd.startsWith('/') || nd.split('/').includes('..')) throw new LockError(`the notices folder must be inside the repository, relative to its root: '${nd}'`);
    this.nd = nd;
    const at = (d: string) => (nd ? `${nd}/${d}` : d);
    this.dirs = { active: at(ACTIVE_DIR), archive: at(ARCHIVE_DIR), components: at(COMPONENT_DIR), componentArchive: at('archive') };
  }

  get clock(): Clock {
    return this.opts.clock;
  }

  get host(): string {
    return hostname();
  }

  log(line: string): void {
    this.opts.log?.(line);
  }

  note(what: string): void {
    this.recovered.push(what);
    this.log(`recovered: ${what}`);
  }

  private message(p: Plan<unknown>): string {
    const t = this.opts.messageTemplate ?? 'offhost: {action} {target} ({session})';
    return t.replace(/\{(action|target|session)\}/g, (_, k: string) => String((p as unknown as Record<string, string>)[k] ?? ''));
  }

  /** The snapshot of a tip. */
  async snapshot(tip: string | null): Promise<Snapshot> {
    const { files } = await readTree(this.repo, tip, [this.dirs.active, this.dirs.components]);
    let names: Set<string> | null = null;
    const m = new Map<string, Buffer>();
    for (const [p, f] of files) {
      if (f.mode === '120000') throw new LockError(`is a symbolic link on ${LOCK_REF}: a lock is a file; nothing was changed. Repair the ref with \`git update-ref\` to a commit without it`, `${LOCK_REF}:${p}`);
      m.set(p, f.data);
    }
    return {
      tip,
      files: m,
      archiveNames: async () => {
        if (!names) names = (await readTree(this.repo, tip, [], [this.dirs.archive, this.dirs.componentArchive])).names;
        return names;
      },
      read: (paths: string[]) => readPaths(this.repo, tip, paths),
    };
  }

  /** The tip the next decision is based on: the remote's (fetched) with a remote, else the local ref. */
  private async base(): Promise<string | null> {
    const local = await readRef(this.repo, LOCK_REF);
    if (!this.opts.remote) return local;
    const remote = this.opts.remote;
    for (let i = 0; i < 20; i++) {
      const tip = await remoteRef(this.repo, remote, LOCK_REF);
      if (tip === null) return null;
      if (!(await hasObject(this.repo, tip))) await fetchRef(this.repo, remote, LOCK_REF);
      if (!(await hasObject(this.repo, tip))) continue; // moved between ls-remote and fetch
      if (local !== tip) await this.follow(local, tip);
      return tip;
    }
    throw new LockError(`${LOCK_REF} on ${remote} kept moving while offhost fetched it; nothing was changed, try again`);
  }

  /** Moves the local ref to the remote's tip; a local history the remote does not have is kept aside. */
  private async follow(local: string | null, tip: string): Promise<void> {
    if (local) {
      const anc = await runGit(['merge-base', '--is-ancestor', local, tip], { cwd: this.repo.gitDir, ...(this.repo.env ? { env: this.repo.env } : {}) });
      if (anc.code !== 0) {
        const aside = `refs/offhost/diverged/${this.clock.now().toISOString().replace(/[:.]/g, '-')}`;
        await casRef(this.repo, aside, local, null, 'offhost: local lock history not on the remote');
        this.note(`the local lock history had commits the remote ${this.opts.remote} does not have; they are kept at ${aside} and the remote's history is used (it is the shared truth)`);
      }
    }
    await casRef(this.repo, LOCK_REF, tip, local, 'offhost: follow the remote', (w) => this.note(w));
  }

  /**
   * The one transaction. `decide` is called on a fresh snapshot every attempt and must not have effects
   * outside its result; its changes are committed on that snapshot's tip and the ref is swapped, or the
   * whole thing is retried on the new tip.
   */
  async transact<R>(decide: (s: Snapshot) => Promise<Plan<R>>, how: { readOnly?: boolean } = {}): Promise<R & Committed> {
    const deadline = Date.now() + (this.opts.deadlineMs ?? 60_000);
    let delay = 5;
    for (let attempt = 0; ; attempt++) {
      let tip: string | null;
      try {
        tip = await this.base();
      } catch (err) {
        // A read (status) still answers when the remote cannot be reached: from this clone's copy, saying so.
        if (!how.readOnly || !this.opts.remote) throw this.unchanged(err);
        tip = await readRef(this.repo, LOCK_REF);
        this.note(`the remote ${this.opts.remote} could not be read (${(err as Error).message.split('\n')[0]}): showing this clone's copy of ${LOCK_REF}`);
      }
      const snap = await this.snapshot(tip);
      const plan = await decide(snap);
      if (!plan.changes || plan.changes.size === 0) {
        await this.view(snap.files, snap.tip);
        return { ...plan.result, commit: null, pushed: false };
      }
      let commit: string;
      try {
        commit = await buildCommit(this.repo, tip, plan.changes, this.message(plan), { name: `offhost (${plan.session ?? 'lock'})`, email: `offhost@${this.host}` });
      } catch (err) {
        throw this.unchanged(err);
      }
      let swapped: 'ok' | 'moved';
      try {
        if (this.opts.remote) {
          swapped = await pushLease(this.repo, this.opts.remote, LOCK_REF, commit, tip);
          if (swapped === 'ok') {
            const local = await readRef(this.repo, LOCK_REF);
            if (local === tip || local === null) await casRef(this.repo, LOCK_REF, commit, local, `offhost: ${plan.action ?? 'change'}`, (w) => this.note(w));
          }
        } else {
          swapped = await casRef(this.repo, LOCK_REF, commit, tip, `offhost: ${plan.action ?? 'change'}`, (w) => this.note(w));
        }
      } catch (err) {
        throw this.unchanged(err);
      }
      if (swapped === 'ok') {
        const files = new Map(snap.files);
        for (const [p, c] of plan.changes) {
          if (!p.startsWith(`${this.dirs.active}/`) && !p.startsWith(`${this.dirs.components}/`)) continue;
          if (c === null) files.delete(p);
          else files.set(p, Buffer.from(c, 'utf8'));
        }
        await this.view(files, commit);
        return { ...plan.result, commit, pushed: Boolean(this.opts.remote) };
      }
      if (Date.now() > deadline) {
        throw new LockError(`${LOCK_REF}${this.opts.remote ? ` on ${this.opts.remote}` : ''} kept changing under ${attempt + 1} attempts for ${Math.round((this.opts.deadlineMs ?? 60_000) / 1000)} s; nothing was changed by this command, try again`);
      }
      await sleep(delay + Math.random() * delay);
      delay = Math.min(delay * 2, 250);
    }
  }

  private unchanged(err: unknown): Error {
    const msg = err instanceof Error ? err.message : String(err);
    if (isOffhostError(err) && !(err instanceof GitError)) return err as Error;
    const hint = /Read-only file system|EROFS/i.test(msg)
      ? `${this.repo.commonDir} is on a read-only file system: make it writable`
      : /No space left|ENOSPC|disk quota/i.test(msg)
        ? `the disk holding ${this.repo.commonDir} is full: free some space`
        : /remote|push|fetch|ls-remote/i.test(msg)
          ? `check that the remote ${this.opts.remote ?? ''} is reachable`
          : `see git's message (repository ${this.repo.commonDir})`;
    return new LockError(`the lock change could not be made (${msg.split('\n')[0]}): ${hint}, then retry; nothing was changed`);
  }

  /** Rewrites the read-only view from the snapshot at `tip`; its problems are kept for status and logged. */
  async view(files: Map<string, Buffer>, tip: string | null): Promise<void> {
    if (this.opts.view === false || !this.repo.root) return;
    // A newer change has moved the ref since: its process writes the view (never an older picture over it).
    if ((await readRef(this.repo, LOCK_REF)) !== tip) return;
    this.viewProblems = await refreshView(this.repo, [this.dirs.active, this.dirs.components], files);
    for (const p of this.viewProblems) this.log(`view: ${p.path} ${p.why}`);
  }
}

/** Opens the store of the repository holding `opts.repoDir`, removing private files crashed processes left. */
export async function openLockStore(opts: LockStoreOptions): Promise<LockStore> {
  const repo = await openRepoAt(opts.repoDir, opts.env);
  const store = new LockStore(repo, opts);
  for (const f of removeStaleTemp(repo)) store.note(`removed ${f}, a private index of an offhost process that no longer runs`);
  return store;
}
