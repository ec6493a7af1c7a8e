// `offhost run -- WORDS`: one word is a shell line, several words are an argv passed on word for word,
// here (allow) and on the VM (a real sshd on loopback), exactly as running the same argv directly.
// Ground truth is the argv run by execFileSync (no shell); hostile words: spaces, quotes, `$`, globs,
// newlines, empty strings, a leading dash, `=` in the program's first argument.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync, spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { sshdAvailable } from '../helpers/sshd.js';
import { BIN, g } from '../locks/lifecycle-helpers.js';
import { kodaDir, records, runOn, verdict, loopbackSshd } from './loopback.js';
import { commandArgv, commandOf } from '../../src/run/command.js';
import { sampling } from '../helpers/sample.js';

/** Tests that repeat what a kept test does end to end run in `npm run test:full` (test/helpers/sample.ts). */
const sample = sampling('full');

const HOSTILE = ['a b', "it's", 'say "hi"', '$HOME', '`id`', '*', '?', '[a]', 'line1\nline2', '', '-n', 'K=V', '\\', '; rm -rf /', 'tab\there', ' lead', 'trail '];

describe('commandOf: one word is a line, several an argv', () => {
  it('one word stays the shell line (bash -c LINE); several words are run as they are', () => {
    expect(commandOf(['make build-safe'])).toEqual({ line: 'make build-safe' });
    expect(commandArgv(commandOf(['make build-safe']))).toEqual(['bash', '-c', 'make build-safe']);
    const c = commandOf(['printf', '%s|', ...HOSTILE]);
    expect(commandArgv(c)).toEqual(['printf', '%s|', ...HOSTILE]);
  });
  it('the line judged for an argv is one that real bash splits back into exactly those words', () => {
    // The judged line is what the guard sees: it must be the very argv, or the verdict is about another command.
    const { line } = commandOf(['printf', '%s\\0', ...HOSTILE]);
    const back = execFileSync('bash', ['-c', line], { encoding: 'utf8' });
    expect(back.split('\0').slice(0, -1)).toEqual(HOSTILE);
  });
});

const loop = loopbackSshd();

