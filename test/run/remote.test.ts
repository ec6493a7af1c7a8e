// The VM script and its reader without a network: the script run by the real /bin/sh here (the "VM" is
// this machine) against a real git repository's source state, and the stream reader on split and
// binary input.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { configure, g } from '../locks/lifecycle-helpers.js';
import { bootstrapScript, framedScript, HANDSHAKE, LAST_STAT_SKIP, newNonce, PARALLEL_STAT_BYTES, StreamReader, supervisorScript } from '../../src/run/remote.js';
import { diffManifests, readSourceState } from '../../src/routes/source.js';

const tmp = mkdtempSync(join(tmpdir(), 'offhost-remote-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

function repoWithOddNames(): string {
  const repo = join(tmp, `repo-${Math.random().toString(36).slice(2)}`);
  mkdirSync(join(repo, 'sub dir'), { recursive: true });
  g(repo, 'init', '-q', '-b', 'main');
  configure(repo);
  writeFileSync(join(repo, 'plain.txt'), 'plain\n');
  writeFileSync(join(repo, 'sub dir', 'späce ünïcode.txt'), 'unicode\n');
  writeFileSync(join(repo, '-leading-dash'), 'dash\n');
  writeFileSync(join(repo, 'run.sh'), '#!/bin/sh\necho hi\n');
  chmodSync(join(repo, 'run.sh'), 0o755);
  symlinkSync('plain.txt', join(repo, 'link.txt'));
  writeFileSync(join(repo, '.gitignore'), 'ignored/\n');
  mkdirSync(join(repo, 'ignored'));
  writeFileSync(join(repo, 'ignored', 'x'), 'ignored\n');
  g(repo, 'add', '.');
  g(repo, 'commit', '-q', '-m', 'init');
  writeFileSync(join(repo, 'untracked new.txt'), 'new\n');
  return repo;
}

function runScript(script: string, input: Buffer): { stdout: string; status: number | null } {
  // As over ssh, stdin stays open while the command runs: the script's watcher takes the end of its input
  // for a lost connection and stops the command (with spawnSync's input, stdin ends at once: a race).
  const inputFile = join(tmp, `input-${Math.random().toString(36).slice(2)}`);
  writeFileSync(inputFile, input);
  const r = spawnSync('/bin/sh', ['-c', '{ cat "$1"; sleep 2; } | /bin/sh -c "$2"', 'sh', inputFile, script], { encoding: 'utf8' });
  return { stdout: r.stdout, status: r.status };
}

describe('the VM script, run by /bin/sh here', () => {
  it('computes the same fingerprint with coreutils as the laptop does in Node (odd names, exec bit, symlink), then runs the line', async () => {
    const repo = repoWithOddNames();
    const st = await readSourceState({ root: repo, gitDir: join(repo, '.git') });
    expect(st.files).toContain('./untracked new.txt');
    expect(st.files).not.toContain('./ignored/x');
    const nonce = newNonce();
    const script = supervisorScript({ nonce, mode: 'shared', dir: repo, cwd: join(repo, 'sub dir'), listBytes: st.list.length, fingerprint: st.fingerprint, argv: ['bash', '-c', 'pwd; echo "$EXTRA"'], env: { EXTRA: 'x y' }, stdin: false, graceSeconds: 1 });
    const r = runScript(script, Buffer.concat([Buffer.from(`${HANDSHAKE}\n`), st.list]));
    const lines = r.stdout.split('\n');
    expect(lines).toContain(`${nonce} fp ${st.fingerprint}`);
    expect(lines).toContain(`${nonce} go`);
    // The exit line may name what the command left behind after its status (`exit 0 unstopped=…`).
    expect(r.stdout).toMatch(new RegExp(`${nonce} go\n${join(repo, 'sub dir').replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\nx y\n${nonce} exit 0( |\n)`));
    expect(r.status).toBe(0);
  });

  it('a changed file or exec bit on the "VM" side: mismatch, with its manifest; the line does not run', async () => {
    const repo = repoWithOddNames();
    const st = await readSourceState({ root: repo, gitDir: join(repo, '.git') });
    writeFileSync(join(repo, 'plain.txt'), 'changed\n');
    chmodSync(join(repo, 'run.sh'), 0o644);
    const nonce = newNonce();
    const script = supervisorScript({ nonce, mode: 'shared', dir: repo, cwd: repo, listBytes: st.list.length, fingerprint: st.fingerprint, argv: ['bash', '-c', `touch ${tmp}/ran`], env: {}, stdin: false, graceSeconds: 1 });
    const out: Buffer[] = [];
    const reader = new StreamReader(nonce, (b) => out.push(b));
    reader.push(Buffer.from(runScript(script, Buffer.concat([Buffer.from(`${HANDSHAKE}\n`), st.list])).stdout));
    expect(reader.preamble.end).toBe('mismatch');
    const d = diffManifests(st.manifest, reader.manifestText);
    expect(d.differ.sort()).toEqual(['./link.txt', './plain.txt', './run.sh']);
    expect(d.missing).toEqual([]);
    expect(out).toEqual([]);
  });

  it("the copy's listing runs beside the verification, and a script that stops at a mismatch waits for it (nothing of it outlives the session)", async () => {
    const repo = repoWithOddNames();
    const st = await readSourceState({ root: repo, gitDir: join(repo, '.git') });
    const bin = mkdtempSync(join(tmp, 'bin-'));
    const mark = join(bin, 'listing-done');
    // The listing's find (run from the copy's root) takes half a second and says when it has finished, and
    // whether the script had removed its temporary folder by then (its output file is then a deleted one).
    const realFind = execFileSync('sh', ['-c', 'command -v find'], { encoding: 'utf8' }).trim();
    writeFileSync(
      join(bin, 'find'),
      `#!/bin/sh\nif [ "$1" = . ]; then "${realFind}" "$@"; rc=$?; sleep 0.5; case $(readlink /proc/$$/fd/1) in *deleted*) : > "${mark}.late";; esac; : > "${mark}"; exit $rc; fi\nexec "${realFind}" "$@"\n`,
    );
    chmodSync(join(bin, 'find'), 0o755);
    const nonce = newNonce();
    const script = supervisorScript({ nonce, mode: 'rsync', dir: repo, cwd: repo, listBytes: st.list.length, fingerprint: '0'.repeat(64), argv: ['true'], env: {}, stdin: false, graceSeconds: 1, tree: { clean: false, keep: [] } });
    const reader = new StreamReader(nonce, () => undefined);
    reader.push(Buffer.from(runScript(`PATH='${bin}':$PATH\n${script}`, Buffer.concat([Buffer.from(`${HANDSHAKE}\n`), st.list])).stdout));
    expect(reader.preamble.end).toBe('mismatch');
    expect(existsSync(mark)).toBe(true);
    if (existsSync('/proc/self/fd')) expect(existsSync(`${mark}.late`)).toBe(false);
    // And with the right fingerprint, what it found is said after the copy is verified.
    rmSync(mark);
    const ok = supervisorScript({ nonce, mode: 'rsync', dir: repo, cwd: repo, listBytes: st.list.length, fingerprint: st.fingerprint, argv: ['true'], env: {}, stdin: false, graceSeconds: 1, tree: { clean: false, keep: [] } });
    const r2 = new StreamReader(nonce, () => undefined);
    r2.push(Buffer.from(runScript(`PATH='${bin}':$PATH\n${ok}`, Buffer.concat([Buffer.from(`${HANDSHAKE}\n`), st.list])).stdout));
    expect(r2.preamble.end).toBe('go');
    expect(existsSync(mark)).toBe(true);
    expect(r2.preamble.tree?.extra).toEqual(['ignored/x']);
  });

  it('the guest disk under the floor: `diskfull` before the script writes anything, and df is reported either way', async () => {
    const repo = repoWithOddNames();
    const st = await readSourceState({ root: repo, gitDir: join(repo, '.git') });
    // A df that says how much is free, first on the "VM's" PATH (the real one otherwise).
    const bin = join(tmp, `df-${Math.random().toString(36).slice(2)}`);
    mkdirSync(bin);
    writeFileSync(join(bin, 'df'), '#!/bin/sh\necho "Filesystem 1024-blocks Used Available Capacity Mounted on"\necho "/dev/vdb 10485760 10400000 $FREE_KB 99% /tmp"\n');
    chmodSync(join(bin, 'df'), 0o755);
    const script = (nonce: string) =>
      supervisorScript({ nonce, mode: 'shared', dir: repo, cwd: repo, listBytes: st.list.length, fingerprint: st.fingerprint, argv: ['bash', '-c', `touch ${tmp}/ran-disk`], env: {}, stdin: false, graceSeconds: 1, diskFloorKb: 1024 * 1024 });
    const run = (free: string) => {
      const nonce = newNonce();
      const inputFile = join(tmp, `input-${Math.random().toString(36).slice(2)}`);
      writeFileSync(inputFile, Buffer.concat([Buffer.from(`${HANDSHAKE}\n`), st.list]));
      const r = spawnSync('/bin/sh', ['-c', '{ cat "$1"; sleep 1; } | /bin/sh -c "$2"', 'sh', inputFile, script(nonce)], { encoding: 'utf8', env: { ...process.env, PATH: `${bin}:${process.env.PATH}`, FREE_KB: free } });
      const reader = new StreamReader(nonce, () => undefined);
      reader.push(Buffer.from(r.stdout));
      return reader.preamble;
    };
    const low = run('204800');
    expect(low.end).toBe('diskfull');
    expect(low.failure).toBe('204800');
    expect(low.df).toContain('/dev/vdb 10485760 10400000 204800');
    expect(low.fingerprint).toBeUndefined(); // nothing after the check ran
    const unreadable = run('lots');
    expect(unreadable.end).toBe('diskfull');
    expect(unreadable.failure).toBe('?');
    const enough = run(String(2 * 1024 * 1024));
    expect(enough.end).toBe('go');
    expect(enough.df).toContain(String(2 * 1024 * 1024));
  });

  it('a backend that does not pass stdin on is refused before anything runs', () => {
    const nonce = newNonce();
    const script = supervisorScript({ nonce, mode: 'shared', dir: tmp, cwd: tmp, listBytes: 0, fingerprint: 'x', argv: ['bash', '-c', `touch ${tmp}/ran-nostdin`], env: {}, stdin: false, graceSeconds: 1 });
    expect(runScript(script, Buffer.alloc(0)).stdout).toContain(`${nonce} nostdin\n`);
  });
});

describe("the VM's hash cache (rsync and git copies), run by /bin/sh here", () => {
  // Only the preamble is read (fp, mismatch or go): the command is `true`, and stdin stays open a moment.
  const verify = (repo: string, st: { list: Buffer; fingerprint: string }, cache: string, hashStamp?: string) => {
    const nonce = newNonce();
    const script = supervisorScript({ nonce, mode: 'shared', dir: repo, cwd: repo, listBytes: st.list.length, fingerprint: st.fingerprint, argv: ['true'], env: {}, stdin: false, graceSeconds: 1, hashCache: cache, ...(hashStamp ? { hashStamp } : {}) });
    const inputFile = join(tmp, `input-${Math.random().toString(36).slice(2)}`);
    writeFileSync(inputFile, Buffer.concat([Buffer.from(`${HANDSHAKE}\n`), st.list]));
    const r = spawnSync('/bin/sh', ['-c', '{ cat "$1"; sleep 0.3; } | /bin/sh -c "$2"', 'sh', inputFile, script], { encoding: 'utf8' });
    const reader = new StreamReader(nonce, () => undefined);
    reader.push(Buffer.from(r.stdout));
    return reader;
  };
  const cacheOf = () => join(tmp, `hashes-${Math.random().toString(36).slice(2)}`);
  /** The cache's records: `HASH X<TAB>STATLINE`, STATLINE ending in the path. */
  const records = (cache: string): string[] => {
    const [head, ...lines] = readFileSync(cache, 'utf8').split('\n');
    expect(head).toBe('offhost-vm-hashes 3');
    return lines.filter(Boolean);
  };
  const pathOf = (record: string) => record.slice(record.indexOf('\t') + 1).split(' ').slice(2).join(' ');
  // A hash is recorded only for a file whose times are more than 3 s older than the run's stamp (4 s on the
  // whole seconds the VM's stat lines hold), and a file's ctime cannot be set back: the repositories the tests record are made first, then aged once.
  const aged: { repo: string; st: Awaited<ReturnType<typeof readSourceState>> }[] = [];
  beforeAll(async () => {
    for (let i = 0; i < 10; i++) {
      const repo = repoWithOddNames();
      aged.push({ repo, st: await readSourceState({ root: repo, gitDir: join(repo, '.git') }) });
    }
    await new Promise((r) => setTimeout(r, 4_200));
  }, 60_000);
  /** An aged repository, its source state, and the cache its first verification wrote. */
  const verifiedOnce = () => {
    const { repo, st } = aged.pop()!;
    const cache = cacheOf();
    const r = verify(repo, st, cache);
    expect(r.preamble.end).toBe('go');
    return { repo, st, cache };
  };

  it('records every file once it is older than the racy margin, and does not write the cache again when every record holds', () => {
    const { st, cache, repo } = verifiedOnce();
    expect(records(cache).map(pathOf).sort()).toEqual([...st.files].sort());
    const before = statSync(cache, { bigint: true });
    const text = readFileSync(cache, 'utf8');
    const r = verify(repo, st, cache);
    expect(r.preamble.fingerprint).toBe(st.fingerprint);
    expect(r.preamble.end).toBe('go');
    expect(readFileSync(cache, 'utf8')).toBe(text);
    expect(statSync(cache, { bigint: true }).ino).toBe(before.ino);
  });

  it('a record that holds is trusted: a wrong hash in it is what the VM reports (so the cache is read)', () => {
    const { repo, st, cache } = verifiedOnce();
    // Without the last run's stat lines, the records are what the VM reads (the next test: with them).
    rmSync(`${cache}.last-stat`);
    const bogus = '0'.repeat(64);
    writeFileSync(cache, ['offhost-vm-hashes 3', ...records(cache).map((l) => (pathOf(l) === './plain.txt' ? `${bogus}${l.slice(64)}` : l))].join('\n') + '\n');
    const r = verify(repo, st, cache);
    expect(r.preamble.end).toBe('mismatch');
    expect(diffManifests(st.manifest, r.manifestText).differ).toEqual(['./plain.txt']);
    expect(r.manifestText).toContain(`${bogus}  ./plain.txt`);
  });

  it('a run whose every file was recorded keeps its stat lines and manifest, the manifest\'s fingerprint first; stat lines the same byte for byte are that fingerprint (a wrong one is what the VM reports), any other is read through the records', () => {
    const { repo, st, cache } = verifiedOnce();
    expect(readFileSync(`${cache}.last-manifest`, 'utf8')).toBe(st.manifest);
    const lastStat = readFileSync(`${cache}.last-stat`, 'utf8');
    expect(lastStat.split('\n')[0]).toBe(st.fingerprint);
    const bogus = 'f'.repeat(64);
    writeFileSync(`${cache}.last-stat`, `${bogus}\n${lastStat.slice(LAST_STAT_SKIP)}`);
    const r = verify(repo, st, cache);
    expect(r.preamble.fingerprint).toBe(bogus);
    expect(r.preamble.end).toBe('mismatch');
    // A first line that is no fingerprint (the older format held stat lines only): the records are read.
    for (const first of ['', 'f'.repeat(63), `${'F'.repeat(64)}`, `${'f'.repeat(63)}-`]) {
      writeFileSync(`${cache}.last-stat`, `${first.padEnd(64, ' ').slice(0, 64)}\n${lastStat.slice(LAST_STAT_SKIP)}`);
      const w = verify(repo, st, cache);
      expect(w.preamble.fingerprint).toBe(st.fingerprint);
      expect(w.preamble.end).toBe('go');
      writeFileSync(`${cache}.last-stat`, lastStat);
    }
    writeFileSync(`${cache}.last-stat`, lastStat.slice(LAST_STAT_SKIP));
    expect(verify(repo, st, cache).preamble.fingerprint).toBe(st.fingerprint);
    // One stat line moves (another file's ctime): the records are read, and they hold the truth.
    writeFileSync(`${cache}.last-stat`, `${bogus}\n${lastStat.slice(LAST_STAT_SKIP)}`);
    chmodSync(join(repo, 'run.sh'), 0o755);
    const v = verify(repo, st, cache);
    expect(v.preamble.fingerprint).toBe(st.fingerprint);
    expect(v.preamble.end).toBe('go');
  });

  it('the last manifest is not used without its stat lines (a pair a killed session left half-written), nor kept by a run with a racy file', async () => {
    const { repo, st, cache } = verifiedOnce();
    rmSync(`${cache}.last-stat`);
    writeFileSync(`${cache}.last-manifest`, 'garbage\n');
    const r = verify(repo, st, cache);
    expect(r.preamble.fingerprint).toBe(st.fingerprint);
    // That run recorded every file again (all hold): the pair is whole again.
    expect(readFileSync(`${cache}.last-manifest`, 'utf8')).toBe(st.manifest);
    expect(existsSync(`${cache}.last-stat`)).toBe(true);
    // A file just written is within the racy margin: no pair is kept by that run (the old one is left as it was,
    // and no longer matches the stat lines).
    writeFileSync(join(repo, 'plain.txt'), 'just now\n');
    const after = await readSourceState({ root: repo, gitDir: join(repo, '.git') });
    const lastStat = readFileSync(`${cache}.last-stat`, 'utf8');
    const v = verify(repo, after, cache);
    expect(v.preamble.fingerprint).toBe(after.fingerprint);
    expect(readFileSync(`${cache}.last-stat`, 'utf8')).toBe(lastStat);
    expect(readFileSync(`${cache}.last-manifest`, 'utf8')).toBe(st.manifest);
  });

  it('a file written within the racy margin of the run is hashed but not recorded; a record that holds no more stays unused, and a new one is appended', async () => {
    // A fresh tree: nothing recorded, the right fingerprint.
    const fresh = repoWithOddNames();
    const fst = await readSourceState({ root: fresh, gitDir: join(fresh, '.git') });
    const fc = cacheOf();
    const r = verify(fresh, fst, fc);
    expect(r.preamble.fingerprint).toBe(fst.fingerprint);
    expect(existsSync(fc) ? records(fc) : []).toEqual([]);
    // An aged tree with one file just rewritten: hashed, not recorded, and the cache is not written for it.
    const { repo, cache } = verifiedOnce();
    const text = readFileSync(cache, 'utf8');
    writeFileSync(join(repo, 'plain.txt'), 'changed\n');
    const after = await readSourceState({ root: repo, gitDir: join(repo, '.git') });
    const r2 = verify(repo, after, cache);
    expect(r2.preamble.fingerprint).toBe(after.fingerprint);
    expect(r2.preamble.end).toBe('go');
    expect(readFileSync(cache, 'utf8')).toBe(text);
    // A run whose stamp is past the margin (a laptop's, for a shared tree) records it: two lines appended
    // (link.txt reads plain.txt through its symlink), the rest of the file as it was.
    const r3 = verify(repo, after, cache, String(Math.ceil(Date.now() / 1000) + 100));
    expect(r3.preamble.fingerprint).toBe(after.fingerprint);
    const now = readFileSync(cache, 'utf8');
    expect(now.startsWith(text)).toBe(true);
    expect(now.slice(text.length).split('\n').filter(Boolean).map(pathOf).sort()).toEqual(['./link.txt', './plain.txt']);
    // Those records are then what the VM uses: a wrong hash put in the appended line is what it reports.
    const lines = now.split('\n');
    const last = lines.map(pathOf).lastIndexOf('./plain.txt');
    lines[last] = `${'0'.repeat(64)}${lines[last]!.slice(64)}`;
    writeFileSync(cache, lines.join('\n'));
    rmSync(`${cache}.last-stat`); // r3 recorded every file: without this, its manifest would be taken whole
    const r4 = verify(repo, after, cache);
    expect(r4.preamble.end).toBe('mismatch');
    expect(diffManifests(after.manifest, r4.manifestText).differ).toEqual(['./plain.txt']);
  });

  it('once over a third of the records no longer hold, the cache is written whole again without them', async () => {
    const { repo, cache } = verifiedOnce();
    const many = aged.find((a) => a.repo === repo) ?? null;
    expect(many).toBeNull(); // taken from the pool
    // 40 more files, aged past the margin by a stamp given to the run (as a shared tree's laptop stamp is).
    for (let i = 0; i < 40; i++) writeFileSync(join(repo, `extra-${i}.txt`), `extra ${i}\n`);
    const st = await readSourceState({ root: repo, gitDir: join(repo, '.git') });
    const later = String(Math.ceil(Date.now() / 1000) + 100);
    expect(verify(repo, st, cache, later).preamble.end).toBe('go');
    expect(records(cache).length).toBe(st.files.length);
    // 20 of them rewritten: their records no longer hold (20 of 46), and at the margin they are not recorded again.
    for (let i = 0; i < 20; i++) writeFileSync(join(repo, `extra-${i}.txt`), `rewritten ${i}\n`);
    const st2 = await readSourceState({ root: repo, gitDir: join(repo, '.git') });
    const ino = statSync(cache).ino;
    const r = verify(repo, st2, cache);
    expect(r.preamble.fingerprint).toBe(st2.fingerprint);
    expect(statSync(cache).ino).not.toBe(ino);
    expect(records(cache).map(pathOf).sort()).toEqual(st2.files.filter((f) => !/^\.\/extra-([0-9]|1[0-9])\.txt$/.test(f)).sort());
  });

  it('a file rewritten with its size and mtime kept is hashed again (its ctime moved), and so is one whose exec bit changed', async () => {
    const { repo, st, cache } = verifiedOnce();
    const file = join(repo, 'plain.txt');
    // touch -r keeps the nanoseconds (utimes from a JS Date would move mtime, and the key with it).
    const ref = join(tmp, `ref-${Math.random().toString(36).slice(2)}`);
    execFileSync('touch', ['-r', file, ref]);
    const before = statSync(file, { bigint: true });
    writeFileSync(file, 'PLAIN\n');
    execFileSync('touch', ['-r', ref, file]);
    const rewritten = statSync(file, { bigint: true });
    expect([rewritten.size, rewritten.mtimeNs, rewritten.ino]).toEqual([before.size, before.mtimeNs, before.ino]);
    expect(rewritten.ctimeNs).not.toBe(before.ctimeNs);
    chmodSync(join(repo, 'run.sh'), 0o644);
    const after = await readSourceState({ root: repo, gitDir: join(repo, '.git') });
    expect(after.fingerprint).not.toBe(st.fingerprint);
    const r = verify(repo, after, cache);
    expect(r.preamble.fingerprint).toBe(after.fingerprint);
    expect(r.preamble.end).toBe('go');
  });

  it('a file missing or replaced by a directory on the VM is a mismatch, cached or not; a cache it cannot write only costs the hashing', async () => {
    const { repo, st, cache } = verifiedOnce();
    rmSync(join(repo, 'plain.txt'));
    mkdirSync(join(repo, 'plain.txt'));
    const r = verify(repo, st, cache);
    expect(r.preamble.end).toBe('mismatch');
    expect(diffManifests(st.manifest, r.manifestText).missing.sort()).toEqual(['./link.txt', './plain.txt']);
    // A cache in a folder that does not exist: nothing is written, and the fingerprint is still computed.
    const fresh = repoWithOddNames();
    const fst = await readSourceState({ root: fresh, gitDir: join(fresh, '.git') });
    const nowhere = join(tmp, 'no-such-dir', 'hashes');
    const w = verify(fresh, fst, nowhere);
    expect(w.preamble.fingerprint).toBe(fst.fingerprint);
    expect(existsSync(nowhere)).toBe(false);
  });

  it("a shared tree's cache measures the racy margin against the laptop's stamp of its read, in a folder it makes", async () => {
    // Just written: the laptop's stamp of this read is within 3 s of the files' times, nothing is recorded.
    const fresh = repoWithOddNames();
    const fst = await readSourceState({ root: fresh, gitDir: join(fresh, '.git') });
    expect(fst.stamp).toMatch(/^\d+\.\d{9}$/);
    const fc = join(tmp, `shared-${Math.random().toString(36).slice(2)}`, 'deeper', 'hashes');
    const r = verify(fresh, fst, fc, fst.stamp!);
    expect(r.preamble.fingerprint).toBe(fst.fingerprint);
    expect(existsSync(fc) ? records(fc) : []).toEqual([]);
    // Aged, read again (a new stamp): every file is recorded, and the VM stamped nothing of its own.
    const { repo } = aged.pop()!;
    const st = await readSourceState({ root: repo, gitDir: join(repo, '.git') });
    const cache = join(tmp, `shared-${Math.random().toString(36).slice(2)}`, 'hashes');
    const v = verify(repo, st, cache, st.stamp!);
    expect(v.preamble.end).toBe('go');
    expect(records(cache).map(pathOf).sort()).toEqual([...st.files].sort());
    expect(existsSync(`${cache}.stamp`)).toBe(false);
    // A stamp from before the files were written (a laptop clock that says so) records nothing either.
    const early = join(tmp, `shared-${Math.random().toString(36).slice(2)}`, 'hashes');
    verify(repo, st, early, String(Math.floor(Date.now() / 1000) - 60));
    expect(existsSync(early) ? records(early) : []).toEqual([]);
  });

  it('the margin holds to the nanosecond though the stat lines hold whole seconds: a file exactly 3 s older than the stamp is not recorded', async () => {
    const fresh = repoWithOddNames();
    const fst = await readSourceState({ root: fresh, gitDir: join(fresh, '.git') });
    // Only the ctimes decide here (the mtimes are put far back); the stamp is the oldest ctime plus 3 s exactly.
    for (const f of fst.files) utimesSync(join(fresh, f), 1_000_000, 1_000_000);
    const ctimes = fst.files.map((f) => statSync(join(fresh, f), { bigint: true }).ctimeNs);
    const oldest = ctimes.reduce((a, b) => (b < a ? b : a));
    expect(oldest % 1_000_000_000n).not.toBe(0n); // a fraction of a second for the whole seconds to cut off
    const at = oldest + 3_000_000_000n;
    const stamp = `${at / 1_000_000_000n}.${String(at % 1_000_000_000n).padStart(9, '0')}`;
    const st2 = await readSourceState({ root: fresh, gitDir: join(fresh, '.git') });
    const cache = join(tmp, `margin-${Math.random().toString(36).slice(2)}`, 'hashes');
    expect(verify(fresh, st2, cache, stamp).preamble.fingerprint).toBe(st2.fingerprint);
    expect(existsSync(cache) ? records(cache) : []).toEqual([]);
  });

  it('a long list is stat\'ed in parts side by side, its lines put back in the order of one find (and with one CPU, or a split without -n, by one find)', async () => {
    const repo = mkdtempSync(join(tmp, 'long-'));
    g(repo, 'init', '-q');
    configure(repo);
    // Past PARALLEL_STAT_BYTES of list: 2,600 files with names long enough.
    for (let d = 0; d < 26; d++) {
      mkdirSync(join(repo, `directory-with-a-long-name-${d}`));
      for (let f = 0; f < 100; f++) writeFileSync(join(repo, `directory-with-a-long-name-${d}`, `file-${f}.txt`), `${d} ${f}\n`);
    }
    g(repo, 'add', '.');
    g(repo, 'commit', '-q', '-m', 'many');
    const st = await readSourceState({ root: repo, gitDir: join(repo, '.git') });
    expect(st.list.length).toBeGreaterThan(PARALLEL_STAT_BYTES);
    const statOf = (pathPrefix: string | null) => {
      const cache = cacheOf();
      const script = supervisorScript({ nonce: newNonce(), mode: 'shared', dir: repo, cwd: repo, listBytes: st.list.length, fingerprint: st.fingerprint, argv: ['true'], env: {}, stdin: false, graceSeconds: 1, hashCache: cache, hashStamp: String(Math.ceil(Date.now() / 1000) + 100) });
      const nonce = /^N='?([^'\n]+)'?$/m.exec(script)![1]!;
      const reader = new StreamReader(nonce, () => undefined);
      reader.push(Buffer.from(runScript(`${pathPrefix ? `PATH='${pathPrefix}':$PATH\n` : ''}${script}`, Buffer.concat([Buffer.from(`${HANDSHAKE}\n`), st.list])).stdout));
      expect(reader.preamble.fingerprint).toBe(st.fingerprint);
      return readFileSync(`${cache}.last-stat`, 'utf8');
    };
    const parts = statOf(null);
    expect(parts.split('\n')[0]).toBe(st.fingerprint);
    const paths = parts.slice(LAST_STAT_SKIP).split('\n').filter(Boolean).map((l) => l.split(' ').slice(2).join(' '));
    expect(paths).toEqual(st.files);
    // One CPU: one find; a split that refuses -n (busybox's): one find. The same lines.
    const one = mkdtempSync(join(tmp, 'one-cpu-'));
    writeFileSync(join(one, 'nproc'), '#!/bin/sh\necho 1\n');
    writeFileSync(join(one, 'split'), '#!/bin/sh\necho "split: invalid option -- n" >&2; exit 1\n');
    chmodSync(join(one, 'nproc'), 0o755);
    chmodSync(join(one, 'split'), 0o755);
    const many = mkdtempSync(join(tmp, 'many-cpus-'));
    writeFileSync(join(many, 'nproc'), '#!/bin/sh\necho 64\n');
    chmodSync(join(many, 'nproc'), 0o755);
    for (const dir of [one, many]) expect(statOf(dir)).toBe(parts);
    rmSync(join(one, 'split'));
    expect(statOf(one)).toBe(parts);
  }, 60_000);

  it('removes what a killed session left half-written beside the cache', () => {
    const { repo, st, cache } = verifiedOnce();
    writeFileSync(`${cache}.next.99999`, 'offhost-vm-hashes 3\nhalf');
    writeFileSync(`${cache}.last-stat.99999`, 'half');
    writeFileSync(`${cache}.last-manifest.99999`, 'half');
    const r = verify(repo, st, cache);
    expect(r.preamble.fingerprint).toBe(st.fingerprint);
    expect(existsSync(`${cache}.next.99999`)).toBe(false);
    expect(existsSync(`${cache}.last-stat.99999`) || existsSync(`${cache}.last-manifest.99999`)).toBe(false);
    expect(existsSync(`${cache}.last-stat`)).toBe(true);
    expect(records(cache).length).toBe(st.files.length);
  });
});

