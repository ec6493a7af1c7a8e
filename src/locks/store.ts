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
import { GitError, LockError, LockPushRefusedError, LockStoreBrokenError, isOffhostError } from '../errors.js';
import type { Clock } from '../types.js';
import {
  buildCommit,
  casRef,
  copyObjects,
  writtenInto,
  fetchRef,
  hasObject,
  inspectRef,
  objectState,
  openRepoAt,
  pushLease,
  readRef,
  readPaths,
  readTree,
  remoteRef,
  removeStaleTemp,
  blobAt,
  hasCommitAt,
  namesStartingWith,
  prepareRefMoves,
  type Repo,
} from '../git/ref-tree.js';
import { runGit } from '../git/run.js';
import { ACTIVE_DIR, ARCHIVE_DIR, COMPONENT_DIR, DEFAULT_NOTICES_DIR } from './paths.js';
import { refreshView, type ViewProblem } from './view.js';
import { ensureUserStore, forgetProbe, keepProbe, keptProbe, markerText, parseMarker, remoteNamed, remoteUrl, repoIdentity, SHARED_THROUGH, sightingsDir, type HubMode } from './hub.js';
import { systemMonotonic, type Monotonic } from './sightings.js';
import type { LockRecord } from './lock-types.js';

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
  /**
   * Where the repository's locks are shared (hub.ts). `userStore`: the per-user bare repository `remote`
   * points at in user mode; `shareRemote`: the clone's remote to share through when asked (`wantRemote`:
   * config or --push, or the remote already holds the ref); `forbidRemote`: --no-push (refused once the
   * repository's locks are shared through a remote).
   */
  hub?: { userStore?: string; shareRemote?: string; wantRemote?: boolean; forbidRemote?: boolean; identity?: string };
  /** This machine's monotonic clock (sightings.ts); default the system's. */
  monotonic?: Monotonic;
  /** Where first sightings of other hosts' lock versions are kept (default none: every sighting is new). */
  sightingsDir?: string;
  /**
   * The seam for "the holder is proven gone" (its process on this host no longer runs...): a sentence
   * saying why, or null. A lock whose holder is gone may be taken over at once (takeover.ts).
   */
  holderGone?: (rec: LockRecord, file: string) => string | null;
  /** The repository of `repoDir` as the caller already opened it (openRepoAt of that very folder): not asked of git again. */
  repo?: Repo;
}

/** What a transaction reads: the files of the lock ref's tip under the active folders. */
export interface Snapshot {
  tip: string | null;
  /** Active VM and component locks: path -> bytes. */
  files: Map<string, Buffer>;
  /** The archive paths (VM and component) at this tip, read on first use. */
  archiveNames(): Promise<Set<string>>;
  /**
   * The archive paths at this tip that start with `pathPrefix` (a folder and the start of a name: the
   * names an archive of one lock on one day may take), without listing the whole archive.
   */
  archiveNamesLike(pathPrefix: string): Promise<Set<string>>;
  /** Bytes of some paths at this tip (archives, for the legacy check). */
  read(paths: string[]): Promise<Map<string, Buffer>>;
  /** The blob id of each active file (a version: any heartbeat changes it). */
  versions: Map<string, string>;
  /** In the user store: the marker saying the locks are shared through a remote now. */
  movedTo: { url: string; name?: string; joined: boolean } | null;
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

/** How long the remote's tip as this store last read or pushed it is decided on again without a new ls-remote. */
const REMOTE_REUSE_MS = 1000;

/**
 * The wait after losing a compare-and-swap: "full jitter" (a uniform draw up to an exponential cap of 5 ms
 * .. 400 ms), so that writers who collided do not collide again in step. Heartbeats commit at most once
 * per lock per spacing (lifecycle.ts), so a steady heartbeat leaves gaps a writer's transaction fits in.
 */
function backoff(attempt: number): number {
  return Math.random() * Math.min(400, 5 * 2 ** Math.min(attempt, 10)) + 2;
}

/** `session started` of a lock file's text (its hold), for "was this hold archived already". */
function holdOf(text: string): string | null {
  const session = /^session:\s*(\S+)\s*$/m.exec(text)?.[1];
  const started = /^started:\s*(\S+)\s*$/m.exec(text)?.[1];
  return session && started ? `${session} ${started.replace(/^['"]|['"]$/g, '')}` : null;
}

export class LockStore {
  readonly nd: string;
  readonly dirs: { active: string; archive: string; components: string; componentArchive: string };
  /** What this store found and repaired (stale private files, a stale ref lock, dead claims, ...). */
  readonly recovered: string[] = [];
  /** Notes for `lock status` on how the locks are shared (a switch to a remote, a join). */
  readonly sharing: string[] = [];
  viewProblems: ViewProblem[] = [];
  /** Set by openLockStore when it used a kept answer about the remote past its minute (refreshRemoteProbe). */
  staleRefresh: (() => Promise<void>) | null = null;
  /** Whether what the background question learns is still said (quietBackground). */
  private backgroundHeard = true;

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

