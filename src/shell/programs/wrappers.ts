// Programs that run the rest of their argv as a command, here: `sudo make`, `env -C dir make`, `timeout 60
// make`, `nice`, `bear -- make`, `numactl -N0 make`, `chronic make`, `sshpass -p x ssh …`. Each is one
// grammar (its options, which take a value, which set the directory, which mean nothing runs); the walker
// judges the inner command, not the wrapper's name.
import { scan, type Spec } from './grammar.js';
import type { Field } from '../expand.js';
import { envField, type Call } from '../walk-state.js';
import type { ProgramModule, Unwrapped } from './types.js';
import { isShellProgram } from './shells.js';

const TIMEOUT: Spec = { value: ['-s', '--signal', '-k', '--kill-after'], flags: ['--preserve-status', '--foreground', '--verbose'], info: ['--help', '--version'], skip: 1 };

/** name -> grammar. Values listed once; long options may be abbreviated (`env --chd=dir`). */
export const WRAPPER_SPECS: Record<string, Spec> = {
  sudo: {
    value: ['-u', '--user', '-g', '--group', '-h', '--host', '-C', '--close-from', '-D', '--chdir', '-p', '--prompt', '-r', '--role', '-t', '--type', '-T', '--command-timeout', '-U', '--other-user', '-R', '--chroot'],
    flags: ['--preserve-env', '--login', '--non-interactive', '--background', '--stdin', '--shell', '--set-home', '--askpass', '--bell', '--preserve-groups', '--reset-timestamp', '--remove-timestamp', '--validate', '--list', '--edit', '--version', '--help'],
    chdir: ['-D', '--chdir'],
    noCommand: ['-l', '--list', '-v', '--validate', '-k', '--reset-timestamp', '-K', '--remove-timestamp', '-V', '--version', '--help', '-e', '--edit'],
    assignments: true,
  },
  doas: { value: ['-u', '-C'], noCommand: ['-C', '-L'] },
  env: {
    value: ['-u', '--unset', '-C', '--chdir', '-S', '--split-string', '--default-signal', '--ignore-signal', '--block-signal', '-a', '--argv0'],
    flags: ['--ignore-environment', '--null', '--debug', '--list-signal-handling', '--help', '--version'],
    chdir: ['-C', '--chdir'],
    scriptOption: ['-S', '--split-string'],
    noCommand: ['--help', '--version'],
    assignments: true,
  },
  nice: { value: ['-n', '--adjustment'], noCommand: ['--help', '--version'] },
  ionice: { value: ['-c', '--class', '-n', '--classdata'], noCommand: ['-p', '--pid', '-P', '--pgid', '-u', '--uid'] },
  nohup: { value: [] },
  // `corepack pnpm e2e`: the package manager it pins runs (its own commands, `corepack enable`, run nothing heavy).
  corepack: { value: [] },
  setsid: { value: [], flags: ['--ctty', '--fork', '--wait'] },
  timeout: TIMEOUT,
  gtimeout: TIMEOUT,
  time: { value: ['-f', '--format', '-o', '--output'], flags: ['--append', '--portability', '--verbose', '--quiet'] },
  stdbuf: { value: ['-i', '--input', '-o', '--output', '-e', '--error'] },
  taskset: { value: ['-c', '--cpu-list'], noCommand: ['-p', '--pid'], skip: 1 },
  chrt: { value: ['-T', '--sched-runtime', '-P', '--sched-period', '-D', '--sched-deadline'], noCommand: ['-p', '--pid', '-m', '--max'], skip: 1 },
  unbuffer: { value: [] },
  caffeinate: { value: ['-t', '-w'] },
  catchsegv: { value: [] },
  strace: { value: ['-o', '--output', '-e', '-p', '-s', '-u', '-E', '-I', '-a', '-b', '-O', '-S', '-P', '-X'], pipeOption: ['-o', '--output'] },
  ltrace: { value: ['-o', '-e', '-p', '-s', '-u', '-a', '-n', '-l', '-L'] },
  valgrind: { value: [] },
  'systemd-run': {
    value: ['-u', '--unit', '-p', '--property', '-E', '--setenv', '-M', '--machine', '--description', '--slice', '-H', '--host', '--working-directory', '--uid', '--gid', '--nice'],
    flags: ['--user', '--scope', '--wait', '--pipe', '--pty', '--quiet', '--same-dir', '--collect', '--no-block'],
    chdir: ['--working-directory'],
  },
  'systemd-inhibit': { value: ['--what', '--who', '--why', '--mode'] },
  'nix-shell': { value: ['-p', '--packages', '-A', '--attr', '-I', '--arg', '--argstr'], scriptOption: ['--run', '--command'] },
  // A virtual display around a command: the command is judged (and decides the route), and so is xvfb-run.
  'xvfb-run': { value: ['-n', '--server-num', '-e', '--error-file', '-f', '--auth-file', '-s', '--server-args', '-p', '--xauth-protocol', '-w', '--wait'], flags: ['-a', '--auto-servernum', '-d', '--auto-display', '-l', '--listen-tcp'], noCommand: ['-h', '--help'] },
  'dbus-run-session': { value: ['--config-file', '--dbus-daemon'] },
  unshare: { value: ['-S', '--setuid', '-G', '--setgid', '-R', '--root', '-w', '--wd', '--propagation', '--map-user', '--map-group', '--map-users', '--map-groups'], chdir: ['-w', '--wd'] },
  // The namespace options, --root and --wd take a file only attached (`-m/proc/1/ns/mnt`, `--wd=DIR`): `-m make` is -m, then make.
  nsenter: { value: ['-t', '--target', '-S', '--setuid', '-G', '--setgid'], flags: ['-m', '-u', '-i', '-n', '-p', '-C', '-U', '-T', '-r', '-w', '-a', '--all', '-F', '--no-fork', '--preserve-credentials', '-Z', '--follow-context'], optional: ['--mount', '--uts', '--ipc', '--net', '--pid', '--cgroup', '--user', '--time', '--root', '--wd'], chdir: ['--wd'] },
  pkexec: { value: ['--user', '-u'] },
  cpulimit: { value: ['-l', '--limit', '-p', '--pid', '-e', '--exe', '-c', '--cpu'], noCommand: ['-p', '--pid', '-e', '--exe'] },
  firejail: { value: [] },
  // chroot NEWROOT cmd: the command runs in another root, in a directory offhost cannot know.
  chroot: { value: ['--userspec', '--groups'], skip: 1 },
  runuser: { value: ['-u', '--user', '-g', '--group', '-G', '--supp-group', '-s', '--shell', '-w', '--whitelist-environment', '-c', '--command'], scriptOption: ['-c', '--command'] },
  su: { value: ['-g', '--group', '-G', '--supp-group', '-s', '--shell', '-w', '--whitelist-environment', '-c', '--command', '--session-command'], scriptOption: ['-c', '--command', '--session-command'] },
  // util-linux script(1): `script -qc 'make build' /dev/null` runs the string through a shell.
  script: { value: ['-c', '--command', '-E', '--echo', '-I', '--log-in', '-O', '--log-out', '-B', '--log-io', '-T', '--log-timing', '-m', '--logging-format'], scriptOption: ['-c', '--command'], noCommand: ['-V', '--version', '-h', '--help'] },
  flock: { value: ['-w', '--timeout', '-E', '--conflict-exit-code', '-c', '--command'], scriptOption: ['-c', '--command'], skip: 1 },
  // Build tooling that wraps a build: compile-database recorders, static analysers, profilers.
  bear: { value: ['--output', '-o', '--config', '-c', '--library', '-l', '--use-cc', '--use-c++'], flags: ['--append', '-a', '--verbose', '--force-preload', '--force-wrapper'], noCommand: ['--help', '-h', '--version'] },
  compiledb: { value: ['-o', '--output', '-p', '--parse', '--command-style'], flags: ['--full-path', '--no-strict', '-S', '-v', '--verbose', '-n', '--no-build', '--overwrite'], noCommand: ['-n', '--no-build', '-p', '--parse', '--help', '-h'] },
  'intercept-build': { value: ['--cdb', '--use-cc', '--use-c++'], flags: ['--append', '--verbose', '-v'] },
  'scan-build': { value: ['-o', '--use-cc', '--use-c++', '--use-analyzer', '-enable-checker', '-disable-checker', '--analyzer-target', '-maxloop', '-analyzer-config', '--exclude', '-load-plugin', '--html-title'], flags: ['-v', '-V', '--view', '-k', '--keep-going', '-plist', '-plist-html', '--status-bugs', '--force-analyze-debug-code', '-analyze-headers'], noCommand: ['-h', '--help'] },
  numactl: {
    value: ['-i', '--interleave', '-m', '--membind', '-N', '--cpunodebind', '-C', '--physcpubind', '-p', '--preferred', '-P', '--preferred-many', '-w', '--weighted-interleave'],
    flags: ['-a', '--all', '-l', '--localalloc', '-b', '--balancing', '-s', '--show', '-H', '--hardware'],
    noCommand: ['-s', '--show', '-H', '--hardware', '--help', '-V', '--version'],
  },
  // prlimit --as=1G -n1024 make: the limits are attached values; --pid changes another process.
  prlimit: {
    value: ['-p', '--pid', '-o', '--output'],
    flags: ['--noheadings', '--raw', '--verbose', '--as', '--core', '--cpu', '--data', '--fsize', '--locks', '--memlock', '--msgqueue', '--nice', '--nofile', '--nproc', '--rss', '--rtprio', '--rttime', '--sigpending', '--stack', '-c', '-d', '-e', '-f', '-i', '-l', '-m', '-n', '-q', '-r', '-s', '-t', '-u', '-v', '-x', '-y'],
    noCommand: ['-p', '--pid', '--help', '-V', '--version'],
  },
  cgexec: { value: ['-g'], flags: ['--sticky', '-h'] },
  chronic: { value: [], flags: ['-e', '-v'] },
  ifne: { value: [], flags: ['-n'] },
  fakeroot: { value: ['-l', '--lib', '--faked', '-i', '-s', '-b'], flags: ['-u', '--unknown-is-real', '-h', '-v', '--version', '--help'], noCommand: ['-h', '--help', '-v', '--version'] },
  setpriv: {
    value: ['--reuid', '--regid', '--ruid', '--euid', '--rgid', '--egid', '--groups', '--inh-caps', '--ambient-caps', '--bounding-set', '--securebits', '--pdeathsig', '--selinux-label', '--apparmor-profile', '--landlock-access', '--landlock-rule', '--reset-env'],
    flags: ['-d', '--dump', '--clear-groups', '--keep-groups', '--init-groups', '--nnp', '--no-new-privs', '--reset-env', '--list-caps'],
    noCommand: ['-d', '--dump', '--list-caps', '--help', '-V', '--version'],
  },
  rlwrap: { value: ['-b', '--break-chars', '-C', '--command-name', '-D', '--history-no-dupes', '-f', '--file', '-F', '--format', '-g', '--forget-matching', '-H', '--history-filename', '-l', '--logfile', '-O', '--only-cook', '-P', '--pre-given', '-q', '--quote-characters', '-s', '--histsize', '-S', '--substitute-prompt', '-t', '--set-term-name', '-w', '--wait-before-prompt', '-z', '--filter'], flags: ['-A', '--ansi-colour-aware', '-c', '--complete-filenames', '-i', '--case-insensitive', '-n', '--no-warnings', '-N', '--no-children', '-r', '--remember', '-R', '--renice', '-v', '--version', '-W', '--polling'] },
  sshpass: { value: ['-p', '-f', '-d', '-P'], flags: ['-e', '-v'], noCommand: ['-h', '-V'] },
  'cross-env': { value: [], assignments: true },
  // dotenv-cli: `dotenv -e .env.test -- make build`; `-p NAME` prints a variable.
  dotenv: { value: ['-e', '-v', '-c', '-p'], flags: ['--debug', '--no-expand', '-o', '--override', '--quiet'], noCommand: ['-p', '--help', '-h'] },
  'dotenvx': { value: ['-f', '--env-file', '-e', '--env', '--convention'], flags: ['--overload', '-o', '--quiet', '-q', '--verbose', '--debug', '--strict'] },
  // task spooler: queued, run later here, in the directory it was queued from.
  tsp: { value: ['-L', '-N', '-D', '-W'], flags: ['-n', '-f', '-E', '-g', '-B', '-m'], noCommand: ['-l', '-S', '-t', '-c', '-p', '-i', '-q', '-r', '-w', '-k', '-K', '-C', '-T', '-h', '-V', '-u', '-U', '-o', '-s', '-M'] },
  ts: { value: ['-L', '-N', '-D', '-W'], flags: ['-n', '-f', '-E', '-g', '-B', '-m'], noCommand: ['-l', '-S', '-t', '-c', '-p', '-i', '-q', '-r', '-w', '-k', '-K', '-C', '-T', '-h', '-V', '-u', '-U', '-o', '-s', '-M'] },
  // entr: `ls *.c | entr make build` (argv); `entr -s 'make build'` is a shell string (handled below).
  entr: { value: [], flags: ['-a', '-c', '-d', '-n', '-p', '-r', '-s', '-z', '-x'] },
  // reflex -r '\.c$' -- make build; -s keeps it running as a service.
  // Network and I/O shims around a command (LD_PRELOAD wrappers): the command runs here.
  torsocks: { value: ['-u', '--user', '-p', '--pass', '-a', '--address', '-P', '--port'], flags: ['-i', '--isolate', '-d', '--debug', '-q', '--quiet'], noCommand: ['-h', '--help', '--version', '--shell'] },
  proxychains: { value: ['-f'], flags: ['-q'] },
  proxychains4: { value: ['-f'], flags: ['-q'] },
  eatmydata: { value: [] },
  nocache: { value: ['-n'] },
  trickle: { value: ['-u', '-d', '-w', '-t', '-l', '-n'], flags: ['-s', '-v'], noCommand: ['-h', '-V'] },
  // uvx (uv tool run) [opts] TOOL args: the tool's program runs here.
  uvx: { value: ['--from', '--with', '--with-editable', '--with-requirements', '--python', '-p', '--index', '--default-index', '--index-url', '--extra-index-url', '--cache-dir', '--color', '--directory', '--project'], flags: ['--isolated', '--quiet', '-q', '--verbose', '-v', '--offline', '--no-cache', '-n'], noCommand: ['--help', '-h', '--version', '-V'] },
  // faketime [-m] [-f] TIMESTAMP cmd
  faketime: { value: ['--date-prog'], flags: ['-m', '-f', '--exclude-monotonic'], noCommand: ['-h', '--help', '-v', '--version'], skip: 1 },
  reflex: { value: ['-r', '--regex', '-R', '--inverse-regex', '-g', '--glob', '-G', '--inverse-glob', '-c', '--config', '-d', '--decoration'], flags: ['-s', '--start-service', '-a', '--all', '--only-files', '--only-dirs', '-v', '--verbose', '-e', '--sequential'], noCommand: ['-c', '--config', '-h', '--help'] },
};

