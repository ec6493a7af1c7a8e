// What a container on this laptop runs beyond its command line: an image's own entrypoint and default
// command (the images agents reach for to test: Cypress, Selenium, browserless, an Android emulator...),
// a Dockerfile's RUN instructions (`docker build`), and a compose file's services (`docker compose up`).
// All of it runs on the laptop's CPU and memory. Files are read through the walker's file access only.
import { posix } from 'node:path';
import type { Field } from '../expand.js';
import type { YamlValue } from '../mini-yaml.js';
import { readMiniYaml } from './task.js';
import { nearest, searchFrom } from '../script-files.js';
import { positionAt } from '../../errors.js';
import { resolveDir, UnreadableScriptError, type Call } from '../walk-state.js';
import type { Unwrapped } from './types.js';
import { OPAQUE_CONTAINER, type ContainerView } from '../container-view.js';

/**
 * Images whose entrypoint or default command is itself heavy or is a tool the rules judge, as the argv
 * the rules know it by: their documented ENTRYPOINT (arguments after the image are appended to it) or
 * CMD (replaced by them). The Selenium and browserless images start a browser (and Xvfb) whatever they are
 * given; budtmo/docker-android boots an Android emulator.
 */
const IMAGES: { pattern: RegExp; entrypoint?: string[]; cmd?: string[] }[] = [
  { pattern: /^cypress\/included$/, entrypoint: ['cypress', 'run'] },
  { pattern: /^(selenium|seleniarm)\/(standalone|node)-[a-z-]+$/, entrypoint: ['selenium-server', 'standalone'] },
  { pattern: /^(ghcr\.io\/)?browserless\/[a-z-]+$/, entrypoint: ['chromium', '--headless'] },
  { pattern: /^zenika\/alpine-chrome$/, entrypoint: ['chromium-browser', '--headless'] },
  { pattern: /^testcafe\/testcafe$/, entrypoint: ['testcafe'] },
  { pattern: /^(budtmo\/docker-android|halimqarroum\/docker-android)(-[a-z0-9.-]+)?$/, entrypoint: ['emulator', '-avd', 'docker-android'] },
  { pattern: /^koalaman\/shellcheck$/, entrypoint: ['shellcheck'] },
  { pattern: /^mvdan\/shfmt$/, entrypoint: ['shfmt'] },
  { pattern: /^hadolint\/hadolint$/, cmd: ['hadolint', '-'] },
];

