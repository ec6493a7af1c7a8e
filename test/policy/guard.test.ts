// The guard as a whole: verdicts, roles, config layering and its errors, rule self-tests.
import { afterAll, describe, expect, it } from 'vitest';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { selfTest } from '../../src/policy/guard.js';
import { loadGuard } from '../../src/config/load-guard.js';
import { resolveRole } from '../../src/config/role.js';
import { withRunRewrite } from '../../src/adapters/run-rewrite.js';
import { ConfigError } from '../../src/errors.js';

const HOME = '/home/koder';
const ROOT = `${HOME}/dev/koder`;
const KODA = `${ROOT}/engines/lang/koda`;
const tmp = mkdtempSync(join(tmpdir(), 'offhost-guard-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

// No config file may leak in from the machine: cwd is under a temp dir, XDG_CONFIG_HOME points into it.
const env = { HOME, PATH: process.env.PATH, XDG_CONFIG_HOME: join(tmp, 'xdg') } as NodeJS.ProcessEnv;
const guard = loadGuard({ cwd: tmp, env, role: 'laptop' });

describe('verdicts', () => {
  it('reroutes a Koda build to s.khost1.dev-linux-koda through ssh khost1 + incus exec --cwd', () => {
    const v = guard.classify('make build-safe', { cwd: KODA });
    expect(v.decision).toBe('reroute');
    expect(v.rule).toBe('koda-make');
    expect(v.route).toMatchObject({ name: 'koda', vm: 's.khost1.dev-linux-koda', cwd: KODA });
    expect(v.route!.command).toMatch(/^ssh khost1 -- .*incus exec dev-linux-koda --cwd .*engines\/lang\/koda/);
    // The guard gives the route; the doors (check, hooks, shell) add the rewrite.
    expect(withRunRewrite(v, 'make build-safe').rewrite).toMatch(/ run -- 'make build-safe'$/);
  });
  it('denies a local Windows VM with the migration instruction', () => {
    const v = guard.classify('qemu-system-x86_64 -hda win10.qcow2', { cwd: ROOT });
    expect(v).toMatchObject({ decision: 'deny', rule: 'qemu-windows' });
    expect(v.reason).toContain('s.khost1.dev-win10');
  });
  it('allows data that only mentions a heavy command', () => {
    expect(guard.classify('echo "make build-safe" && git commit -m "emulator -avd x"', { cwd: KODA }).decision).toBe('allow');
  });
  it('a parse error is a deny with its position', () => {
    const v = guard.classify('echo "unterminated', { cwd: ROOT });
    expect(v).toMatchObject({ decision: 'deny', rule: 'parse-error' });
    expect(v.reason).toMatch(/line 1, column \d+/);
  });
  it('a NUL byte is refused', () => {
    expect(guard.classify('make\0 build', { cwd: KODA })).toMatchObject({ decision: 'deny', rule: 'parse-error' });
  });
  it('an unknown make target in the Koda engine is denied, not guessed', () => {
    const v = guard.classify('make "$TARGET"', { cwd: KODA });
    expect(v).toMatchObject({ decision: 'deny', rule: 'koda-make' });
    expect(v.reason).toMatch(/cannot tell statically/);
  });
  it('two routes in one line are denied', () => {
    expect(guard.classify('make build && emulator -avd x', { cwd: KODA })).toMatchObject({ decision: 'deny', rule: 'multiple-routes' });
  });
  it('deny beats reroute beats allow across the line', () => {
    expect(guard.classify('ls; make build; qemu-system-x86_64 -hda a.img', { cwd: KODA }).decision).toBe('deny');
  });
});

describe('roles', () => {
  it('order: flag, OFFHOST_ROLE, config, CI=true (CI commands only), laptop', () => {
    expect(resolveRole('vm', { OFFHOST_ROLE: 'ci', CI: 'true' }, 'laptop')).toBe('vm');
    expect(resolveRole(undefined, { OFFHOST_ROLE: 'vm', CI: 'true' }, 'laptop')).toBe('vm');
    expect(resolveRole(undefined, { CI: 'true' }, 'laptop', true)).toBe('laptop');
    expect(resolveRole(undefined, { CI: 'true' }, undefined, true)).toBe('ci');
    expect(resolveRole(undefined, {}, undefined)).toBe('laptop');
  });
  it('a bare CI variable does not change the role of the doors and check (people export CI=1 on laptops)', () => {
    for (const ci of ['true', '1', 'TRUE']) expect(resolveRole(undefined, { CI: ci }, undefined)).toBe('laptop');
    expect(loadGuard({ cwd: tmp, env: { ...env, OFFHOST_ROLE: undefined, CI: '1' } }).classify('make build-safe', { cwd: KODA }).decision).toBe('reroute');
  });
  it('a bad role is a config error, not a default', () => {
    expect(() => resolveRole(undefined, { OFFHOST_ROLE: 'desktop' }, undefined)).toThrow(ConfigError);
  });
  it('heavy commands are allowed on a VM and in CI', () => {
    for (const role of ['vm', 'ci'] as const) {
      expect(loadGuard({ cwd: tmp, env, role }).classify('make build-safe', { cwd: KODA }).decision).toBe('allow');
    }
  });
});

describe('config', () => {
  function project(name: string, yaml: string): string {
    const dir = join(tmp, name);
    mkdirSync(join(dir, 'sub'), { recursive: true });
    writeFileSync(join(dir, 'offhost.config.yaml'), yaml);
    return dir;
  }
  it('is found by walking up from the cwd and layered over the built-in pack', () => {
    const dir = project('layered', [
      'root: /srv/mono',
      'disable: [qemu-local-vm]',
      'rules:',
      '  - id: heavy-cargo',
      '    description: cargo build --release of the whole workspace',
      '    policy: R1',
      '    decision: reroute',
      '    route: koda',
      '    message: release builds run on the VM',
      '    match: { program: cargo, subcommands: [[build]], flags: [{ names: --release }] }',
      '    examples: { match: [cargo build --release], not_match: [cargo build] }',
      '',
    ].join('\n'));
    const g = loadGuard({ cwd: join(dir, 'sub'), env, role: 'laptop' });
    expect(g.classify('cargo build --release').decision).toBe('reroute');
    expect(g.classify('qemu-system-x86_64 -hda a.img').decision).toBe('allow');
    expect(g.classify('make build', { cwd: '/srv/mono/engines/lang/koda' }).decision).toBe('reroute');
    expect(g.config.sources.at(-1)).toBe(join(dir, 'offhost.config.yaml'));
  });
  it('program patterns: a literal prefix rules programs out early, a pattern without one is tried on every program', () => {
    const dir = project('patterns', [
      'rules:',
      '  - id: sim-prefixed',
      '    description: simulators named sim-*',
      '    policy: R1',
      '    decision: deny',
      '    message: simulators run on the VM',
      '    match: { any_of: [{ program: [simctl, sim-*] }, { program: [fastsim*] }] }',
      '    examples: { match: [sim-ios boot, fastsim2 run, simctl boot], not_match: [simple x, ls sim-x] }',
      '  - id: anything-chrome',
      '    description: any program with chrome in its name',
      '    policy: R1',
      '    decision: deny',
      '    message: browsers run on the VM',
      '    match: { program: ["*chrome*"] }',
      '    examples: { match: [google-chrome-stable --headless, chrome], not_match: [chromium] }',
      '',
    ].join('\n'));
    const g = loadGuard({ cwd: join(dir, 'sub'), env, role: 'laptop' });
    const sim = g.config.rules.find((r) => r.id === 'sim-prefixed')!;
    expect(sim.programs.prefixes).toEqual(['sim-', 'fastsim']);
    expect(g.config.rules.find((r) => r.id === 'anything-chrome')!.programs.prefixes).toBeUndefined();
    for (const [line, rule] of [['sim-ios boot', 'sim-prefixed'], ['fastsim run', 'sim-prefixed'], ['simctl x', 'sim-prefixed'], ['sim x', null], ['simulate', null], ['my-chrome-wrapper', 'anything-chrome'], ['FASTSIM', null]] as const) {
      const v = g.classify(line);
      expect(v.decision, line).toBe(rule ? 'deny' : 'allow');
      expect(v.rule, line).toBe(rule);
    }
  });
  it('an invalid config is an error with file:line, never a silent default', () => {
    const dir = project('bad', 'root: ~/dev/koder\nroutes:\n  koda:\n    vms: [s.khost1.flow]\n');
    expect(() => loadGuard({ cwd: dir, env, role: 'laptop' })).toThrow(/offhost\.config\.yaml:4:\d+: routes\.koda\.vms\.0: .*production containers/);
  });
  it('broken YAML names the line', () => {
    const dir = project('yaml', 'root: ~/dev/koder\ndisable: [a, b\n');
    expect(() => loadGuard({ cwd: dir, env, role: 'laptop' })).toThrow(/offhost\.config\.yaml:\d+:\d+: invalid YAML/);
  });
  it('an unknown key is refused', () => {
    const dir = project('key', 'rootdir: /x\n');
    expect(() => loadGuard({ cwd: dir, env, role: 'laptop' })).toThrow(/offhost\.config\.yaml:1:1: .*rootdir/);
  });
  it('a user rule that misses its own example does not load', () => {
    const dir = project('selftest', [
      'rules:',
      '  - id: cargo-release',
      '    description: x',
      '    policy: R1',
      '    decision: deny',
      '    message: no',
      '    match: { program: cargo, subcommands: [[build]] }',
      '    examples: { match: [cargo test], not_match: [] }',
      '',
    ].join('\n'));
    expect(() => loadGuard({ cwd: dir, env, role: 'laptop' })).toThrow(/offhost\.config\.yaml:2: rule 'cargo-release': the rule does not match its own example/);
  });
  it('disabling a rule that does not exist is an error', () => {
    const dir = project('disable', 'disable: [no-such-rule]\n');
    expect(() => loadGuard({ cwd: dir, env, role: 'laptop' })).toThrow(/no rule 'no-such-rule'/);
  });
});

describe('built-in pack', () => {
  it('every rule passes its own examples', () => {
    expect(selfTest(guard.config)).toEqual([]);
  });
  it('implements every R1 and R5 trigger of POLICY.md', () => {
    const ids = guard.config.rules.map((r) => r.id);
    for (const id of ['koda-make', 'flutter-test-browser', 'android-emulator', 'qemu-windows', 'live-build', 'flutter-integration', 'playwright-test', 'headless-browser', 'selenium', 'xvfb', 'headless-compositor', 'ios-simulator']) {
      expect(ids).toContain(id);
    }
  });
  it('never routes to a production container (R2)', () => {
    for (const [, route] of guard.config.routes) for (const vm of route.vms) expect(vm).toMatch(/^s\.khost1\.dev-/);
  });
});

describe('route working directory', () => {
  it('is the laptop cwd inside the monorepo, and the monorepo root outside it', () => {
    expect(guard.classify('make build-safe', { cwd: KODA }).route!.cwd).toBe(KODA);
    const v = guard.classify(`cd ${KODA} && make build-safe`, { cwd: '/tmp' });
    expect(v.route!.cwd).toBe(ROOT);
    expect(v.route!.command).toContain(`--cwd ${ROOT} `);
  });
});