/**
 * Tools whose subcommand runs the rest as a command here, in their environment (`poetry run make`,
 * `uv run --with x make`, `direnv exec . make`, `bundle exec make`, `mise exec -- make`): tool -> subcommand
 * -> grammar from the subcommand on. A tool's own options before the subcommand are skipped.
 */
export const SUBCOMMAND_WRAPPERS: Record<string, Record<string, Spec>> = {
  poetry: { run: { value: ['-C', '--directory', '-P', '--project'], chdir: ['-C', '--directory'] } },
  pipenv: { run: { value: [] } },
  // pipx run PACKAGE args: the package's own program (its name, mostly) runs here.
  pipx: { run: { value: ['--spec', '--python', '--index-url', '-i', '--pip-args', '--backend'], flags: ['--no-cache', '--verbose', '-v', '--quiet', '-q', '--system-site-packages', '--path', '--pypackages'] } },
  volta: { run: { value: ['--node', '--npm', '--yarn', '--pnpm', '--env'], flags: ['--bundled-npm', '--no-yarn', '--no-pnpm', '--verbose', '--quiet'] } },
  uv: {
    run: {
      value: ['--with', '--with-editable', '--with-requirements', '--extra', '--group', '--no-group', '--package', '--python', '-p', '--directory', '--project', '--env-file', '--index', '--default-index', '--index-url', '--extra-index-url', '--find-links', '-f', '--cache-dir', '--config-file', '--color', '--script', '--module', '-m'],
      flags: ['--all-extras', '--no-dev', '--only-dev', '--frozen', '--locked', '--isolated', '--no-project', '--no-sync', '--active', '--quiet', '-q', '--verbose', '-v', '--offline', '--no-cache', '-n', '--exact', '--no-env-file', '--gui-script'],
      chdir: ['--directory'],
    },
  },
  pdm: { run: { value: ['-p', '--project', '-g', '--global', '-L', '--lockfile'], flags: ['-v', '-q', '-s', '--site-packages', '--list', '-l', '--json', '-j', '--recreate', '--venv'] } },
  hatch: { run: { value: ['-e', '--env'] } },
  rye: { run: { value: ['--pyproject'] } },
  pixi: {
    run: { value: ['-e', '--environment', '--manifest-path'], flags: ['--frozen', '--locked', '-v', '-q', '--clean-env'] },
    // pixi exec [-s SPEC]... CMD: in a temporary environment, here.
    exec: { value: ['-s', '--spec', '-c', '--channel', '--platform'], flags: ['--force-reinstall', '--list', '-v', '-q'] },
  },
  conda: { run: { value: ['-n', '--name', '-p', '--prefix', '--cwd'], flags: ['--no-capture-output', '--live-stream', '-v', '--verbose', '--dev', '--debug-wrapper-scripts'], chdir: ['--cwd'] } },
  mamba: { run: { value: ['-n', '--name', '-p', '--prefix', '--cwd'], flags: ['--no-capture-output', '--live-stream'], chdir: ['--cwd'] } },
  micromamba: { run: { value: ['-n', '--name', '-p', '--prefix', '--cwd', '-a', '--attach'], flags: ['--clean-env', '-d', '--detach'], chdir: ['--cwd'] } },
  bundle: { exec: { value: [], flags: ['--keep-file-descriptors', '--gemfile'] } },
  // devbox run CMD (a script of devbox.json by that name is its own file; the command is judged either way).
  devbox: { run: { value: ['-c', '--config', '-e', '--env', '--env-file'], flags: ['-q', '--quiet', '--pure', '--omit-nix-env', '--recompute'] } },
  direnv: { exec: { value: [], skip: 1 } },
  // mise exec TOOL@VERSION... -- cmd: the tool specs are positionals up to `--` (see unwrapSubcommand).
  mise: { exec: { value: ['-C', '--cd', '-j', '--jobs', '-c', '--command'], chdir: ['-C', '--cd'], scriptOption: ['-c', '--command'] }, x: { value: ['-C', '--cd', '-j', '--jobs', '-c', '--command'], chdir: ['-C', '--cd'], scriptOption: ['-c', '--command'] } },
  asdf: { exec: { value: [] } },
  rbenv: { exec: { value: [] } },
  pyenv: { exec: { value: [] } },
  nodenv: { exec: { value: [] } },
  nix: { develop: { value: [] }, shell: { value: [] }, run: { value: [] } },
};

