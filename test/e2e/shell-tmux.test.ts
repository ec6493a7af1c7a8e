// The bash snippet in a real interactive bash on a real terminal (tmux), typed into key by key, with the
// real offhost behind it and stand-in ssh/incus for the VM. What is asserted is what happened: where the
// fake heavy tools ran (their logs), `$?` as the next line saw it, the audit log, and how often offhost
// spoke. Skipped only where tmux (or zsh, fish) cannot run here: test/helpers/tools.ts starts a real tmux
// server to know (.ci/run installs them).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { missing, titled } from '../helpers/tools.js';
import { WAIT_MS } from '../helpers/hang-guard.js';
import { standinEnv } from '../helpers/standins.js';
import { bashSnippet, fishSnippet } from '../../src/adapters/shell-snippet.js';
import { type FakeHome, BIN, ROOT, fakeHome, initMonorepo, offhostOnPath, requireBuild } from './hooks-helpers.js';
import { sampling } from '../helpers/sample.js';

/** Tests that repeat what a kept test does end to end run in `npm run test:full` (test/helpers/sample.ts). */
const sample = sampling('full');

const noTmux = missing('tmux');
let h: FakeHome;
let offhostDir: string;
const made: string[] = [];

beforeAll(() => {
  if (noTmux) return;
  requireBuild();
  h = fakeHome();
  made.push(h.home);
  initMonorepo(h);
  offhostDir = offhostOnPath(h);
  // A fake make that exits 7 where a file `fail-here` exists (to see the remote status come back).
  writeFileSync(
    join(h.localBin, 'make'),
    `#!/usr/bin/env node\nrequire('fs').appendFileSync(${JSON.stringify(h.localLog)}, JSON.stringify({ argv: process.argv.slice(2), cwd: process.cwd(), laptop: process.env.LAPTOP_MARKER === '1' }) + '\\n');\nprocess.exit(require('fs').existsSync('fail-here') ? 7 : 0);\n`,
  );
  writeFileSync(join(h.localBin, 'qemu-system-x86_64'), `#!/bin/sh\necho "$@" >> ${JSON.stringify(join(h.home, 'qemu.log'))}\n`);
  // An "editor" that fixes offhost's config (what a user does after a typo).
  writeFileSync(join(h.localBin, 'nano'), `#!/bin/sh\necho "$@" >> ${JSON.stringify(join(h.home, 'editor.log'))}\nprintf 'hook:\\n  mode: suggest\\n' > "$1"\n`);
  for (const f of ['qemu-system-x86_64', 'nano']) chmodSync(join(h.localBin, f), 0o755);
});
afterAll(() => {
  for (const d of made) rmSync(d, { recursive: true, force: true });
});

