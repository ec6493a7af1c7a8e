// `docker run … IMAGE make build-safe`, `podman exec -w /src dev npx playwright test`, `docker compose run
// web …`: a container on this laptop runs the command, on this laptop's CPU and memory. The command is
// judged as run here; its working directory is the laptop directory bind-mounted at the container's `-w`
// (`-v "$PWD":/src -w /src`), unknown otherwise. A daemon on another host (`-H ssh://…`) is remote.
import type { Field } from '../expand.js';
import { envField, type Call } from '../walk-state.js';
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
  // Global options.
  while (i < argv.length && argv[i]!.known && argv[i]!.value.startsWith('-')) {
    const v = argv[i]!.value;
    const eq = v.indexOf('=');
    const name = eq < 0 ? v : v.slice(0, eq);
    const value = eq < 0 ? argv[i + 1] : { value: v.slice(eq + 1), known: true };
    if ((name === '-H' || name === '--host' || name === '--url') && value?.known && REMOTE_HOST.test(value.value)) remote = true;
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
      while (i < argv.length && argv[i]!.known && argv[i]!.value.startsWith('-')) i += GLOBAL_VALUE.has(argv[i]!.value) ? 2 : 1;
    }
    sub = argv[i];
    if (!sub?.known) return { kind: 'none' };
  }
  if (sub.value !== 'run' && sub.value !== 'exec') return { kind: 'none' };
  if (remote) return { kind: 'none' };
  const via = `${program} ${compose && !isCompose ? 'compose ' : ''}${sub.value}`;
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
  const command = [...(entrypoint ? [entrypoint] : []), ...argv.slice(i + 1)];
  if (command.length === 0) return { kind: 'none' }; // the image's own command: judged by the CLI's name
  const cwd = workdir ? laptopDir(workdir, mounts) : null;
  return {
    kind: 'run',
    via: `${via} ${target.value}`,
    argv: command,
    ...(env.length ? { env } : {}),
    ...(cwd ? { cwd } : { cwdUnknown: true }),
  };
}

/** The laptop directory behind a container directory, through the bind mount that holds it. */
function laptopDir(workdir: Field, mounts: { host: Field; target: string }[]): Field | null {
  if (!workdir.known) return null;
  const w = workdir.value.replace(/\/+$/, '') || '/';
  let best: { host: Field; target: string } | null = null;
  for (const m of mounts) {
    const t = m.target.replace(/\/+$/, '') || '/';
    if ((w === t || w.startsWith(t === '/' ? '/' : `${t}/`)) && (!best || t.length > best.target.length)) best = { host: m.host, target: t };
  }
  if (!best || !best.host.known) return null;
  const rest = w.slice(best.target.length).replace(/^\//, '');
  return { value: rest ? `${best.host.value.replace(/\/+$/, '')}/${rest}` : best.host.value, known: true };
}

/** Options offhost does not know: where the image name and the command start cannot be told. */
function unknownInner(via: string, rest: Field[]): Unwrapped {
  return { kind: 'run', via, argv: [{ value: rest.map((r) => r.value).join(' '), known: false }], cwdUnknown: true };
}

export const containers: ProgramModule = {
  family: 'containers',
  names: ['docker', 'podman', 'nerdctl', 'docker-compose', 'podman-compose'],
  env: ['DOCKER_HOST', 'CONTAINER_HOST'],
  unwrap: containerRun,
  examples: {
    match: [
      { line: 'docker run --rm -v "$PWD":/src -w /src gcc make build', runs: 'make build' },
      { line: 'podman exec -w /src dev make build', runs: 'make build' },
    ],
    not_match: [
      { line: 'docker -H ssh://khost1 run --rm gcc make build', runs: 'make build' },
      { line: 'DOCKER_HOST=ssh://khost1 docker run --rm gcc make build', runs: 'make build' },
      { line: 'docker ps', runs: 'make build' },
    ],
  },
};