/** Terminal emulators: the words after this option are the command (`xterm -e make build`). */
const TERMINAL_ARGV: Record<string, string[]> = {
  xterm: ['-e'], uxterm: ['-e'], urxvt: ['-e'], rxvt: ['-e'], 'rxvt-unicode': ['-e'], st: ['-e'], alacritty: ['-e', '--command'], konsole: ['-e'],
  'gnome-terminal': ['--', '-x', '--execute'], 'xfce4-terminal': ['-x', '--execute'], terminator: ['-x', '--execute'], 'mate-terminal': ['-x', '--execute'], tilix: ['-x'],
  wezterm: ['--'], kitty: ['--'], foot: ['--'],
};
/** Terminal emulators: the value of this option is a command string (`gnome-terminal -e 'make build'`). */
const TERMINAL_STRING: Record<string, string[]> = {
  'gnome-terminal': ['-e', '--command'], 'xfce4-terminal': ['-e', '--command'], terminator: ['-e', '--command'], 'mate-terminal': ['-e', '--command'], lxterminal: ['-e', '--command'], tilix: ['-e', '--command'], 'qterminal': ['-e', '--execute'],
};

/** bubblewrap's options with two values (`--bind SRC DEST`) and with one; the command follows them. */
const BWRAP_TWO = new Set(['--bind', '--bind-try', '--dev-bind', '--dev-bind-try', '--ro-bind', '--ro-bind-try', '--symlink', '--setenv', '--file', '--bind-data', '--ro-bind-data', '--chmod', '--overlay-src']);
const BWRAP_ONE = new Set(['--chdir', '--tmpfs', '--proc', '--dev', '--dir', '--unsetenv', '--uid', '--gid', '--hostname', '--cap-add', '--cap-drop', '--lock-file', '--sync-fd', '--info-fd', '--json-status-fd', '--block-fd', '--userns-block-fd', '--userns', '--userns2', '--pidns', '--seccomp', '--add-seccomp-fd', '--exec-label', '--file-label', '--remount-ro', '--perms', '--size', '--argv0', '--args', '--mqueue', '--tmp-overlay', '--ro-overlay', '--overlay']);

