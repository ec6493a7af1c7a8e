// `offhost shell` used as $SHELL by a child process that runs `$SHELL -c '…'` (the way agents and tools
// spawn commands), through hooks/offhost-shell, with the real bash behind it.
import { beforeAll, describe, expect, it } from 'vitest';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { readStandinLog, standinEnv } from '../helpers/standins.js';
import { type FakeHome, BIN, ROOT, fakeHome, initMonorepo, offhostOnPath, requireBuild } from './hooks-helpers.js';

const SHELL = join(ROOT, 'hooks', 'offhost-shell');
let h: FakeHome;
let offhostDir: string;
beforeAll(() => {
  requireBuild();
  h = fakeHome();
  initMonorepo(h);
  offhostDir = offhostOnPath(h);
});

/** A node child that does spawnSync(process.env.SHELL, args) — what an agent does — and reports. */
function viaShell(args: string[], opts: { cwd?: string; input?: string; log?: string; env?: Record<string, string> } = {}) {
  const child = `
    const { spawnSync } = require('node:child_process');
    const r = spawnSync(process.env.SHELL, JSON.parse(process.argv[1]), { encoding: 'utf8', input: process.env.CHILD_INPUT });
    process.stdout.write(JSON.stringify({ status: r.status, stdout: r.stdout, stderr: r.stderr }));
  `;
  const env = standinEnv({
    log: opts.log ?? join(h.home, 'shell-standin.log'),
    home: h.home,
    extraPath: [offhostDir, h.localBin],
    env: { SHELL, OFFHOST_BIN: BIN, OFFHOST_NODE: process.execPath, OFFHOST_ROLE: 'laptop', LAPTOP_MARKER: '1', OFFHOST_AUDIT_LOG: h.audit, ...(opts.input !== undefined ? { CHILD_INPUT: opts.input } : {}), ...(opts.env ?? {}) },
  });
  const r = spawnSync(process.execPath, ['-e', child, JSON.stringify(args)], { cwd: opts.cwd ?? h.home, env, encoding: 'utf8', timeout: 60_000 });
  if (r.status !== 0) throw new Error(`child failed: ${r.stderr}`);
  return JSON.parse(r.stdout) as { status: number; stdout: string; stderr: string };
}

