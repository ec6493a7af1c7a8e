// Preflight: the cheap checks before `offhost run` takes a lock or touches the VM. The laptop's tools
// are checked here (probeBackend); `vmPreflight` is where a cheap VM check plugs in (the VM exists and
// runs: `offhost vm status`'s probe, issue 13). It returns null when the run may go on, else the
// outcome that stops it; nothing has been locked or run yet when it does.
import { probeBackend } from '../routes/index.js';
import type { VmSpec } from '../routes/index.js';

export interface PreflightStop {
  outcome: 'tool-missing' | 'vm-not-found';
  message: string;
}

export function toolPreflight(spec: VmSpec, env: NodeJS.ProcessEnv): PreflightStop | null {
  const hint = probeBackend(spec, env);
  if (!hint) return null;
  return { outcome: 'tool-missing', message: `cannot reach ${spec.id}: \`${hint.tool}\` is missing. Nothing was run.\n${hint.message}` };
}

/** The VM preflight hook (issue 13 plugs its cheap VM probe in here). */
export async function vmPreflight(_spec: VmSpec, _env: NodeJS.ProcessEnv): Promise<PreflightStop | null> {
  return null;
}