describe('git mode: the checkout of the commit last verified there', () => {
  // The VM's side as offhost makes it: a bare repository with the commit, the copy a worktree of it.
  let src = '';
  let bare = '';
  let sha = '';
  let st: Awaited<ReturnType<typeof readSourceState>>;
  const copies: string[] = [];
  beforeAll(async () => {
    src = repoWithOddNames();
    g(src, 'add', '.');
    g(src, 'commit', '-q', '-m', 'all');
    sha = g(src, 'rev-parse', 'HEAD').trim();
    bare = join(tmp, `bare-${Math.random().toString(36).slice(2)}.git`);
    g(tmp, 'clone', '-q', '--bare', src, bare);
    st = await readSourceState({ root: src, gitDir: join(src, '.git') });
    for (let i = 0; i < 3; i++) {
      const dir = join(tmp, `copy-${i}-${Math.random().toString(36).slice(2)}`);
      g(tmp, `--git-dir=${bare}`, 'worktree', 'add', '-q', '-f', '--detach', dir, sha);
      copies.push(dir);
    }
    // Past the VM cache's racy margin: a run then keeps its stat lines.
    await new Promise((r) => setTimeout(r, 4_200));
  }, 60_000);
  /** Runs the script in `dir` with a git that logs its subcommands; the preamble and the subcommands. */
  const run = (dir: string, verified: boolean) => {
    const bin = mkdtempSync(join(tmp, 'gitlog-'));
    const log = join(bin, 'log');
    const realGit = execFileSync('sh', ['-c', 'command -v git'], { encoding: 'utf8' }).trim();
    writeFileSync(join(bin, 'git'), `#!/bin/sh\necho "$*" >> '${log}'\nexec '${realGit}' "$@"\n`);
    chmodSync(join(bin, 'git'), 0o755);
    const nonce = newNonce();
    const script = supervisorScript({ nonce, mode: 'git', dir, cwd: dir, listBytes: st.list.length, fingerprint: st.fingerprint, argv: ['true'], env: {}, stdin: false, graceSeconds: 1, hashCache: `${dir}.offhost-hashes`, git: { bare, commit: sha, ...(verified ? { verified: true } : {}) } });
    const reader = new StreamReader(nonce, () => undefined);
    reader.push(Buffer.from(runScript(`PATH='${bin}':$PATH\n${script}`, Buffer.concat([Buffer.from(`${HANDSHAKE}\n`), st.list])).stdout));
    const calls = existsSync(log) ? readFileSync(log, 'utf8') : '';
    return { end: reader.preamble.end, fingerprint: reader.preamble.fingerprint, checkouts: calls.split('\n').filter((l) => / checkout /.test(` ${l} `)).length };
  };

  it('is skipped when HEAD is that commit and every stat line is the last run\'s; else it checks out (a file changed on the VM is put right)', () => {
    const [dir] = copies;
    // The first run has no stat lines of an earlier one: it checks out, and keeps them.
    expect(run(dir!, true)).toEqual({ end: 'go', fingerprint: st.fingerprint, checkouts: 1 });
    expect(existsSync(`${dir}.offhost-hashes.last-stat`)).toBe(true);
    expect(run(dir!, true)).toEqual({ end: 'go', fingerprint: st.fingerprint, checkouts: 0 });
    // Not the verified commit (the laptop's record says otherwise): checked out.
    expect(run(dir!, false).checkouts).toBe(1);
    // A tracked file changed on the VM: its stat line moved, so the checkout runs and puts it right.
    writeFileSync(join(dir!, 'plain.txt'), 'changed on the VM\n');
    expect(run(dir!, true)).toEqual({ end: 'go', fingerprint: st.fingerprint, checkouts: 1 });
  });

  it('checks out when the worktree\'s HEAD is another commit, whatever the stat lines say', () => {
    const dir = copies[1]!;
    expect(run(dir, true).checkouts).toBe(1);
    g(dir, 'checkout', '-q', '--detach', `${sha}`);
    // HEAD moved to another commit with the same files: no skip.
    g(dir, '-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-q', '--allow-empty', '-m', 'elsewhere');
    expect(run(dir, true).checkouts).toBe(1);
    expect(g(dir, 'rev-parse', 'HEAD').trim()).toBe(sha);
  });
});

