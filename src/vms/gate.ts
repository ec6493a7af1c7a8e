// What `offhost run` asks of the VMs before it takes a lock (the preflight step of the run): the VM is
// what the route and the rule require (seed 002, refused, never downgraded), and the cheap part of the
// preflight passes (host reachable, instance present and running, mount, disk). A pool keeps the VMs
// that pass; when none does, the run stops with the preflight's own status and message, never as the
// command's failure, and no lock is taken.
import { EXIT } from '../errors.js';
import type { ResolvedConfig } from '../config/resolve.js';
import type { VmSpec } from '../routes/types.js';
import { unmet, type Requirement } from './isolation.js';
import { formatReport, preflight, type PreflightReport, type ProbeReuse } from './preflight.js';
import { nextNumberedVmId } from './id.js';

export type GateResult = { ok: true; usable: string[]; notes: string[] } | { ok: false; status: number; message: string };

export async function gateCandidates(
  config: ResolvedConfig,
  a: { route: string; rule: string | null; candidates: string[]; env: NodeJS.ProcessEnv; preflight?: boolean; reuse?: ProbeReuse; abort?: AbortSignal },
): Promise<GateResult> {
  const routeReq = config.routes.get(a.route)?.require as Requirement | undefined;
  const ruleReq = (a.rule ? config.rules.find((r) => r.id === a.rule)?.require : undefined) as Requirement | undefined;
  const refusals: string[] = [];
  const fit: VmSpec[] = [];
  for (const id of a.candidates) {
    const vm = config.vms.get(id);
    if (!vm) continue;
    const why = [...unmet(vm, routeReq).map((w) => `route ${a.route}: ${w}`), ...unmet(vm, ruleReq).map((w) => `rule ${a.rule}: ${w}`)];
    if (why.length) refusals.push(`${id}: ${why.join('; ')}`);
    else fit.push(vm);
  }
  if (fit.length === 0) {
    return {
      ok: false,
      status: EXIT.isolationRefused,
      message: `refused: no VM of route ${a.route} provides the isolation asked for, and offhost never downgrades it (seed 002). Nothing was run; no lock was taken.\n${refusals.map((r) => `  ${r}`).join('\n')}\nPoint the route at a VM that is what it requires, or declare the VM's kind/arch/where truthfully in the catalogue (docs/VMS.md).\n`,
    };
  }
  if (a.preflight === false) return { ok: true, usable: fit.map((v) => v.id), notes: refusals };
  // A pool's VMs are probed at the same time.
  const reports: PreflightReport[] = await Promise.all(fit.map((vm) => preflight(vm, a.env, { full: false, ...(a.reuse ? { reuse: a.reuse } : {}), ...(a.abort ? { abort: a.abort } : {}) })));
  const usable = reports.filter((r) => r.status === EXIT.ok).map((r) => r.vm);
  const failed = reports.filter((r) => r.status !== EXIT.ok);
  if (usable.length === 0) {
    const first = failed[0]!;
    return {
      ok: false,
      status: first.status,
      message: `preflight failed: ${first.checks.find((c) => !c.ok)?.detail ?? 'a check failed'} (offhost's check of the VM, not the command's result). Nothing was run; no lock was taken.\n${failed.map(formatReport).join('')}`,
    };
  }
  const said = reports.flatMap((r) => (r.status === EXIT.ok ? r.checks.flatMap((c) => (c.note ? [c.note] : [])) : []));
  return { ok: true, usable, notes: [...refusals, ...said, ...failed.map((r) => `${r.vm} skipped: ${r.checks.find((c) => !c.ok)?.detail ?? 'preflight failed'}`)] };
}

/** R4 option b, offered when every VM of a pool is busy. */
export function offerNewVm(config: ResolvedConfig, route: string, candidates: string[]): string {
  const base = candidates[0];
  if (!base) return '';
  const next = nextNumberedVmId(base, new Set([...config.vms.keys(), ...candidates]));
  return `Every VM of route ${route} is busy. Instead of waiting (--wait), you can add one (POLICY R4 option b): \`offhost vm provision ${next}\` (a copy of ${base}), then add ${next} to routes.${route}.vms in offhost.config.yaml.\n`;
}