function joined(fields: Field[]): Field {
  return { value: fields.map((a) => a.value).join(' '), known: fields.every((a) => a.known) };
}

/** Packages whose main program is not named after the attribute (`nix run nixpkgs#playwright-test`). */
const NIX_MAIN_PROGRAM: Record<string, string> = { 'playwright-test': 'playwright', 'playwright-driver': 'playwright', 'google-chrome': 'google-chrome-stable', 'android-studio': 'android-studio' };
/** nix's options that take a value (`--override-input a b` takes two). */
const NIX_VALUE = new Set(['--option', '--override-input', '--inputs-from', '--expr', '--file', '-f', '--arg', '--argstr', '--profile', '--eval-store', '--store', '-I', '--include', '--update-input', '--reference-lock-file', '--output-lock-file']);

/**
 * `nix run nixpkgs#playwright-test -- test`: the package's main program (named after the attribute, the
 * last part of `pkgs.x.y`, unless NIX_MAIN_PROGRAM says otherwise) with the arguments after `--`. An
 * installable without an attribute (`nix run .`, `nix run github:o/r`) runs a flake's default app: not
 * known from the line.
 */
function nixRun(rest: Field[]): Unwrapped {
  let i = 1;
  let installable: Field | undefined;
  for (; i < rest.length; i++) {
    const f = rest[i]!;
    if (!f.known) return { kind: 'none' };
    if (f.value === '--') break;
    if (f.value.startsWith('-')) {
      i += f.value === '--override-input' || f.value === '--arg' || f.value === '--argstr' || f.value === '--option' ? 2 : NIX_VALUE.has(f.value) ? 1 : 0;
      continue;
    }
    if (!installable) installable = f;
  }
  const hash = installable?.value.indexOf('#') ?? -1;
  if (!installable || hash < 0) return { kind: 'none' };
  const attr = installable.value.slice(hash + 1).split('.').at(-1)!.replace(/\^.*$/, '');
  if (!attr) return { kind: 'none' };
  const args = rest.slice(i + 1);
  return { kind: 'run', via: `nix run ${installable.value}`, argv: [{ value: NIX_MAIN_PROGRAM[attr] ?? attr, known: true }, ...args] };
}