describe('the session bootstrap (a session opened before its script is ready), run by /bin/sh here', () => {
  // The session's own script waits for the supervisor script on stdin and runs it only when it arrived whole.
  const script = (nonce: string, ran: string) =>
    supervisorScript({ nonce, mode: 'shared', dir: tmp, cwd: tmp, listBytes: 0, fingerprint: 'x', argv: ['bash', '-c', `touch ${ran}`], env: {}, stdin: false, graceSeconds: 1 });

  it('runs the supervisor script it is sent, and then reads the handshake and the list after it', () => {
    const repo = repoWithOddNames();
    return readSourceState({ root: repo, gitDir: join(repo, '.git') }).then((st) => {
      const nonce = newNonce();
      const s = supervisorScript({ nonce, mode: 'shared', dir: repo, cwd: repo, listBytes: st.list.length, fingerprint: st.fingerprint, argv: ['bash', '-c', 'echo "ran in $PWD"'], env: {}, stdin: false, graceSeconds: 1 });
      const r = runScript(bootstrapScript(nonce), Buffer.concat([framedScript(s, nonce), Buffer.from(`${HANDSHAKE}\n`), st.list]));
      const reader = new StreamReader(nonce, () => undefined);
      reader.push(Buffer.from(r.stdout));
      expect(reader.preamble.hello).toBe(true);
      expect(reader.preamble.fingerprint).toBe(st.fingerprint);
      expect(reader.preamble.end).toBe('go');
      expect(r.stdout).toContain(`${nonce} go\nran in ${repo}\n${nonce} exit 0`);
    });
  });

  it('reads the kernel, disk, CPU count, signal launcher and temporary folder once, while it waits: the script it runs uses them; no temporary folder is left, however the session ends', async () => {
    const repo = repoWithOddNames();
    const st = await readSourceState({ root: repo, gitDir: join(repo, '.git') });
    const bin = mkdtempSync(join(tmp, 'counted-'));
    const calls = join(bin, 'calls');
    for (const name of ['uname', 'df', 'nproc', 'mktemp', 'env']) {
      const real = execFileSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' }).trim();
      writeFileSync(join(bin, name), `#!/bin/sh\necho "${name} $*" >> '${calls}'\nexec '${real}' "$@"\n`);
      chmodSync(join(bin, name), 0o755);
    }
    const temp = mkdtempSync(join(tmp, 'vm-tmp-'));
    const nonce = newNonce();
    // Over PARALLEL_STAT_BYTES of list would read nproc; the odd-names tree is small, so the CPU count is read but not used.
    const s = supervisorScript({ nonce, mode: 'shared', dir: repo, cwd: repo, listBytes: st.list.length, fingerprint: st.fingerprint, argv: ['sh', '-c', 'echo "ran with $X"'], env: { X: '1' }, stdin: false, graceSeconds: 1, diskFloorKb: 1 });
    const boot = `PATH='${bin}':$PATH; TMPDIR='${temp}'; export TMPDIR\n${bootstrapScript(nonce)}`;
    const r = runScript(boot, Buffer.concat([framedScript(s, nonce), Buffer.from(`${HANDSHAKE}\n`), st.list]));
    const reader = new StreamReader(nonce, () => undefined);
    reader.push(Buffer.from(r.stdout));
    expect(reader.preamble.end).toBe('go');
    expect(reader.preamble.uname).toBe(execFileSync('uname', ['-srm'], { encoding: 'utf8' }).trim());
    expect(reader.preamble.df).toMatch(/^\S+\s+\d+\s+\d+\s+\d+/);
    expect(r.stdout).toContain('ran with 1\n');
    const made = readFileSync(calls, 'utf8').split('\n').filter(Boolean);
    expect(made.filter((l) => l.startsWith('uname '))).toEqual(['uname -srm']);
    expect(made.filter((l) => l.startsWith('df '))).toEqual(['df -Pk /tmp']);
    expect(made.filter((l) => l.startsWith('nproc'))).toHaveLength(1);
    expect(made.filter((l) => l.startsWith('mktemp '))).toEqual(['mktemp -d']);
    expect(made.filter((l) => l === 'env --default-signal=INT,QUIT')).toHaveLength(1);
    expect(readdirSync(temp)).toEqual([]);
    // No script (nostdin), a script cut short (fail): the folder made while waiting is removed too.
    for (const input of [Buffer.alloc(0), framedScript(s, nonce).subarray(0, 40)]) {
      const e = spawnSync('/bin/sh', ['-c', boot], { input, encoding: 'utf8' });
      expect(e.stdout).toMatch(/ (nostdin|fail)/);
      expect(readdirSync(temp)).toEqual([]);
    }
  });

  it('at end of input before any script (a backend that passes no input on, or the run stopped before its lock): says nostdin, runs nothing', () => {
    const nonce = newNonce();
    const r = spawnSync('/bin/sh', ['-c', bootstrapScript(nonce)], { input: '', encoding: 'utf8' });
    expect(r.status).toBe(0);
    const reader = new StreamReader(nonce, () => undefined);
    reader.push(Buffer.from(r.stdout));
    expect(reader.preamble.hello).toBe(true);
    expect(reader.preamble.end).toBe('nostdin');
  });

  it('a script cut short, or one not ending with this session\'s end line, is refused (`fail`) and nothing of it runs', () => {
    const nonce = newNonce();
    const ran = join(tmp, `ran-boot-${Math.random().toString(36).slice(2)}`);
    const whole = framedScript(script(nonce, ran), nonce);
    for (const input of [
      whole.subarray(0, whole.length - 10), // the connection went mid-script
      framedScript(script(nonce, ran), newNonce()), // another session's frame
      Buffer.from(`${whole.length - 8}\n${whole.subarray(whole.indexOf(10) + 1, whole.length - 8).toString()}`), // a short length line
    ]) {
      const r = spawnSync('/bin/sh', ['-c', bootstrapScript(nonce)], { input, encoding: 'utf8' });
      const reader = new StreamReader(nonce, () => undefined);
      reader.push(Buffer.from(r.stdout));
      expect(reader.preamble.end).toBe('fail');
      expect(reader.preamble.failure).toContain('did not arrive whole');
      expect(existsSync(ran)).toBe(false);
    }
    // A length line that is not a number: nothing of the script runs.
    const r = spawnSync('/bin/sh', ['-c', bootstrapScript(nonce)], { input: `x1\n${whole.toString()}`, encoding: 'utf8' });
    expect(r.stdout).toBe(`${nonce} hello\n${nonce} nostdin\n`);
    expect(existsSync(ran)).toBe(false);
  });
});

