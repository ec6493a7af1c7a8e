// Laptop-side shell code runs on a Mac (issue 26): /bin/bash 3.2, /bin/sh possibly dash, BSD tools. The
// checker (./portable-shell.ts) is first tried on cases built to fool it, then run over every laptop-side
// script offhost ships or writes: the bash/zsh/fish snippets, hooks/offhost-shell, the shims' scripts,
// the hook commands `init` writes for every agent, and the pre-commit lines. test/e2e/mac-userland.test.ts
// runs those scripts with busybox's applets first on PATH and under `bash --posix`.
import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { checkPortable, formatFindings, type Dialect } from './portable-shell.js';
import { bashSnippet, fishSnippet, zshSnippet } from '../../src/adapters/shell-snippet.js';
import { hookCommand, TARGETS } from '../../src/adapters/init-agent.js';
import type { AgentName } from '../../src/adapters/common.js';
import { hookLines } from '../../src/install/husky.js';
import { shimScript } from '../../src/shims/script.js';
import type { ShimProgram } from '../../src/shims/plan.js';

const ROOT = join(import.meta.dirname, '..', '..');
const whats = (text: string, d: Dialect = 'bash') => checkPortable(text, d).map((f) => f.what);

describe('the checker on cases built to fool it', () => {
  it('data never counts: comments, quoted arguments, heredoc bodies, case patterns, array words, command -v', () => {
    const data = [
      '# timeout 5 make; sed -i s/a/b/ f; declare -A m; mapfile x',
      'echo "timeout 5 make" \'sed -i x f\' "readlink -f x"',
      "printf '%s\\n' 'stat -c %s f' '${x,,}' '$BASHPID'",
      'cat <<EOF\ntimeout 5 make\nsha256sum f\n${x,,}\nEOF\necho after',
      'cat <<-"END"\n\tsetsid x\n\tEND',
      'case $x in timeout | setsid) echo t ;; sha256sum) echo s ;; esac',
      'tools=(timeout setsid sha256sum)',
      'command -v timeout >/dev/null && echo has',
      "grep -rn 'readlink -f' src",
      'sed -i.bak s/a/b/ f && rm f.bak',
      'sed -n s/a/b/p f; sed -E s/a/b/ f; stat -f %z f; date -u +%s',
      'timeoutx 5; my-setsid; x_sha256sum',
    ];
    for (const t of data) expect(whats(t), t).toEqual([]);
  });
  it('a forbidden form counts however it is spelled: quoted program, extra spaces, inside $( ) and ` `, behind env/exec/command, in sh -c', () => {
    const code: [string, RegExp][] = [
      ["'timeout' 5 make", /timeout/],
      ['sed   -i    s/a/b/   f', /sed -i/],
      ["sed -i '' s/a/b/ f", /sed -i ''/],
      ['x=$(  timeout 5 y )', /timeout/],
      ['x=`sha256sum f`', /sha256sum/],
      ['echo "$(readlink -f "$0")"', /readlink -f/],
      ['env FOO=1 -i timeout 3 x', /timeout/],
      ['builtin exec -a name setsid x', /setsid/],
      ['command stat -c %s f', /stat -c/],
      ["sh -c 'date -d tomorrow'", /date -d/],
      ["bash -lc 'x=1; timeout 2 y'", /timeout/],
      ['FOO=bar \\\n  timeout 1 x', /timeout/],
      ['if true; then sha256sum f; fi', /sha256sum/],
      ['case $x in a) timeout 1 y ;; esac', /timeout/],
      ['ls --color=auto', /GNU long option/],
    ];
    for (const [t, re] of code) {
      const w = whats(t);
      expect(w.length, t).toBe(1);
      expect(w[0], t).toMatch(re);
    }
  });
  it('bash 4 syntax counts in bash code, not in zsh (which has it) nor in a quoted string', () => {
    const b4 = [
      'echo ${x,,}', 'echo "${x^^}"', 'echo ${x^}', 'echo ${x@Q}', 'echo ${a[-1]}', 'declare -A m', 'local -n r=x', 'typeset -gA m',
      'mapfile -t a < f', 'readarray a', 'make |& tee log', 'make &>> log', 'coproc foo', 'case x in a) echo ;& b) echo ;; esac',
      'exec {fd}>file', 'echo $BASHPID', 'echo "${EPOCHSECONDS}"', 'echo {1..10..2}', 'echo {01..10}', 'shopt -s globstar', '[[ -v x ]]', 'wait -n',
      'l=$READLINE_LINE',
    ];
    for (const t of b4) {
      const w = whats(t);
      expect(w.length, t).toBeGreaterThan(0);
      expect(w.every((x) => /bash 4\+/.test(x)), t).toBe(true);
      expect(whats(t, 'zsh'), `${t} (zsh)`).toEqual([]);
    }
    expect(whats("echo '${x,,}' \"\\${x,,}\"")).toEqual([]);
    expect(whats('echo ${x,,}', 'fish')).toEqual([]);
  });
  it('code under a BASH_VERSINFO test may use bash 4; its else branch and what follows may not', () => {
    const t = 'if (( BASH_VERSINFO[0] >= 4 )); then\n  declare -A m\n  f() { l=$READLINE_LINE; }\nelse\n  mapfile a\nfi\necho ${x,,}';
    const f = checkPortable(t, 'bash');
    expect(f.map((x) => x.line)).toEqual([5, 7]);
    expect(whats('if [[ ${BASH_VERSINFO[0]} -ge 4 ]]; then\n  if true; then :; fi\n  mapfile a\nfi')).toEqual([]);
    expect(whats('if true; then\n  mapfile a\nfi')).toHaveLength(1);
  });
  it('sh code: what dash refuses', () => {
    for (const t of ['[[ -n $x ]]', 'a=(1 2)', "echo $'x'", 'cat <<< "$x"', 'make &> log', 'function f { :; }', 'source ./x', 'echo ${x//a/b}', 'echo ${a[1]}']) {
      expect(whats(t, 'sh').length, t).toBeGreaterThan(0);
      expect(whats(t, 'sh').every((w) => /POSIX sh/.test(w)), t).toBe(true);
    }
    expect(whats('[ -n "$x" ] && . ./x; echo "${x#a}" "${x%b}"', 'sh')).toEqual([]);
  });
  it('fish: command substitutions are code, quotes are data', () => {
    expect(whats("set x (timeout 5 y); echo 'timeout' \"sha256sum\"", 'fish')).toHaveLength(1);
    expect(whats("set -l h (sha256sum f | string split ' ')[1]", 'fish')[0]).toMatch(/sha256sum/);
  });
  it('a finding names line and column and the portable form', () => {
    const [f] = checkPortable('echo ok\n  x=$(readlink -f "$0")\n', 'sh');
    expect(f).toMatchObject({ line: 2, column: 16 });
    expect(formatFindings('s.sh', [f!])).toMatch(/^s\.sh:2:16: `readlink -f` .*; portable: a loop over `readlink FILE`/);
  });
});