  /**
   * Asks the remote again whether it holds the locks, without waiting for the answer, when this store was
   * opened on a kept answer past its minute (ShareRequest.probeStaleMs); the answer is kept for the next
   * call. Once per store; resolves when the answer is kept (at once when there is nothing to ask).
   */
  refreshRemoteProbe(): Promise<void> {
    const r = this.staleRefresh;
    this.staleRefresh = null;
    return r ? r() : Promise.resolve();
  }

  /**
   * From now on the background question's answer is kept but not said: the command's verdict is about to be
   * the last line (`--json` readers take it from there); the next command says it when it acts on it.
   */
  quietBackground(): void {
    this.backgroundHeard = false;
  }

  /**
   * Makes ready the ref moves the next changes with these actions will make (`lock`, `release`), so that
   * they do not start git when they are made (git/ref-writer.ts): the store's compare-and-swap and, in the
   * user store's mode, this clone's copy following it. A run calls it before its lock and once it holds it.
   */
  prepareMoves(actions: string[]): void {
    if (this.mode === 'remote') return; // its moves are pushes; the clone's copy follows after them
    for (const a of actions) prepareRefMoves(this.db(), `offhost: ${a}`);
    if (this.mode === 'user') prepareRefMoves(this.repo, 'offhost: follow the hub');
  }

