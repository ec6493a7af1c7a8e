// src/shell/guess.ts: an unknown program's arguments read as the command they may be. Tables of what the
// guard decides (the built-in pack, the Koda build and the emulator as the heavy work), then the walker's
// own view: what is found, marked certain-only, and the step budget.
import { afterAll, describe, expect, it } from 'vitest';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadGuard } from '../../src/config/load-guard.js';
import { commandsOf, type WalkPolicy } from '../../src/shell/commands.js';
import type { SimpleCommand } from '../../src/types.js';
import { parse } from '../../src/shell/parser.js';

const HOME = '/home/koder';
const ROOT = `${HOME}/dev/koder`;
const KODA = `${ROOT}/engines/lang/koda`;
const tmp = mkdtempSync(join(tmpdir(), 'offhost-guess-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
const guard = loadGuard({ cwd: tmp, env: { HOME, PATH: process.env.PATH, XDG_CONFIG_HOME: join(tmp, 'xdg') }, role: 'laptop' });
const decide = (line: string, cwd = KODA) => guard.classify(line, { cwd, files: false });

describe('an unknown program whose arguments spell heavy work is judged as the wrapper it may be', () => {
  const heavy: [string, string][] = [
    ['vglrun make build-safe', 'koda-make'],
    ['aws-vault exec prod -- make build-safe', 'koda-make'],
    ['nvm exec 20 make build-safe', 'koda-make'],
    ['s6-setuidgid koder make build-safe', 'koda-make'],
    ['s6-setuidgid make make build-safe', 'koda-make'], // the user is called make: the build is still read
    ['chpst -u koder:koder /usr/bin/make build-safe', 'koda-make'],
    ['scl enable devtoolset-9 -- make build-safe', 'koda-make'],
    ["scl enable devtoolset-9 'make build-safe'", 'koda-make'],
    ["mytool --exec='make build-safe'", 'koda-make'],
    ['mytool --exec=make build-safe', 'koda-make'], // the value starts the command, the words after it follow
    ["mytool -c 'cd . && make build-safe'", 'koda-make'],
    ['ssh-agent nice -n 5 make build-safe', 'koda-make'],
    ['ssh-agent npx playwright test', 'playwright-test'],
    ['mpirun -n 2 emulator -avd Pixel_7', 'android-emulator'],
    ['rr record emulator -avd Pixel_7', 'android-emulator'],
    ['fd -e c -x make build-safe', 'koda-make'],
    ["apt-get -o 'APT::Update::Pre-Invoke::=make build-safe' update", 'koda-make'],
    ["dpkg --pre-invoke='make build-safe' -i x.deb", 'koda-make'],
  ];
  it.each(heavy)('%s -> %s', (line, rule) => {
    const v = decide(line);
    expect(v.decision, v.reason).not.toBe('allow');
    expect(v.rule).toBe(rule);
  });

  const light: string[] = [
    'mytool cat notes.txt',
    'mytool make -n build-safe', // a dry run
    "mytool --message 'make build-safe'", // the value of an option that is not a command
    "notify-send 'make build-safe finished'",
    "logger -t ci 'make build-safe started'",
    "rg 'emulator -avd Pixel_7' docs",
    "gh pr create --title 'make build-safe' --body 'emulator -avd Pixel_7'",
    'pkill -f qemu-system-x86_64',
    'ldd /usr/bin/qemu-system-x86_64',
    'journalctl -u qemu-kvm',
    'apt install qemu-system-x86 chromium',
    'dpkg -c chromium.deb',
    "mytool 'make build-safe (again'", // a message that does not parse is text
    "ssh-agent bash -c 'echo make build-safe'",
    "incus exec dev-linux-koda -- bash -c 'cd ~/dev/koder/engines/lang/koda && make build-safe'", // runs on the VM (r1-talk-to-vm)
    './win.sh sh "qemu-system-x86_64 -name win10"', // the Windows VM's template script: on the VM
    "cargo fmt -- make build-safe", // kept here as it is by r1-editing
  ];
  it.each(light)('%s -> allow', (line) => {
    const v = decide(line);
    expect(v.decision, `${v.rule}: ${v.reason}`).toBe('allow');
  });
});

describe("a user's config", () => {
  it('an allow rule naming a program keeps it as it is (its arguments are data), and a heavy rule names the words a guess starts from', () => {
    const dir = join(tmp, 'conf');
    mkdirSync(join(dir, 'sub'), { recursive: true });
    writeFileSync(
      join(dir, 'offhost.config.yaml'),
      [
        'rules:',
        '  - id: mytool-is-data',
        '    description: mytool takes commands as text.',
        '    policy: R1',
        '    decision: allow',
        '    message: mytool only records.',
        '    match: { program: [mytool] }',
        '    examples: { match: [mytool make build-safe] }',
        '  - id: bazel-builds',
        '    description: bazel builds are heavy.',
        '    policy: R1',
        '    decision: deny',
        '    message: build with bazel on the VM.',
        '    match: { program: [bazel], subcommands: [[build]] }',
        '    examples: { match: [bazel build //x] }',
        '',
      ].join('\n'),
    );
    const g = loadGuard({ cwd: join(dir, 'sub'), env: { HOME, PATH: process.env.PATH, XDG_CONFIG_HOME: join(tmp, 'xdg') }, role: 'laptop' });
    expect(g.classify('mytool make build-safe', { cwd: KODA, files: false }).decision).toBe('allow');
    expect(g.classify('othertool make build-safe', { cwd: KODA, files: false }).decision).toBe('reroute');
    expect(g.classify('vglrun bazel build //app', { cwd: ROOT, files: false })).toMatchObject({ decision: 'deny', rule: 'bazel-builds' });
    expect(g.classify('vglrun bazel query //app', { cwd: ROOT, files: false }).decision).toBe('allow');
  });
});

describe('the walker', () => {
  const walk = (line: string, policy?: WalkPolicy) => commandsOf(parse(line), line, { cwd: KODA, env: { HOME }, ...(policy ? { policy } : {}) });

  it('what it guesses is certain-only and says where it came from; the unknown program itself is plain', () => {
    const [self, inner] = walk('vglrun -d :1 make build-safe');
    expect(self).toMatchObject({ program: 'vglrun', via: [] });
    expect(self!.certainOnly).toBeUndefined();
    expect(inner).toMatchObject({ program: 'make', argv: ['make', 'build-safe'], certainOnly: true });
    expect(inner!.via[0]).toMatch(/^vglrun \(unknown to offhost/);
  });

  it('a word names a program through the registry or the rules; a call the policy keeps as it is is not read', () => {
    const none: WalkPolicy = { names: () => false, keeps: () => false };
    expect(walk('mytool bazel build //x', none).map((c) => c.program)).toEqual(['mytool']);
    expect(walk('mytool bazel build //x', { ...none, names: (p) => p === 'bazel' }).map((c) => c.program)).toEqual(['mytool', 'bazel']);
    const kept: string[][] = [];
    const keeps = (c: SimpleCommand) => (kept.push(c.argv), c.argv[1] === 'exec');
    expect(walk('mytool exec -- make x', { ...none, keeps }).map((c) => c.program)).toEqual(['mytool']);
    expect(walk('mytool run -- make x', { ...none, keeps }).map((c) => c.program)).toEqual(['mytool', 'make']);
    expect(kept).toEqual([['mytool', 'exec', '--', 'make', 'x'], ['mytool', 'run', '--', 'make', 'x']]);
  });

  it('guesses do not guess again, and a builtin in a guess does not change the shell', () => {
    expect(walk('a b make x').map((c) => c.program)).toEqual(['a', 'make']);
    const cmds = walk('mytool cd /tmp; make build-safe');
    expect(cmds.find((c) => c.program === 'make')!.cwd).toBe(KODA);
  });

  it('a line built to make the guesses quadratic is refused as too complex, not let through unread', () => {
    const line = `mytool ${'env '.repeat(4000)}make build-safe`;
    const v = decide(line);
    expect(v.decision).toBe('deny');
    expect(v.reason).toMatch(/too complex/);
  });

  it('a long line of plain arguments costs one look-up per word (no guess)', () => {
    const line = `mytool ${Array.from({ length: 20_000 }, (_, i) => `file${i}.txt`).join(' ')}`;
    expect(walk(line)).toHaveLength(1);
  });
});