describe('the stream reader', () => {
  const nonce = '@offhost-0123456789abcdef';
  it('passes the command output through byte for byte and takes the exit line off, however it is split', () => {
    const body = Buffer.from([0x00, 0xff, 0x0a, 0xc3, 0xa9, 0x40, 0x6f]); // binary, UTF-8, a lone '@o'
    const whole = Buffer.concat([Buffer.from(`junk from a profile\n${nonce} hello\n${nonce} uname Linux 6 x\n${nonce} go\n`), body, Buffer.from(`${nonce} exit 42\n`)]);
    for (let cut = 1; cut < whole.length; cut += 3) {
      const out: Buffer[] = [];
      const r = new StreamReader(nonce, (b) => out.push(Buffer.from(b)));
      r.push(whole.subarray(0, cut));
      r.push(whole.subarray(cut));
      r.end();
      expect(Buffer.concat(out)).toEqual(body);
      expect(r.exitStatus).toBe(42);
      expect(r.preamble.uname).toBe('Linux 6 x');
    }
  });

  it('a stream that ends without the exit line gives no status, and loses no output', () => {
    const out: Buffer[] = [];
    const r = new StreamReader(nonce, (b) => out.push(Buffer.from(b)));
    r.push(Buffer.from(`${nonce} go\npartial ${nonce.slice(0, 5)}`));
    r.end();
    expect(Buffer.concat(out).toString()).toBe(`partial ${nonce.slice(0, 5)}`);
    expect(r.exitStatus).toBeNull();
  });
});