function unwrapOther(call: Call): Unwrapped {
  const program = call.name;
  const argv = call.fields;
  const sub = SUBCOMMAND_WRAPPERS[program];
  if (sub) {
    const at = argv.findIndex((a, i) => i > 0 && a.known && !a.value.startsWith('-') && a.value in sub);
    if (at < 0) return { kind: 'none' };
    const rest = argv.slice(at);
    if (program === 'nix' && argv[at]!.value === 'run') return nixRun(rest);
    if (program === 'mise' || program === 'nix') {
      // mise exec node@20 -- make; nix develop .#x -c make: the command follows `--` (mise) or -c (nix).
      const marks = program === 'nix' ? ['-c', '--command'] : ['--'];
      const m = rest.findIndex((a) => a.known && marks.includes(a.value));
      if (m < 0) return program === 'mise' ? unwrapWith(program, rest, sub[argv[at]!.value]!) : { kind: 'none' };
      return { kind: 'run', via: `${program} ${argv[at]!.value}`, argv: rest.slice(m + 1) };
    }
    return unwrapWith(`${program} ${argv[at]!.value}`, rest, sub[argv[at]!.value]!);
  }
  if (program === 'bwrap') {
    let i = 1;
    let cwd: Field | undefined;
    while (i < argv.length && argv[i]!.known && argv[i]!.value.startsWith('--')) {
      const v = argv[i]!.value;
      if (v === '--') {
        i++;
        break;
      }
      if (v === '--chdir') cwd = argv[i + 1];
      i += BWRAP_TWO.has(v) ? 3 : BWRAP_ONE.has(v) ? 2 : 1;
    }
    const inner = argv.slice(i);
    return inner.length ? { kind: 'run', via: 'bwrap', argv: inner, ...(cwd ? { cwd } : {}) } : { kind: 'none' };
  }
  if (program === 'socat') {
    // EXEC:'make build' splits the words; SYSTEM:'make build' runs them with sh -c; `,opt` ends the address.
    const items: Unwrapped[] = [];
    for (const a of argv.slice(1)) {
      const m = /^(exec|system):(.*)$/is.exec(a.value);
      if (m) items.push({ kind: 'script', via: `socat ${m[1]!.toUpperCase()}`, text: { value: m[2]!.replace(/,[a-z-]+(=[^,]*)?$/i, ''), known: a.known } });
    }
    return items.length ? { kind: 'many', items } : { kind: 'none' };
  }
  if (program === 'sg') {
    // sg GROUP [-c] 'command string'
    const rest = argv.slice(2).filter((a) => !(a.known && a.value === '-c'));
    return rest.length ? { kind: 'script', via: 'sg', text: joined(rest) } : { kind: 'none' };
  }
  const strOpts = TERMINAL_STRING[program] ?? [];
  const argvOpts = TERMINAL_ARGV[program] ?? [];
  for (let i = 1; i < argv.length; i++) {
    const a = argv[i]!;
    if (!a.known) continue;
    const eq = a.value.indexOf('=');
    const name = eq > 0 ? a.value.slice(0, eq) : a.value;
    if (strOpts.includes(name)) {
      const text = eq > 0 ? { value: a.value.slice(eq + 1), known: true } : argv[i + 1];
      return text ? { kind: 'script', via: `${program} ${name}`, text } : { kind: 'none' };
    }
    if (argvOpts.includes(a.value)) {
      const inner = argv.slice(i + 1);
      return inner.length ? { kind: 'run', via: `${program} ${a.value}`, argv: inner } : { kind: 'none' };
    }
  }
  // kitty, foot, wezterm start: the command is the first word that is not an option (unknown ones skipped).
  if (program === 'kitty' || program === 'foot') {
    const i = argv.findIndex((a, j) => j > 0 && !(a.known && a.value.startsWith('-')));
    return i > 0 ? { kind: 'run', via: program, argv: argv.slice(i) } : { kind: 'none' };
  }
  return { kind: 'none' };
}

