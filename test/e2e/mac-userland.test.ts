// The laptop-side shell code with a userland that is not GNU's (issue 26): busybox's applets first on
// PATH and nothing else of /usr/bin (what a Mac lacks — timeout, setsid, readlink -f, GNU sed/stat/date —
// is then missing or different), and bash in POSIX mode (`bash --posix`, what /bin/sh is on a Mac).
// Each door is run for real and judged by what happens: stand-in heavy programs record their runs.
//   - hooks/offhost-shell, reached through a symlink (its own path found without `readlink -f`);
//   - the bash snippet in an interactive bash (--posix, and plain), refusing a heavy line and passing a light one;
//   - make's shim: judged in the engine, its fast path elsewhere;
//   - the hook commands `init` writes (claude-code's, and codex's inside `/bin/sh -c`), fed an event.
// test/lint/portable-shell.test.ts checks the same scripts' text. Skips, saying why, without busybox.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BIN, SHELL } from '../shims/tree.js';
import { bashSnippet } from '../../src/adapters/shell-snippet.js';
import { hookCommand } from '../../src/adapters/init-agent.js';

/** Programs a stock macOS does not have (coreutils' GNU-only ones, util-linux's). */
const MAC_LACKS = new Set(['timeout', 'setsid', 'sha256sum', 'sha1sum', 'sha512sum', 'sha3sum', 'md5sum', 'nproc', 'tac', 'flock', 'shuf', 'stdbuf', 'realpath']);
/** The GNU-only options BSD's tools refuse (a shell pattern over one argument). */
const BSD_REFUSES: Record<string, string> = {
  readlink: '-f|-e|-m|-*f*|--canonicalize*',
  stat: '-c*|--format*|--printf*',
  date: '-d*|--date*',
  // BSD sed takes the word after -i for the suffix; a bare -i followed by the script is refused here.
  sed: '-i|--in-place*|-r',
  xargs: '-r|--no-run-if-empty',
};
const busybox = spawnSync('sh', ['-c', 'command -v busybox'], { encoding: 'utf8' }).stdout.trim();
const why = busybox ? null : 'busybox is not installed (.ci/run installs it)';

let base = '';
let bb = '';
let fake = '';
let home = '';
let koda = '';
let web = '';
let ran = '';

beforeAll(() => {
  if (why) return;
  base = realpathSync(mkdtempSync(join(tmpdir(), 'offhost-bb-')));
  bb = join(base, 'busybox');
  fake = join(base, 'heavy');
  home = join(base, 'Users', 'me');
  koda = join(home, 'dev', 'koder', 'engines', 'lang', 'koda');
  web = join(home, 'dev', 'koder', 'apps', 'web');
  ran = join(base, 'ran.log');
  for (const d of [bb, fake, koda, web]) mkdirSync(d, { recursive: true });
  const applets = spawnSync(busybox, ['--list'], { encoding: 'utf8' }).stdout.split('\n').filter(Boolean);
  // What a stock Mac does not have at all, busybox's applet taken away; what it has with BSD options, a
  // wrapper that refuses the GNU-only ones as BSD's tool does ("illegal option") and runs busybox's otherwise.
  for (const a of applets) if (!MAC_LACKS.has(a) && !BSD_REFUSES[a]) symlinkSync(busybox, join(bb, a));
  for (const [tool, pattern] of Object.entries(BSD_REFUSES)) {
    writeFileSync(join(bb, tool), `#!${busybox} sh
for a in "$@"; do
  case $a in
    ${pattern}) echo "${tool}: illegal option -- $a (BSD ${tool})" >&2; exit 64 ;;
    --) break ;;
  esac
done
exec ${busybox} ${tool} "$@"
`);
    chmodSync(join(bb, tool), 0o755);
  }
  // Stand-in heavy programs: shell builtins only, a line per run.
  for (const p of ['make', 'qemu-system-x86_64']) {
    writeFileSync(join(fake, p), `#!${join(bb, 'sh')}\necho "${p} $*	$PWD" >> ${ran}\n`);
    chmodSync(join(fake, p), 0o755);
  }
});

afterAll(() => {
  if (base) rmSync(base, { recursive: true, force: true });
});

const runs = () => (existsSync(ran) ? readFileSync(ran, 'utf8').split('\n').filter(Boolean) : []);
const env = (extra: Record<string, string> = {}) => ({ PATH: `${bb}:${fake}`, HOME: home, OFFHOST_ROLE: 'laptop', OFFHOST_NODE: process.execPath, LANG: 'C', TERM: 'dumb', XDG_CONFIG_HOME: join(base, 'xdg'), XDG_CACHE_HOME: join(base, 'cache'), ...extra });

