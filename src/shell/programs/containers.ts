// `docker run … IMAGE make build-safe`, `podman exec -w /src dev npx playwright test`, `docker compose run
// web …`, `docker build`, `docker compose up`, `incus exec local:NAME -- …`: a container on this laptop
// runs the command (or its image's entrypoint, its Dockerfile's RUN steps, its compose services:
// container-files.ts), on this laptop's CPU and memory. The command is
// judged as run here; its working directory is the laptop directory bind-mounted at the container's `-w`
// (`-v "$PWD":/src -w /src`), unknown otherwise. A daemon on another host (`-H ssh://…`) is remote.
import type { Field } from '../expand.js';
import { envField, resolveDir, type Call } from '../walk-state.js';
import { OPAQUE_CONTAINER, type ContainerView } from '../container-view.js';
import { buildUnwrap, composeUnwrap, imageCommand } from './container-files.js';
import type { ProgramModule, Unwrapped } from './types.js';


/** Options of `run`/`exec`/`compose run` that take a value; any other option must be a known flag. */
const VALUE_OPTS = new Set([
  '-e', '--env', '--env-file', '-v', '--volume', '-w', '--workdir', '--mount', '--entrypoint', '-u', '--user', '--name', '-p', '--publish',
  '--network', '--net', '--platform', '-l', '--label', '--label-file', '--cpus', '-c', '--cpu-shares', '--cpuset-cpus', '-m', '--memory',
  '--memory-swap', '--gpus', '--device', '--add-host', '-h', '--hostname', '--ipc', '--pid', '--restart', '--runtime', '--shm-size', '--tmpfs',
  '--ulimit', '--log-driver', '--log-opt', '--cap-add', '--cap-drop', '--security-opt', '--stop-signal', '--stop-timeout', '--cidfile',
  '--dns', '--dns-search', '--expose', '--link', '--volumes-from', '--pull', '--userns', '--uts', '--cgroupns', '--group-add', '--health-cmd',
  '--detach-keys', '--domainname', '--mac-address', '--ip', '--ip6', '--network-alias', '--pod', '--arch', '--os', '--annotation',
]);
const FLAGS = new Set([
  '--rm', '-d', '--detach', '-i', '--interactive', '-t', '--tty', '-it', '-ti', '--privileged', '--read-only', '-P', '--publish-all', '--init',
  '-q', '--quiet', '--no-deps', '--service-ports', '--use-aliases', '--build', '--remove-orphans', '-T', '--no-TTY', '--sig-proxy', '--oom-kill-disable',
  '--no-healthcheck', '--replace',
]);
/** Global options of the CLI before its subcommand (`docker --context x run`, `docker compose -f f run`). */
const GLOBAL_VALUE = new Set(['-H', '--host', '-c', '--context', '--config', '-l', '--log-level', '-f', '--file', '-p', '--project-name', '--profile', '--env-file', '--project-directory', '--url', '--connection']);

/** A daemon reached over the network: what runs there is not on this laptop. */
const REMOTE_HOST = /^(ssh|tcp|https?):\/\/(?!(localhost|127\.[0-9.]+|\[::1\])(:|\/|$))/;