const makeRuns = () => (existsSync(h.localLog) ? readFileSync(h.localLog, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l)) : []);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** An interactive bash in tmux with `snippet` sourced from its rc file. */
async function terminal(snippet: string, opts: { cwd?: string; env?: Record<string, string>; prelude?: string; fish?: boolean; zsh?: boolean; bashArgs?: string[]; offhostOnPath?: boolean } = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'offhost-tmux-'));
  made.push(dir);
  const out = join(dir, 'out');
  const rc = join(dir, 'rc');
  writeFileSync(out, '');
  writeFileSync(rc, opts.fish ? `${opts.prelude ?? ''}\n${snippet}\n` : `PS1='$ '\nHISTFILE=${dir}/hist\n${opts.zsh ? 'SAVEHIST=100\nHISTSIZE=100\n' : ''}${opts.prelude ?? ''}\n${snippet}\n`);
  if (opts.zsh) writeFileSync(join(dir, '.zshrc'), `source ${rc}\n`);
  const sock = join(dir, 'sock');
  const env = standinEnv({
    log: join(dir, 'standin.log'),
    home: h.home,
    extraPath: opts.offhostOnPath === false ? [h.localBin] : [offhostDir, h.localBin],
    env: { OFFHOST_ROLE: 'laptop', LAPTOP_MARKER: '1', OFFHOST_AUDIT_LOG: h.audit, TERM: 'xterm', ...(opts.env ?? {}) },
  });
  const tmux = (...args: string[]) => spawnSync('tmux', ['-S', sock, ...args], { env, encoding: 'utf8' });
  const shell = opts.fish ? `fish --no-config -C 'source ${rc}'` : opts.zsh ? `env ZDOTDIR=${dir} zsh -i` : `bash --noprofile ${(opts.bashArgs ?? []).join(' ')} --rcfile ${rc} -i`;
  const started = tmux('new-session', '-d', '-x', '220', '-y', '50', '-c', opts.cwd ?? h.koda, '-s', 't', shell);
  if (started.status !== 0) throw new Error(`tmux: ${started.stderr}`);
  let marks = 0;
  /** Types a line (or several, each with Enter) and Enter, then `echo "st=$?"` into the out file, and waits for it. */
  const type = async (line: string | string[]): Promise<string> => {
    for (const l of typeof line === 'string' ? [line] : line) {
      tmux('send-keys', '-t', 't', '-l', '--', l);
      tmux('send-keys', '-t', 't', 'Enter');
    }
    marks++;
    tmux('send-keys', '-t', 't', '-l', opts.fish ? `echo "st=$status" >> ${out}` : `echo "st=$?" >> ${out}`);
    tmux('send-keys', '-t', 't', 'Enter');
    for (let i = 0; i < WAIT_MS / 100; i++) {
      const lines = readFileSync(out, 'utf8').split('\n').filter(Boolean);
      if (lines.length >= marks) return (lines[marks - 1] as string).replace(/^st=/, '');
      await sleep(100);
    }
    throw new Error(`no answer after ${line}; screen:\n${screen()}`);
  };
  // -J: lines the terminal wrapped are joined back (what was printed as one line reads as one line).
  const screen = () => tmux('capture-pane', '-p', '-J', '-t', 't', '-S', '-2000').stdout;
  const alive = () => tmux('has-session', '-t', 't').status === 0;
  const kill = () => tmux('kill-server');
  await sleep(opts.fish || opts.zsh ? 800 : 300);
  return { type, screen, alive, kill, dir };
}

const count = (text: string, what: string) => text.split(what).length - 1;