/** `spec` read from argv[0] on (the wrapper's or the subcommand's name first). */
function unwrapWith(via: string, argv: Field[], spec: Spec): Unwrapped {
  const s = scan(argv, spec);
  if (!s) return { kind: 'none' };
  const chdirOpt = s.opts.filter(([n]) => spec.chdir?.includes(n)).pop();
  const cwd = chdirOpt ? (chdirOpt[1] ?? { value: '', known: false }) : undefined;
  const scriptOpt = s.opts.find(([n]) => spec.scriptOption?.includes(n));
  if (scriptOpt) return { kind: 'script', via: `${via} ${scriptOpt[0]}`, text: scriptOpt[1] ?? { value: '', known: false }, ...(cwd ? { cwd } : {}) };
  const inner = argv.slice(s.index);
  return inner.length ? { kind: 'run', via, argv: inner, env: s.env, ...(cwd ? { cwd } : {}) } : { kind: 'none' };
}

/**
 * faketime [-m] [-f] [--exclude-monotonic] [--date-prog PROG] TIMESTAMP PROGRAM ARGS: faketime takes
 * its own options by name and the next word, whatever it looks like (`+1d`, `-15m`), as the timestamp.
 */
function faketime(argv: Field[]): Unwrapped {
  let i = 1;
  for (; i < argv.length; i++) {
    const f = argv[i]!;
    if (!f.known) return { kind: 'run', via: 'faketime', argv: [{ value: 'faketime', known: false }] };
    if (['-h', '--help', '-v', '--version'].includes(f.value)) return { kind: 'none' };
    if (f.value === '--date-prog') i++;
    else if (!['-m', '-f', '--exclude-monotonic'].includes(f.value)) break;
  }
  const inner = argv.slice(i + 1);
  return inner.length ? { kind: 'run', via: 'faketime', argv: inner } : { kind: 'none' };
}

/**
 * Programs a wrapper starts besides its command, named by a variable the line sets for it: `sudo -A` runs
 * $SUDO_ASKPASS, `sudo -s` runs $SHELL (with `-c COMMAND`), script(1) runs $SHELL. Each value is a program.
 */
const ENV_PROGRAMS: Record<string, { options?: readonly string[]; vars: readonly string[] }[]> = {
  sudo: [
    { options: ['-A', '--askpass'], vars: ['SUDO_ASKPASS'] },
    { options: ['-s', '--shell'], vars: ['SHELL'] },
  ],
  script: [{ vars: ['SHELL'] }],
};

function unwrapSpec(call: Call): Unwrapped {
  const main = unwrapSpecCommand(call);
  const envPrograms = ENV_PROGRAMS[call.name];
  if (!envPrograms) return main;
  const spec = WRAPPER_SPECS[call.name];
  // The wrapper's own options: the words before its command.
  const own = call.fields.slice(1, spec ? (scan(call.fields, spec)?.index ?? call.fields.length) : call.fields.length);
  const has = (options: readonly string[]) =>
    own.some((f) => f.known && (options.includes(f.value) || (/^-[A-Za-z]+$/.test(f.value) && options.some((o) => /^-[A-Za-z]$/.test(o) && f.value.includes(o[1]!)))));
  const extra: Unwrapped[] = [];
  for (const e of envPrograms) {
    if (e.options && !has(e.options)) continue;
    for (const v of e.vars) {
      const value = envField(call, v);
      if (value === undefined || (value.known && value.value.trim() === '')) continue;
      // A shell there is the shell the wrapper starts anyway (`sudo -s`, `script` with the user's own SHELL).
      if (!(v === 'SHELL' && value.known && isShellProgram(value.value))) extra.push({ kind: 'run', via: `${call.name} $${v}`, argv: [value] });
      break;
    }
  }
  return extra.length === 0 ? main : { kind: 'many', items: main.kind === 'none' ? extra : [main, ...extra] };
}