function containerRun(call: Call): Unwrapped {
  const program = call.name;
  const argv = call.fields;
  let i = 1;
  // A daemon on another host (DOCKER_HOST=ssh://…, CONTAINER_HOST for podman): what runs there is remote.
  // Unknown (`DOCKER_HOST=$(…)`) counts as this machine's daemon.
  const hostVar = envField(call, 'DOCKER_HOST') ?? envField(call, 'CONTAINER_HOST');
  let remote = hostVar?.known === true && REMOTE_HOST.test(hostVar.value);
  const isCompose = program.endsWith('-compose');
  const composeFiles: Field[] = [];
  // Global options.
  while (i < argv.length && argv[i]!.known && argv[i]!.value.startsWith('-')) {
    const v = argv[i]!.value;
    const eq = v.indexOf('=');
    const name = eq < 0 ? v : v.slice(0, eq);
    const value = eq < 0 ? argv[i + 1] : { value: v.slice(eq + 1), known: true };
    if ((name === '-H' || name === '--host' || name === '--url') && value?.known && REMOTE_HOST.test(value.value)) remote = true;
    if (isCompose && (name === '-f' || name === '--file') && value) composeFiles.push(value);
    i += GLOBAL_VALUE.has(name) && eq < 0 ? 2 : 1;
  }
  let sub = argv[i];
  if (!sub?.known) return { kind: 'none' };
  // `docker container run`, `docker compose run`.
  let compose = isCompose;
  if (!isCompose && (sub.value === 'container' || sub.value === 'compose')) {
    compose = sub.value === 'compose';
    i++;
    if (compose) {
      while (i < argv.length && argv[i]!.known && argv[i]!.value.startsWith('-')) {
        const v = argv[i]!.value;
        const eq = v.indexOf('=');
        const name = eq < 0 ? v : v.slice(0, eq);
        if ((name === '-f' || name === '--file') && (eq >= 0 || argv[i + 1])) composeFiles.push(eq >= 0 ? { value: v.slice(eq + 1), known: true } : argv[i + 1]!);
        i += GLOBAL_VALUE.has(name) && eq < 0 ? 2 : 1;
      }
    }
    sub = argv[i];
    if (!sub?.known) return { kind: 'none' };
  }
  // `docker image build`, `docker buildx build`: the build subcommand one word later.
  if (!compose && (sub.value === 'image' || sub.value === 'buildx' || sub.value === 'builder') && argv[i + 1]?.known && /^(build|b)$/.test(argv[i + 1]!.value)) sub = argv[++i]!;
  if (remote) return { kind: 'none' };
  const via = `${program} ${compose && !isCompose ? 'compose ' : ''}${sub.value}`;
  if (!compose && (sub.value === 'build' || sub.value === 'b')) return buildUnwrap(call, argv.slice(i + 1), via);
  if (compose && sub.value === 'up') return composeUp(call, composeFiles, argv.slice(i + 1), via);
  if (sub.value !== 'run' && sub.value !== 'exec') return { kind: 'none' };
  i++;
  const env: [string, Field][] = [];
  const mounts: { host: Field; target: string }[] = [];
  let workdir: Field | null = null;
  let entrypoint: Field | null = null;
  while (i < argv.length) {
    const f = argv[i]!;
    if (!f.known) return unknownInner(via, argv.slice(i));
    if (f.value === '--') {
      i++;
      break;
    }
    if (!f.value.startsWith('-') || f.value === '-') break;
    const eq = f.value.startsWith('--') ? f.value.indexOf('=') : -1;
    const name = eq < 0 ? f.value : f.value.slice(0, eq);
    if (FLAGS.has(name) || /^-[dit]+$/.test(name)) {
      i++;
      continue;
    }
    // A short option with its value attached: `-w/src`, `-v$PWD:/src`, `-eK=V`.
    const attached = !f.value.startsWith('--') && f.value.length > 2 && VALUE_OPTS.has(f.value.slice(0, 2));
    if (!attached && !VALUE_OPTS.has(name)) return unknownInner(via, argv.slice(i)); // cannot tell where the image name is
    const optName = attached ? f.value.slice(0, 2) : name;
    const value = attached ? { value: f.value.slice(2), known: true } : eq < 0 ? argv[i + 1] : { value: f.value.slice(eq + 1), known: true };
    i += attached || eq >= 0 ? 1 : 2;
    if (!value) return { kind: 'none' };
    if (optName === '-w' || optName === '--workdir') workdir = value;
    else if (optName === '--entrypoint') entrypoint = value;
    else if ((optName === '-e' || optName === '--env') && value.known) {
      const k = value.value.indexOf('=');
      if (k > 0) env.push([value.value.slice(0, k), { value: value.value.slice(k + 1), known: true }]);
    } else if (optName === '-v' || optName === '--volume') {
      const parts = value.value.split(':');
      if (parts.length >= 2 && /^[/.~$]/.test(parts[0]!)) mounts.push({ host: { ...value, value: parts[0]! }, target: parts[1]! });
    } else if (optName === '--mount' && value.known) {
      const kv = Object.fromEntries(value.value.split(',').map((p) => [p.slice(0, p.indexOf('=')), p.slice(p.indexOf('=') + 1)]));
      const source = kv.source ?? kv.src;
      const target = kv.target ?? kv.dst ?? kv.destination;
      if ((kv.type ?? 'volume') === 'bind' && source && target) mounts.push({ host: { value: source, known: true }, target });
    }
  }
  // IMAGE (run) or CONTAINER / SERVICE (exec, compose run), then the command.
  const target = argv[i];
  if (!target) return { kind: 'none' };
  const args = argv.slice(i + 1);
  // An image whose entrypoint offhost knows appends the arguments to it (`koalaman/shellcheck FILE` runs
  // shellcheck FILE: a file to check, not a command); a compose service with no command runs its own.
  const known = !entrypoint && sub.value === 'run' && !compose ? imageCommand(target, args) : null;
  if (compose && sub.value === 'run' && !entrypoint && args.length === 0) return composeUnwrap(call, composeFiles, [target], via, null);
  const command = known ?? [...(entrypoint ? [entrypoint] : []), ...args];
  if (command.length === 0) return { kind: 'none' }; // an image offhost does not know, with its own command: judged by the CLI's name
  // `docker exec`, `compose exec`: a container started before, whose mounts this line does not show (a
  // `compose run`'s compose-file volumes are not followed either: paths under them are unknown).
  const shown = sub.value === 'run';
  const container: ContainerView = {
    mounts: shown ? mounts.map((m) => ({ target: m.target, host: hostDir(call, m.host) })) : [],
    workdir: workdir?.known && workdir.value.startsWith('/') ? workdir.value : null,
  };
  return { kind: 'run', via: `${via} ${target.value}`, argv: command, ...(env.length ? { env } : {}), container };
}

