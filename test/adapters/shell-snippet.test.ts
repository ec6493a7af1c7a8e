// The bash snippet, run by a real interactive bash (stdin piped), with a stand-in `offhost shell --check`.
import { describe, expect, it } from 'vitest';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawn, spawnSync } from 'node:child_process';
import { bashSnippet, fishSnippet, zshSnippet } from '../../src/adapters/shell-snippet.js';
import { missing, titled } from '../helpers/tools.js';

function setup(prelude = '', zshPrelude = '') {
  const d = mkdtempSync(join(tmpdir(), 'offhost-snippet-'));
  mkdirSync(join(d, 'bin'));
  const fake = join(d, 'fake-offhost');
  writeFileSync(
    fake,
    `#!/bin/bash
line=\${@: -1}
printf '%s\\n' "$line" >> ${d}/checked.log
case $line in
  *"make build-safe"*) echo "echo REROUTED-RAN"; exit 3 ;;
  *qemu*) echo "refused (rule qemu-windows): migrate"; exit 126 ;;
esac
exit 0
`,
  );
  writeFileSync(join(d, 'bin', 'make'), '#!/bin/sh\necho LOCAL-MAKE "$@"\n');
  writeFileSync(join(d, 'bin', 'qemu-system-x86_64'), '#!/bin/sh\necho LOCAL-QEMU\n');
  for (const f of [fake, join(d, 'bin', 'make'), join(d, 'bin', 'qemu-system-x86_64')]) chmodSync(f, 0o755);
  writeFileSync(join(d, 'rc'), `PS1='$ '\nexport PATH=${d}/bin:$PATH\nHISTFILE=${d}/hist\n${prelude}\n${bashSnippet([fake])}`);
  writeFileSync(join(d, '.zshrc'), `PS1='%% '\nexport PATH=${d}/bin:$PATH\n${zshPrelude}\n${zshSnippet([fake])}`);
  const run = (input: string) => {
    const r = spawnSync('bash', ['--noprofile', '--rcfile', join(d, 'rc'), '-i'], { input, encoding: 'utf8', env: { PATH: process.env.PATH, HOME: d, TERM: 'dumb' } });
    let checked = '';
    try {
      checked = readFileSync(join(d, 'checked.log'), 'utf8');
    } catch {
      /* nothing checked */
    }
    return { stdout: r.stdout, stderr: r.stderr, checked };
  };
  /** zsh's line editor needs a terminal: `script` gives it a pty; keystrokes are sent in timed steps. */
  const runZsh = async (steps: string[]) => {
    const child = spawn('script', ['-qec', 'zsh -i', '/dev/null'], { env: { PATH: process.env.PATH, HOME: d, ZDOTDIR: d, TERM: 'dumb' } });
    let out = '';
    child.stdout.on('data', (b) => (out += b));
    const exited = new Promise((r) => child.on('exit', r));
    for (const step of steps) {
      child.stdin.write(step);
      await new Promise((r) => setTimeout(r, 1500));
    }
    child.stdin.end();
    await exited;
    let checked = '';
    try {
      checked = readFileSync(join(d, 'checked.log'), 'utf8');
    } catch {
      /* nothing checked */
    }
    return { out, checked };
  };
  return { run, runZsh };
}


describe('bash snippet (extdebug + DEBUG trap)', () => {
  it('checks each line once: allowed lines run, reroutes run instead, refused lines do not run at all', () => {
    const { run } = setup();
    const r = run('echo one\nmake build-safe; echo SHOULD-NOT-RUN\necho two\nqemu-system-x86_64 x && echo NOPE\necho three\n');
    expect(r.stdout).toBe('one\nREROUTED-RAN\ntwo\nthree\n');
    expect(r.stdout).not.toContain('LOCAL-');
    expect(r.stderr).toContain('offhost: rerouted; running instead:\n  echo REROUTED-RAN');
    expect(r.stderr).toContain('offhost: refused (rule qemu-windows): migrate');
    expect(r.checked).toBe('echo one\nmake build-safe; echo SHOULD-NOT-RUN\necho two\nqemu-system-x86_64 x && echo NOPE\necho three\n');
  });

  it('lines kept out of history (ignorespace) are checked command by command; PROMPT_COMMAND is left alone', () => {
    const { run } = setup('HISTCONTROL=ignorespace\nPROMPT_COMMAND="true prompt-command"');
    const r = run(' make build-safe; echo after\n echo two; qemu-system-x86_64; echo three\n');
    expect(r.stdout).toBe('REROUTED-RAN\nafter\ntwo\nthree\n');
    expect(r.checked).not.toContain('prompt-command');
  });

  it('declines to install over an existing DEBUG trap', () => {
    const { run } = setup("trap 'true' DEBUG");
    const r = run('make build-safe\n');
    expect(r.stdout).toContain('LOCAL-MAKE');
    expect(r.stderr).toContain('a DEBUG trap is already set');
  });

  it('the shipped hooks/offhost.bash, .zsh and .fish are the generated snippets (UPDATE_SNIPPETS=1 rewrites them)', () => {
    const want = { 'hooks/offhost.bash': bashSnippet(['offhost']), 'hooks/offhost.zsh': zshSnippet(['offhost']), 'hooks/offhost.fish': fishSnippet(['offhost']) };
    for (const [file, text] of Object.entries(want)) {
      if (process.env.UPDATE_SNIPPETS === '1') writeFileSync(file, text);
      expect(readFileSync(file, 'utf8')).toBe(text);
    }
  });

  it.skipIf(missing('zsh'))(titled('zsh -n accepts the generated snippet', missing('zsh')), () => {
    const d = mkdtempSync(join(tmpdir(), 'offhost-snippet-n-'));
    writeFileSync(join(d, 's.zsh'), zshSnippet(['/x/offhost']));
    const r = spawnSync('zsh', ['-n', join(d, 's.zsh')], { encoding: 'utf8' });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
  });

  it.skipIf(missing('fish'))(titled('fish -n accepts the generated snippet', missing('fish')), () => {
    const d = mkdtempSync(join(tmpdir(), 'offhost-snippet-n-'));
    writeFileSync(join(d, 's.fish'), fishSnippet(['/x/offhost']));
    const r = spawnSync('fish', ['-n', join(d, 's.fish')], { encoding: 'utf8' });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
  });

  it('bash -n accepts the generated snippet', () => {
    const d = mkdtempSync(join(tmpdir(), 'offhost-snippet-n-'));
    writeFileSync(join(d, 's.bash'), bashSnippet(['/x/offhost']));
    expect(spawnSync('bash', ['-n', join(d, 's.bash')], { encoding: 'utf8' }).stderr).toBe('');
  });
});

