// dist/offhost.cjs run as a program (its #! line, as `offhost` on PATH and node_modules/.bin/offhost run
// it): sh hides NODE_EXTRA_CA_CERTS from offhost's own Node, which would otherwise read every certificate
// before offhost's first line (src/cli/launcher.sh.txt, src/cli/loader.cjs), and offhost puts it back for
// every child. What is checked is what happens: what the user's command (run by `offhost shell`) sees, and
// whether offhost's own Node read the file (Node warns on stderr when the file it reads is missing).
import { afterAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const root = join(import.meta.dirname, '..', '..');
const bin = join(root, 'dist', 'offhost.cjs');
const tmp = realpathSync(mkdtempSync(join(tmpdir(), 'offhost-launcher-')));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
const repo = join(tmp, 'repo');
mkdirSync(repo);
spawnSync('git', ['init', '-q'], { cwd: repo });
// As npm installs it: node_modules/.bin/offhost -> ../offhost/dist/offhost.cjs (here, to the real build).
mkdirSync(join(tmp, 'node_modules', '.bin'), { recursive: true });
symlinkSync(join(root, 'dist'), join(tmp, 'node_modules', 'offhost-dist'));
symlinkSync('../offhost-dist/offhost.cjs', join(tmp, 'node_modules', '.bin', 'offhost'));
const dotBin = join(tmp, 'node_modules', '.bin', 'offhost');
// Node's warning when NODE_EXTRA_CA_CERTS names a file it cannot read: the proof that this Node read it.
const NODE_READ_IT = 'Ignoring extra certs from';
const missingCa = join(tmp, 'no such dir', 'ca.pem');
// What the user's command sees: each variable as set, or "unset".
const SHOW = 'for v in NODE_EXTRA_CA_CERTS OFFHOST_NODE_EXTRA_CA_CERTS; do if [ -n "${!v+x}" ]; then printf "%s=[%s]\\n" "$v" "${!v}"; else printf "%s unset\\n" "$v"; fi; done';

function env(extra: Record<string, string>): Record<string, string> {
  return { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: tmp, LANG: 'C.UTF-8', OFFHOST_ROLE: 'laptop', OFFHOST_AUDIT_LOG: 'off', OFFHOST_REAL_SHELL: '/bin/bash', ...extra };
}
function shellRun(argv: string[], extra: Record<string, string>) {
  const r = spawnSync(argv[0]!, [...argv.slice(1), 'shell', '-c', SHOW], { cwd: repo, env: env(extra), encoding: 'utf8' });
  expect(r.status, r.stderr).toBe(0);
  return r;
}

describe('offhost run as a program hides NODE_EXTRA_CA_CERTS from its own Node only', () => {
  it.each([
    ['the bundle itself', [bin]],
    ['through node_modules/.bin (a relative symlink)', [dotBin]],
    ['by dash, as /bin/sh is on Debian', ['dash', bin]],
    ['by bash in POSIX mode, as /bin/sh is on macOS', ['bash', '--posix', bin]],
    ['by busybox sh, as /bin/sh is on Alpine', ['busybox', 'sh', bin]],
  ])('%s: its Node does not read the file, the command gets it as set', (_what, argv) => {
    const shell = argv[0] === 'dash' ? ['dash'] : argv[0] === 'busybox' ? ['busybox', 'sh'] : null;
    if (shell && spawnSync(shell[0]!, [...shell.slice(1), '-c', 'true']).status !== 0) return void console.log(`skipped: no ${shell.join(' ')} here`);
    const r = shellRun(argv, { NODE_EXTRA_CA_CERTS: missingCa });
    expect(r.stderr).not.toContain(NODE_READ_IT);
    expect(r.stdout).toBe(`NODE_EXTRA_CA_CERTS=[${missingCa}]\nOFFHOST_NODE_EXTRA_CA_CERTS unset\n`);
  });

  it('run as `node offhost.cjs`, Node reads it before offhost starts (the case the check above would miss)', () => {
    const r = shellRun([process.execPath, bin], { NODE_EXTRA_CA_CERTS: missingCa });
    expect(r.stderr).toContain(NODE_READ_IT);
    expect(r.stdout).toBe(`NODE_EXTRA_CA_CERTS=[${missingCa}]\nOFFHOST_NODE_EXTRA_CA_CERTS unset\n`);
  });

  it.each([
    ['unset stays unset', {}, 'NODE_EXTRA_CA_CERTS unset\n'],
    ['empty stays empty', { NODE_EXTRA_CA_CERTS: '' }, 'NODE_EXTRA_CA_CERTS=[]\n'],
    ['spaces, quotes, $ and a newline stay as they are', { NODE_EXTRA_CA_CERTS: `/a b/'q' "d" $HOME\n*.pem` }, `NODE_EXTRA_CA_CERTS=[/a b/'q' "d" $HOME\n*.pem]\n`],
    ['a stray OFFHOST_NODE_EXTRA_CA_CERTS does not become one', { OFFHOST_NODE_EXTRA_CA_CERTS: '/stray.pem' }, 'NODE_EXTRA_CA_CERTS unset\n'],
    ['the user\'s value wins over a stray kept one', { NODE_EXTRA_CA_CERTS: '/mine.pem', OFFHOST_NODE_EXTRA_CA_CERTS: '/stray.pem' }, 'NODE_EXTRA_CA_CERTS=[/mine.pem]\n'],
  ])('%s', (_what, extra, seen) => {
    for (const argv of [[bin], [dotBin]]) {
      expect(shellRun(argv, extra as Record<string, string>).stdout).toBe(`${seen}OFFHOST_NODE_EXTRA_CA_CERTS unset\n`);
    }
  });

  it('the whole file is a script sh reads without error, and offhost\'s guard lets it run by its path', () => {
    for (const sh of [['bash'], ['dash'], ['busybox', 'sh']]) {
      const r = spawnSync(sh[0]!, [...sh.slice(1), '-n', bin], { encoding: 'utf8' });
      if (r.error) continue; // that shell is not installed here
      expect(r.status, `${sh} -n: ${r.stderr}`).toBe(0);
    }
    for (const line of ['node_modules/.bin/offhost check ls', './node_modules/.bin/offhost run -- make build-safe', 'sh node_modules/.bin/offhost lock status']) {
      const r = spawnSync(process.execPath, [bin, 'check', line], { cwd: tmp, env: env({}), encoding: 'utf8' });
      expect(r.status, `${line}: ${r.stdout}${r.stderr}`).toBe(0);
    }
  });

  it('arguments and the exit status pass through sh untouched', () => {
    const args = ['a b', '', "'q'", '"d"', '$HOME', '*', 'x\ny', '--', '-c'];
    const script = join(tmp, 'args.sh');
    writeFileSync(script, 'printf "<%s>" "$@"; exit 7\n');
    const r = spawnSync(bin, ['shell', '-c', 'bash "$0" "$@"', script, ...args], { cwd: repo, env: env({ NODE_EXTRA_CA_CERTS: missingCa }), encoding: 'utf8' });
    expect(r.stderr).not.toContain(NODE_READ_IT);
    expect(r.stdout).toBe(args.map((a) => `<${a}>`).join(''));
    expect(r.status).toBe(7);
  });
});
