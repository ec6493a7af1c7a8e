// Which rsync the laptop has (src/routes/rsync-probe.ts): the real GNU rsync, and a stand-in openrsync
// (test/helpers/standins/openrsync) that parses its arguments with openrsync's own option tables (the one
// macOS 15+ ships, and the first release) and refuses what they lack. `sync: rsync` is refused before
// any connection, in `vm status`'s preflight and in the copy itself, with the fix (`brew install rsync`).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { probeRsync, rsyncProblem, RSYNC_OPTIONS } from '../../src/routes/rsync-probe.js';
import { rsyncTree, SyncError } from '../../src/routes/sync.js';
import { preflight } from '../../src/vms/preflight.js';
import type { SourceState } from '../../src/routes/source.js';
import type { VmSpec } from '../../src/routes/types.js';
import { readStandinLog, standinPath } from '../helpers/standins.js';

const hasRsync = spawnSync('sh', ['-c', 'command -v rsync'], { encoding: 'utf8' }).status === 0;
const why = hasRsync ? null : 'rsync is not installed (.ci/run installs it)';
let base = '';
let openBin = '';
let emptyBin = '';
beforeAll(() => {
  base = mkdtempSync(join(tmpdir(), 'offhost-rsync-'));
  openBin = join(base, 'openrsync-bin');
  emptyBin = join(base, 'empty-bin');
  mkdirSync(openBin);
  mkdirSync(emptyBin);
  symlinkSync(join(standinPath(), 'openrsync'), join(openBin, 'rsync'));
});
afterAll(() => rmSync(base, { recursive: true, force: true }));

/** PATH with the stand-in openrsync as `rsync`, then node (the stand-in is a node script) and the system. */
const macEnv = (flavour: 'apple' | '2019', extra: Record<string, string> = {}) => ({
  PATH: `${openBin}:${standinPath()}:${join(process.execPath, '..')}:/usr/bin:/bin`,
  HOME: base,
  OFFHOST_STANDIN_OPENRSYNC: flavour,
  ...extra,
});

describe.skipIf(why !== null)(`the openrsync stand-in itself${why ? `: skipped, ${why}` : ''}`, () => {
  const run = (flavour: 'apple' | '2019', args: string[], cwd = base) => spawnSync('rsync', args, { cwd, env: macEnv(flavour), encoding: 'utf8' });
  it('prints what openrsync prints for --version (the 2019 one has no --version)', () => {
    expect(run('apple', ['--version']).stdout).toBe('openrsync: protocol version 29\nrsync version 2.6.9 compatible\n');
    const old = run('2019', ['--version']);
    expect(old.status).toBe(1);
    expect(old.stderr).toContain("unrecognized option `--version'");
  });
  it('refuses an option its table lacks, and an ambiguous abbreviation; takes a unique one and copies for real', () => {
    const src = join(base, 'src');
    mkdirSync(src, { recursive: true });
    writeFileSync(join(src, 'a.txt'), 'A');
    expect(run('2019', ['-a', './', join(base, 'd1/')], src).stderr).toMatch(/invalid option -- a/);
    expect(run('2019', ['-r', '--from0', './', join(base, 'd1/')], src).stderr).toMatch(/unrecognized option `--from0'/);
    expect(run('apple', ['-r', '--no-', './', join(base, 'd1/')], src).stderr).toMatch(/ambiguous/);
    const ok = run('apple', ['-r', '--ignore-ti', './', join(base, 'd2/')], src);
    expect(ok.status, ok.stderr).toBe(0);
    expect(readFileSync(join(base, 'd2', 'a.txt'), 'utf8')).toBe('A');
    expect(run('2019', ['-rt', '--delete', './', join(base, 'd3/')], src).status).toBe(0);
    expect(existsSync(join(base, 'd3', 'a.txt'))).toBe(true);
  });
});

describe.skipIf(why !== null)(`probeRsync${why ? `: skipped, ${why}` : ''}`, () => {
  it('GNU rsync: named with its version, takes every option', () => {
    const info = probeRsync(process.env);
    expect(info.kind).toBe('gnu');
    expect(info.describe).toMatch(/^GNU rsync \d+\.\d+\S* \(protocol \d+\)$/);
    expect(info.refused).toEqual([]);
    expect(rsyncProblem(info)).toBeNull();
  });
  it("macOS 15's openrsync: recognised, and it takes every option sync: rsync uses", () => {
    const info = probeRsync(macEnv('apple'));
    expect(info).toMatchObject({ kind: 'openrsync', describe: 'openrsync (protocol 29)', refused: [] });
  });
  it('an openrsync without them: each refused option named, and the fix', () => {
    const info = probeRsync(macEnv('2019'));
    expect(info.kind).toBe('unknown');
    expect(info.refused).toEqual(['-a', '--from0', '--files-from', '--checksum', '--ignore-times', '--no-owner', '--no-group']);
    const p = rsyncProblem(info)!;
    expect(p).toContain('refuses -a --from0 --files-from --checksum --ignore-times --no-owner --no-group');
    expect(p).toContain('brew install rsync');
    expect(RSYNC_OPTIONS).toContain('--from0');
  });
  it('no rsync at all: said so, with the fix', () => {
    const info = probeRsync({ PATH: emptyBin });
    expect(info.kind).toBe('missing');
    expect(rsyncProblem(info)).toMatch(/there is none on PATH; install GNU rsync .*brew install rsync/);
  });
});

describe.skipIf(why !== null)(`sync: rsync refuses early${why ? `: skipped, ${why}` : ''}`, () => {
  const vm: VmSpec = { id: 's.khost1.dev-linux-mac', backend: 'ssh', host: 'khost1', sync: 'rsync' } as VmSpec;
  it('vm status (the preflight): the rsync check fails before any connection, status 69, with the fix', async () => {
    const log = join(base, 'probe.log');
    const r = await preflight(vm, macEnv('2019', { OFFHOST_STANDIN_LOG: log, OFFHOST_STANDIN_PROBE_LOG: log }), { full: true });
    expect(r.status).toBe(69);
    const c = r.checks.find((x) => x.name === 'rsync')!;
    expect(c.ok).toBe(false);
    expect(c.fix).toContain('brew install rsync');
    expect(r.checks.map((x) => x.name)).toEqual(['laptop tool', 'rsync']);
    expect(readStandinLog(log)).toEqual([]);
  });
  it('vm status with an rsync that takes the options: the check passes and the preflight goes on to the VM', async () => {
    const r = await preflight(vm, macEnv('apple', { OFFHOST_STANDIN_HOME: base }), { full: false });
    expect(r.checks.find((x) => x.name === 'rsync')).toMatchObject({ ok: true, detail: 'openrsync (protocol 29) takes the options sync: rsync uses' });
    expect(r.checks.length).toBeGreaterThan(2);
  });
  it('the copy itself refuses before connecting (a SyncError, nothing sent)', async () => {
    const log = join(base, 'copy.log');
    const state = { root: base, files: ['a.txt'], manifest: '', branch: 'main' } as unknown as SourceState;
    const err = await rsyncTree(vm, state, '/var/tmp/offhost/x/main', macEnv('2019', { OFFHOST_STANDIN_LOG: log }), join(base, 'state')).then(() => null, (e: unknown) => e);
    expect(err).toBeInstanceOf(SyncError);
    expect((err as Error).message).toMatch(/refuses -a --from0 .*brew install rsync/);
    expect(readStandinLog(log)).toEqual([]);
  });
});
