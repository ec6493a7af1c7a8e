// The long-lived `git cat-file --batch` of src/git/batch.ts against real git: answers in order whatever the
// bytes, as fresh as a new process's (refs moved and objects written by other processes meanwhile), the
// warnings of a request and only that one, a process that dies is replaced, and none is left running.
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { catFile, closeGitBatches, gitBatchPids } from '../../src/git/batch.js';
import { cleanEnv, tempRepo } from '../locks/lifecycle-helpers.js';
import { WAIT_MS } from '../helpers/hang-guard.js';
import { ended } from '../helpers/processes.js';

afterAll(() => closeGitBatches());
// Each test counts its own processes.
beforeEach(() => closeGitBatches());

const env = cleanEnv();
const git = (cwd: string, args: string[], input?: string | Buffer) => execFileSync('git', args, { cwd, env, input, stdio: ['pipe', 'pipe', 'pipe'] }).toString('utf8').trim();


async function until(what: () => boolean): Promise<void> {
  const end = Date.now() + WAIT_MS;
  while (!what()) {
    if (Date.now() > end) throw new Error('waited too long');
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('one cat-file --batch per repository', () => {
  it('answers many names in order: binary and newline-laden blobs, a big one split across reads, a missing name', async () => {
    const dir = tempRepo();
    const bin = Buffer.from([0, 10, 13, 255, 10, 10, 0x20, 0x6d, 0x69, 0x73, 0x73, 0x69, 0x6e, 0x67, 10]);
    const big = Buffer.alloc(300_000, 'x\n');
    const b1 = git(dir, ['hash-object', '-w', '--stdin'], bin);
    const b2 = git(dir, ['hash-object', '-w', '--stdin'], big);
    // The binary blob holds what looks like a header line (" missing\n") and blank lines.
    const r = await catFile({ cwd: dir, env }, [b1, 'HEAD:no-such-file', b1, b2, 'HEAD:a.txt', `HEAD^{tree}`]);
    expect(r.objects.map((o) => o?.type ?? null)).toEqual(['blob', null, 'blob', 'blob', 'blob', 'tree']);
    expect(r.objects[0]!.data.equals(bin)).toBe(true);
    expect(r.objects[2]!.data.equals(bin)).toBe(true);
    expect(r.objects[3]!.data.equals(big)).toBe(true);
    expect(r.objects[4]!.data.toString()).toBe('a\n');
    expect(r.objects[5]!.id).toBe(git(dir, ['rev-parse', 'HEAD^{tree}']));
    expect(gitBatchPids()).toHaveLength(1);
    // A second request goes to the same process.
    const again = await catFile({ cwd: dir, env }, ['HEAD:b.txt']);
    expect(again.objects[0]!.data.toString()).toBe('b\n');
    expect(gitBatchPids()).toHaveLength(1);
  });

  it('sees a ref moved and a pack written by another git after it started', async () => {
    const dir = tempRepo();
    const first = git(dir, ['rev-parse', 'HEAD']);
    git(dir, ['update-ref', 'refs/offhost/locks', first]);
    expect((await catFile({ cwd: dir, env }, ['refs/offhost/locks'])).objects[0]!.id).toBe(first);
    const second = git(dir, ['commit-tree', 'HEAD^{tree}', '-p', first, '-m', 'next']);
    git(dir, ['update-ref', 'refs/offhost/locks', second, first]);
    expect((await catFile({ cwd: dir, env }, ['refs/offhost/locks'])).objects[0]!.id).toBe(second);
    git(dir, ['pack-refs', '--all']);
    expect((await catFile({ cwd: dir, env }, ['refs/offhost/locks'])).objects[0]!.id).toBe(second);
    // An object that was missing, then arrives in a new pack (the missing answer makes git look again).
    const other = tempRepo('other');
    const blob = git(other, ['hash-object', '-w', '--stdin'], 'arrives later\n');
    expect((await catFile({ cwd: dir, env }, [blob])).objects[0]).toBeNull();
    const pack = execFileSync('git', ['pack-objects', '--stdout', '-q'], { cwd: other, env, input: `${blob}\n` });
    execFileSync('git', ['index-pack', '--stdin'], { cwd: dir, env, input: pack });
    expect((await catFile({ cwd: dir, env }, [blob])).objects[0]!.data.toString()).toBe('arrives later\n');
  });

  it("gives a request git's warnings (a garbage ref file) and not the next request's", async () => {
    const dir = tempRepo();
    git(dir, ['update-ref', 'refs/offhost/locks', 'HEAD']);
    writeFileSync(join(dir, '.git', 'refs', 'offhost', 'locks'), 'garbage\n');
    const bad = await catFile({ cwd: dir, env }, ['refs/offhost/locks']);
    expect(bad.objects[0]).toBeNull();
    expect(bad.warnings).toMatch(/ignoring broken ref refs\/offhost\/locks/);
    const good = await catFile({ cwd: dir, env }, ['HEAD']);
    expect(good.objects[0]!.type).toBe('commit');
    expect(good.warnings).toBe('');
  });

  it('a process that dies fails its request with git\'s words, and the next request gets a new one', async () => {
    const dir = tempRepo();
    const tip = git(dir, ['rev-parse', 'HEAD']);
    await catFile({ cwd: dir, env }, ['HEAD']);
    const [pid] = gitBatchPids();
    // A corrupt loose object: git dies answering it.
    const tree = git(dir, ['rev-parse', 'HEAD^{tree}']);
    const file = join(dir, '.git', 'objects', tree.slice(0, 2), tree.slice(2));
    execFileSync('chmod', ['u+w', file]);
    writeFileSync(file, 'garbage');
    await expect(catFile({ cwd: dir, env }, [`${tip}:a.txt`])).rejects.toThrow(/git cat-file --batch failed: .*(corrupt|inflate|unable to unpack)/);
    await until(() => ended(pid!));
    const next = await catFile({ cwd: dir, env }, [tip]);
    expect(next.objects[0]!.type).toBe('commit');
    expect(gitBatchPids()).not.toContain(pid);
  });

  it('closeGitBatches ends every process', async () => {
    const a = tempRepo('a');
    const b = tempRepo('b');
    await catFile({ cwd: a, env }, ['HEAD']);
    await catFile({ cwd: b, env }, ['HEAD']);
    const pids = gitBatchPids();
    expect(pids.length).toBeGreaterThanOrEqual(2);
    closeGitBatches();
    for (const p of pids) await until(() => ended(p));
    expect(gitBatchPids()).toEqual([]);
  });

  it('refuses a name holding a newline (it would be two requests)', async () => {
    const dir = tempRepo();
    await expect(catFile({ cwd: dir, env }, ['HEAD\nHEAD'])).rejects.toThrow(/newline/);
  });
});