  backgroundSays(line: string): void {
    if (this.backgroundHeard) this.log(line);
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

  /** Where this store's locks are shared now: 'remote', 'user' (the per-user store) or 'clone' (its own). */
  get mode(): HubMode {
    if (!this.opts.remote) return 'clone';
    return this.opts.remote === this.opts.hub?.userStore ? 'user' : 'remote';
  }

  get monotonic(): Monotonic {
    return this.opts.monotonic ?? systemMonotonic;
  }

  /** Where the lock ref of this store lives, for messages: the remote, the user store, or this clone. */
  get where(): string {
    return this.mode === 'remote' ? `${LOCK_REF} on ${this.opts.remote}` : this.mode === 'user' ? `${LOCK_REF} in the user store ${this.opts.remote}` : LOCK_REF;
  }

  private broken(why: string, file?: string): LockStoreBrokenError {
    return new LockStoreBrokenError(
      `the lock store is broken: ${why}. It is not read as empty (a holder could be hidden); nothing was changed. ` +
        `Run \`offhost lock repair\` to archive what can still be read and start a new tip (docs/LOCKS.md "Repair")`,
      file,
    );
  }

  private storeRepo: Repo | null = null;
  /** In remote mode: the remote's tip as the last transaction read or pushed it, and when (see base()). */
  private remoteSeen: { tip: string; at: number } | null = null;
  /** What the last base() read: the hub's tip and this clone's copy then (user mode). */
  private lastBase: { tip: string | null; local: string | null } | null = null;

  /**
   * The repository whose lock ref this store decides on and builds commits in: the user store itself in
   * user mode (a bare repository on this machine: no push or fetch inside the retry loop), else the clone.
   */
  db(): Repo {
    if (this.mode !== 'user') return this.repo;
    const dir = this.opts.remote!;
    if (!this.storeRepo || this.storeRepo.gitDir !== dir) this.storeRepo = { root: null, gitDir: dir, commonDir: dir, ...(this.repo.env ? { env: this.repo.env } : {}) };
    return this.storeRepo;
  }

  /** Snapshots already read, by repository and tip: a commit's tree never changes. */
  private readonly snapshots = new Map<string, Snapshot>();

  /** The snapshot of a tip (in `repo`, default the store's db). */
  async snapshot(tip: string | null, repo: Repo = this.db()): Promise<Snapshot> {
    const key = tip === null ? null : `${repo.commonDir}\0${tip}`;
    const kept = key === null ? undefined : this.snapshots.get(key);
    if (kept) return kept;
    const snap = await this.readSnapshot(tip, repo);
    if (key !== null) {
      if (this.snapshots.size > 8) this.snapshots.delete(this.snapshots.keys().next().value!);
      this.snapshots.set(key, snap);
    }
    return snap;
  }

  private async readSnapshot(tip: string | null, repo: Repo): Promise<Snapshot> {
    let tree: Awaited<ReturnType<typeof readTree>>;
    try {
      tree = await readTree(repo, tip, [this.dirs.active, this.dirs.components, '.offhost']);
    } catch (err) {
      throw this.broken(`${this.where} points at commit ${tip}, whose tree cannot be read (${(err as Error).message.split('\n')[0]})`);
    }
    for (const e of tree.odd) {
      if (e.path.startsWith('.offhost/')) continue;
      const what = e.type === 'commit' ? 'a gitlink (a submodule commit)' : e.mode === '120000' ? 'a symbolic link' : e.type === 'tree' ? 'a folder' : `an entry of mode ${e.mode}`;
      throw this.broken(`${e.path} in ${this.where} at ${tip?.slice(0, 12)} is ${what}, not a lock file`, `${LOCK_REF}:${e.path}`);
    }
    if (tree.missing.length) throw this.broken(`the object of ${tree.missing[0]} in ${this.where} at ${tip?.slice(0, 12)} is missing (${tree.missing.length} file(s))`, `${LOCK_REF}:${tree.missing[0]}`);
    let names: Set<string> | null = null;
    const m = new Map<string, Buffer>();
    const versions = new Map<string, string>();
    let marker: Buffer | undefined;
    for (const [p, f] of tree.files) {
      if (p === SHARED_THROUGH) marker = f.data;
      if (p.startsWith('.offhost/')) continue;
      m.set(p, f.data);
      versions.set(p, f.sha);
    }
    const snapObj: Snapshot = {
      tip,
      files: m,
      versions,
      movedTo: parseMarker(marker),
      archiveNames: async () => {
        if (!names) names = (await readTree(repo, tip, [], [this.dirs.archive, this.dirs.componentArchive])).names;
        return names;
      },
      archiveNamesLike: async (pathPrefix: string) => {
        const slash = pathPrefix.lastIndexOf('/');
        const found = tip && !names && slash > 0 ? await namesStartingWith(repo, tip, pathPrefix.slice(0, slash), pathPrefix.slice(slash + 1)) : null;
        if (found) return found;
        // Listed already, or the folder's tree is odd: from the whole list, as every other reader.
        const all = tip ? await snapObj.archiveNames() : new Set<string>();
        return new Set([...all].filter((p) => p.startsWith(pathPrefix)));
      },
      read: (paths: string[]) => readPaths(repo, tip, paths),
    };
    return snapObj;
  }

  /** This clone's own copy of the lock ref: absent, a commit, or a LockStoreBrokenError. */
  private async localTip(): Promise<string | null> {
    const st = await inspectRef(this.repo, LOCK_REF);
    if (st.state === 'broken') throw this.broken(`this clone's ${st.why}`, LOCK_REF);
    return st.state === 'commit' ? st.sha : null;
  }

  /** The tip the next decision is based on, in db(): the user store's, the remote's (fetched), or this clone's. */
  private async base(): Promise<string | null> {
    if (this.mode === 'user') return this.userBase();
    const local = await this.localTip();
    if (!this.opts.remote) return local;
    const remote = this.opts.remote;
    // The remote's tip as this store's previous transaction left it, moments ago (a command's sweep of
    // ended runs, then its own change): decided on again without another ls-remote. Safe as any snapshot
    // is: the push's lease still checks it, and a lost lease re-reads the remote.
    const seen = this.remoteSeen;
    this.remoteSeen = null;
    if (seen && Date.now() - seen.at < REMOTE_REUSE_MS && seen.tip === local) return seen.tip;
    for (let i = 0; i < 20; i++) {
      const tip = await remoteRef(this.repo, remote, LOCK_REF);
      if (tip === null) {
        // The hub has no lock history yet: this clone's own (made before its locks were shared) becomes it.
        if (!local) return null;
        const r = await pushLease(this.repo, remote, LOCK_REF, local, null);
        if (r.outcome === 'refused') throw new LockPushRefusedError(`${r.message}; nothing was changed`);
        if (r.outcome === 'ok') this.sharing.push(`this clone's lock history was not shared yet: it is now the history of ${this.where}`);
        continue;
      }
      if (/^0+$/.test(tip)) throw this.broken(`${this.where} holds something that is not an object id (a garbage ref file)`);
      if (!(await hasObject(this.repo, tip))) {
        try {
          await fetchRef(this.repo, remote, LOCK_REF);
        } catch (err) {
          // The hub names an object it cannot send: broken there, not a race.
          throw this.broken(`${this.where} points at ${tip}, which cannot be fetched (${(err as Error).message.split('\n')[0]})`);
        }
      }
      const st = await objectState(this.repo, LOCK_REF, tip);
      if (st.state === 'broken') {
        if (/missing/.test(st.why) && i < 3) continue; // moved between ls-remote and fetch
        throw this.broken(`${this.where}: ${st.why.replace(`${LOCK_REF} `, '')}`);
      }
      if (local !== tip && local !== null && !(await this.isAncestor(this.repo, local, tip))) {
        // This clone has lock history the hub lacks: its live locks are copied there first, never hidden.
        if (await this.join(await this.snapshot(local, this.repo), `this clone's local lock history`)) continue;
      }
      if (local !== tip) await this.follow(local, tip);
      this.remoteSeen = { tip, at: Date.now() };
      return tip;
    }
    throw new LockError(`${this.where} kept moving while offhost fetched it; nothing was changed, try again`);
  }

  /** The user store's tip; this clone's history the store never had is copied in first (never hidden). */
  private async userBase(): Promise<string | null> {
    const store = this.db();
    for (let i = 0; i < 50; i++) {
      const local = await this.localTip();
      const st = await inspectRef(store, LOCK_REF, local ? [`${local}^{commit}`] : []);
      if (st.state === 'broken') throw this.broken(`the user store's ${st.why}`);
      const tip = st.state === 'commit' ? st.sha : null;
      this.lastBase = { tip, local };
      if (local === null || local === tip || st.has?.[0]) return tip;
      if (tip === null) {
        // The store is new: this clone's lock history (from before its locks were shared) becomes its history.
        const r = await pushLease(this.repo, store.gitDir, LOCK_REF, local, null);
        if (r.outcome === 'ok') this.sharing.push(`this clone's lock history is now the history of the user store ${store.gitDir}`);
        if (r.outcome === 'refused') throw new LockPushRefusedError(`${r.message}; nothing was changed`);
        continue;
      }
      await this.join(await this.snapshot(local, this.repo), `this clone's local lock history`);
      // Joined (or nothing to join): this clone's copy follows the store, its own history kept aside.
      const now = await inspectRef(store, LOCK_REF);
      if (now.state === 'commit') {
        await copyObjects(store, this.repo, now.sha, []);
        await this.follow(local, now.sha);
      }
      if ((await readRef(this.repo, LOCK_REF)) === (now.state === 'commit' ? now.sha : null)) return now.state === 'commit' ? now.sha : null;
    }
    throw new LockError(`${this.where} kept moving while offhost read it; nothing was changed, try again`);
  }

  /**
   * In user mode: this clone's copy follows the user store's tip (so git show/log and the view work here).
   * `known`: this clone's copy as base() read it (skips a read), when the caller knows it.
   */
  private async followStore(tip: string | null, known?: string | null): Promise<void> {
    if (this.mode !== 'user' || tip === null) return;
    const local = known !== undefined ? known : await readRef(this.repo, LOCK_REF);
    if (local === tip) return;
    // The commit this process just made on the copy's tip: its few objects are written here as well.
    if (!(known !== undefined && writtenInto(this.repo, tip, local)) && !(await hasObject(this.repo, tip))) await copyObjects(this.db(), this.repo, tip, [local]);
    await this.follow(local, tip, known !== undefined && this.lastBase?.tip === local);
  }

  private async isAncestor(repo: Repo, a: string, b: string): Promise<boolean> {
    const anc = await runGit(['merge-base', '--is-ancestor', a, b], { cwd: repo.gitDir, ...(repo.env ? { env: repo.env } : {}) });
    return anc.code === 0;
  }

  /** The hub's tip and a snapshot of it, for join: the remote's (fetched) or the user store's. */
  private async hubSnapshot(): Promise<Snapshot> {
    if (this.mode === 'user') {
      const st = await inspectRef(this.db(), LOCK_REF);
      if (st.state === 'broken') throw this.broken(`the user store's ${st.why}`);
      return this.snapshot(st.state === 'commit' ? st.sha : null);
    }
    const tip = await remoteRef(this.repo, this.opts.remote!, LOCK_REF);
    if (tip && !(await hasObject(this.repo, tip))) await fetchRef(this.repo, this.opts.remote!, LOCK_REF);
    return this.snapshot(tip, this.repo);
  }

  /** Swaps the hub's ref from `old` to `next` (built in db()): compare-and-swap, push with a lease. */
  private async swap(next: string, old: string | null, why: string): Promise<'ok' | 'moved'> {
    if (this.mode === 'remote') {
      const r = await pushLease(this.repo, this.opts.remote!, LOCK_REF, next, old);
      if (r.outcome === 'refused') throw new LockPushRefusedError(`${r.message}; nothing was changed, and offhost does not retry a refusal`);
      if (r.outcome === 'ok') {
        const local = await readRef(this.repo, LOCK_REF);
        if (local === old || local === null) await casRef(this.repo, LOCK_REF, next, local, `offhost: ${why}`, (w) => this.note(w));
        this.remoteSeen = { tip: next, at: Date.now() };
      } else this.remoteSeen = null;
      return r.outcome;
    }
    return casRef(this.db(), LOCK_REF, next, old, `offhost: ${why}`, (w) => this.note(w));
  }

  /**
   * Copies the live active locks of `from` that the hub lacks into the hub (one commit, compare-and-swap),
   * skipping a lock the hub already archived (same session and start). True when it wrote something.
   */
  async join(from: Snapshot, what: string): Promise<boolean> {
    if (this.mode === 'clone' || from.files.size === 0) return false;
    for (let i = 0; i < 50; i++) {
      const hub = await this.hubSnapshot();
      const names = [...(await hub.archiveNames())];
      const adds = new Map<string, string>();
      for (const [p, data] of from.files) {
        if (hub.files.has(p)) continue;
        const text = data.toString('utf8');
        const hold = holdOf(text);
        if (!hold) continue;
        const stem = p.slice(p.lastIndexOf('/') + 1).replace(/\.md$/, '');
        const candidates = names.filter((n) => n.slice(n.lastIndexOf('/') + 1).startsWith(`${stem}-`));
        const archivedHolds = new Set<string>();
        if (candidates.length) for (const b of (await hub.read(candidates)).values()) archivedHolds.add(holdOf(b.toString('utf8')) ?? '');
        if (archivedHolds.has(hold)) continue;
        adds.set(p, text);
      }
      if (adds.size === 0) return false;
      const db = this.mode === 'user' ? this.db() : this.repo;
      const commit = await buildCommit(db, hub.tip, adds, `offhost: join ${adds.size} lock(s) from ${what}`, { name: 'offhost (join)', email: `offhost@${this.host}` });
      if ((await this.swap(commit, hub.tip, 'join')) === 'ok') {
        this.sharing.push(`copied ${[...adds.keys()].join(', ')} from ${what} into ${this.where}, so that no holder is hidden`);
        return true;
      }
      await sleep(backoff(i));
    }
    throw new LockError(`${this.where} kept moving while offhost copied ${what} into it; nothing was changed, try again`);
  }

  /** Moves the local ref to the hub's tip; a local history the hub does not have is kept aside. */
  private async follow(local: string | null, tip: string, descends = false): Promise<void> {
    if (local && !descends && !(await this.isAncestor(this.repo, local, tip))) {
      const aside = `refs/offhost/diverged/${this.clock.now().toISOString().replace(/[:.]/g, '-')}-${process.pid}`;
      await casRef(this.repo, aside, local, null, 'offhost: local lock history not on the hub');
      this.note(`this clone's copy of ${LOCK_REF} had history ${this.where} does not have (its live locks were copied there); it is kept at ${aside}`);
    }
    // Another process of this clone may follow at the same time, to an older tip as well as a newer one
    // (a release that wrote before this acquire follows after it): the copy ends at the newer of the two.
    let from = local;
    for (let i = 0; i < 20; i++) {
      if ((await casRef(this.repo, LOCK_REF, tip, from, 'offhost: follow the hub', (w) => this.note(w))) === 'ok') return;
      const now = await readRef(this.repo, LOCK_REF);
      if (now === tip) return;
      if (now !== null) {
        if (await this.isAncestor(this.repo, tip, now)) return; // followed to a newer tip already
        if (!(await this.isAncestor(this.repo, now, tip))) return; // not the hub's history: the next operation keeps it aside
      }
      from = now;
    }
  }

  /**
   * In the user store: the marker says the repository's locks are shared through a remote now. Copies the
   * user store's live locks there (once: the marker then says `joined`), and turns this store to the remote.
   */
  private async adopt(snap: Snapshot, marker: { url: string; name?: string; joined: boolean }): Promise<void> {
    const { url, joined } = marker;
    const store = this.db();
    if (this.opts.hub?.forbidRemote) {
      throw new LockError(
        `this repository's locks are shared through the remote ${url} (the user store ${store.gitDir} says so): --no-push would take a lock no other clone sees, so it is refused; nothing was changed. Drop --no-push`,
      );
    }
    const name = await remoteNamed(this.repo, url, marker.name);
    this.opts.remote = name;
    if (!joined) {
      await this.join(snap, `the user store ${store.gitDir}`);
      // Marked joined on the user store (a compare-and-swap; losing it only means another process did it).
      const done = await buildCommit(store, snap.tip, new Map([[SHARED_THROUGH, markerText(url, marker.name ?? name, true)]]), 'offhost: locks shared through the remote (joined)', { name: 'offhost (share)', email: `offhost@${this.host}` });
      await casRef(store, LOCK_REF, done, snap.tip, 'offhost: joined').catch(() => undefined);
    }
  }

  /** In the user store: writes the marker that moves this repository's locks to `remoteName`. */
  private async markShared(snap: Snapshot, remoteName: string): Promise<'ok' | 'moved'> {
    const url = await this.remoteUrlOf(remoteName);
    const store = this.db();
    const commit = await buildCommit(store, snap.tip, new Map([[SHARED_THROUGH, markerText(url, remoteName, false)]]), `offhost: locks shared through ${url}`, { name: 'offhost (share)', email: `offhost@${this.host}` });
    const r = await casRef(store, LOCK_REF, commit, snap.tip, 'offhost: shared through a remote');
    if (r === 'ok') this.sharing.push(`this repository's locks are shared through ${remoteName} (${url}) from now on, for every clone on this machine (marked in ${store.gitDir})`);
    return r;
  }

  private async remoteUrlOf(name: string): Promise<string> {
    const r = await runGit(['remote', 'get-url', name], { cwd: this.repo.root ?? this.repo.gitDir, ...(this.repo.env ? { env: this.repo.env } : {}) });
    const url = r.stdout.toString('utf8').trim();
    if (r.code !== 0 || !url) throw new LockError(`this clone has no remote '${name}' to share its locks through (\`git remote -v\`); nothing was changed`);
    return url;
  }

  /**
   * The one transaction. `decide` is called on a fresh snapshot every attempt and must not have effects
   * outside its result; its changes are committed on that snapshot's tip and the ref is swapped, or the
   * whole thing is retried on the new tip (only when the ref moved: a refusal is final).
   */
  async transact<R>(decide: (s: Snapshot) => Promise<Plan<R>>, how: { readOnly?: boolean; view?: boolean } = {}): Promise<R & Committed> {
    const deadlineMs = this.opts.deadlineMs ?? 60_000;
    const deadline = Date.now() + deadlineMs;
    for (let attempt = 0; ; attempt++) {
      let tip: string | null;
      try {
        tip = await this.base();
      } catch (err) {
        // A read (status) still answers when the remote cannot be reached: from this clone's copy, saying so.
        // (git failing to reach it is a GitError: that one is answered from the copy; offhost's own refusals are not)
        if (!how.readOnly || this.mode !== 'remote' || (isOffhostError(err) && !(err instanceof GitError))) throw this.unchanged(err);
        tip = await this.localTip();
        this.note(`the remote ${this.opts.remote} could not be read (${(err as Error).message.split('\n')[0]}): showing this clone's copy of ${LOCK_REF}`);
      }
      const snap = await this.snapshot(tip, this.mode === 'remote' ? this.repo : this.db());
      if (this.mode === 'user') {
        if (snap.movedTo) {
          await this.adopt(snap, snap.movedTo);
          continue;
        }
        const want = this.opts.hub?.wantRemote && this.opts.hub.shareRemote;
        if (want && !how.readOnly) {
          if ((await this.markShared(snap, this.opts.hub!.shareRemote!)) === 'moved') await sleep(backoff(attempt));
          continue;
        }
      }
      const plan = await decide(snap);
      if (!plan.changes || plan.changes.size === 0) {
        await this.followStore(snap.tip, this.lastBase?.tip === snap.tip ? this.lastBase.local : undefined).catch(() => undefined);
        if (how.view !== false) await this.view(snap.files, snap.tip);
        return { ...plan.result, commit: null, pushed: false };
      }
      let commit: string;
      let swapped: 'ok' | 'moved';
      try {
        commit = await buildCommit(this.db(), tip, plan.changes, this.message(plan), { name: `offhost (${plan.session ?? 'lock'})`, email: `offhost@${this.host}` });
        swapped = await this.swap(commit, tip, plan.action ?? 'change');
      } catch (err) {
        throw this.unchanged(err);
      }
      if (swapped === 'ok') {
        await this.followStore(commit, this.lastBase?.tip === tip ? this.lastBase.local : undefined).catch((err: Error) => this.note(`this clone's copy of ${LOCK_REF} could not follow the user store (${err.message.split('\n')[0]}); the next lock command retries`));
        const files = new Map(snap.files);
        for (const [p, c] of plan.changes) {
          if (!p.startsWith(`${this.dirs.active}/`) && !p.startsWith(`${this.dirs.components}/`)) continue;
          if (c === null) files.delete(p);
          else files.set(p, Buffer.from(c, 'utf8'));
        }
        await this.view(files, commit);
        return { ...plan.result, commit, pushed: this.mode === 'remote' };
      }
      if (Date.now() > deadline) {
        throw new LockError(`${this.where} kept changing under ${attempt + 1} attempts for ${Math.round(deadlineMs / 1000)} s (other writers won every compare-and-swap); nothing was changed by this command, try again`);
      }
      await sleep(backoff(attempt));
    }
  }

  private unchanged(err: unknown): Error {
    const msg = err instanceof Error ? err.message : String(err);
    if (isOffhostError(err) && !(err instanceof GitError)) return err as Error;
    // The repository the change was being written in: the user store in user mode, else the clone.
    const where = this.db().commonDir;
    const hint = /Read-only file system|EROFS/i.test(msg)
      ? `${where} is on a read-only file system: make it writable`
      : /No space left|ENOSPC|disk quota/i.test(msg)
        ? `the disk holding ${where} is full: free some space`
        : /remote|push|fetch|ls-remote/i.test(msg)
          ? `check that the remote ${this.opts.remote ?? ''} is reachable`
          : `see git's message (repository ${where})`;
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

/**
 * Asks the remote whether it holds this repository's locks, and keeps a negative answer in the user store
 * (hub.ts keptProbe): 'theirs' (it holds them: not kept), 'none' (it holds none, or only this machine's own
 * history: a clone cloned from another clone here shows that clone's copy), or a note saying why it could
 * not be asked (kept, with the note).
 */
async function askRemote(repo: Repo, remoteName: string, userStore: string, url: string, env: NodeJS.ProcessEnv, clock: Clock, background = false): Promise<'theirs' | 'none' | { note: string }> {
  try {
    const theirs = await remoteRef(repo, remoteName, LOCK_REF, background ? { background } : {});
    if (theirs !== null && !(await hasCommitAt({ cwd: userStore, env }, theirs))) return 'theirs';
    keepProbe(userStore, url, clock.now().getTime(), null);
    return 'none';
  } catch (err) {
    const note = `could not ask the remote ${remoteName} whether it holds ${LOCK_REF} (${(err as Error).message.split('\n')[0]}): locks stay in the user store (this machine's clones only)`;
    keepProbe(userStore, url, clock.now().getTime(), note);
    return { note };
  }
}

/**
 * Asks the remote again, in the background (the answer this call used was past its minute), for the next
 * call: "holds them" drops the kept answer, so the next call asks and goes through the remote.
 */
async function refreshProbe(repo: Repo, remoteName: string, userStore: string, url: string, env: NodeJS.ProcessEnv, clock: Clock, log: (line: string) => void): Promise<void> {
  if ((await askRemote(repo, remoteName, userStore, url, env, clock, true)) !== 'theirs') return;
  forgetProbe(userStore);
  log(`the remote ${remoteName} holds ${LOCK_REF} (asked while this command ran): this repository's locks are shared there; the next lock command goes through it (this command's lock stays in this machine's user store until it is released)`);
}

/** How a command asks for the repository's sharing mode to be found (hub.ts). */
export interface ShareRequest {
  /** The clone's remote to share through (config `locks.remote`, default origin). */
  remoteName: string;
  /** --push (true) / --no-push (false) / neither (undefined). */
  flag?: boolean;
  /** `locks.push: true` in the configuration. */
  configPush: boolean;
  /** Ask the remote whether it holds refs/offhost/locks already (the repository's locks are shared there). */
  probeRemote: boolean;
  /**
   * Use the answer of a probe made less than this many milliseconds ago, when it was "the remote holds none
   * of this repository's locks" or "could not be asked" (same URL); unset: ask every time (doctor).
   */
  probeKeepMs?: number;
  /**
   * A kept answer older than `probeKeepMs` but younger than this is used too, and the store's
   * refreshRemoteProbe asks the remote again in the background, for the next call (`offhost run`, while its
   * command runs); unset: such an answer is not used, the remote is asked before going on.
   */
  probeStaleMs?: number;
}

/**
 * Opens the store of the repository holding `opts.repoDir`, removing private files crashed processes left.
 * With `share`, the store goes where the repository's locks are shared (user store or remote), whatever
 * this call's flags say: a flag can ask to start sharing through the remote, never to leave it.
 */
export async function openLockStore(opts: LockStoreOptions & { share?: ShareRequest }): Promise<LockStore> {
  const { share, repo: opened, ...rest } = opts;
  const repo = opened ?? (await openRepoAt(opts.repoDir, opts.env));
  const o: LockStoreOptions = { ...rest };
  const early: string[] = [];
  let staleRefresh: (() => Promise<void>) | null = null;
  if (share) {
    const env = opts.env ?? process.env;
    // The remote's URL is asked while the user store's marker is read (a --push without a remote is refused
    // before anything is made).
    const urlAsked = remoteUrl(repo, share.remoteName);
    urlAsked.catch(() => undefined);
    if (share.flag === true && (await urlAsked) === null) throw new LockError(`--push: this clone has no remote '${share.remoteName}' to share its locks through (\`git remote -v\`; config locks.remote names another); nothing was changed`);
    const identity = await repoIdentity(repo);
    let want = share.flag === true || share.configPush;
    if (identity) {
      const userStore = await ensureUserStore(env, identity);
      o.sightingsDir ??= sightingsDir(env);
      o.remote = userStore;
      const m = await blobAt({ cwd: userStore, env }, `${LOCK_REF}:${SHARED_THROUGH}`);
      const url = await urlAsked;
      const hasRemote = url !== null;
      const marker = m !== null ? parseMarker(m) : null;
      const marked = marker !== null;
      // A recent answer that the remote holds no locks of this repository (or could not be asked) stands
      // for `probeKeepMs` (hub.ts keptProbe): a network round trip per run is not paid for a change that
      // another machine makes once (docs/LOCKS.md).
      const keepMs = share.probeKeepMs ?? 0;
      const kept = !marked && !want && url !== null && share.probeRemote && keepMs > 0 ? keptProbe(userStore, url, Math.max(keepMs, share.probeStaleMs ?? 0), opts.clock.now().getTime()) : null;
      if (kept !== null) {
        if (kept.note) early.push(kept.note);
        // Past its minute, the answer stands for this call while the remote is asked again for the next one.
        if (kept.ageMs >= keepMs) staleRefresh = () => refreshProbe(repo, share.remoteName, userStore, url!, env, opts.clock, (l) => store.backgroundSays(l));
      } else if (!marked && !want && url !== null && share.probeRemote) {
        const asked = await askRemote(repo, share.remoteName, userStore, url, env, opts.clock);
        if (asked === 'theirs') {
          if (share.flag === false) {
            throw new LockError(
              `the remote ${share.remoteName} holds ${LOCK_REF}: this repository's locks are shared there, and --no-push would take a lock the other clones and machines do not see; nothing was changed. Drop --no-push`,
            );
          }
          want = true;
          early.push(`the remote ${share.remoteName} holds ${LOCK_REF}: this repository's locks are shared there, so this clone's go there too`);
        } else if (asked !== 'none') early.push(asked.note);
      }
      o.hub = { userStore, identity, ...(hasRemote ? { shareRemote: share.remoteName } : {}), wantRemote: want, forbidRemote: share.flag === false };
      // Shared through a remote, and the user store's locks copied there already: straight to the remote
      // (until then the first transaction copies them: LockStore.adopt).
      if (marker?.joined) {
        if (share.flag === false) {
          throw new LockError(
            `this repository's locks are shared through the remote ${marker.url} (the user store ${userStore} says so): --no-push would take a lock no other clone sees, so it is refused; nothing was changed. Drop --no-push`,
          );
        }
        o.remote = await remoteNamed(repo, marker.url, marker.name);
      }
    } else if (want && (await urlAsked) !== null) {
      o.remote = share.remoteName;
    }
  }
  const store = new LockStore(repo, o);
  store.staleRefresh = staleRefresh;
  for (const e of early) store.sharing.push(e);
  for (const f of removeStaleTemp(repo)) store.note(`removed ${f}, a private index of an offhost process that no longer runs`);
  if (store.mode === 'user') for (const f of removeStaleTemp(store.db())) store.note(`removed ${f}, a private index of an offhost process that no longer runs`);
  return store;
}