/** The laptop directory a bind mount's source names (`"$PWD"`, `.`, `./web`, `~/src`), or null. */
function hostDir(call: Call, host: Field): string | null {
  if (!host.known) return null;
  const home = call.ctx.home;
  const v = host.value === '~' || host.value.startsWith('~/') ? (home === null ? null : home + host.value.slice(1)) : host.value;
  return v === null ? null : resolveDir(call.cwd, { value: v, known: true });
}

const UP_VALUE = new Set(['--exit-code-from', '--scale', '-t', '--timeout', '--pull', '--attach', '--no-attach', '--wait-timeout', '--attach-dependencies']);

/** `docker compose up [OPTIONS] [SERVICE…]`: the selected services (all by default) as the compose file has them. */
function composeUp(call: Call, composeFiles: Field[], args: Field[], via: string): Unwrapped {
  const services: Field[] = [];
  let noStart = false;
  for (let k = 0; k < args.length; k++) {
    const a = args[k]!;
    if (a.known && a.value.startsWith('-')) {
      if (a.value === '--dry-run') return { kind: 'none' };
      if (a.value === '--no-start') noStart = true;
      if (UP_VALUE.has(a.value)) k++;
      continue;
    }
    services.push(a);
  }
  const u = composeUnwrap(call, composeFiles, services, via, null);
  // `--no-start` creates the containers (building what has a build:) but runs none of them.
  if (noStart && u.kind === 'many') return { kind: 'many', items: u.items.filter((x) => x.kind === 'many') };
  return u;
}

/** Options offhost does not know: where the image name and the command start cannot be told. */
function unknownInner(via: string, rest: Field[]): Unwrapped {
  return { kind: 'run', via, argv: [{ value: rest.map((r) => r.value).join(' '), known: false }], container: OPAQUE_CONTAINER };
}

const INCUS_VALUE = new Set(['--project', '--user', '--group', '--cwd', '--env', '--mode', '--remote']);