describe.skipIf(noTmux)(titled('the bash snippet at a real terminal (tmux)', noTmux), () => {
  it('$? is the remote status after a reroute and 126 after a refusal; the refused line does not run', async () => {
    const snippet = spawnSync(process.execPath, [BIN, 'init', '--shell', 'bash'], { encoding: 'utf8', env: { PATH: process.env.PATH, HOME: h.home } }).stdout;
    const t = await terminal(snippet);
    try {
      const before = makeRuns().length;
      expect(await t.type('make build-safe')).toBe('0');
      writeFileSync(join(h.koda, 'fail-here'), '');
      expect(await t.type('make build-safe')).toBe('7');
      rmSync(join(h.koda, 'fail-here'));
      expect(makeRuns().slice(before)).toEqual([
        { argv: ['build-safe'], cwd: h.koda, laptop: false },
        { argv: ['build-safe'], cwd: h.koda, laptop: false },
      ]);
      expect(await t.type('qemu-system-x86_64 -hda win10.qcow2')).toBe('126');
      expect(existsSync(join(h.home, 'qemu.log'))).toBe(false);
      expect(await t.type('true')).toBe('0');
      expect(t.screen()).toContain('offhost: refused (rule qemu-windows)');
      // A command typed over several lines is checked whole (from history), not line by line.
      expect(await t.type(['for i in 1 2; do', `echo "in-loop $i" >> ${t.dir}/loop`, 'done'])).toBe('0');
      expect(readFileSync(join(t.dir, 'loop'), 'utf8')).toBe('in-loop 1\nin-loop 2\n');
      const mid = makeRuns().length;
      await t.type(['for i in 1; do', 'make build-safe', 'done']);
      expect(makeRuns().slice(mid)).toEqual([{ argv: ['build-safe'], cwd: h.koda, laptop: false }]);
      // The typed line went back into history (for editing), not __offhost_refused.
      const hist = await t.type(`history 30 > ${t.dir}/h`);
      expect(hist).toBe('0');
      const h5 = readFileSync(join(t.dir, 'h'), 'utf8');
      expect(h5).toContain('qemu-system-x86_64 -hda win10.qcow2');
      expect(h5).not.toContain('__offhost_refused');
    } finally {
      t.kill();
    }
  });

  sample.fullOnly('$? is right after continuation lines, pipes and compound lines too: the whole is judged and replaced at the Enter that completes it', async () => {
    const snippet = spawnSync(process.execPath, [BIN, 'init', '--shell', 'bash'], { encoding: 'utf8', env: { PATH: process.env.PATH, HOME: h.home } }).stdout;
    const t = await terminal(snippet);
    try {
      writeFileSync(join(h.koda, 'fail-here'), '');
      const before = makeRuns().length;
      // A trailing backslash, an open quote, a pipe, compound lines: each rerouted whole, the remote status back.
      expect(await t.type(['make \\', 'build-safe'])).toBe('7');
      expect(await t.type(['echo "a', 'b" | make build-safe'])).toBe('7');
      expect(await t.type('echo x | make build-safe')).toBe('7');
      expect(await t.type('true; make build-safe')).toBe('7');
      expect(await t.type(['for i in 1; do', 'make build-safe', 'done'])).toBe('7');
      expect(await t.type('make build-safe && echo never')).toBe('7');
      expect(makeRuns().slice(before)).toEqual(Array.from({ length: 6 }, () => ({ argv: ['build-safe'], cwd: h.koda, laptop: false })));
      rmSync(join(h.koda, 'fail-here'));
      // Refusals: 126, and no part of the line ran (not even the harmless commands before the heavy one).
      const marker = join(t.dir, 'ran');
      expect(await t.type(['qemu-system-x86_64 \\', '-hda win10.qcow2'])).toBe('126');
      expect(await t.type([`echo a >> ${marker}; qemu-system-x86_64 \\`, '-hda x'])).toBe('126');
      expect(await t.type([`echo "a`, `b" >> ${marker} | qemu-system-x86_64 -hda x`])).toBe('126');
      expect(await t.type(['for i in 1; do', `echo in >> ${marker}`, 'qemu-system-x86_64 -hda x', 'done'])).toBe('126');
      expect(await t.type(`echo a >> ${marker} | qemu-system-x86_64 -hda x`)).toBe('126');
      // A here-document: its body is data, not commands; the whole is refused before any of it is read as lines.
      expect(await t.type(['qemu-system-x86_64 -hda x <<EOF', `touch ${marker}`, 'EOF'])).toBe('126');
      expect(existsSync(marker)).toBe(false);
      expect(existsSync(join(h.home, 'qemu.log'))).toBe(false);
      // An allowed multi-line line runs as typed, once.
      expect(await t.type([`printf '%s\\n' "one`, `two" >> ${marker}`])).toBe('0');
      expect(await t.type([`cat >> ${marker} <<EOF`, 'three', 'EOF'])).toBe('0');
      expect(readFileSync(marker, 'utf8')).toBe('one\ntwo\nthree\n');
      // The refused multi-line line is in history as typed (for editing).
      await t.type(`history 40 > ${t.dir}/h`);
      const hist = readFileSync(join(t.dir, 'h'), 'utf8');
      expect(hist).toContain('qemu-system-x86_64 \\\n-hda win10.qcow2');
      expect(hist).not.toContain('__offhost_refused');
      // and the entries around it stay (each `echo "st=$?"` the test typed after a refused line is there).
      expect(count(hist, 'echo "st=$?"')).toBe(14);
    } finally {
      t.kill();
      rmSync(join(h.koda, 'fail-here'), { force: true });
    }
  });

  sample.fullOnly('without readline (bash --noediting, as editors run it): the DEBUG trap alone; $? is 126 / the remote status where the text of the last command is plain, 0 where bash allows nothing else', async () => {
    const snippet = spawnSync(process.execPath, [BIN, 'init', '--shell', 'bash'], { encoding: 'utf8', env: { PATH: process.env.PATH, HOME: h.home } }).stdout;
    const t = await terminal(snippet, { bashArgs: ['--noediting'] });
    try {
      const marker = join(t.dir, 'ran');
      expect(await t.type('qemu-system-x86_64 -hda win10.qcow2')).toBe('126');
      expect(await t.type(`echo a >> ${marker}; qemu-system-x86_64 -hda x`)).toBe('126');
      expect(await t.type(`echo a | qemu-system-x86_64 -hda x`)).toBe('126');
      expect(await t.type(['qemu-system-x86_64 \\', '-hda x'])).toBe('126');
      expect(await t.type(['for i in 1; do', `echo in >> ${marker}`, 'qemu-system-x86_64 -hda x', 'done'])).toBe('126');
      expect(await t.type('FOO=1 qemu-system-x86_64 -hda x && echo never')).toBe('126');
      expect(await t.type('qemu-system-x86_64 -hda x; echo b')).toBe('126');
      // Builtins of a refused line get the stand-in too: nothing of the line takes effect.
      expect(await t.type('cd /; qemu-system-x86_64 -hda x')).toBe('126');
      expect(await t.type(`pwd > ${t.dir}/pwd`)).toBe('0');
      expect(readFileSync(join(t.dir, 'pwd'), 'utf8').trim()).toBe(h.koda);
      expect(await t.type('command qemu-system-x86_64 -hda x')).toBe('126');
      expect(await t.type('eval qemu-system-x86_64 -hda x')).toBe('126');
      expect(await t.type('exec qemu-system-x86_64 -hda x')).toBe('126');
      expect(t.alive()).toBe(true);
      // A `while read` loop ends at once (its read gets the stand-in); a loop whose body never ran is 0 in bash.
      expect(await t.type(['while read -r l; do', 'qemu-system-x86_64 -hda "$l"', 'done < /dev/zero'])).toBe('0');
      // What bash gives no way to set: a refused line whose last command has a redirection or an expansion
      // is skipped with the status 0 bash gives a skipped command (extdebug). Nothing of it ran.
      expect(await t.type(`qemu-system-x86_64 -hda x; echo b >> ${marker}`)).toBe('0');
      expect(await t.type(`qemu-system-x86_64 -hda x > ${marker}`)).toBe('0');
      expect(await t.type('qemu-system-x86_64 -hda "$HOME/x"')).toBe('0');
      // A refused loop that never ends on this layer (until: the stand-in's 126 never satisfies it) is interrupted.
      expect(await t.type('until qemu-system-x86_64 -hda x; do :; done')).toBe('130');
      expect(t.screen()).toContain('offhost: interrupted a refused line that kept looping');
      expect(existsSync(marker)).toBe(false);
      expect(existsSync(join(h.home, 'qemu.log'))).toBe(false);
      // Reroutes: run once on the VM, the remote status back where the line ends in an external command.
      writeFileSync(join(h.koda, 'fail-here'), '');
      const before = makeRuns().length;
      expect(await t.type('make build-safe')).toBe('7');
      expect(await t.type('echo x | make build-safe')).toBe('7');
      expect(await t.type(['make \\', 'build-safe'])).toBe('7');
      expect(await t.type('true; make build-safe')).toBe('7');
      expect(makeRuns().slice(before)).toEqual(Array.from({ length: 4 }, () => ({ argv: ['build-safe'], cwd: h.koda, laptop: false })));
      rmSync(join(h.koda, 'fail-here'));
      // The stand-ins are gone after the line: the real programs run again when allowed.
      expect(await t.type(`type -t qemu-system-x86_64 make echo read > ${t.dir}/types`)).toBe('0');
      expect(readFileSync(join(t.dir, 'types'), 'utf8')).toBe('file\nfile\nbuiltin\nbuiltin\n');
    } finally {
      t.kill();
      rmSync(join(h.koda, 'fail-here'), { force: true });
    }
  });

  it('a broken config: said once, builtins and editing the config pass, heavy lines are still refused, then fixed', async () => {
    const cfg = join(h.home, 'dev', 'koder', 'offhost.config.yaml');
    writeFileSync(cfg, 'hook:\n  mode: sometimes\n');
    const snippet = spawnSync(process.execPath, [BIN, 'init', '--shell', 'bash'], { encoding: 'utf8', env: { PATH: process.env.PATH, HOME: h.home } }).stdout;
    const t = await terminal(snippet);
    try {
      const before = makeRuns().length;
      expect(await t.type('echo hello')).toBe('0');
      expect(await t.type('ls >/dev/null')).toBe('0');
      expect(await t.type('make build-safe')).toBe('126');
      expect(makeRuns().length).toBe(before);
      expect(await t.type('cd ../../..')).toBe('0');
      expect(await t.type(`nano offhost.config.yaml`)).toBe('0');
      expect(readFileSync(join(h.home, 'editor.log'), 'utf8')).toContain('offhost.config.yaml');
      expect(await t.type('cd engines/lang/koda')).toBe('0');
      expect(await t.type('make build-safe')).toBe('0');
      expect(makeRuns().slice(before)).toEqual([{ argv: ['build-safe'], cwd: h.koda, laptop: false }]);
      const screen = t.screen();
      expect(count(screen, "offhost: offhost's config is broken")).toBe(1);
      expect(screen).toMatch(/offhost\.config\.yaml:2/);
      expect(screen).not.toMatch(/at .*\.cjs:\d+/); // no Node stack trace
    } finally {
      t.kill();
      rmSync(cfg, { force: true });
    }
  });

  it('offhost gone (rm -rf node_modules): said once in one line with the fix; exit, cd, trap - DEBUG work; heavy lines refused', async () => {
    const t = await terminal(bashSnippet([join(h.home, 'gone', 'node_modules', '.bin', 'offhost')]), { offhostOnPath: false });
    try {
      const before = makeRuns().length;
      expect(await t.type('echo one')).toBe('0');
      expect(await t.type('echo two')).toBe('0');
      expect(await t.type('make build-safe')).toBe('126');
      expect(await t.type('qemu-system-x86_64 -hda x')).toBe('126');
      expect(makeRuns().length).toBe(before);
      expect(existsSync(join(h.home, 'qemu.log'))).toBe(false);
      expect(await t.type('cd ..')).toBe('0');
      const screen = t.screen();
      expect(count(screen, 'offhost: cannot run')).toBe(1);
      expect(screen).toMatch(/offhost: cannot run .* \(status 127.*reinstall offhost \(npm ci, or npm i -g offhost\)/);
      // and how to take the integration out, naming the file that was sourced
      expect(screen).toMatch(/or take this integration out: delete the line sourcing \S*rc from ~\/\.bashrc, then that file/);
      // trap - DEBUG takes the check out (the user's choice): make then runs here.
      expect(await t.type('trap - DEBUG')).toBe('0');
      expect(await t.type('cd koda; make build-safe')).toBe('0');
      expect(makeRuns().slice(before)).toEqual([{ argv: ['build-safe'], cwd: h.koda, laptop: true }]);
      t.type('exit').catch(() => undefined);
      for (let i = 0; i < 50 && t.alive(); i++) await sleep(100);
      expect(t.alive()).toBe(false);
    } finally {
      t.kill();
    }
  });

  it('lines kept out of history are not audited; secrets in audited lines are redacted', async () => {
    const snippet = spawnSync(process.execPath, [BIN, 'init', '--shell', 'bash'], { encoding: 'utf8', env: { PATH: process.env.PATH, HOME: h.home } }).stdout;
    const t = await terminal(snippet, { prelude: 'HISTCONTROL=ignorespace\nHISTIGNORE="*SECRETCMD*"' });
    try {
      expect(await t.type(' GITHUB_TOKEN=ghp_private1 qemu-system-x86_64 -hda a.img')).toBe('126');
      expect(await t.type('echo SECRETCMD; qemu-system-x86_64 -hda b.img')).toBe('126');
      expect(await t.type('API_KEY=k-visible-2 qemu-system-x86_64 -hda c.img')).toBe('126');
      const audit = readFileSync(h.audit, 'utf8');
      expect(audit).not.toContain('ghp_private1');
      expect(audit).not.toContain('a.img');
      expect(audit).not.toContain('b.img');
      expect(audit).toContain('API_KEY=*** qemu-system-x86_64 -hda c.img');
      expect(audit).not.toContain('k-visible-2');
    } finally {
      t.kill();
    }
  });
});

const noZsh = missing('tmux', 'zsh');

describe.skipIf(noZsh)(titled('the zsh snippet at a real terminal (tmux)', noZsh), () => {
  it('a command typed over several lines (PS2) is judged whole: rerouted or refused whole, $? the remote status or 126', async () => {
    const snippet = spawnSync(process.execPath, [BIN, 'init', '--shell', 'zsh'], { encoding: 'utf8', env: { PATH: process.env.PATH, HOME: h.home } }).stdout;
    const t = await terminal(snippet, { zsh: true });
    try {
      writeFileSync(join(h.koda, 'fail-here'), '');
      const before = makeRuns().length;
      expect(await t.type('make build-safe')).toBe('7');
      expect(await t.type(['make \\', 'build-safe'])).toBe('7');
      expect(await t.type(['echo "a', 'b" | make build-safe'])).toBe('7');
      expect(await t.type(['for i in 1; do', 'make build-safe', 'done'])).toBe('7');
      expect(makeRuns().slice(before)).toEqual(Array.from({ length: 4 }, () => ({ argv: ['build-safe'], cwd: h.koda, laptop: false })));
      rmSync(join(h.koda, 'fail-here'));
      const marker = join(t.dir, 'ran');
      expect(await t.type('qemu-system-x86_64 -hda win10.qcow2')).toBe('126');
      expect(await t.type(['qemu-system-x86_64 \\', '-hda x'])).toBe('126');
      expect(await t.type(['for i in 1; do', `echo in >> ${marker}`, 'qemu-system-x86_64 -hda x', 'done'])).toBe('126');
      expect(await t.type([`echo "a`, `b" >> ${marker}; qemu-system-x86_64 -hda x`])).toBe('126');
      expect(await t.type(['qemu-system-x86_64 -hda x <<EOF', `touch ${marker}`, 'EOF'])).toBe('126');
      expect(existsSync(marker)).toBe(false);
      expect(existsSync(join(h.home, 'qemu.log'))).toBe(false);
      // Allowed multi-line commands run once, as typed.
      expect(await t.type(['for i in 1 2; do', `echo "in $i" >> ${marker}`, 'done'])).toBe('0');
      expect(readFileSync(marker, 'utf8')).toBe('in 1\nin 2\n');
      // The refused construct is in history whole (for editing), never __offhost_refused.
      expect(await t.type(`fc -ln 1 > ${t.dir}/h`)).toBe('0');
      const hist = readFileSync(join(t.dir, 'h'), 'utf8');
      // (fc -l shows the newlines of a multi-line entry as \n)
      expect(hist).toContain(`for i in 1; do\\necho in >> ${marker}\\nqemu-system-x86_64 -hda x\\ndone`);
      expect(hist).not.toContain('__offhost_refused');
    } finally {
      t.kill();
      rmSync(join(h.koda, 'fail-here'), { force: true });
    }
  });
});

const noFish = missing('tmux', 'fish');

describe.skipIf(noFish)(titled('the fish snippet at a real terminal (tmux)', noFish), () => {
  it('reroutes run on the VM ($status 0), refusals do not run ($status 126), builtins pass', async () => {
    const snippet = spawnSync(process.execPath, [BIN, 'init', '--shell', 'fish'], { encoding: 'utf8', env: { PATH: process.env.PATH, HOME: h.home } }).stdout;
    const t = await terminal(snippet, { fish: true });
    try {
      const before = makeRuns().length;
      expect(await t.type('make build-safe')).toBe('0');
      expect(makeRuns().slice(before)).toEqual([{ argv: ['build-safe'], cwd: h.koda, laptop: false }]);
      expect(await t.type('qemu-system-x86_64 -hda win10.qcow2')).toBe('126');
      expect(existsSync(join(h.home, 'qemu.log'))).toBe(false);
      expect(await t.type('cd ..')).toBe('0');
      expect(t.screen()).toContain('offhost: refused (rule qemu-windows)');
    } finally {
      t.kill();
    }
  });

  sample.fullOnly('multi-line commands and fish syntax (and/or/not, blocks, (…)) are judged whole, as fish runs them', async () => {
    const snippet = spawnSync(process.execPath, [BIN, 'init', '--shell', 'fish'], { encoding: 'utf8', env: { PATH: process.env.PATH, HOME: h.home } }).stdout;
    const t = await terminal(snippet, { fish: true });
    try {
      const before = makeRuns().length;
      const marker = join(t.dir, 'ran');
      // Typed over several lines (fish keeps them in one buffer): refused whole, nothing of it ran.
      expect(await t.type(['for i in 1', `echo in >> ${marker}`, 'qemu-system-x86_64 -hda x', 'end'])).toBe('126');
      expect(await t.type(['echo "a', `b" >> ${marker}; qemu-system-x86_64 -hda x`])).toBe('126');
      // fish's own syntax hid the program from a bash reading: now it is seen.
      expect(await t.type('true; and qemu-system-x86_64 -hda x')).toBe('126');
      expect(await t.type('if true; make build-safe; end')).toBe('126');
      expect(await t.type('echo (make build-safe)')).toBe('126');
      expect(await t.type(['if true', 'make build-safe', 'end'])).toBe('126');
      expect(makeRuns().length).toBe(before);
      expect(existsSync(marker)).toBe(false);
      expect(existsSync(join(h.home, 'qemu.log'))).toBe(false);
      expect(t.screen()).toContain('This line is fish: offhost runs bash on the VM');
      // Light fish lines run, once, as typed (they were refused as unreadable bash before).
      expect(await t.type(['for i in 1 2', `echo in $i >> ${marker}`, 'end'])).toBe('0');
      expect(await t.type(`echo (echo sub) >> ${marker}; and echo and >> ${marker}`)).toBe('0');
      expect(readFileSync(marker, 'utf8')).toBe('in 1\nin 2\nsub\nand\n');
      // Enter inside a multi-line buffer says nothing of its own (it printed `test: unexpected argument` each time).
      expect(t.screen()).not.toMatch(/unexpected argument|test: Expected|Unknown command/);
      // A plain line still reroutes to the VM.
      expect(await t.type('make build-safe')).toBe('0');
      expect(makeRuns().slice(before)).toEqual([{ argv: ['build-safe'], cwd: h.koda, laptop: false }]);
    } finally {
      t.kill();
    }
  });

  it('offhost gone: said once, heavy lines refused, the rest runs', async () => {
    const t = await terminal(fishSnippet([join(h.home, 'gone', 'node_modules', '.bin', 'offhost')]), { fish: true, offhostOnPath: false });
    try {
      const before = makeRuns().length;
      expect(await t.type('echo one')).toBe('0');
      expect(await t.type('echo two')).toBe('0');
      expect(await t.type('make build-safe')).toBe('126');
      expect(makeRuns().length).toBe(before);
      expect(count(t.screen(), 'offhost: cannot run')).toBe(1);
      expect(t.screen()).toContain('or take this integration out: delete the line sourcing');
    } finally {
      t.kill();
    }
  });

  it('the snippet finds the install of the repository it is in (the one it was made with gone, none on PATH)', async () => {
    const repo = mkdtempSync(join(tmpdir(), 'offhost-tmux-repo-'));
    made.push(repo);
    mkdirSync(join(repo, 'node_modules', '.bin'), { recursive: true });
    mkdirSync(join(repo, 'src', 'deep'), { recursive: true });
    symlinkSync(join(ROOT, 'dist', 'offhost.cjs'), join(repo, 'node_modules', '.bin', 'offhost'));
    const t = await terminal(fishSnippet([join(h.home, 'gone', 'node_modules', '.bin', 'offhost')]), { fish: true, offhostOnPath: false, cwd: join(repo, 'src', 'deep') });
    try {
      // Judged by the repository's offhost (from a subdirectory): refused with its reason, not the fallback.
      expect(await t.type('qemu-system-x86_64 -hda win10.qcow2')).toBe('126');
      expect(await t.type('echo ok')).toBe('0');
      expect(t.screen()).toContain('offhost: refused (rule qemu-windows)');
      expect(t.screen()).not.toContain('offhost: cannot run');
      expect(existsSync(join(h.home, 'qemu.log'))).toBe(false);
      // Outside it, nothing to run: the fallback refuses what it knows, and says how to take the snippet out.
      expect(await t.type(`cd ${tmpdir()}`)).toBe('0');
      expect(await t.type('qemu-system-x86_64 -hda win10.qcow2')).toBe('126');
      expect(t.screen()).toMatch(/no offhost for .*: no node_modules\/\.bin\/offhost here or above/);
    } finally {
      t.kill();
    }
  });
});
