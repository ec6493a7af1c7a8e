// Programs that run the rest of their argv as a command, here: `sudo make`, `env -C dir make`, `timeout 60
// make`, `nice`, `bear -- make`, `numactl -N0 make`, `chronic make`, `sshpass -p x ssh …`. Each is one
// grammar (its options, which take a value, which set the directory, which mean nothing runs); the walker
// judges the inner command, not the wrapper's name.
import { scan, type Spec } from './grammar.js';
import type { Call } from '../walk-state.js';
import type { ProgramModule, Unwrapped } from './types.js';

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
  strace: { value: ['-o', '-e', '-p', '-s', '-u', '-E', '-I', '-a', '-b', '-O', '-S', '-P', '-X'] },
  ltrace: { value: ['-o', '-e', '-p', '-s', '-u', '-a', '-n', '-l', '-L'] },
  valgrind: { value: [] },
  'systemd-run': {
    value: ['-u', '--unit', '-p', '--property', '-E', '--setenv', '-M', '--machine', '--description', '--slice', '-H', '--host', '--working-directory', '--uid', '--gid', '--nice'],
    flags: ['--user', '--scope', '--wait', '--pipe', '--pty', '--quiet', '--same-dir', '--collect', '--no-block'],
    chdir: ['--working-directory'],
  },
  'systemd-inhibit': { value: ['--what', '--who', '--why', '--mode'] },
  sg: { value: [], skip: 1 },
  'nix-shell': { value: ['-p', '--packages', '-A', '--attr', '-I', '--arg', '--argstr'], scriptOption: ['--run', '--command'] },
  // A virtual display around a command: the command is judged (and decides the route), and so is xvfb-run.
  'xvfb-run': { value: ['-n', '--server-num', '-e', '--error-file', '-f', '--auth-file', '-s', '--server-args', '-p', '--xauth-protocol', '-w', '--wait'], flags: ['-a', '--auto-servernum', '-d', '--auto-display', '-l', '--listen-tcp'], noCommand: ['-h', '--help'] },
  'dbus-run-session': { value: ['--config-file', '--dbus-daemon'] },
  unshare: { value: ['-S', '--setuid', '-G', '--setgid', '-R', '--root', '-w', '--wd', '--propagation', '--map-user', '--map-group', '--map-users', '--map-groups'], chdir: ['-w', '--wd'] },
  nsenter: { value: ['-t', '--target', '-S', '--setuid', '-G', '--setgid', '-w', '--wd', '-r', '--root', '-m', '-u', '-i', '-n', '-p', '-C', '-U', '-T'], chdir: ['-w', '--wd'] },
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
  reflex: { value: ['-r', '--regex', '-R', '--inverse-regex', '-g', '--glob', '-G', '--inverse-glob', '-c', '--config', '-d', '--decoration'], flags: ['-s', '--start-service', '-a', '--all', '--only-files', '--only-dirs', '-v', '--verbose', '-e', '--sequential'], noCommand: ['-c', '--config', '-h', '--help'] },
};

function unwrapSpec(call: Call): Unwrapped {
  const program = call.name;
  const argv = call.fields;
  const spec = WRAPPER_SPECS[program]!;
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
  return { kind: 'run', via: program, argv: inner, env: s.env, ...(cwd ? { cwd } : {}) };
}

export const wrappers: ProgramModule = {
  family: 'wrappers',
  names: Object.keys(WRAPPER_SPECS),
  unwrap: unwrapSpec,
  examples: {
    match: [
      { line: 'sudo -u root make build', runs: 'make build' },
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
    ],
    not_match: [
      { line: 'sudo -l make build', runs: 'make build' },
      { line: 'numactl --hardware', runs: 'make build' },
      { line: 'compiledb -n make build', runs: 'make build' },
      { line: 'prlimit --pid 42 --nofile=1024', runs: 'make build' },
      { line: 'tsp -l', runs: 'make build' },
    ],
  },
};
