// Making sure a run's job is gone on the VM, from a new session: after a session that ended without the
// command's status (offhost's own check), and for a run whose laptop process is gone (any offhost command
// on the same host that finds its claim: src/locks/holder-process.ts). The job is the command's process
// group (its id in the pgid file) and every process carrying its marker (OFFHOST_JOB, ./remote.ts):
// whatever still runs is stopped (TERM, then KILL).
import { spawn } from 'node:child_process';
import type { Io } from '../io.js';
import type { ResolvedConfig } from '../config/resolve.js';
import type { Claim } from '../locks/lock-types.js';
import type { JobReaper } from '../locks/holder-process.js';
import { renderJob, type VmSpec } from '../routes/index.js';
import { ownConnection, vmSshOptions } from '../routes/multiplex.js';
import { backendEnv } from '../shims/env.js';
import { stateDir } from './record.js';
import { pgidFile, strayFunctions } from './remote.js';

/** Runs a small sh script on the VM in a new session; resolves with its status and output (never rejects). */
export function remoteOnce(spec: VmSpec, io: Pick<Io, 'cwd' | 'env'>, script: string, stdout?: (b: Buffer) => void, timeoutMs = 30_000): Promise<{ code: number | null; out: string; err: string }> {
  let line: string;
  try {
    line = renderJob(spec, { argv: ['sh', '-c', script], cwd: '/', env: {} });
  } catch (err) {
    return Promise.resolve({ code: null, out: '', err: (err as Error).message });
  }
  return new Promise((res) => {
    const child = spawn('bash', ['-c', line], { cwd: io.cwd, env: backendEnv(io.env), stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (stdout ? stdout(d) : (out += d)));
    child.stderr.on('data', (d) => (err += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('close', (code) => {
      clearTimeout(timer);
      res({ code, out, err });
    });
    child.on('error', (e) => {
      clearTimeout(timer);
      res({ code: null, out, err: err + e.message });
    });
  });
}

/** The check: `gone` (nothing ran), `stopped` (it ran and was stopped now), `alive` (it could not be stopped). */
export function confirmScript(nonce: string, job: string): string {
  const pg = pgidFile(nonce);
  return [
    ...strayFunctions(job, 2),
    `p=$(cat ${pg} 2>/dev/null)`,
    // A member that is a zombie runs nothing: its parent (the session's shell, blocked writing to a hung
    // connection) has not reaped it yet. Without a usable ps, any member counts as running.
    'grp() { [ -n "$p" ] && kill -s 0 -- "-$p" 2>/dev/null || return 1; z=$(ps -A -o pgid= -o stat= 2>/dev/null) || return 0; [ -n "$z" ] || return 0; printf \'%s\\n\' "$z" | awk -v p="$p" \'$1 == p && $2 !~ /^Z/ { f = 1 } END { exit !f }\'; }',
    'if ! grp && [ -z "$(strays)" ]; then rm -f ' + pg + '; echo gone; exit 0; fi',
    'grp && kill -s TERM -- "-$p" 2>/dev/null',
    'stop_strays',
    'sleep 1; grp && { kill -s KILL -- "-$p" 2>/dev/null; sleep 0.5; }',
    'if grp || [ -n "$(strays)" ]; then echo alive; else rm -f ' + pg + '; echo "stopped $LEFT"; fi',
  ].join('\n');
}

/** After a session that ended without the command's status: is the command's job gone? Stops it if not. */
export async function confirmStopped(spec: VmSpec, io: Pick<Io, 'cwd' | 'env'>, nonce: string): Promise<boolean> {
  const r = await remoteOnce(ownConnection(spec), io, confirmScript(nonce, nonce.slice('@offhost-'.length)));
  return r.code === 0 && /^(gone|stopped)\b/m.test(r.out);
}

/** The reaper for ended runs' claims: reaches the claim's VM as `offhost run` does (pinned host key, keepalives). */
export function jobReaper(config: ResolvedConfig, io: Pick<Io, 'cwd' | 'env'>): JobReaper {
  return async (vm: string, claim: Claim) => {
    const base = config.vms.get(vm);
    if (!base) return { gone: false, detail: `${vm} has no entry in the configuration's vms here, so its job cannot be checked` };
    if (!claim.job) return { gone: true, detail: 'it named no job on the VM' };
    const spec: VmSpec = { ...base };
    try {
      spec.sshOptions = await vmSshOptions(spec, io.env, stateDir(io.env));
    } catch (err) {
      return { gone: false, detail: (err as Error).message };
    }
    const r = await remoteOnce(spec, io, confirmScript(`@offhost-${claim.job}`, claim.job));
    const m = /^(gone|stopped|alive)\b(.*)$/m.exec(r.out);
    if (r.code === 0 && m?.[1] === 'gone') return { gone: true, detail: 'nothing of it runs on the VM (checked from a new session)' };
    if (r.code === 0 && m?.[1] === 'stopped') return { gone: true, detail: `what was left of it on the VM was stopped now${m[2]!.trim() ? ` (${m[2]!.trim()})` : ''}` };
    return { gone: false, detail: m?.[1] === 'alive' ? 'it still runs on the VM and could not be stopped' : `the VM could not be asked: ${r.err.trim().split('\n').slice(-1)[0] || `exit ${r.code}`}` };
  };
}