function unwrapSpecCommand(call: Call): Unwrapped {
  const main = unwrapSpecCommandMain(call);
  const spec = WRAPPER_SPECS[call.name];
  if (!spec?.pipeOption) return main;
  const s = scan(call.fields, spec);
  if (!s) return main;
  // `strace -o '|cmd'`: the output goes to a shell command started here (popen), beside the traced one.
  const pipes: Unwrapped[] = [];
  for (const [n, v] of s.opts) {
    // A value made at run time is taken for the file it nearly always is (`strace -o "$LOG" make`).
    if (!v?.known || !spec.pipeOption.includes(n)) continue;
    if (/^[|!]/.test(v.value)) pipes.push({ kind: 'script', via: `${call.name} ${n}`, text: { value: v.value.slice(1), known: true } });
  }
  if (pipes.length === 0) return main;
  return { kind: 'many', items: main.kind === 'none' ? pipes : [...pipes, main] };
}

function unwrapSpecCommandMain(call: Call): Unwrapped {
  const program = call.name;
  const argv = call.fields;
  const spec = WRAPPER_SPECS[program];
  if (!spec) return unwrapOther(call);
  if (program === 'faketime') return faketime(argv);
  // taskset -c LIST replaces the MASK positional.
  const effective = program === 'taskset' && argv.some((a) => a.known && /^(-[a-z]*c|--cpu-list)/.test(a.value)) ? { ...spec, skip: 0 } : spec;
  const s = scan(argv, effective);
  if (!s) return { kind: 'none' };
  const chdirOpt = s.opts.filter(([n]) => spec.chdir?.includes(n)).pop();
  const cwd = chdirOpt ? (chdirOpt[1] ?? { value: '', known: false }) : undefined;
  const scriptOpt = s.opts.find(([n]) => spec.scriptOption?.includes(n));
  if (scriptOpt) {
    const text = scriptOpt[1] ?? { value: '', known: false };
    if (program === 'env') {
      // env -S 'make build' args...: the string is split into words, the rest appended.
      const joined = [text, ...argv.slice(s.index)];
      return { kind: 'script', via: 'env -S', text: { value: joined.map((a) => a.value).join(' '), known: joined.every((a) => a.known) }, ...(cwd ? { cwd } : {}) };
    }
    return { kind: 'script', via: `${program} ${scriptOpt[0]}`, text, ...(cwd ? { cwd } : {}) };
  }
  const inner = argv.slice(s.index);
  if (inner.length === 0) {
    // fakeroot alone starts a shell reading stdin.
    return program === 'fakeroot' ? { kind: 'stdin-script', via: 'fakeroot' } : { kind: 'none' };
  }
  if (program === 'entr' && s.opts.some(([n]) => n === '-s')) {
    return { kind: 'script', via: 'entr -s', text: { value: inner.map((a) => a.value).join(' '), known: inner.every((a) => a.known) } };
  }
  if (program === 'chroot') return { kind: 'run', via: program, argv: inner, cwdUnknown: true };
  if (program === 'su' || program === 'runuser') {
    // su permutes its arguments: `su koder -c 'make build'` (the -c after the user).
    const c = argv.findIndex((a, i) => i > 0 && a.known && ['-c', '--command', '--session-command'].includes(a.value));
    if (c > 0 && argv[c + 1]) return { kind: 'script', via: `${program} -c`, text: argv[c + 1]! };
    const eq = argv.find((a) => a.known && /^--(command|session-command)=/.test(a.value));
    if (eq) return { kind: 'script', via: `${program} --command`, text: { value: eq.value.slice(eq.value.indexOf('=') + 1), known: true } };
    // `runuser -u koder -- make build`: with -u, runuser runs the command itself, not through a shell.
    if (program === 'runuser' && s.opts.some(([n]) => n === '-u' || n === '--user')) return { kind: 'run', via: 'runuser -u', argv: inner[0]?.known && inner[0].value === '--' ? inner.slice(1) : inner };
    return { kind: 'none' };
  }
  return { kind: 'run', via: program, argv: inner, env: s.env, ...(cwd ? { cwd } : {}) };
}