describe('the signal-default launcher', () => {
  // A command started with & by a non-interactive sh has INT and QUIT ignored; the script gives them back,
  // with GNU env (--default-signal, which also sets the run's variables) or, on a VM whose env has no
  // --default-signal (coreutils before 8.31), with perl: its code must reach perl intact. The command prints
  // its own ignored-signal mask (SigIgn), so each way is checked by what the command got.
  const launched = async (envWithout: boolean, perlGone = false) => {
    const repo = repoWithOddNames();
    const st = await readSourceState({ root: repo, gitDir: join(repo, '.git') });
    const bin = mkdtempSync(join(tmp, 'launcher-bin-'));
    if (envWithout) {
      writeFileSync(join(bin, 'env'), '#!/bin/sh\ncase "$1" in --default-signal*) echo "env: unrecognized option \'$1\'" >&2; exit 125;; esac\nexec /usr/bin/env "$@"\n');
      chmodSync(join(bin, 'env'), 0o755);
    }
    // No perl: PATH is a folder of links to every program of /usr/bin and /bin but perl's.
    const only = perlGone ? mkdtempSync(join(tmp, 'no-perl-')) : null;
    if (only) {
      for (const d of ['/bin', '/usr/bin']) {
        for (const name of readdirSync(d)) if (!name.startsWith('perl') && !existsSync(join(only, name))) symlinkSync(join(d, name), join(only, name));
      }
    }
    const nonce = newNonce();
    const script = supervisorScript({ nonce, mode: 'shared', dir: repo, cwd: repo, listBytes: st.list.length, fingerprint: st.fingerprint, argv: ['sh', '-c', 'echo "launched $0 $X"; grep SigIgn /proc/self/status', 'arg'], env: { X: 'x y' }, stdin: false, graceSeconds: 1 });
    const r = runScript(`PATH='${bin}':${only ? `'${only}'` : '$PATH'}\n${script}`, Buffer.concat([Buffer.from(`${HANDSHAKE}\n`), st.list]));
    const reader = new StreamReader(nonce, () => undefined);
    reader.push(Buffer.from(r.stdout));
    return { stdout: r.stdout, reader };
  };
  // SIGINT is signal 2 (mask bit 0x2), SIGQUIT 3 (0x4).
  const ignoresIntOrQuit = (stdout: string) => (BigInt(`0x${/SigIgn:\s*([0-9a-f]+)/.exec(stdout)![1]}`) & 0x6n) !== 0n;

  it.skipIf(!existsSync('/proc/self/status'))('gives INT and QUIT back with env --default-signal, and with perl when env has none', async () => {
    for (const envWithout of [false, true]) {
      const { stdout, reader } = await launched(envWithout);
      expect(reader.preamble.end).toBe('go');
      expect(stdout).toContain('launched arg x y\n');
      expect(ignoresIntOrQuit(stdout)).toBe(false);
    }
  });

  it('says what is missing, and runs nothing, when there is neither', async () => {
    const { stdout, reader } = await launched(true, true);
    expect(reader.preamble.end).toBe('missing');
    expect(reader.preamble.failure).toMatch(/--default-signal.*perl/);
    expect(stdout).not.toContain('launched');
  });
});
