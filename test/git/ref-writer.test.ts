// Ref moves through a `git update-ref --stdin` made ready ahead (src/git/ref-writer.ts, used by casRef in
// src/git/ref-tree.ts), on real repositories: the move is git's compare-and-swap with git's reflog message,
// exactly as a one-shot `git update-ref -m REASON REF NEW OLD`; a writer that refuses, dies or was never
// made leaves the move to the one-shot git, and none outlives the process that made it.
import { afterEach, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { processesWhere } from '../helpers/processes.js';
import { casRef, openRepoAt, prepareRefMoves, readRef, type Repo } from '../../src/git/ref-tree.js';
import { closeRefWriters, refWriterPids } from '../../src/git/ref-writer.js';
import { closeGitBatches } from '../../src/git/batch.js';
import { cleanEnv, g, tempRepo } from '../locks/lifecycle-helpers.js';

const REF = 'refs/offhost/locks';
afterEach(() => {
  closeRefWriters();
  closeGitBatches();
});

/** A repository whose git is a wrapper recording every `git update-ref` it starts, and two commits. */
function setup(): { repo: Promise<Repo>; dir: string; a: string; b: string; c: string; oneShots: () => string[] } {
  const dir = tempRepo();
  const bin = join(dir, '..', 'bin');
  mkdirSync(bin, { recursive: true });
  const log = join(dir, '..', 'git.log');
  writeFileSync(log, '');
  const real = execFileSync('sh', ['-c', 'command -v git'], { encoding: 'utf8' }).trim();
  writeFileSync(join(bin, 'git'), `#!/bin/sh\ncase "$1" in update-ref) echo "$*" >> '${log}';; esac\nexec '${real}' "$@"\n`);
  chmodSync(join(bin, 'git'), 0o755);
  g(dir, 'config', 'core.logAllRefUpdates', 'always');
  const a = g(dir, 'rev-parse', 'HEAD').trim();
  const b = g(dir, 'commit-tree', '-p', a, '-m', 'b', `${a}^{tree}`).trim();
  const c = g(dir, 'commit-tree', '-p', b, '-m', 'c', `${a}^{tree}`).trim();
  const env = cleanEnv({ PATH: `${bin}:${process.env.PATH}` });
  return { repo: openRepoAt(dir, env), dir, a, b, c, oneShots: () => readFileSync(log, 'utf8').split('\n').filter((l) => l && !l.includes('--stdin')) };
}

const reflog = (dir: string) => g(dir, 'reflog', 'show', '--format=%gs', REF).trim().split('\n');

describe('a ref move through a writer made ready ahead', () => {
  it('is git\'s own move (compare-and-swap, reflog message), without a git started for it', async () => {
    const s = setup();
    const repo = await s.repo;
    prepareRefMoves(repo, 'offhost: lock');
    expect(await casRef(repo, REF, s.a, null, 'offhost: lock')).toBe('ok');
    expect(await casRef(repo, REF, s.b, s.a, 'offhost: lock')).toBe('ok');
    expect(await readRef(repo, REF)).toBe(s.b);
    expect(reflog(s.dir)).toEqual(['offhost: lock', 'offhost: lock']);
    expect(s.oneShots()).toEqual([]);
    // Another reason has no writer ready: git is started for it, as before.
    expect(await casRef(repo, REF, s.c, s.b, 'offhost: release')).toBe('ok');
    expect(s.oneShots()).toEqual([`update-ref -m offhost: release ${REF} ${s.c} ${s.b}`]);
    expect(reflog(s.dir)[0]).toBe('offhost: release');
  });

  it('a ref that is not at the old value is "moved", nothing changes, and the next move starts git', async () => {
    const s = setup();
    const repo = await s.repo;
    g(s.dir, 'update-ref', REF, s.b);
    prepareRefMoves(repo, 'offhost: lock');
    expect(await casRef(repo, REF, s.c, s.a, 'offhost: lock')).toBe('moved');
    expect(await readRef(repo, REF)).toBe(s.b);
    expect(await casRef(repo, REF, s.a, null, 'offhost: lock')).toBe('moved'); // must not exist: it does
    expect(s.oneShots()).toEqual([`update-ref -m offhost: lock ${REF} ${s.a} 0000000000000000000000000000000000000000`]);
    expect(await casRef(repo, REF, s.c, s.b, 'offhost: lock')).toBe('ok');
    expect(await readRef(repo, REF)).toBe(s.c);
  });

  it('a writer killed before the move leaves it to a one-shot git, which makes it', async () => {
    const s = setup();
    const repo = await s.repo;
    prepareRefMoves(repo, 'offhost: lock');
    const [pid] = refWriterPids();
    process.kill(pid!, 'SIGKILL');
    expect(await casRef(repo, REF, s.a, null, 'offhost: lock')).toBe('ok');
    expect(await readRef(repo, REF)).toBe(s.a);
    expect(s.oneShots()).toHaveLength(1);
  });

  it('a stale .lock left by a killed git: the writer cannot move, the one-shot path removes it and moves', async () => {
    const s = setup();
    const repo = await s.repo;
    g(s.dir, 'update-ref', REF, s.a);
    const lock = join(repo.commonDir, `${REF}.lock`);
    writeFileSync(lock, '');
    const old = new Date(Date.now() - 60_000);
    utimesSync(lock, old, old);
    prepareRefMoves(repo, 'offhost: lock');
    const notes: string[] = [];
    expect(await casRef(repo, REF, s.b, s.a, 'offhost: lock', (w) => notes.push(w))).toBe('ok');
    expect(await readRef(repo, REF)).toBe(s.b);
    expect(notes.join()).toContain('removed');
  });

  it('no writer outlives its process: closed at exit, and gone at EOF when the process dies', async () => {
    const s = setup();
    const repo = await s.repo;
    prepareRefMoves(repo, 'offhost: release');
    const pids = refWriterPids();
    expect(pids).toHaveLength(1);
    const writers = () => processesWhere((argv) => argv.includes('update-ref') && argv.includes('--stdin') && argv.includes('offhost: release')).filter((p) => pids.includes(p));
    expect(writers()).toEqual(pids);
    closeRefWriters();
    for (let i = 0; i < 100 && writers().length; i++) await new Promise((r) => setTimeout(r, 20));
    expect(writers()).toEqual([]);
  });
});
