// The one VM-id grammar (POLICY R2), shared by config, locks, routes, lint and the guard. Pure, no
// dependencies: the hot bundles import it.
//
//   s.<host>.<env>-<target>[-<slug>]     env: dev | stg | prd      e.g. s.khost1.dev-linux-koda
//
// <host> is a VM host the configuration names (khost1 by default; a config VM `s.khost2.dev-linux-gui`
// names khost2). Something on a host with a one-word name and no env prefix (`s.khost1.flow`, `.id`,
// `.hub`, `.aivoice`) is a production container: never a test VM, never routed to, never locked.

/** Host part: lowercase letters, digits and dashes (no dots: the dot ends it). */
const HOST = '[a-z0-9][a-z0-9-]*';
/** `<target>[-<slug>]`: words of lowercase letters and digits joined by `-`, `_` or `.`. */
const NAME = '[a-z0-9]+(?:[-_.][a-z0-9]+)*';

export const VM_ID_PATTERN = new RegExp(`^s\\.(${HOST})\\.(dev|stg|prd)-(${NAME})$`);
const ON_HOST = new RegExp(`^s\\.(${HOST})\\.([a-z0-9][a-z0-9._-]*)$`);

/** The host every built-in test VM lives on (POLICY R2). */
export const DEFAULT_VM_HOST = 'khost1';

export interface VmIdParts {
  host: string;
  env: 'dev' | 'stg' | 'prd';
  /** `<target>[-<slug>]`, e.g. `linux-koda`. */
  name: string;
  /** `<env>-<target>[-<slug>]`: the backend's default instance name, e.g. `dev-linux-koda`. */
  instance: string;
}

/** The parts of a canonical test-VM id, or null when `id` is not one. */
export function parseVmId(id: string): VmIdParts | null {
  const m = VM_ID_PATTERN.exec(id);
  if (!m) return null;
  const env = m[2] as VmIdParts['env'];
  return { host: m[1]!, env, name: m[3]!, instance: `${env}-${m[3]!}` };
}

/**
 * True for a canonical test-VM id. With `hosts`, the host must also be one of them (the hosts the
 * configuration names); without, any well-formed host is accepted.
 */
export function isVmId(id: string, hosts?: ReadonlySet<string>): boolean {
  const p = parseVmId(id);
  return p !== null && (hosts === undefined || hosts.has(p.host));
}

/** `s.<host>.<word>` with no env prefix: a production container (POLICY R2), never a test VM. */
export function isProductionContainer(id: string): boolean {
  const m = ON_HOST.exec(id);
  return m !== null && !m[2]!.includes('-');
}

/** Why `id` is not a canonical test-VM id (a sentence fragment after the id), or null when it is one. */
export function vmIdProblem(id: string, hosts?: ReadonlySet<string>): string | null {
  const p = parseVmId(id);
  if (p) {
    if (hosts === undefined || hosts.has(p.host)) return null;
    return `names host '${p.host}', which no VM of the configuration lives on (known: ${[...hosts].sort().join(', ')}); declare the VM under 'vms' in offhost.config.yaml`;
  }
  if (isProductionContainer(id)) {
    return `is a production container (no dev-/stg-/prd- env prefix), not a test VM: never lock it as a test VM (POLICY R2); lock a test VM such as s.khost1.dev-linux-koda`;
  }
  if (/^(dev|stg|prd)-[a-z0-9]/.test(id)) return `is not a canonical VM id: write the full id s.${DEFAULT_VM_HOST}.${id}`;
  const env = /^s\.[A-Za-z0-9-]+\.([A-Za-z0-9]+)-/.exec(id)?.[1];
  if (env && !['dev', 'stg', 'prd'].includes(env)) {
    return `is not a canonical VM id: its env '${env}' must be dev, stg or prd (lowercase), e.g. s.khost1.dev-linux-koda`;
  }
  return `is not a canonical VM id: write it as s.<host>.<env>-<target>[-<slug>] with env dev, stg or prd (lowercase), e.g. s.khost1.dev-linux-koda`;
}

/** The hosts a set of VM ids lives on (the configuration's VM catalogue names them), khost1 always. */
export function hostsOf(ids: Iterable<string>): Set<string> {
  const hosts = new Set([DEFAULT_VM_HOST]);
  for (const id of ids) {
    const p = parseVmId(id);
    if (p) hosts.add(p.host);
  }
  return hosts;
}

/**
 * The next numbered VM of a pool (POLICY R4 option b): `s.khost1.dev-linux-koda` -> `...-koda-2`, or
 * `-3` when `-2` is taken, and so on.
 */
export function nextNumberedVmId(base: string, taken: ReadonlySet<string>): string {
  const stem = base.replace(/-\d+$/, '');
  for (let n = 2; ; n++) {
    const id = `${stem}-${n}`;
    if (!taken.has(id)) return id;
  }
}
