// The VM side of `offhost run`'s preflight step, for one VM: the cheap preflight (one round trip: the
// instance is there and runs, the mount device, free disk), reported as offhost's own outcome, never as
// the command's. The run pipeline (src/run/preflight.ts vmPreflight) and the current run command call
// it; gate.ts applies it to a pool.
import { EXIT } from '../errors.js';
import type { VmSpec } from '../routes/types.js';
import { formatReport, preflight } from './preflight.js';

export type VmStopOutcome = 'vm-not-found' | 'host-key-mismatch' | 'preflight-failed' | 'disk-full' | 'isolation-refused' | 'tool-missing';

export interface VmStop {
  outcome: VmStopOutcome;
  status: number;
  message: string;
}

const OUTCOME: Record<number, VmStopOutcome> = {
  [EXIT.vmMissing]: 'vm-not-found',
  [EXIT.hostKeyMismatch]: 'host-key-mismatch',
  [EXIT.diskFull]: 'disk-full',
  [EXIT.isolationRefused]: 'isolation-refused',
  [EXIT.backendMissing]: 'tool-missing',
};

/** null when the VM passes the cheap preflight, else the stop with its outcome, status and message. */
export async function vmRunPreflight(vm: VmSpec, env: NodeJS.ProcessEnv): Promise<VmStop | null> {
  const r = await preflight(vm, env, { full: false });
  if (r.status === EXIT.ok) return null;
  return {
    outcome: OUTCOME[r.status] ?? 'preflight-failed',
    status: r.status,
    message: `preflight failed: ${r.checks.find((c) => !c.ok)?.detail ?? 'a check failed'} (offhost's check of the VM, not the command's result). Nothing was run; no lock was taken.\n${formatReport(r)}`,
  };
}
