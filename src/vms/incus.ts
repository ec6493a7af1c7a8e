// What incus reports about one instance, read from `incus list --format json` (an array of full
// instances: name, status, type, architecture, expanded_devices, snapshots). Pure.

export interface IncusInstance {
  name: string;
  /** `Running`, `Stopped`, `Frozen`, `Error`... */
  status: string;
  /** `container` or `virtual-machine`. */
  type: string;
  architecture: string;
  devices: Record<string, Record<string, string>>;
  snapshots: string[];
}

/** The instance named exactly `name` (incus list filters by prefix/regex, so the filtering is ours). */
export function findInstance(listJson: string, name: string): IncusInstance | null {
  let data: unknown;
  try {
    data = JSON.parse(listJson);
  } catch {
    throw new Error(`\`incus list --format json\` did not print JSON: ${JSON.stringify(listJson.slice(0, 120))}`);
  }
  if (!Array.isArray(data)) throw new Error('`incus list --format json` did not print a list');
  for (const raw of data as Record<string, unknown>[]) {
    if (raw?.name !== name) continue;
    const devices = (raw.expanded_devices ?? raw.devices ?? {}) as Record<string, Record<string, string>>;
    const snaps = Array.isArray(raw.snapshots) ? (raw.snapshots as { name?: string }[]).map((s) => String(s?.name ?? '').replace(/^.*\//, '')) : [];
    return {
      name,
      status: String(raw.status ?? (raw.state as { status?: string } | undefined)?.status ?? 'Unknown'),
      type: String(raw.type ?? 'container'),
      architecture: String(raw.architecture ?? ''),
      devices,
      snapshots: snaps,
    };
  }
  return null;
}

/** The disk device mounted at `path`, if any. */
export function diskAt(inst: IncusInstance, path: string): { name: string; source: string; readonly: boolean } | null {
  for (const [name, d] of Object.entries(inst.devices)) {
    if (d.type === 'disk' && d.path === path) return { name, source: d.source ?? '', readonly: /^(true|1|yes|on)$/i.test(d.readonly ?? '') };
  }
  return null;
}

/** The kind a catalogue VM declares, as incus names instance types. */
export function incusType(kind: string | undefined): string {
  return kind === 'vm' ? 'virtual-machine' : 'container';
}
