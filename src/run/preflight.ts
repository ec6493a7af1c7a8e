// Preflight: the cheap checks before `offhost run` takes a lock or touches the VM, in two steps. The
// laptop's tools (probeBackend: a missing one prints setup guidance); then the VMs themselves through
// src/vms/gate.ts (issue 13): the isolation the route or rule requires (refused, never downgraded) and the
// cheap VM checks (host reachable, instance running, mount, tools). Nothing has been locked or run when
// either stops the run.
import { probeBackend } from '../routes/index.js';
import type { VmSpec } from '../routes/index.js';
import type { ResolvedConfig } from '../config/resolve.js';
import { EXIT } from '../errors.js';
import { gateCandidates } from '../vms/gate.js';
import type { ProbeReuse } from '../vms/preflight.js';

export interface PreflightStop {
  outcome: 'tool-missing' | 'vm-not-found';
  message: string;
}

export function toolPreflight(spec: VmSpec, env: NodeJS.ProcessEnv): PreflightStop | null {
  const hint = probeBackend(spec, env);
  if (!hint) return null;
  return { outcome: 'tool-missing', message: `cannot reach ${spec.id}: \`${hint.tool}\` is missing. Nothing was run.\n${hint.message}` };
}

export type VmPreflight =
  | { ok: true; usable: string[]; notes: string[] }
  | { ok: false; outcome: 'isolation-refused' | 'preflight-failed' | 'disk-full' | 'vm-not-found' | 'host-key-mismatch'; exit: number; message: string };

/** The VM step (src/vms/gate.ts); `fresh`: a sandbox is made for the run, so its base VM is not probed. */
export async function vmPreflight(config: ResolvedConfig, a: { route: string; rule: string | null; candidates: string[]; env: NodeJS.ProcessEnv; fresh: boolean; reuse?: ProbeReuse; abort?: AbortSignal }): Promise<VmPreflight> {
  const g = await gateCandidates(config, { route: a.route, rule: a.rule, candidates: a.candidates, env: a.env, preflight: !a.fresh, ...(a.reuse ? { reuse: a.reuse } : {}), ...(a.abort ? { abort: a.abort } : {}) });
  if (g.ok) return g;
  const outcome =
    g.status === EXIT.isolationRefused ? 'isolation-refused'
    : g.status === EXIT.diskFull ? 'disk-full'
    : g.status === EXIT.vmMissing ? 'vm-not-found'
    : g.status === EXIT.hostKeyMismatch ? 'host-key-mismatch'
    : 'preflight-failed';
  return { ok: false, outcome, exit: g.status, message: g.message.trimEnd() };
}