const makeRuns = () => {
  try {
    return readFileSync(h.localLog, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
  } catch {
    return [];
  }
};

describe('offhost shell as $SHELL', () => {
  it('allowed commands run in the real shell, with $0 and $1 and combined flags', () => {
    expect(viaShell(['-c', 'echo hi && pwd'], { cwd: h.koda })).toMatchObject({ status: 0, stdout: `hi\n${h.koda}\n` });
    expect(viaShell(['-lc', 'echo "$0:$1"', 'name', 'arg'])).toMatchObject({ status: 0, stdout: 'name:arg\n' });
    expect(viaShell(['-ec', 'false; echo not-reached'])).toMatchObject({ status: 1, stdout: '' });
    expect(viaShell(['-c', 'exit 7'])).toMatchObject({ status: 7 });
  });

  it('refused commands exit 126 with the reason on stderr and do not run', () => {
    const before = makeRuns().length;
    const r = viaShell(['-c', 'make build-safe && echo done; qemu-system-x86_64 -hda win10.qcow2']);
    expect(r.status).toBe(126);
    expect(r.stderr).toMatch(/^offhost: refused/);
    expect(r.stdout).toBe('');
    expect(makeRuns().length).toBe(before);
  });

  it('rerouted commands run on the VM, not here', () => {
    const log = join(h.home, 'shell-reroute.log');
    const before = makeRuns().length;
    const r = viaShell(['-c', 'make build-safe'], { cwd: h.koda, log });
    expect(r.status, r.stderr).toBe(0);
    expect(makeRuns().slice(before)).toEqual([{ argv: ['build-safe'], cwd: h.koda, laptop: false }]);
    expect(readStandinLog(log).some((e) => e.tool === 'incus' && e.instance === 'dev-linux-koda')).toBe(true);
  });

  it('a bare CI=1 in the environment does not turn the guard off: make still runs on the VM', () => {
    const log = join(h.home, 'shell-ci.log');
    const before = makeRuns().length;
    const r = viaShell(['-c', 'make build-safe'], { cwd: h.koda, log, env: { OFFHOST_ROLE: '', CI: '1' } });
    expect(r.status, r.stderr).toBe(0);
    expect(makeRuns().slice(before)).toEqual([{ argv: ['build-safe'], cwd: h.koda, laptop: false }]);
  });

  it('commands on stdin are checked before bash sees them', () => {
    expect(viaShell([], { input: 'echo piped\n' })).toMatchObject({ status: 0, stdout: 'piped\n' });
    const before = makeRuns().length;
    const r = viaShell(['-s'], { input: `cd ${h.koda}\nmake build-safe\n` });
    expect(r.status).toBe(126);
    expect(makeRuns().length).toBe(before);
  });

  it('a shell kept open on a pipe (-i, stdin never closed) is refused at the deadline, not run unchecked', async () => {
    const { spawn } = await import('node:child_process');
    const env = standinEnv({ home: h.home, extraPath: [offhostDir, h.localBin], env: { OFFHOST_BIN: BIN, OFFHOST_NODE: process.execPath, OFFHOST_ROLE: 'laptop', OFFHOST_AUDIT_LOG: h.audit, OFFHOST_SHELL_STDIN_MS: '400' } });
    const child = spawn(SHELL, ['-i'], { env, cwd: h.koda });
    child.stdin.write('make build-safe\n'); // and keep it open, the way a persistent agent shell does
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    const status = await new Promise<number | null>((res) => child.on('exit', res));
    expect(status).toBe(126);
    expect(stderr).toContain('long-lived shell fed over a pipe is not supported');
  });

  it('script files are checked: light ones run with their arguments, heavy ones are refused', () => {
    writeFileSync(join(h.home, 'light.sh'), 'echo "light $1"\n');
    writeFileSync(join(h.home, 'heavy.sh'), `cd ${h.koda}\nmake build-safe\n`);
    expect(viaShell([join(h.home, 'light.sh'), 'x'])).toMatchObject({ status: 0, stdout: 'light x\n' });
    const r = viaShell([join(h.home, 'heavy.sh')]);
    expect(r.status).toBe(126);
    expect(r.stderr).toContain('must run on a VM');
  });

  it('offhost shell --check (the terminal integration): 0 / 3 + rewrite / 126 + reason', () => {
    const env = { PATH: process.env.PATH ?? '', HOME: h.home, OFFHOST_ROLE: 'laptop', OFFHOST_AUDIT_LOG: h.audit };
    const check = (line: string) => spawnSync(process.execPath, [BIN, 'shell', '--check', '--cwd', h.koda, '--', line], { env, encoding: 'utf8' });
    expect(check('ls').status).toBe(0);
    const rr = check('make build-safe');
    expect(rr.status).toBe(3);
    expect(rr.stdout).toMatch(/ run -- /);
    const d = check('qemu-system-x86_64 -hda win10.qcow2');
    expect(d.status).toBe(126);
    expect(d.stdout).toMatch(/^refused/);
  });

  it('offhost init --shell bash, sourced by a real interactive bash: a heavy line runs on the VM instead', () => {
    const env = { PATH: process.env.PATH ?? '', HOME: h.home, OFFHOST_ROLE: 'laptop', OFFHOST_AUDIT_LOG: h.audit };
    const snippet = spawnSync(process.execPath, [BIN, 'init', '--shell', 'bash'], { env, encoding: 'utf8' });
    expect(snippet.status, snippet.stderr).toBe(0);
    const rc = join(h.home, 'offhost.bashrc');
    writeFileSync(rc, `PS1='$ '\n${snippet.stdout}`);
    const log = join(h.home, 'terminal-standin.log');
    const before = makeRuns().length;
    const r = spawnSync('bash', ['--noprofile', '--rcfile', rc, '-i'], {
      cwd: h.koda,
      input: 'echo typed\nmake build-safe\nqemu-system-x86_64 -hda win10.qcow2\necho end\n',
      encoding: 'utf8',
      env: standinEnv({ log, home: h.home, extraPath: [offhostDir, h.localBin], env: { OFFHOST_ROLE: 'laptop', LAPTOP_MARKER: '1', OFFHOST_AUDIT_LOG: h.audit, HISTFILE: join(h.home, 'hist') } }),
      timeout: 60_000,
    });
    expect(r.stdout).toContain('typed\n');
    expect(r.stdout).toContain('end\n');
    expect(r.stderr).toContain('offhost: rerouted; running instead:');
    expect(r.stderr).toMatch(/offhost: refused \(rule qemu-windows\)/);
    expect(makeRuns().slice(before)).toEqual([{ argv: ['build-safe'], cwd: h.koda, laptop: false }]);
    expect(readStandinLog(log).some((e) => e.tool === 'incus' && e.instance === 'dev-linux-koda')).toBe(true);
  });
});
