// `offhost check`, `explain` and `rules` as a user runs them: the built CLI in a child process, its
// exit status and output; and the reroute's command executed by real bash with stand-in ssh/incus.
import { afterAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { standinPath } from '../helpers/standins.js';

const BIN = resolve('dist/offhost.mjs');
const tmp = mkdtempSync(join(tmpdir(), 'offhost-check-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
const HOME = join(tmp, 'home');
const KODA = join(HOME, 'dev/koder/engines/lang/koda');
mkdirSync(KODA, { recursive: true });
const baseEnv = { PATH: process.env.PATH, HOME, XDG_CONFIG_HOME: join(tmp, 'xdg'), OFFHOST_ROLE: 'laptop' };

function offhost(args: string[], opts: { cwd?: string; env?: Record<string, string | undefined> } = {}) {
  const r = spawnSync(process.execPath, [BIN, ...args], { cwd: opts.cwd ?? tmp, env: { ...baseEnv, ...opts.env }, encoding: 'utf8' });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('offhost check', () => {
  it('exit 0 allow, 1 deny, 3 reroute', () => {
    expect(offhost(['check', 'ls -la']).status).toBe(0);
    expect(offhost(['check', 'qemu-system-x86_64 -hda win10.img']).status).toBe(1);
    expect(offhost(['check', 'make build-safe'], { cwd: KODA }).status).toBe(3);
  });
  it('--json prints the verdict object', () => {
    const r = offhost(['check', '--json', '--cwd', KODA, '--', 'make build-safe']);
    expect(r.status).toBe(3);
    const v = JSON.parse(r.stdout);
    expect(Object.keys(v).sort()).toEqual(['decision', 'reason', 'rewrite', 'route', 'rule']);
    expect(v).toMatchObject({ decision: 'reroute', rule: 'koda-make', route: { name: 'koda', vm: 's.khost1.dev-linux-koda', cwd: KODA } });
    expect(v.rewrite).toContain(' run -- ');
  });
  it('allow and deny have null route and rewrite', () => {
    const v = JSON.parse(offhost(['check', '--json', 'echo "make build-safe"'], { cwd: KODA }).stdout);
    expect(v).toEqual({ decision: 'allow', rule: 'r1-inspection', reason: expect.any(String), route: null, rewrite: null });
  });
  it('an unparseable line is a deny with the position', () => {
    const r = offhost(['check', '--json', 'echo $(make build'], { cwd: KODA });
    expect(r.status).toBe(1);
    expect(JSON.parse(r.stdout)).toMatchObject({ decision: 'deny', rule: 'parse-error', reason: expect.stringMatching(/line 1, column \d+/) });
  });
  it('a bare CI=true|1 does not make check judge as CI (laptop unless OFFHOST_ROLE/--role/config say so)', () => {
    for (const CI of ['true', '1']) expect(offhost(['check', 'make build-safe'], { cwd: KODA, env: { OFFHOST_ROLE: undefined, CI } }).status).toBe(3);
    expect(offhost(['check', '--role', 'ci', 'make build-safe'], { cwd: KODA, env: { OFFHOST_ROLE: undefined, CI: 'true' } }).status).toBe(0);
    expect(offhost(['check', 'make build-safe'], { cwd: KODA, env: { OFFHOST_ROLE: 'ci' } }).status).toBe(0);
  });
  it('usage and config errors exit 2 and change nothing', () => {
    expect(offhost(['check']).status).toBe(2);
    // Several words are an argv, judged word for word (as `offhost run` runs them): not a usage error.
    expect(offhost(['check', 'make', 'build-safe'], { cwd: KODA }).status).toBe(3);
    expect(offhost(['check', 'echo', 'make build-safe'], { cwd: KODA }).status).toBe(0);
    expect(offhost(['check', '--role', 'desktop', 'ls']).status).toBe(2);
    const dir = join(tmp, 'badcfg');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'offhost.config.yaml'), 'root: ~/dev/koder\nrules:\n  - id: Bad Id\n');
    const r = offhost(['check', 'ls'], { cwd: dir });
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/offhost\.config\.yaml:3:\d+: rules\.0\.id/);
    expect(readFileSync(join(dir, 'offhost.config.yaml'), 'utf8')).toBe('root: ~/dev/koder\nrules:\n  - id: Bad Id\n');
  });
  it('the route command, run by bash, runs the line on the VM and not here', () => {
    const line = `FOO='a b' make build-safe "it's" && echo done`;
    const v = JSON.parse(offhost(['check', '--json', line], { cwd: KODA }).stdout);
    // A fake make on the "VM" PATH records what it got; the stand-ins log every hop.
    const vmBin = join(tmp, 'vmbin');
    mkdirSync(vmBin, { recursive: true });
    writeFileSync(join(vmBin, 'make'), `#!/bin/sh\nprintf '%s\\n' "$PWD" "$FOO" "$@" > "${join(tmp, 'make.out')}"\n`);
    chmodSync(join(vmBin, 'make'), 0o755);
    const log = join(tmp, 'standin.log');
    const r = spawnSync('bash', ['-c', v.route.command], {
      env: { PATH: `${standinPath()}:${vmBin}:${process.env.PATH}`, HOME, OFFHOST_STANDIN_LOG: log },
      encoding: 'utf8',
    });
    expect(r.status).toBe(0);
    expect(r.stdout).toBe('done\n');
    expect(readFileSync(join(tmp, 'make.out'), 'utf8')).toBe(`${KODA}\na b\nbuild-safe\nit's\n`);
    const hops = readFileSync(log, 'utf8').trim().split('\n').map((l) => JSON.parse(l).tool);
    expect(hops).toEqual(['ssh', 'incus']);
  });
});

describe('offhost explain and rules', () => {
  it('explain lists each command with its cwd, wrappers and rule', () => {
    const r = offhost(['explain', `sudo bash -c 'cd ${KODA} && make kasm'`]);
    expect(r.status).toBe(3);
    expect(r.stdout).toMatch(/make {2}argv: "make" "kasm"/);
    expect(r.stdout).toContain(`cwd: ${KODA}`);
    expect(r.stdout).toContain('found inside: sudo > bash -c');
    expect(r.stdout).toMatch(/reroute by koda-make \(R1\)/);
  });
  it('rules test passes on the built-in pack and rules list names every rule', () => {
    const t = offhost(['rules', 'test']);
    expect(t.status).toBe(0);
    expect(t.stdout).toMatch(/^\d+ passed, 0 failed/m);
    expect(offhost(['rules', 'list']).stdout).toMatch(/koda-make\s+R1\s+reroute -> koda/);
  });
});
