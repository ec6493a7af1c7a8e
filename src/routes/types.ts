// Types shared by the route backends (re-exported from ./index.ts, which is the public entry).

export type BackendName = 'incus' | 'ssh' | 'lima' | 'tart' | 'docker' | 'multipass' | 'template';

export interface VmSpec {
  /** Canonical id, e.g. `s.khost1.dev-linux-koda`. */
  id: string;
  backend: BackendName;
  /**
   * ssh destination that reaches the backend: the machine itself for `ssh`, the VM host for `incus` and
   * `docker` (the backend command then runs behind `ssh <host> -- …`). May be `user@host` or an
   * ~/.ssh/config alias.
   */
  host?: string;
  /** The backend's name for the VM / container: `dev-linux-koda`. */
  instance?: string;
  /**
   * User to run as: ssh login user (`ssh -l`) for `ssh`; numeric uid (`incus exec --user`) for `incus`;
   * `docker exec -u` for `docker`; `{user}` for `template`. lima, multipass and tart have no such option:
   * setting it there is a ConfigError (refused, never silently ignored).
   */
  user?: string;
  /** template backend: a bash command line with placeholders, see ./backends/template.ts. */
  template?: string;
  /**
   * How the VM gets the laptop's source (docs/RUN.md): `shared` (a bind mount or NFS export at the mapped
   * path; verified), `rsync` (copied into `guest_dir`), `git` (pushed and checked out into `guest_dir`).
   */
  sync?: 'shared' | 'rsync' | 'git';
  /** VM-local directory for rsync/git copies (one per repository and branch). Default /var/tmp/offhost. */
  guest_dir?: string;
  /** Path segments never copied nor verified (default .git, node_modules, target). */
  sync_exclude?: string[];
  /** rsync/git: remove the copy's files outside the source set before every run (as `offhost run --clean`). */
  clean?: boolean;
  /** Globs of the copy that cleaning keeps (dependency caches); default src/run/ignored.ts DEFAULT_KEEP. */
  keep?: string[];
  /** Pinned host key of the ssh host (`SHA256:…` fingerprint or a `ssh-ed25519 AAAA…` key). */
  host_key?: string;
  /** ssh ServerAliveInterval in seconds (default 15; the connection counts as lost after 3 missed). */
  keepalive_seconds?: number;
  /** Set by `offhost run`, never by configuration: options for every ssh rendered for this VM. */
  sshOptions?: string[];
  // What the VM is, how to provision and check it, its sandbox lifecycle: src/vms/ and docs/VMS.md
  // (config field names, as offhost.config.yaml spells them).
  kind?: 'container' | 'vm' | 'microvm';
  arch?: string;
  where?: 'laptop' | 'remote';
  image?: string;
  packages?: string[];
  tools?: string[];
  smoke?: string;
  snapshot?: string;
  mount?: { source: string; path: string; readonly: boolean; device?: string };
  disk_floor_mb?: number;
  lifecycle?: { up?: string; exec: string; run?: string; down?: string; rm: string; reset?: string };
  verdicts?: 'vmbox';
}

/** Run `argv` (argv[0] is looked up on the VM's PATH, execvp-style) in `cwd` with `env` added. */
export interface Job {
  argv: string[];
  /** Absolute working directory on the VM (already path-mapped, see mapPath). */
  cwd: string;
  /** Variables added to the VM-side environment; names must be `[A-Za-z_][A-Za-z0-9_]*`. */
  env: Record<string, string>;
  /** The program reads the laptop's stdin (backends that forward stdin only on request add their flag). */
  stdin?: boolean;
}

/** Printed when a backend's tool is missing; the command then exits with EXIT.backendMissing. */
export interface SetupHint {
  tool: string;
  message: string;
}

export interface Backend {
  name: BackendName;
  /**
   * How many shells re-split the command between the laptop's argv (what `render` returns) and the
   * program, for the backend used directly. incus/docker behind `vm.host` add one (see layersFor).
   * limactl and multipass quote for their own layers, so they count 0 from our side.
   */
  layers: number;
  layersFor(vm: VmSpec): number;
  /** argv to run on the laptop (no shell involved). */
  render(vm: VmSpec, job: Job): string[];
  /**
   * The laptop bash command line, when it is not simply `render()` quoted word by word (template:
   * the user's template is itself a bash line). renderJob prefers this when present.
   */
  renderCommand?(vm: VmSpec, job: Job): string;
  /** Programs that must be on the laptop's PATH. */
  tools(vm: VmSpec): string[];
}

/** A laptop path prefix and the path it has on a VM (R6: same paths, unless mapped). */
export interface PathMapping {
  from: string;
  to: string;
}

/** A named route: the VMs a rerouted command may run on, and its own path mappings. */
export interface RouteConfig {
  name: string;
  vms: string[];
  pathMap: PathMapping[];
  description?: string;
  /** What the VM must be (src/vms/isolation.ts). */
  require?: { kind?: ('container' | 'vm' | 'microvm')[]; arch?: string[]; where?: 'laptop' | 'remote' };
}
