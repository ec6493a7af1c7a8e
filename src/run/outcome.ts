// offhost run's outcomes and how they are reported (docs/RUN.md has the table): the exit status (the
// command's own, passed through unchanged, or one of RUN_EXIT), and one verdict line, the last thing
// offhost writes on stderr: `offhost run: <outcome>: <detail>` or, with --json, one JSON object.
import { EXIT, RUN_EXIT } from '../errors.js';

export type Outcome =
  | 'exit'
  | 'ran-here'
  | 'interrupted'
  | 'denied'
  | 'held'
  | 'tool-missing'
  | 'vm-not-found'
  | 'connection-lost'
  | 'source-mismatch'
  | 'sync-failed'
  | 'config-error'
  | 'host-key-mismatch'
  | 'lock-lost'
  | 'timeout'
  | 'dirty-tree'
  | 'internal-error'
  // The VM step of the preflight (src/vms/gate.ts, docs/VMS.md), with its statuses (232-234).
  | 'isolation-refused'
  | 'preflight-failed'
  | 'disk-full';

export const OUTCOME_EXIT: Record<Exclude<Outcome, 'exit' | 'ran-here' | 'interrupted'>, number> = {
  denied: RUN_EXIT.denied,
  held: RUN_EXIT.held,
  'tool-missing': RUN_EXIT.toolMissing,
  'vm-not-found': RUN_EXIT.vmNotFound,
  'connection-lost': RUN_EXIT.connectionLost,
  'source-mismatch': RUN_EXIT.sourceMismatch,
  'sync-failed': RUN_EXIT.syncFailed,
  'config-error': RUN_EXIT.configError,
  'host-key-mismatch': RUN_EXIT.hostKeyMismatch,
  'lock-lost': RUN_EXIT.lockLost,
  timeout: RUN_EXIT.timeout,
  'dirty-tree': RUN_EXIT.dirtyTree,
  'internal-error': RUN_EXIT.internal,
  'isolation-refused': EXIT.isolationRefused,
  'preflight-failed': EXIT.preflightFailed,
  'disk-full': EXIT.diskFull,
};

export interface Verdict {
  outcome: Outcome;
  /** offhost run's exit status. */
  exit: number;
  /** The command's own status, when it ran and its status arrived. */
  status: number | null;
  detail: string;
  run?: string;
  vm?: string;
}

export function verdictLine(v: Verdict, json: boolean): string {
  if (json) {
    return `${JSON.stringify({ offhost: 'run', outcome: v.outcome, exit: v.exit, status: v.status, ...(v.run ? { run: v.run } : {}), ...(v.vm ? { vm: v.vm } : {}), detail: v.detail })}\n`;
  }
  const where = [v.vm ? `vm ${v.vm}` : '', v.run ? `run ${v.run}` : ''].filter(Boolean).join(', ');
  return `offhost run: ${v.outcome}: ${v.detail.split('\n')[0]} (exit ${v.exit}${where ? `; ${where}` : ''})\n`;
}

/** A stop with one of offhost's own outcomes. */
export class RunStop extends Error {
  constructor(
    readonly outcome: Exclude<Outcome, 'exit' | 'ran-here'>,
    message: string,
    readonly exitOverride?: number,
  ) {
    super(message);
    this.name = 'RunStop';
  }
  get exit(): number {
    if (this.exitOverride !== undefined) return this.exitOverride;
    return this.outcome === 'interrupted' ? 130 : OUTCOME_EXIT[this.outcome];
  }
}
