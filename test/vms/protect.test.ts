// Protecting catalogue VMs (issue 13 item 4; issue 11 item 2's last sentence): the guard reads the active
// lock file when a line names a catalogue instance. Real git work tree, real lock files.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { loadGuard } from '../../src/config/load-guard.js';

let dir: string;
let repo: string;
const HOME = '/home/koder';
const now = new Date();
const iso = (d: Date) => d.toISOString().replace(/\.\d+Z$/, 'Z');

function lock(vm: string, session: string, started = now, extra = '') {
  const p = join(repo, 'meta/context/notices/vm-active', `lock-${vm}.md`);
  mkdirSync(join(repo, 'meta/context/notices/vm-active'), { recursive: true });
  writeFileSync(p, `---\nvm: ${vm}\nsession: ${session}\nai: claude\nstarted: ${iso(started)}\nreason: |\n  koda build-safe for KODA-12\n${extra}---\nrunning make build-safe\n`);
  return p;
}

function classify(line: string, session?: string) {
  const env = { HOME, OFFHOST_ROLE: 'laptop', PATH: '/usr/bin:/bin', ...(session ? { OFFHOST_SESSION: session } : {}) };
  const g = loadGuard({ cwd: repo, env });
  return g.classify(line, { cwd: repo, env });
}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'offhost-protect-'));
  repo = join(dir, 'repo');
  mkdirSync(repo);
  execFileSync('git', ['init', '-q', repo]);
  writeFileSync(join(repo, 'offhost.config.yaml'), [
    'vms:',
    '  - { id: s.khost1.dev-linux-lima, backend: lima, instance: landlock-vm }',
    '  - { id: s.khost1.dev-linux-tart, backend: tart, instance: clean-ubuntu }',
    '  - { id: s.khost1.dev-linux-box, backend: template, instance: demo, template: "vm run {instance} {script}" }',
    '',
  ].join('\n'));
  lock('s.khost1.dev-linux-koda', 'claude-other');
  lock('s.khost1.dev-linux-lima', 'claude-other');
  lock('s.khost1.dev-linux-tart', 'claude-other');
  lock('s.khost1.dev-linux-box', 'claude-other');
  lock('s.khost1.dev-linux-gui', 'me-1');
  lock('s.khost1.dev-linux-iso', 'claude-old', new Date(now.getTime() - 3 * 3600_000));
  writeFileSync(join(repo, 'meta/context/notices/vm-active/lock-s.khost1.dev-android-emulator.md'), 'not a lock\n');
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('true positives: refused while another session holds the VM', () => {
  for (const line of [
    'incus delete --force dev-linux-koda',
    'incus stop dev-linux-koda',
    'incus restart dev-linux-koda',
    'incus snapshot restore dev-linux-koda provisioned',
    'incus restore dev-linux-koda provisioned',
    'ssh khost1 -- incus exec dev-linux-koda -- make build-safe',
    'incus exec dev-linux-koda -- make build-safe',
    'limactl stop landlock-vm',
    'limactl delete landlock-vm',
    'limactl shell landlock-vm -- bash -lc make',
    'tart delete clean-ubuntu',
    'tart stop clean-ubuntu',
    'vm reset demo',
    'vm rm demo',
    'vm run demo true',
  ]) {
    it(line, () => {
      const v = classify(line, 'me-1');
      expect(v.decision).toBe('deny');
      expect(v.rule).toBe('vm-held');
      expect(v.reason).toMatch(/held by session claude-other \(claude\) since .* for: koda build-safe for KODA-12/);
    });
  }
});

describe('bypass attempts', () => {
  for (const line of [
    "ssh khost1 'incus delete --force dev-linux-koda'",
    'ssh -p 22 -o BatchMode=yes khost1 incus stop dev-linux-koda',
    'sudo incus delete dev-linux-koda --force',
    "bash -c 'incus stop dev-linux-koda'",
    '/usr/bin/incus delete dev-linux-koda',
    'lxc delete dev-linux-koda',
    'incus delete khost1:dev-linux-koda',
    'incus delete other dev-linux-koda',
    'true && incus --project default stop dev-linux-koda',
    "ssh khost1 \"bash -c 'incus exec dev-linux-koda -- make build-safe'\"",
    'env FOO=1 incus exec dev-linux-koda -- true',
    'incus config device remove dev-linux-koda koder',
    'incus file push ./x dev-linux-koda/tmp/x',
    'incus snapshot delete dev-linux-koda provisioned',
  ]) {
    it(line, () => {
      const v = classify(line, 'me-1');
      expect(v.decision, v.reason).toBe('deny');
      expect(v.rule).toBe('vm-held');
    });
  }
});