export const wrappers: ProgramModule = {
  family: 'wrappers',
  names: [...Object.keys(WRAPPER_SPECS), ...Object.keys(SUBCOMMAND_WRAPPERS), ...new Set([...Object.keys(TERMINAL_ARGV), ...Object.keys(TERMINAL_STRING)]), 'bwrap', 'socat', 'sg'],
  unwrap: unwrapSpec,
  examples: {
    match: [
      { line: 'sudo -u root make build', runs: 'make build' },
      { line: 'SUDO_ASKPASS=./askpass.sh sudo -A true', runs: './askpass.sh' },
      { line: 'SHELL=./build.sh sudo -s', runs: './build.sh' },
      { line: 'SHELL=./build.sh script -q /dev/null', runs: './build.sh' },
      { line: 'runuser -u koder -- make build', runs: 'make build' },
      { line: 'pixi exec -s gnumake make build', runs: 'make build' },
      { line: 'env --chd=engines/lang/koda make build', runs: 'make build', in: '/home/koder/dev/koder/engines/lang/koda' },
      { line: 'env -C engines/lang/koda make build', runs: 'make build', in: '/home/koder/dev/koder/engines/lang/koda' },
      { line: 'timeout --sig=KILL 60 make build', runs: 'make build' },
      { line: 'bear -- make build-safe', runs: 'make build-safe' },
      { line: 'compiledb make build', runs: 'make build' },
      { line: 'scan-build -o out make build', runs: 'make build' },
      { line: 'numactl --cpunodebind=0 --membind=0 make build', runs: 'make build' },
      { line: 'numactl -N 0 make build', runs: 'make build' },
      { line: 'prlimit --as=4000000000 make build', runs: 'make build' },
      { line: 'cgexec -g cpu,memory:build make build', runs: 'make build' },
      { line: 'chronic -e make build', runs: 'make build' },
      { line: 'ifne -n make build', runs: 'make build' },
      { line: 'fakeroot -- make build', runs: 'make build' },
      { line: 'setpriv --reuid=1000 --init-groups make build', runs: 'make build' },
      { line: 'rlwrap -a make build', runs: 'make build' },
      { line: 'sshpass -p secret ssh localhost make build', runs: 'ssh localhost make build' },
      { line: 'cross-env NODE_ENV=test make build', runs: 'make build' },
      { line: 'dotenv -e .env.test -- make build', runs: 'make build' },
      { line: 'tsp -n make build', runs: 'make build' },
      { line: "entr -s 'make build'", runs: 'make build' },
      { line: "reflex -r '\\.c$' -- make build", runs: 'make build' },
      { line: 'torsocks make build', runs: 'make build' },
      { line: 'proxychains4 -q make build', runs: 'make build' },
      { line: 'eatmydata make build', runs: 'make build' },
      { line: "faketime '2020-01-01 00:00:00' make build", runs: 'make build' },
      { line: "faketime -f '+1d' make build", runs: 'make build' },
      { line: 'faketime -15m make build', runs: 'make build' },
      { line: 'nsenter -t 1 -m -u make build', runs: 'make build' },
      { line: 'trickle -d 100 make build', runs: 'make build' },
      { line: 'nocache make build', runs: 'make build' },
      { line: 'bwrap --bind / / --dev /dev --chdir engines/lang/koda make build', runs: 'make build', in: '/home/koder/dev/koder/engines/lang/koda' },
      { line: 'poetry run make build', runs: 'make build' },
      { line: 'uvx playwright screenshot http://localhost x.png', runs: 'playwright screenshot http://localhost x.png' },
      { line: 'pipx run --spec playwright playwright screenshot http://x x.png', runs: 'playwright screenshot http://x x.png' },
      { line: 'volta run --node 20 npx playwright test', runs: 'npx playwright test' },
      { line: 'uv run --with requests make build', runs: 'make build' },
      { line: 'uv run --directory engines/lang/koda make build', runs: 'make build', in: '/home/koder/dev/koder/engines/lang/koda' },
      { line: 'conda run -n base --cwd engines/lang/koda make build', runs: 'make build', in: '/home/koder/dev/koder/engines/lang/koda' },
      { line: 'bundle exec make build', runs: 'make build' },
      { line: 'direnv exec . make build', runs: 'make build' },
      { line: 'mise exec node@20 -- make build', runs: 'make build' },
      { line: 'nix develop .#koda -c make build', runs: 'make build' },
      { line: 'nix run nixpkgs#playwright-test -- test --headed', runs: 'playwright test --headed' },
      { line: 'nix run --impure github:nixos/nixpkgs/nixos-24.05#chromium -- --headless --dump-dom x', runs: 'chromium --headless --dump-dom x' },
      { line: 'xterm -geometry 80x24 -e make build', runs: 'make build' },
      { line: 'gnome-terminal -- make build', runs: 'make build' },
      { line: "gnome-terminal -e 'make build'", runs: 'make build' },
      { line: "socat - EXEC:'make build'", runs: 'make build' },
      { line: "su koder -c 'make build'", runs: 'make build' },
      { line: "sg koder 'make build'", runs: 'make build' },
      { line: "strace -f -o '|make build' true", runs: 'make build' },
      { line: "strace --output='!make build' true", runs: 'make build' },
    ],
    not_match: [
      { line: 'sudo -l make build', runs: 'make build' },
      { line: 'strace -o make.trace true', runs: 'make.trace' },
      { line: 'SUDO_ASKPASS=./askpass.sh sudo true', runs: './askpass.sh' },
      { line: 'SHELL=./x.sh sudo make -s build', runs: './x.sh' },
      { line: 'numactl --hardware', runs: 'make build' },
      { line: 'compiledb -n make build', runs: 'make build' },
      { line: 'prlimit --pid 42 --nofile=1024', runs: 'make build' },
      { line: 'tsp -l', runs: 'make build' },
      { line: 'poetry show make', runs: 'make build' },
      { line: 'uv pip install make', runs: 'make build' },
      { line: 'xterm -title make', runs: 'make build' },
    ],
  },
};
