// What the preflight keeps between runs (src/vms/probe-reuse.ts), without a network: the laptop's rsync is
// asked again exactly when the program on PATH is another file; a refusing rsync is never kept; a reading of
// the guest disk is used only for an ssh VM with a shared master, young enough and above the floor.
import { afterAll, describe, expect, it } from 'vitest';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { probeReuse } from '../../src/vms/probe-reuse.js';
import type { VmSpec } from '../../src/routes/types.js';

const tmp = mkdtempSync(join(tmpdir(), 'offhost-probe-reuse-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** A stand-in rsync that logs each call and answers like GNU rsync (or refuses --from0 when told to). */
function fakeRsync(dir: string, refuse = false): string {
  mkdirSync(dir, { recursive: true });
  const log = join(dir, 'calls');
  writeFileSync(
    join(dir, 'rsync'),
    `#!/bin/sh\necho "$*" >> '${log}'\nif [ "$1" = --version ]; then echo "rsync  version 3.2.7  protocol version 31"; exit 0; fi\n${refuse ? 'case "$*" in *--from0*) echo "unknown option" >&2; exit 1;; esac\n' : ''}exit 0\n`,
  );
  chmodSync(join(dir, 'rsync'), 0o755);
  return log;
}
const calls = (log: string) => {
  try {
    return readFileSync(log, 'utf8').split('\n').filter(Boolean).length;
  } catch {
    return 0;
  }
};

describe("the laptop's rsync, asked once per program", () => {
  it('a second preflight does not run rsync; another file at the same place (edited, replaced) is asked again', () => {
    const bin = join(tmp, 'bin1');
    const log = fakeRsync(bin);
    const env = { PATH: `${bin}:/usr/bin:/bin` };
    const reuse = probeReuse(join(tmp, 'state1'), env);
    expect(reuse.rsync(env).refused).toEqual([]);
    const first = calls(log);
    expect(first).toBeGreaterThanOrEqual(2); // --version and the dry run
    expect(reuse.rsync(env).describe).toBe('GNU rsync 3.2.7 (protocol 31)');
    expect(calls(log)).toBe(first);
    // The same path, another program (a longer file: another size and ctime).
    writeFileSync(join(bin, 'rsync'), `${readFileSync(join(bin, 'rsync'), 'utf8')}# upgraded\n`);
    reuse.rsync(env);
    expect(calls(log)).toBeGreaterThan(first);
  });

  it('another rsync earlier on PATH is asked; one that refuses an option is asked every time (never kept)', () => {
    const good = join(tmp, 'good');
    const bad = join(tmp, 'bad');
    const goodLog = fakeRsync(good);
    const badLog = fakeRsync(bad, true);
    const state = join(tmp, 'state2');
    const envGood = { PATH: `${good}:/usr/bin:/bin` };
    const envBad = { PATH: `${bad}:${good}:/usr/bin:/bin` };
    probeReuse(state, envGood).rsync(envGood);
    expect(calls(goodLog)).toBeGreaterThan(0);
    const r1 = probeReuse(state, envBad).rsync(envBad);
    expect(r1.refused).toContain('--from0');
    const n = calls(badLog);
    const r2 = probeReuse(state, envBad).rsync(envBad);
    expect(r2.refused).toContain('--from0');
    expect(calls(badLog)).toBeGreaterThan(n);
  });
});

describe('a reading of the guest disk', () => {
  const ssh: VmSpec = { id: 's.h.dev-linux-a', backend: 'ssh', host: 'h', sshOptions: ['-o', 'ControlMaster=auto', '-o', 'ControlPath=/nonexistent/offhost-ssh/%C-x'] } as VmSpec;
  it('is never used without a master that answers (here: none), however young', async () => {
    const state = join(tmp, 'state3');
    const reuse = probeReuse(state, { PATH: process.env.PATH });
    reuse.remember(ssh, 50 * 1024 * 1024);
    expect(await reuse.recent(ssh)).toBeNull();
  });
  it('is not kept for another backend or without a control path', async () => {
    const state = join(tmp, 'state4');
    const reuse = probeReuse(state, { PATH: process.env.PATH });
    const incus = { ...ssh, backend: 'incus' } as VmSpec;
    const plain = { ...ssh, sshOptions: ['-o', 'ControlPath=none'] } as VmSpec;
    reuse.remember(incus, 50 * 1024 * 1024);
    reuse.remember(plain, 50 * 1024 * 1024);
    expect(existsSync(join(state, 'probe'))).toBe(false);
    expect(await reuse.recent(incus)).toBeNull();
    expect(await reuse.recent(plain)).toBeNull();
  });
});