/**
 * `incus exec local:NAME -- CMD` (and `lxc`): the `local:` remote is this laptop's own daemon, so its
 * instances run on the laptop; the command is judged as run here, in `--cwd` (the monorepo is bind-mounted
 * at the same path, POLICY R6), else in an unknown directory. Any other remote, or none (the policy's
 * `incus exec …` that talks to a test VM), runs elsewhere: nothing here.
 */
function incusRun(call: Call): Unwrapped {
  const argv = call.fields;
  let i = 1;
  while (argv[i]?.known && argv[i]!.value.startsWith('-')) i += INCUS_VALUE.has(argv[i]!.value) ? 2 : 1;
  if (!argv[i]?.known || argv[i]!.value !== 'exec') return { kind: 'none' };
  i++;
  const env: [string, Field][] = [];
  let cwd: Field | null = null;
  let instance: Field | null = null;
  for (; i < argv.length; i++) {
    const f = argv[i]!;
    if (f.known && f.value === '--') {
      i++;
      break;
    }
    if (f.known && f.value.startsWith('-')) {
      const eq = f.value.indexOf('=');
      const name = eq < 0 ? f.value : f.value.slice(0, eq);
      const value = eq >= 0 ? { value: f.value.slice(eq + 1), known: true } : INCUS_VALUE.has(name) ? argv[++i] : undefined;
      if (name === '--cwd' && value) cwd = value;
      if (name === '--env' && value?.known && value.value.includes('=')) env.push([value.value.slice(0, value.value.indexOf('=')), { value: value.value.slice(value.value.indexOf('=') + 1), known: true }]);
      continue;
    }
    if (instance) break;
    instance = f;
  }
  if (!instance) return { kind: 'none' };
  // An instance name offhost cannot know may be local:… (fail closed: judged as run here).
  if (instance.known && !/^local:/.test(instance.value)) return { kind: 'none' };
  const command = argv.slice(i);
  if (command.length === 0) return { kind: 'none' };
  return { kind: 'run', via: `${call.name} exec ${instance.value} (an instance on this laptop)`, argv: command, ...(env.length ? { env } : {}), ...(cwd ? { cwd } : { cwdUnknown: true }) };
}

export const containers: ProgramModule = {
  family: 'containers',
  names: ['docker', 'podman', 'nerdctl', 'docker-compose', 'podman-compose', 'incus', 'lxc'],
  env: ['DOCKER_HOST', 'CONTAINER_HOST'],
  unwrap: (call) => (call.name === 'incus' || call.name === 'lxc' ? incusRun(call) : containerRun(call)),
  examples: {
    match: [
      { line: 'docker run --rm -v "$PWD":/src -w /src gcc make build', runs: 'make build' },
      { line: 'podman exec -w /src dev make build', runs: 'make build' },
      { line: 'docker run --rm -v "$PWD":/e2e -w /e2e cypress/included:13.6.0', runs: 'cypress run' },
      { line: 'docker run -d -p 4444:4444 selenium/standalone-chrome', runs: 'selenium-server standalone' },
      { line: 'docker run --rm docker.io/koalaman/shellcheck:stable scripts/build.sh', runs: 'shellcheck scripts/build.sh' },
      { line: 'incus exec local:koda -- make build', runs: 'make build' },
      { line: 'incus exec local:koda --cwd /home/koder/dev/koder/engines/lang/koda -- make build', runs: 'make build', in: '/home/koder/dev/koder/engines/lang/koda' },
    ],
    not_match: [
      { line: 'docker -H ssh://khost1 run --rm gcc make build', runs: 'make build' },
      { line: 'DOCKER_HOST=ssh://khost1 docker run --rm gcc make build', runs: 'make build' },
      { line: 'docker ps', runs: 'make build' },
      { line: 'incus exec koda -- make build', runs: 'make build' },
      { line: 'incus exec khost1:koda -- make build', runs: 'make build' },
    ],
  },
};