describe.skipIf(!sshdAvailable())('offhost run with an argv, against a real sshd on loopback', () => {
  it('rerouted: the VM runs the argv word for word and returns its status (bash -c "exit 42" exits 42)', async () => {
    const l = loop.laptop({});
    const r = await runOn(l, ['--json', '--', 'bash', '-c', 'exit 42']);
    expect(verdict(r).outcome, r.stderr).toBe('exit');
    expect(r.code).toBe(42);
    const rec = records(l).at(-1)!;
    expect(rec.command.argv).toEqual(['bash', '-c', 'exit 42']);

    const script = 'printf "%s|" "$@"; printf "\\n$#"';
    const direct = execFileSync('bash', ['-c', script, 'sh', ...HOSTILE], { encoding: 'utf8' });
    const onVm = await runOn(l, ['--', 'bash', '-c', script, 'sh', ...HOSTILE]);
    expect(onVm.code, onVm.stderr).toBe(0);
    expect(onVm.stdout).toBe(direct);
    expect(records(l).at(-1)!.vm!.id).toBe('s.khost1.dev-linux-loop');
  });

  sample.fullOnly('one word is still a shell line on the VM; a line and the same words as an argv differ as they do in bash', async () => {
    const l = loop.laptop({});
    const line = await runOn(l, ['--', 'bash -c "echo one   two"; exit 3']);
    expect(line.stdout).toBe('one two\n'); // the line's words, split by the VM's bash
    expect(line.code).toBe(3);
    // As an argv, `exit 42` is ONE word given to bash -c: exit's status, not 0.
    const argv = await runOn(l, ['--', 'bash', '-c', 'exit 42']);
    expect(argv.code).toBe(42);
    // Joined and re-parsed (the old behaviour) it would run `bash -c exit 42`: status 0.
    expect(spawnSync('bash', ['-c', ['bash', '-c', 'exit 42'].join(' ')]).status).toBe(0);
  });

  it('make build-safe with a variable holding spaces reaches make as two arguments (rerouted by the koda rule)', async () => {
    const l = loop.laptop({});
    writeFileSync(join(kodaDir(l), 'Makefile'), 'build-safe:\n\t@printf "<%s>\\n" "$(KODA_FLAGS)"\n');
    g(l.repo, 'commit', '-qam', 'flags');
    const r = await runOn(l, ['--json', '--', 'make', 'build-safe', 'KODA_FLAGS=-O2 -g']);
    expect(verdict(r).outcome, r.stderr).toBe('exit');
    expect(r.stdout).toBe('<-O2 -g>\n');
    const direct = execFileSync('make', ['-s', 'build-safe', 'KODA_FLAGS=-O2 -g'], { cwd: kodaDir(l), encoding: 'utf8' });
    expect(r.stdout).toBe(direct);
  });

  it('allowed: runs here without a shell, word for word; a missing program is 127, as bash says', async () => {
    const l = loop.laptop({});
    const direct = execFileSync('printf', ['%s|', ...HOSTILE], { encoding: 'utf8' });
    const r = await runOn(l, ['--', 'printf', '%s|', ...HOSTILE], { cwd: l.repo });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe(direct);
    const missing = await runOn(l, ['--', 'no-such-program-offhost', 'x'], { cwd: l.repo });
    expect(missing.code).toBe(127);
    expect(missing.stderr).toMatch(/no-such-program-offhost: command not found/);
  });

  it('check and explain judge several words as that argv (not a usage error); the rewrite runs the same words', () => {
    const l = loop.laptop({});
    const env = l.env;
    const chk = spawnSync(process.execPath, [BIN, 'check', '--json', '--', 'make', 'build-safe', 'KODA_FLAGS=-O2 -g'], { cwd: kodaDir(l), env, encoding: 'utf8' });
    expect(chk.status, chk.stderr).toBe(3);
    const v = JSON.parse(chk.stdout) as { rewrite: string };
    // The rewrite is `<offhost> run -- 'LINE'`: one word, whose words are the argv typed.
    const tail = v.rewrite.slice(v.rewrite.indexOf(' run -- ') + ' run -- '.length);
    // Undo the rewrite's quoting as its shell would (one word), then the line's (the words).
    const words = execFileSync('bash', ['-c', 'eval "set -- $1"; eval "set -- $1"; printf "%s\\0" "$@"', 'sh', tail], { encoding: 'utf8' });
    expect(words.split('\0').slice(0, -1)).toEqual(['make', 'build-safe', 'KODA_FLAGS=-O2 -g']);
    const ok = spawnSync(process.execPath, [BIN, 'check', '--', 'echo', 'make build-safe'], { cwd: kodaDir(l), env, encoding: 'utf8' });
    expect(ok.status).toBe(0);
    const ex = spawnSync(process.execPath, [BIN, 'explain', '--', 'make', 'build-safe'], { cwd: kodaDir(l), env, encoding: 'utf8' });
    expect(ex.status).toBe(3);
    expect(ex.stdout).toMatch(/"make" "build-safe"/);
  });

  it('OFFHOST_SESSION (and OFFHOST_RUN) are set for the command on the VM', async () => {
    const l = loop.laptop({}, { session: 'argv-session-1' });
    const r = await runOn(l, ['--', 'bash', '-c', 'echo "$OFFHOST_SESSION $OFFHOST_RUN"']);
    const rec = records(l).at(-1)!;
    expect(r.stdout).toBe(`argv-session-1 ${rec.id}\n`);
  });

  it('stdin piped to offhost run without --stdin: said once on stderr that it is not sent; with --stdin it is', async () => {
    const l = loop.laptop({});
    const r = await runOn(l, ['--', 'bash', '-c', 'cat; echo end'], { input: 'hello\n' });
    expect(r.stdout).toBe('end\n');
    expect(r.stderr.match(/standard input is a pipe or a file, and it is not sent/g)).toHaveLength(1);
    const w = await runOn(l, ['--stdin', '--', 'bash', '-c', 'cat; echo end'], { input: 'hello\n' });
    expect(w.stdout).toBe('hello\nend\n');
    expect(w.stderr).not.toMatch(/not sent/);
  });
});