describe.skipIf(missing('zsh', 'script'))(titled('zsh snippet (accept-line widget), in a real zsh on a pty', missing('zsh', 'script')), () => {
  it('allowed lines run, a reroute replaces the buffer and runs, a refused line does not run ($? 126), exit passes unchecked', async () => {
    const { runZsh } = setup();
    const r = await runZsh(['echo one\r', 'make build-safe\r', 'qemu-system-x86_64 x\r', 'echo "st=$?"\r', 'echo after\r', 'exit\r']);
    expect(r.out).toContain('one');
    expect(r.out).toContain('REROUTED-RAN');
    expect(r.out).toContain('offhost: refused (rule qemu-windows): migrate');
    expect(r.out).toContain('after');
    expect(r.out).not.toContain('LOCAL-');
    expect(r.out).toContain('st=126');
    expect(r.checked).toBe('echo one\nmake build-safe\nqemu-system-x86_64 x\necho "st=$?"\necho after\n');
  });
});

describe('offhost shell --check: a line ending in a backslash that continues it is not complete yet (exit 5)', () => {
  it('agrees with bash on which trailing backslashes continue the line', async () => {
    const { endsInContinuation } = await import('../../src/cli/commands/shell.js');
    const lines = ['echo a \\', 'echo a\\', "echo 'a \\'", 'echo a # b \\', 'echo "a" \\', 'echo a \\\\', 'echo a \\\\\\', "echo $'x\\'y' \\", 'echo "a \\" b" \\', "echo 'x'\\", 'echo x;#\\', 'echo a#b \\'];
    for (const line of lines) {
      // Ground truth: an interactive-style read of the line, then `echo END`: a continued line swallows it.
      const r = spawnSync('bash', ['--norc', '--noprofile', '-s'], { input: `${line}\necho END\n`, encoding: 'utf8' });
      const continued = !r.stdout.split('\n').includes('END');
      expect(endsInContinuation(line), `${line} (bash printed ${JSON.stringify(r.stdout)})`).toBe(continued);
    }
  });
});

describe('offhost shell --check: a here-document whose delimiter line has not come is not complete yet (exit 5)', () => {
  it('agrees with bash on which lines still read a here-document body', async () => {
    const { openHeredoc } = await import('../../src/cli/commands/shell.js');
    const lines = [
      'cat <<EOF',
      'cat <<EOF\nhello',
      'cat <<EOF\nhello\nEOF',
      'cat <<-EOF\n\thello\n\tEOF',
      "cat <<'EOF'\n$x\nEOF",
      'cat <<"E F"\nx\nE F',
      'cat <<A <<B\na\nA\nb',
      'cat <<A <<B\na\nA\nb\nB',
      'cat <<<word',
      "echo '<<EOF'",
      'echo a # <<EOF',
      'cat <<EOF | qemu-system-x86_64 -hda x\nbody',
      'cat <<EOF; echo after\nx\nEOF',
      'echo $((1<<2))',
      '(( x = 1 << 3 ))',
      'echo $(( (1) << 2 )) <<EOF',
      'echo $((1<<2)) <<EOF\nEOF',
    ];
    for (const line of lines) {
      const r = spawnSync('bash', ['--norc', '--noprofile', '-s'], { input: `${line}\necho END\n`, encoding: 'utf8' });
      const continued = !r.stdout.split('\n').includes('END');
      expect(openHeredoc(line), `${JSON.stringify(line)} (bash printed ${JSON.stringify(r.stdout)})`).toBe(continued);
    }
  });
});