describe('laptop-side scripts use only what a Mac has', () => {
  const check = (file: string, text: string, d: Dialect) => expect(formatFindings(file, checkPortable(text, d))).toBe('');
  it('hooks/offhost.bash, .zsh, .fish (as shipped and as generated) and hooks/offhost-shell', () => {
    for (const [f, d] of [['hooks/offhost.bash', 'bash'], ['hooks/offhost.zsh', 'zsh'], ['hooks/offhost.fish', 'fish'], ['hooks/offhost-shell', 'sh']] as const) check(f, readFileSync(join(ROOT, f), 'utf8'), d);
    check('bashSnippet', bashSnippet(['/opt/homebrew/bin/node', '/Users/me/offhost.cjs']), 'bash');
    check('zshSnippet', zshSnippet(['/opt/homebrew/bin/node', '/Users/me/offhost.cjs']), 'zsh');
    check('fishSnippet', fishSnippet(['/opt/homebrew/bin/node', '/Users/me/offhost.cjs']), 'fish');
  });
  it('the shims (with and without a fast path)', () => {
    const rt = { bash: '/bin/bash', node: '/opt/homebrew/bin/node', bin: '/Users/me/offhost.cjs', marker: '/Users/me/.local/share/offhost/shims/.offhost-shims', configs: ['/Users/me/dev/koder/offhost.config.yaml'] };
    const fast: ShimProgram = {
      name: 'make',
      fast: { dirs: [{ spelled: '/Users/me/dev/koder/engines/lang/koda', physical: '/Users/me/dev/koder/engines/lang/koda', existed: true }], words: ['build'], longFlags: ['--directory'], shortFlags: ['C'], dashWords: ['-avd'], contains: ['AndroidTest'], env: ['MOZ_HEADLESS'] },
    };
    check('shim make', shimScript(fast, rt), 'bash');
    check('shim emulator', shimScript({ name: 'emulator', fast: null }, { ...rt, configs: [] }), 'bash');
  });
  it('the hook command init writes for every agent, and the pre-commit lines', () => {
    for (const agent of Object.keys(TARGETS) as AgentName[]) {
      for (const projectBin of [null, '/Users/me/dev/koder/node_modules/.bin/offhost']) {
        const c = hookCommand(agent, '/Users/me/dev/koder', [], { projectBin, node: '/opt/homebrew/bin/node', bin: '/Users/me/offhost.cjs' });
        check(`${agent} hook command`, c.command, 'sh');
      }
    }
    check('.husky/pre-commit', hookLines('meta/context/notices', true, true).join('\n'), 'sh');
  });
});