describe('destructive verbs need the lock even when nobody holds the VM', () => {
  it('free VM: incus delete is refused until its lock is taken', () => {
    const v = classify('incus delete dev-linux-ghost', 'me-1');
    expect(v.decision).not.toBe('deny'); // not a catalogue instance
    const f = classify('ssh khost1 -- incus stop dev-linux-koda-free', 'me-1');
    expect(f.rule).not.toBe('vm-lock-needed');
  });
  it('an expired lock does not hold, but stopping still needs the lock', () => {
    const v = classify('incus stop dev-linux-iso', 'me-1');
    expect(v.rule).toBe('vm-lock-needed');
    expect(v.reason).toMatch(/offhost lock acquire s\.khost1\.dev-linux-iso/);
    expect(v.reason).toMatch(/expired/);
    expect(classify('incus exec dev-linux-iso -- true', 'me-1').decision).toBe('allow');
  });
  it('the holder may stop, reset and exec its own VM', () => {
    expect(classify('incus stop dev-linux-gui', 'me-1').decision).toBe('allow');
    expect(classify('incus snapshot restore dev-linux-gui provisioned', 'me-1').decision).toBe('allow');
    expect(classify('ssh khost1 -- incus exec dev-linux-gui -- true', 'me-1').decision).toBe('allow');
  });
  it('without OFFHOST_SESSION, a held VM is another session\'s', () => {
    expect(classify('incus exec dev-linux-gui -- true').rule).toBe('vm-held');
  });
});

describe('false positives: left alone', () => {
  for (const line of ['incus list', 'incus info dev-linux-koda', 'incus exec some-other -- true', 'ssh khost1 uptime', 'echo incus delete dev-linux-koda', 'grep dev-linux-koda notes.md', 'limactl list']) {
    it(line, () => {
      const v = classify(line, 'me-1');
      expect(v.rule === 'vm-held' || v.rule === 'vm-lock-needed').toBe(false);
    });
  }
});

describe('edge cases', () => {
  it('a symlinked checkout finds the same lock files', () => {
    const link = join(dir, 'link');
    symlinkSync(repo, link);
    const env = { HOME, OFFHOST_ROLE: 'laptop', PATH: '/usr/bin:/bin', OFFHOST_SESSION: 'me-1' };
    const g = loadGuard({ cwd: link, env });
    expect(g.classify('incus stop dev-linux-koda', { cwd: link, env }).rule).toBe('vm-held');
    expect(g.classify('incus stop dev-linux-gui', { cwd: join(link, 'meta'), env }).decision).toBe('allow');
  });
  it('a static judgement (files: false: scan, ci) does not read lock state', () => {
    const env = { HOME, OFFHOST_ROLE: 'laptop', PATH: '/usr/bin:/bin', OFFHOST_SESSION: 'me-1' };
    const g = loadGuard({ cwd: repo, env });
    expect(g.classify('incus delete --force dev-linux-koda', { cwd: repo, env, files: false }).rule).not.toBe('vm-held');
  });
  it('a lock file that cannot be read counts as held (fail closed)', () => {
    const v = classify('incus exec dev-android-emulator -- true', 'me-1');
    expect(v.rule).toBe('vm-lock-unreadable');
    expect(v.reason).toMatch(/lock-s\.khost1\.dev-android-emulator\.md cannot be read/);
  });
  it('outside any repository, with no root holding locks, destructive verbs are refused', () => {
    const env = { HOME, OFFHOST_ROLE: 'laptop', PATH: '/usr/bin:/bin', OFFHOST_SESSION: 'me-1' };
    const g = loadGuard({ cwd: dir, env });
    const v = g.classify('incus delete dev-linux-koda', { cwd: '/', env });
    expect(v.decision).toBe('deny');
  });
});

describe('ground truth: real bash runs each refused incus line at the protected instance', () => {
  // The guard's reading is checked against what bash actually executes: each line runs under real bash
  // with the recording stand-ins (ssh runs the remote line here; incus logs its argv), and the record
  // must name dev-linux-koda. Lines through sudo or /usr/bin are left out (they leave the stand-ins' PATH).
  const lines = [
    'incus delete --force dev-linux-koda',
    'incus stop dev-linux-koda',
    "ssh khost1 'incus delete --force dev-linux-koda'",
    'ssh -p 22 -o BatchMode=yes khost1 incus stop dev-linux-koda',
    "bash -c 'incus stop dev-linux-koda'",
    'true && incus --project default stop dev-linux-koda',
    'incus delete other dev-linux-koda',
    'incus config device remove dev-linux-koda koder',
    'incus snapshot restore dev-linux-koda provisioned',
  ];
  for (const line of lines) {
    it(line, async () => {
      const { standinEnv, readStandinLog } = await import('../helpers/standins.js');
      const log = join(dir, `gt-${Math.random().toString(36).slice(2)}.log`);
      const env = standinEnv({ log, home: dir, env: { OFFHOST_STANDIN_STATE: join(dir, 'gt-state') } });
      execFileSync('bash', ['-c', `${line} || true`], { env, stdio: 'ignore' });
      const incus = readStandinLog(log).filter((e) => e.tool === 'incus');
      expect(incus.some((e) => e.argv.includes('dev-linux-koda'))).toBe(true);
      expect(classify(line, 'me-1').rule).toBe('vm-held');
    });
  }
});