describe.skipIf(why !== null)(`with busybox's userland first on PATH${why ? `: skipped, ${why}` : ''}`, () => {
  it('the userland is busybox (the premise): no GNU timeout, busybox readlink and sed', () => {
    const sh = (c: string) => spawnSync(join(bb, 'sh'), ['-c', c], { cwd: base, env: env(), encoding: 'utf8' });
    expect(sh('command -v timeout || command -v setsid || command -v sha256sum || command -v tac').status).not.toBe(0);
    for (const c of ['readlink -f .', 'stat -c %s ran.log', 'date -d tomorrow', 'echo a > f && sed -i s/a/b/ f']) expect(sh(c).stderr, c).toMatch(/illegal option/);
    expect(sh('echo a > f && sed -i.bak s/a/b/ f && cat f && readlink heavy; stat -f x . >/dev/null; date -u +%Y').stdout).toMatch(/^b\n\d{4}\n$/);
    expect(sh('command -v sed').stdout.trim()).toBe(join(bb, 'sed'));
  });

  it.each([
    ['busybox sh', () => [join(bb, 'sh')]],
    ['bash --posix', () => ['/bin/bash', '--posix']],
  ])('hooks/offhost-shell through a symlink, under %s: a light line runs, a heavy one is refused and never starts', (_n, shell) => {
    const link = join(base, 'bin-link', 'offhost-shell');
    if (!existsSync(link)) {
      mkdirSync(join(base, 'bin-link'), { recursive: true });
      symlinkSync(SHELL, link);
    }
    const [sh, ...flags] = shell();
    const before = runs().length;
    const light = spawnSync(sh!, [...flags, link, '-c', 'echo light; make clean'], { cwd: koda, env: env({ PWD: koda }), encoding: 'utf8', timeout: 60_000 });
    expect(light.stderr).toBe('');
    expect(light.stdout).toBe('light\n');
    expect(light.status).toBe(0);
    const heavy = spawnSync(sh!, [...flags, link, '-c', 'qemu-system-x86_64 -hda win10.qcow2'], { cwd: koda, env: env({ PWD: koda }), encoding: 'utf8', timeout: 60_000 });
    expect(heavy.status).toBe(126);
    expect(heavy.stderr).toMatch(/qemu/);
    expect(runs().slice(before)).toEqual([`make clean\t${koda}`]);
  });

  it.each([
    ['bash --posix -i (ENV)', true],
    ['bash -i (--rcfile)', false],
  ])('the bash snippet in %s: the heavy line refused, the light one run', (_n, posix) => {
    const rc = join(base, posix ? 'rc-posix' : 'rc');
    writeFileSync(rc, `PS1='$ '\nHISTFILE=${join(base, 'hist')}\n${bashSnippet([process.execPath, BIN])}`);
    const before = runs().length;
    const args = posix ? ['--posix', '-i'] : ['--noprofile', '--rcfile', rc, '-i'];
    const r = spawnSync('/bin/bash', args, { cwd: koda, input: 'echo typed\nqemu-system-x86_64 -hda win10.qcow2\nmake clean\necho end\n', env: env({ ...(posix ? { ENV: rc } : {}), PWD: koda }), encoding: 'utf8', timeout: 60_000 });
    expect(r.stdout).toContain('typed\n');
    expect(r.stdout).toContain('end\n');
    expect(r.stderr).toMatch(/offhost: refused \(rule qemu/);
    expect(r.stderr).not.toMatch(/command not found|syntax error|bad substitution/);
    expect(runs().slice(before)).toEqual([`make clean\t${koda}`]);
  });

  it("make's shim: the judge is asked in the engine, the fast path runs make elsewhere (also when the shim runs under bash --posix)", () => {
    const shims = join(base, 'shims');
    const asked = join(base, 'judge.log');
    const judge = join(base, 'judge.cjs');
    writeFileSync(judge, "require('fs').appendFileSync(process.env.FAKE_JUDGE_LOG, process.argv.slice(4).join(' ') + '\\n'); process.exit(126);\n");
    const e = env({ OFFHOST_SHIM_BIN: judge, FAKE_JUDGE_LOG: asked });
    const inst = spawnSync(process.execPath, [BIN, 'shim', 'install', '--dir', shims], { cwd: home, env: { ...e, PATH: `${fake}:/usr/bin:/bin` }, encoding: 'utf8' });
    expect(inst.status, inst.stderr).toBe(0);
    for (const via of [[], ['/bin/bash', '--posix', '-p']]) {
      rmSync(asked, { force: true });
      const before = runs().length;
      const make = (cwd: string) => spawnSync(via[0] ?? join(shims, 'make'), [...via.slice(1), ...(via.length ? [join(shims, 'make')] : [])], { cwd, env: { ...e, PATH: `${shims}:${bb}:${fake}`, PWD: cwd }, encoding: 'utf8' });
      const inEngine = make(koda);
      expect(inEngine.status, inEngine.stderr).toBe(126);
      expect(readFileSync(asked, 'utf8')).toBe('make --\n');
      const elsewhere = make(web);
      expect(elsewhere.status, elsewhere.stderr).toBe(0);
      expect(readFileSync(asked, 'utf8')).toBe('make --\n');
      expect(runs().slice(before)).toEqual([`make \t${web}`]);
    }
  });

  it.each([['claude-code'], ['codex']] as const)("the %s hook command init writes denies a heavy call under busybox sh and bash --posix", (agent) => {
    const { command } = hookCommand(agent, home, [], { projectBin: null, node: process.execPath, bin: BIN });
    const event = JSON.stringify({ session_id: 's', cwd: koda, hook_event_name: 'PreToolUse', tool_name: 'Bash', tool_input: { command: 'qemu-system-x86_64 -hda win10.qcow2' } });
    for (const sh of [[join(bb, 'sh'), '-c'], ['/bin/bash', '--posix', '-c']]) {
      const r = spawnSync(sh[0]!, [...sh.slice(1), command], { cwd: koda, input: event, env: env({ PWD: koda }), encoding: 'utf8', timeout: 60_000 });
      expect(r.status, `${sh.join(' ')}: ${r.stderr}`).toBe(0);
      expect(JSON.parse(r.stdout).hookSpecificOutput.permissionDecision).toBe('deny');
    }
  });
});

describe.skipIf(why !== null)(`the shims stay first on PATH, ahead of /opt/homebrew/bin${why ? `: skipped, ${why}` : ''}`, () => {
  // A Mac's login shells run path_helper (/etc/profile, /etc/zprofile), which puts /usr/bin and friends
  // before an inherited PATH, and `brew shellenv` (in ~/.zprofile), which puts /opt/homebrew/bin first.
  const macPath = (shims: string) => `/opt/homebrew/bin:/usr/bin:/bin:/usr/sbin:/sbin:${shims}:${bb}`;
  const shimsDir = () => {
    const d = join(base, 'front-shims');
    if (!existsSync(d)) {
      mkdirSync(d, { recursive: true });
      writeFileSync(join(d, '.offhost-shims'), '');
    }
    return d;
  };
  it.each([
    ['busybox sh', () => [join(bb, 'sh'), '-c']],
    ['bash --posix', () => ['/bin/bash', '--posix', '-c']],
  ])('the PATH line init prints, under %s: moved to the front, once; left alone when first', async (_n, sh) => {
    const { pathLine } = await import('../../src/shims/path-line.js');
    const d = shimsDir();
    const [prog, ...flags] = sh();
    const after = (path: string) => {
      const r = spawnSync(prog!, [...flags, `${pathLine(d)}printf '%s' "$PATH"`], { env: { PATH: path, HOME: base }, encoding: 'utf8' });
      expect(r.stderr).toBe('');
      return r.stdout;
    };
    expect(after(macPath(d))).toBe(`${d}:/opt/homebrew/bin:/usr/bin:/bin:/usr/sbin:/sbin:${bb}`);
    expect(after(`${d}:/opt/homebrew/bin:${d}:${bb}`)).toBe(`${d}:/opt/homebrew/bin:${d}:${bb}`);
    expect(after(`/opt/homebrew/bin:${bb}`)).toBe(`${d}:/opt/homebrew/bin:${bb}`);
  });
  it('the bash snippet puts them first, and back first at the next prompt after something prepends Homebrew', () => {
    const d = shimsDir();
    const rc = join(base, 'rc-front');
    writeFileSync(rc, `PS1='$ '\nHISTFILE=${join(base, 'hist-front')}\n${bashSnippet([process.execPath, BIN])}`);
    const r = spawnSync('/bin/bash', ['--noprofile', '--rcfile', rc, '-i'], {
      cwd: web,
      input: 'echo "A=$PATH"\nexport PATH=/opt/homebrew/bin:$PATH\necho "B=$PATH"\n',
      env: env({ PATH: macPath(d), OFFHOST_SHIMS_DIR: d, PWD: web }),
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(r.stdout).toContain(`A=${d}:/opt/homebrew/bin:/usr/bin:/bin:/usr/sbin:/sbin:${bb}\n`);
    expect(r.stdout).toContain(`B=${d}:/opt/homebrew/bin:/opt/homebrew/bin:/usr/bin:/bin:/usr/sbin:/sbin:${bb}\n`);
  });
});
