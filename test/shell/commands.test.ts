// What actually runs: table tests of the walker (src/shell/commands.ts) on real parsed lines.
import { describe, expect, it } from 'vitest';
import { parse } from '../../src/shell/parser.js';
import { commandsOf } from '../../src/shell/commands.js';

const HOME = '/home/koder';
const ROOT = '/home/koder/dev/koder';
const KODA = `${ROOT}/engines/lang/koda`;

function run(line: string, cwd: string | null = ROOT) {
  return commandsOf(parse(line), line, { cwd, env: { HOME } });
}
/** program + argv + cwd of each command, compactly. */
function summary(line: string, cwd: string | null = ROOT) {
  return run(line, cwd).map((c) => `${c.program ?? '?'} [${c.argv.slice(1).join(',')}] @${c.cwd ?? '?'}`);
}

describe('commands: what runs', () => {
  const table: [string, string[]][] = [
    ['make build-safe', [`make [build-safe] @${ROOT}`]],
    ['cd engines/lang/koda && make build', [`cd [engines/lang/koda] @${ROOT}`, `make [build] @${KODA}`]],
    // A `cd` that may fail (`;`, not `&&`): bash stays where it was, so make may run in either directory.
    ['cd ~/dev/koder/engines/lang/koda; make', [`cd [${KODA}] @${ROOT}`, `make [] @${KODA}`, `make [] @${ROOT}`]],
    ['(cd engines/lang/koda && make build); make clean', [`cd [engines/lang/koda] @${ROOT}`, `make [build] @${KODA}`, `make [clean] @${ROOT}`]],
    ['pushd engines && pushd lang/koda && popd && make', [`pushd [engines] @${ROOT}`, `pushd [lang/koda] @${ROOT}/engines`, `popd [] @${KODA}`, `make [] @${ROOT}/engines`]],
    ['make -C engines/lang/koda kasm', [`make [-C,engines/lang/koda,kasm] @${KODA}`]],
    ['make --directory=engines/lang/koda build', [`make [--directory=engines/lang/koda,build] @${KODA}`]],
    ['sudo -D /tmp make build', ['sudo [-D,/tmp,make,build] @' + ROOT, 'make [build] @/tmp']],
    ['env -C /tmp FOO=1 make build', ['env [-C,/tmp,FOO=1,make,build] @' + ROOT, 'make [build] @/tmp']],
    ['timeout -s KILL 600 nice -n 19 make build', [`timeout [-s,KILL,600,nice,-n,19,make,build] @${ROOT}`, `nice [-n,19,make,build] @${ROOT}`, `make [build] @${ROOT}`]],
    ["bash -c 'make build-safe'", [`bash [-c,make build-safe] @${ROOT}`, `make [build-safe] @${ROOT}`]],
    ['eval "make build"', [`eval [make build] @${ROOT}`, `make [build] @${ROOT}`]],
    ["m'a'ke \\build", [`make [build] @${ROOT}`]],
    ['/usr/bin/make build', [`make [build] @${ROOT}`]],
    ['CMD=make; $CMD build', [`make [build] @${ROOT}`]],
    ['echo "make build-safe"', [`echo [make build-safe] @${ROOT}`]],
    ["git commit -m 'emulator -avd x'", [`git [commit,-m,emulator -avd x] @${ROOT}`]],
    ['echo $(make build)', [`make [build] @${ROOT}`, `echo [$(…)] @${ROOT}`]],
    ['bash <<EOF\nmake build-safe\nEOF', [`bash [] @${ROOT}`, `make [build-safe] @${ROOT}`]],
    ["cat <<'EOF'\nmake build-safe\nEOF", [`cat [] @${ROOT}`]],
    ['echo make build | bash', [`echo [make,build] @${ROOT}`, `bash [] @${ROOT}`, `make [build] @${ROOT}`]],
    ['find . -name Makefile -execdir make build \\;', [`find [.,-name,Makefile,-execdir,make,build,;] @${ROOT}`, 'make [build] @?']],
    ['echo build | xargs make', [`echo [build] @${ROOT}`, `xargs [make] @${ROOT}`, `make [<stdin>] @${ROOT}`]],
    ['npx playwright test', [`npx [playwright,test] @${ROOT}`, `playwright [test] @${ROOT}`]],
    ['f() { make build; }', []],
    ['f() { make "$1"; }; f build', [`make [build] @${ROOT}`]],
    // The body's cd moves the caller (it may fail: both directories).
    ['f() { cd engines/lang/koda; }; f; make build', [`cd [engines/lang/koda] @${ROOT}`, `make [build] @${ROOT}/engines/lang/koda`, `make [build] @${ROOT}`]],
    ['for t in build kasm; do make $t; done', [`make [build] @${ROOT}`, `make [kasm] @${ROOT}`]],
    ["ssh khost1 'make build-safe'", [`ssh [khost1,make build-safe] @${ROOT}`]],
    ["ssh -o ProxyCommand='make build' khost1", [`ssh [-o,ProxyCommand=make build,khost1] @${ROOT}`, `make [build] @${ROOT}`]],
  ];
  for (const [line, expected] of table) {
    it(JSON.stringify(line), () => {
      expect(summary(line)).toEqual(expected);
    });
  }
});

