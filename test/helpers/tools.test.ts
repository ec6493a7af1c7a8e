// The optional-tool probes (test/helpers/tools.ts) on tools built to fool them: installed but broken
// (a tmux whose server dies at once, a gdb that cannot run programs, an sshd that refuses its config),
// and missing from PATH. And which tools a corpus line names.
import { describe, expect, it } from 'vitest';
import { chmodSync, mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { missing, onPath, probeTool, titled, toolsIn } from './tools.js';

/** A folder holding fake tools (shell scripts) plus the basic programs a probe needs, as a PATH. */
function fakePath(tools: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'offhost-fake-tools-'));
  const bin = join(dir, 'bin');
  mkdirSync(bin);
  for (const [name, body] of Object.entries(tools)) {
    writeFileSync(join(bin, name), `#!/bin/sh\n${body}\n`);
    chmodSync(join(bin, name), 0o755);
  }
  for (const basic of ['sh', 'true', 'ssh-keygen', 'sleep']) {
    const real = onPath(basic);
    if (real && !(basic in tools)) symlinkSync(real, join(bin, basic));
  }
  return bin;
}

describe('probes', () => {
  it('a tool not on PATH is missing, named with what installs it', () => {
    const path = fakePath({});
    for (const t of ['tmux', 'zsh', 'fish', 'rsync', 'gdb', 'perf'] as const) expect(probeTool(t, { PATH: path })).toBe(`${t} is not on PATH (.ci/run installs it)`);
  });

  it('tmux that is installed but whose server cannot start (no ptys) is missing', () => {
    const path = fakePath({ tmux: 'case "$*" in *new-session*) echo "server exited unexpectedly" >&2; exit 1;; esac; exit 1' });
    expect(probeTool('tmux', { PATH: path })).toMatch(/^tmux is installed but cannot start a server here: .*server exited unexpectedly/);
  });

  it('tmux whose new-session says yes but keeps no server is missing too', () => {
    const path = fakePath({ tmux: 'case "$*" in *new-session*) exit 0;; *has-session*) echo "no server running on /tmp/x" >&2; exit 1;; esac; exit 0' });
    expect(probeTool('tmux', { PATH: path })).toMatch(/^tmux started no lasting server: .*no server running/);
  });

  it('gdb that starts but cannot run a program (ptrace forbidden) is missing; exit 0 alone does not pass', () => {
    const path = fakePath({ gdb: 'echo "warning: Error disabling address space randomization: Operation not permitted"; exit 0' });
    expect(probeTool('gdb', { PATH: path })).toMatch(/^`.*gdb -nx -batch -ex run --args \/bin\/sh -c exit 3` failed .*Operation not permitted/);
  });

  it('perf that cannot count (perf_event_paranoid) is missing', () => {
    const path = fakePath({ perf: 'echo "Error: Access to performance monitoring and observability operations is limited." >&2; exit 255' });
    expect(probeTool('perf', { PATH: path })).toMatch(/failed .*Access to performance monitoring/);
  });

  it('sshd that refuses its configuration is missing; so is an sshd without an ssh client', () => {
    const path = fakePath({ sshd: 'echo "Missing privilege separation directory: /run/sshd" >&2; exit 255', ssh: 'exit 0' });
    expect(probeTool('sshd', { PATH: path })).toMatch(/failed .*Missing privilege separation directory/);
    const noClient = fakePath({ sshd: 'exit 0' });
    expect(probeTool('sshd', { PATH: noClient })).toBe('ssh is not on PATH (.ci/run installs openssh-client)');
  });

  it('zsh and fish that exit non-zero are missing', () => {
    const path = fakePath({ zsh: 'exit 1', fish: 'echo "fish: cannot open terminal" >&2; exit 127' });
    expect(probeTool('zsh', { PATH: path })).toMatch(/failed \(status 1\)/);
    expect(probeTool('fish', { PATH: path })).toMatch(/failed \(status 127\): fish: cannot open terminal/);
  });

  it.skipIf(missing('tmux'))(titled('the real tmux here passes its probe', missing('tmux')), () => {
    expect(probeTool('tmux')).toBeNull();
  });

  it('titles carry the reason only when skipped', () => {
    expect(titled('t', null)).toBe('t');
    expect(titled('t', 'tmux is not on PATH')).toBe('t (skipped: tmux is not on PATH)');
  });
});

describe('toolsIn: the probed tools a corpus line runs', () => {
  it.each([
    ['cd engines/lang/koda && gdb -batch -ex run --args make build', ['gdb', 'make']],
    ["ex -sc '!make -C engines/lang/koda build' -c q", ['make', 'vim']],
    ['/usr/sbin/logsave /dev/null make -C engines/lang/koda build', ['logsave', 'make']],
    ["m4 <<< 'esyscmd(make build)'", ['m4', 'make']],
    ["bash -c 'perl -e 1'", ['perl']],
    ['ssh-agent setarch x86_64 env -u FOO make', ['make', 'setarch', 'ssh-agent']],
    ["echo x | dc -e '!ls'", ['dc']],
  ])('%s', (line, tools) => {
    expect(toolsIn(line)).toEqual(tools);
  });

  it.each([
    // A longer word containing a name, an option spelled like one, a file named like one.
    'gdbserver :1234 ./a.out',
    'make-dist --dc -ex run',
    'unzip archive.zip; cat notes.vim',
    'echo tmuxinator fishy rsyncd',
  ])('names none in %s', (line) => {
    expect(toolsIn(line)).toEqual([]);
  });
});
