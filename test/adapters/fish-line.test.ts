// A fish line read as the bash the guard parses (src/adapters/fish-line.ts): every command fish would run
// stays a command of the text; lines that need no translation are marked exact (only those may be rerouted
// as they are: offhost run executes bash on the VM).
import { describe, expect, it } from 'vitest';
import { fishAsBash } from '../../src/adapters/fish-line.js';

describe('fishAsBash', () => {
  it('keeps bash-compatible lines as they are (exact)', () => {
    for (const l of ['make build-safe', 'echo a | make x && ls', 'FOO=1 make', "echo 'a b' \"c $d\"", 'echo $(date)', 'ls # (not a substitution)', 'make &> log']) {
      expect(fishAsBash(l)).toEqual({ text: l, exact: true });
    }
  });

  it('reads fish syntax so that every command it runs is a command of the text', () => {
    const cases: [string, string][] = [
      ['true; and make build-safe', 'true; make build-safe'],
      ['false; or qemu-system-x86_64 x', 'false; qemu-system-x86_64 x'],
      ['not make', 'make'],
      ['echo (make build-safe)', 'echo $(make build-safe)'],
      ['set x (cat (make y))', 'set x $(cat $(make y))'],
      ['if true; make; end', 'true; make; :'],
      ['if test -e x; echo a; else if make; echo b; else; echo c; end', 'test -e x; echo a; make; echo b; :; echo c; :'],
      ['while make; sleep 1; end', 'make; sleep 1; :'],
      ['for i in (seq 3); make $i; end', ': $(seq 3); make $i; :'],
      ['for i in 1 2\nqemu-system-x86_64 -hda $i\nend', ': 1 2\nqemu-system-x86_64 -hda $i\n:'],
      ['begin; make; end | cat', ':; make; : | cat'],
      ['switch $x; case a; make; end', ': $x; : a; make; :'],
      ["echo 'it\\'s' | make", "echo 'it'\\''s' | make"],
    ];
    for (const [fish, bash] of cases) expect(fishAsBash(fish), fish).toEqual({ text: bash, exact: false });
  });
});