describe('commands: what cannot be known', () => {
  it('a program from an unknown variable is unknown', () => {
    const [c] = run('"$CMD" build');
    expect(c!.program).toBeNull();
    expect(c!.unknown).toEqual([0]);
  });
  it('a path through an unknown variable keeps a static basename', () => {
    const [c] = run('$ANDROID_HOME/emulator/emulator -avd x');
    expect(c!.program).toBe('emulator');
  });
  it('cd to an unknown directory makes the cwd unknown', () => {
    expect(run('cd "$D" && make build')[1]!.cwd).toBeNull();
  });
  it('a branch that may or may not cd makes the cwd unknown after it', () => {
    expect(run('if true; then cd /tmp; fi; make')[2]!.cwd).toBeNull();
  });
  it('a glob argument is unknown', () => {
    expect(run('make buil*')[0]!.unknown).toEqual([1]);
  });
  it('inline env is recorded and does not leak to the next command', () => {
    const cmds = run('FOO=1 make build; make kasm');
    expect(cmds[0]!.env).toEqual({ FOO: '1' });
    expect(cmds[1]!.env).toEqual({});
  });
  it('tilde and $HOME expand from the environment', () => {
    expect(run('cd ~ && cd $HOME/dev && make')[2]!.cwd).toBe(`${HOME}/dev`);
  });
  it('via records the wrappers and shells a command was found inside', () => {
    const cmds = run(`sudo bash -c "timeout 5 make build"`);
    expect(cmds.at(-1)!.via).toEqual(['sudo', 'bash -c', 'timeout']);
  });
  it('nested shells past the depth limit fail closed', () => {
    const line = 'eval '.repeat(20) + 'make build';
    expect(() => run(line)).toThrow(/nested more than 16 deep/);
    expect(summary('eval '.repeat(10) + 'make build').at(-1)).toBe(`make [build] @${ROOT}`);
  });
  it('a string given to bash -c that does not parse fails closed', () => {
    expect(() => run(`bash -c 'echo "unterminated'`)).toThrow(/does not parse/);
  });
});

describe('commands: cd resolution', () => {
  it('matches path.posix.normalize for every kind of relative and absolute target', async () => {
    const { posix } = await import('node:path');
    const cases = ['a', 'a/b', './a', '../a', 'a/../b', 'a//b', 'a/', '/x', '/x/', '/x/../y', '.', '..', '/', 'a/.', '.hidden', 'a/.b', '..a', 'a..', '/a/..b'];
    for (const base of ['/home/k', '/']) {
      for (const c of cases) {
        const want = posix.normalize(c.startsWith('/') ? c : posix.join(base, c)).replace(/(.)\/$/, '$1');
        expect(run(`cd ${c} && make`, base)[1]!.cwd, `${base} + ${c}`).toBe(want);
      }
    }
  });
});

describe('commands: state after branches', () => {
  it('cd - after a branch that may have changed directory is unknown', () => {
    expect(run('if true; then cd /tmp; fi; cd - && make')[3]!.cwd).toBeNull();
  });
  it('popd after a branch that may have pushed is unknown', () => {
    expect(run('if true; then pushd /tmp; fi; popd; make').at(-1)!.cwd).toBeNull();
  });
  it('an export inside a branch reaches later commands as unknown', () => {
    expect(run('if true; then export W=h; fi; labwc').at(-1)!.unknownEnv).toEqual(['W']);
  });
});