/** `docker.io/library/foo:1.2@sha256:…` -> `foo`; `ghcr.io/o/x:tag` -> `ghcr.io/o/x`. */
export function imageName(ref: string): string {
  let r = ref.toLowerCase().replace(/@sha256:[0-9a-f]*$/, '');
  const slash = r.lastIndexOf('/');
  const colon = r.lastIndexOf(':');
  if (colon > slash) r = r.slice(0, colon);
  return r.replace(/^(docker\.io|index\.docker\.io|registry-1\.docker\.io)\//, '').replace(/^library\//, '');
}

/** What a container of `image` runs given `args` after the image name: null when offhost does not know the image. */
export function imageCommand(image: Field, args: Field[]): Field[] | null {
  if (!image.known) return null;
  const name = imageName(image.value);
  const known = IMAGES.find((i) => i.pattern.test(name));
  if (!known) return null;
  const words = (ws: string[]) => ws.map((value) => ({ value, known: true }));
  if (known.entrypoint) return [...words(known.entrypoint), ...args];
  return args.length ? args : words(known.cmd ?? []);
}

/** One Dockerfile instruction's RUN command: a script (shell form, heredoc) or an argv (exec form). */
type RunStep = { line: number; script: string } | { line: number; argv: string[] };

/**
 * The RUN instructions of a Dockerfile: continuation lines joined (the `# escape=` directive honoured),
 * comments dropped, `--mount=…`/`--network=…` flags skipped, the exec form (`["make", "build"]`) read
 * as JSON, a heredoc (`RUN <<EOF`) as its body. Null when a RUN cannot be read (its JSON does not parse).
 */
export function dockerfileRuns(text: string): RunStep[] | null {
  const lines = text.split('\n');
  const escape = /^#\s*escape\s*=\s*`/im.test(lines.slice(0, 5).join('\n')) ? '`' : '\\';
  const out: RunStep[] = [];
  for (let n = 0; n < lines.length; n++) {
    const start = n;
    let l = lines[n]!.replace(/\r$/, '');
    if (/^\s*#/.test(l) || !l.trim()) continue;
    while (l.trimEnd().endsWith(escape) && n + 1 < lines.length) {
      l = l.trimEnd().slice(0, -1);
      let next = lines[++n]!.replace(/\r$/, '');
      while (/^\s*#/.test(next) && n + 1 < lines.length) next = lines[++n]!.replace(/\r$/, '');
      l += ` ${next}`;
    }
    const m = /^\s*(?:ONBUILD\s+)?RUN\s+(.*)$/is.exec(l);
    if (!m) continue;
    let rest = m[1]!;
    while (/^--[a-z-]+(=\S*)?\s/i.test(rest)) rest = rest.replace(/^--[a-z-]+(=\S*)?\s+/i, '');
    const here = /^<<(-?)(["']?)([A-Za-z_][A-Za-z0-9_]*)\2\s*(.*)$/.exec(rest);
    if (here) {
      const body: string[] = [];
      while (n + 1 < lines.length && lines[n + 1]!.replace(/\r$/, '').replace(here[1] ? /^\t+/ : /^$/, '') !== here[3]) body.push(lines[++n]!);
      n++;
      // `RUN <<EOF bash` hands the body to that program; plain `RUN <<EOF` runs it as a shell script.
      out.push({ line: start + 1, script: here[4] ? `${here[4]} <<'${here[3]}'\n${body.join('\n')}\n${here[3]}` : body.join('\n') });
      continue;
    }
    if (rest.trimStart().startsWith('[')) {
      try {
        const argv = JSON.parse(rest) as unknown;
        if (!Array.isArray(argv) || !argv.every((a) => typeof a === 'string')) return null;
        out.push({ line: start + 1, argv });
      } catch {
        return null;
      }
      continue;
    }
    out.push({ line: start + 1, script: rest });
  }
  return out;
}

function unknownRun(via: string): Unwrapped {
  return { kind: 'run', via, argv: [{ value: via, known: false }], cwdUnknown: true };
}

/**
 * A build offhost cannot read (a Dockerfile it cannot find or parse, a remote context): its RUN steps
 * would run on this laptop unjudged, so the line is refused with the reason, as an unreadable script is.
 */
function refuse(call: Call, what: string, why: string): never {
  throw new UnreadableScriptError(`offhost cannot judge \`${what}\`: ${why}, and its RUN steps would run on this laptop. Build it on a test VM with \`offhost run\`, or point -f at a Dockerfile offhost can read`, positionAt(call.ctx.text, call.span.start));
}

/** The commands a Dockerfile's RUN steps start, each in a directory of the image (unknown on the laptop). */
export function dockerfileUnwrap(call: Call, file: string | null, via: string): Unwrapped {
  const files = call.ctx.files;
  if (!files) return { kind: 'none' };
  if (file === null) refuse(call, via, 'its Dockerfile cannot be known here');
  const r = files.read(file);
  if (r.kind === 'missing' || r.kind === 'directory') return { kind: 'none' }; // the build fails: nothing runs
  if (r.kind !== 'text') refuse(call, via, `${file} cannot be read (${r.kind === 'unreadable' ? r.why : r.kind})`);
  return dockerfileSteps(call, r.text, file, via);
}

/** The RUN steps of a Dockerfile's text (`file`: where it came from, for messages). */
function dockerfileSteps(call: Call, text: string, file: string, via: string): Unwrapped {
  const steps = dockerfileRuns(text);
  if (steps === null) refuse(call, via, `a RUN instruction of ${file} cannot be read (its exec form is not a JSON list of strings)`);
  const items: Unwrapped[] = steps.map((s) =>
    'script' in s
      ? { kind: 'script', via: `${via}: ${file}:${s.line}`, text: { value: s.script, known: true }, container: OPAQUE_CONTAINER }
      : { kind: 'run', via: `${via}: ${file}:${s.line}`, argv: s.argv.map((value) => ({ value, known: true })), container: OPAQUE_CONTAINER },
  );
  return { kind: 'many', items };
}

const BUILD_FLAGS = new Set(['--no-cache', '--pull', '-q', '--quiet', '--load', '--push', '--rm', '--force-rm', '--squash', '--compress', '--disable-content-trust', '--layers']);

/** `docker build [OPTIONS] CONTEXT`: the Dockerfile (`-f`, else CONTEXT/Dockerfile or Containerfile) and its RUN steps. */
export function buildUnwrap(call: Call, args: Field[], via: string): Unwrapped {
  let file: Field | null = null;
  let context: Field | null = null;
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (!a.known) return call.ctx.files ? refuse(call, via, `its argument ${a.value} cannot be known here`) : { kind: 'none' };
    const v = a.value;
    if (v === '--') continue;
    if (v.startsWith('-') && v !== '-') {
      const eq = v.indexOf('=');
      const attachedFile = eq < 0 && /^-f./.test(v); // `-fDockerfile.ci`, `-f-`
      const name = attachedFile ? '-f' : eq < 0 ? v : v.slice(0, eq);
      const value = eq >= 0 ? { value: v.slice(eq + 1), known: true } : attachedFile ? { value: v.slice(2), known: true } : null;
      if (BUILD_FLAGS.has(name)) continue;
      const got = value ?? (name.length === 2 && v.length > 2 ? null : args[++i] ?? null);
      if ((name === '-f' || name === '--file') && got) file = got;
      continue;
    }
    context = a;
  }
  if (!context) return { kind: 'none' };
  const remote = /^(https?:\/\/|git@|git:\/\/|github\.com\/)/.test(context.value) || context.value === '-';
  const dir = remote ? null : resolveDir(call.cwd, context);
  if (file && /^(-|\/dev\/stdin|\/dev\/fd\/0|\/proc\/self\/fd\/0)$/.test(file.value)) {
    // `docker build -f- . <<'EOF'`: the Dockerfile is standard input, read when it is static text.
    const input = call.stdin();
    if (!input?.known) refuse(call, via, 'its Dockerfile is standard input, which is not static text on the line');
    return dockerfileSteps(call, input.value, '<stdin>', via);
  }
  if (!call.ctx.files) return { kind: 'none' };
  if (file && !file.known) refuse(call, via, `its Dockerfile ${file.value} cannot be known here`);
  if (file) return dockerfileUnwrap(call, resolveDir(call.cwd, file), via);
  if (dir === null) refuse(call, via, remote ? `its context ${context.value} is not on this disk` : `its context ${context.value} cannot be known here`);
  const files = call.ctx.files;
  const found = files && ['Dockerfile', 'Containerfile'].map((n) => `${dir}/${n}`).find((p) => files.read(p).kind === 'text');
  return dockerfileUnwrap(call, found ?? `${dir}/Dockerfile`, via);
}

const COMPOSE_NAMES = ['compose.yaml', 'compose.yml', 'docker-compose.yaml', 'docker-compose.yml'];

/**
 * `docker compose up [SERVICE…]` (and `run SERVICE` with no command): what each selected service's
 * container runs (its `entrypoint`/`command`, else its image's), in the laptop directory bind-mounted at
 * its `working_dir`, and its `build:` Dockerfile's RUN steps. The compose file is `-f`, else found from
 * the directory upwards, as compose finds it. A file outside the YAML reader's subset is unknown.
 */
export function composeUnwrap(call: Call, composeFiles: Field[], services: Field[], via: string, withCommand: Field[] | null): Unwrapped {
  const files = call.ctx.files;
  if (!files) return { kind: 'none' };
  let path: string | null;
  if (composeFiles.length) path = composeFiles[0]!.known ? resolveDir(call.cwd, composeFiles[0]!) : null;
  else path = call.cwd === null ? null : nearest(searchFrom(call.cwd, call.ctx), COMPOSE_NAMES, (p) => (files.read(p).kind === 'text' ? p : null));
  if (path === null) return composeFiles.length || call.cwd === null ? unknownRun(`${via}: a compose file offhost cannot find`) : { kind: 'none' };
  const r = files.read(path);
  if (r.kind === 'missing') return { kind: 'none' };
  if (r.kind !== 'text') return unknownRun(`${via}: ${path} cannot be read`);
  const doc = readMiniYaml(r.text);
  const all = isMap(doc) && isMap(doc.services) ? doc.services : null;
  if (!all) return composeByLines(call, r.text, path, via);
  const dir = posix.dirname(path);
  const selected = new Set<string>();
  const add = (name: string) => {
    if (selected.has(name) || !all[name]) return;
    selected.add(name);
    const deps = (all[name] as Record<string, YamlValue>).depends_on;
    for (const d of Array.isArray(deps) ? deps : isMap(deps) ? Object.keys(deps) : []) if (typeof d === 'string') add(d);
  };
  if (services.some((s) => !s.known)) return unknownRun(`${via}: a service offhost cannot know`);
  if (services.length) for (const s of services) add(s.value);
  else for (const s of Object.keys(all)) add(s);
  const items: Unwrapped[] = [];
  for (const name of selected) {
    const svc = all[name];
    if (!isMap(svc)) continue;
    const sVia = `${via} ${name} (${path})`;
    const build = svc.build;
    if (typeof build === 'string' || isMap(build)) {
      const ctxDir = posix.resolve(dir, typeof build === 'string' ? build : typeof build.context === 'string' ? build.context : '.');
      const df = isMap(build) && typeof build.dockerfile === 'string' ? posix.resolve(ctxDir, build.dockerfile) : `${ctxDir}/Dockerfile`;
      items.push(dockerfileUnwrap(call, df, `${sVia} build`));
    }
    const argvOf = (v: YamlValue | undefined): Field[] | null | 'script' =>
      v === undefined || v === null ? null : Array.isArray(v) ? v.map((x) => ({ value: String(x), known: true })) : 'script';
    const entry = argvOf(svc.entrypoint);
    const cmd = withCommand ?? argvOf(svc.command);
    if (entry === 'script' || cmd === 'script') {
      // A string is split like a shell word list (compose does not start a shell): judged as a script.
      const text = [entry === 'script' ? String(svc.entrypoint) : (entry ?? []).map((f) => f.value).join(' '), cmd === 'script' ? String(svc.command) : (cmd ?? []).map((f) => f.value).join(' ')].filter(Boolean).join(' ');
      items.push({ kind: 'script', via: sVia, text: { value: text, known: true }, ...workdir(svc, dir) });
      continue;
    }
    const image = typeof svc.image === 'string' ? { value: svc.image, known: true } : null;
    const argv = entry ? [...entry, ...(cmd ?? [])] : image ? imageCommand(image, cmd ?? []) ?? cmd : cmd;
    if (argv && argv.length) items.push({ kind: 'run', via: sVia, argv, ...workdir(svc, dir) });
  }
  return { kind: 'many', items };
}

/**
 * A compose file outside the YAML reader's subset (anchors and merge keys are common in compose files):
 * read line by line for what its services run, every service counted (`image:` through the image table,
 * `command:`/`entrypoint:` strings). A `build:` there cannot be followed: refused, as an unreadable build is.
 */
function composeByLines(call: Call, text: string, path: string, via: string): Unwrapped {
  const items: Unwrapped[] = [];
  for (const [n, l] of text.split('\n').entries()) {
    const m = /^\s*(image|command|entrypoint|build)\s*:\s*(.*?)\s*$/.exec(l.replace(/\s#.*$/, ''));
    if (!m) continue;
    const value = m[2]!.replace(/^(["'])(.*)\1$/, '$2');
    const at = `${via} (${path}:${n + 1})`;
    if (m[1] === 'build') refuse(call, via, `${path}:${n + 1} has a build: offhost cannot follow in YAML it does not read`);
    if (m[1] === 'image') {
      const argv = imageCommand({ value, known: true }, []);
      if (argv) items.push({ kind: 'run', via: at, argv, container: OPAQUE_CONTAINER });
    } else if (value && !value.startsWith('[')) items.push({ kind: 'script', via: at, text: { value, known: true }, container: OPAQUE_CONTAINER });
    else if (value.startsWith('[')) items.push({ kind: 'script', via: at, text: { value: value.slice(1, -1).split(',').map((w) => w.trim().replace(/^(["'])(.*)\1$/, '$2')).join(' '), known: true }, cwdUnknown: true });
  }
  return { kind: 'many', items };
}

function isMap(v: YamlValue | undefined): v is { [key: string]: YamlValue } {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** A service's container: its working_dir, and its bind mounts (`./web:/app`) as laptop directories. */
function workdir(svc: { [key: string]: YamlValue }, dir: string): { container: ContainerView } {
  const wd = typeof svc.working_dir === 'string' && svc.working_dir.startsWith('/') ? svc.working_dir : null;
  const mounts: ContainerView['mounts'] = [];
  for (const v of Array.isArray(svc.volumes) ? svc.volumes : []) {
    if (typeof v !== 'string') continue;
    const [host, target] = v.split(':');
    if (!host || !target || !target.startsWith('/')) continue;
    // `~/…` and named volumes are not followed: paths under them are unknown.
    mounts.push({ target, host: /^[./]/.test(host) ? posix.resolve(dir, host) : null });
  }
  return { container: { mounts, workdir: wd } };
}
