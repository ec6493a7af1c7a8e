// Disposable sandboxes (seeds 001 and 004): `offhost run --fresh` on a VM whose catalogue entry has
// lifecycle verbs (bash templates with the template backend's placeholders, {instance} being the sandbox):
//   up     create/start it               (tart-vm.sh up {instance} IMAGE, vm new {instance})
//   exec   run the job in it             (tart-vm.sh exec {instance} -- sh -c {script}, vm run {instance} {script})
//   run    run the job, verdict printed  (vmbox: vm run {instance} {script} prints `VERDICT: …`)
//   rm     remove it                     (tart-vm.sh rm {instance}, vm rm {instance})
//   down/reset are declared for the guard (src/vms/protect.ts) and for people; --fresh never reuses one.
// A uniquely named sandbox is created, the job runs, the requested results are copied back (tar through
// `exec`), and the sandbox is removed whatever happened. A backend that reads its verdict from the host
// (vmbox: clean poweroff 0, dirty 3, rebooted 4, crashed 5, hung 6) has that verdict reported as an
// outcome of its own (exit 0 / 235-238), never as an ssh status.
import { spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join, posix } from 'node:path';
import { EXIT } from '../errors.js';
import { expandTemplate } from '../routes/backends/template.js';
import type { Job, VmSpec } from '../routes/types.js';

export interface FreshOptions {
  env: NodeJS.ProcessEnv;
  stdout: (s: string) => void;
  stderr: (s: string) => void;
  /** VM-side paths to copy back (relative to the job's cwd or absolute). */
  fetch: string[];
  /** Where results land on the laptop: <dir>/<sandbox>/. */
  fetchTo: string;
  now: Date;
}

export const VERDICTS: { re: RegExp; outcome: string; status: number }[] = [
  { re: /^clean poweroff/i, outcome: 'clean poweroff', status: EXIT.ok },
  { re: /^dirty/i, outcome: 'dirty shutdown', status: EXIT.sandboxDirty },
  { re: /^rebooted/i, outcome: 'rebooted, did not power off', status: EXIT.sandboxRebooted },
  { re: /^crashed/i, outcome: 'crashed (guest panic)', status: EXIT.sandboxCrashed },
  { re: /^hung/i, outcome: 'hung (no event, liveness probe failed)', status: EXIT.sandboxHung },
];

/** The host's verdict in a tool's output (`VERDICT: clean poweroff`), the last one printed. */
export function readVerdict(output: string): { text: string; outcome: string; status: number } | null {
  const lines = output.split('\n').map((l) => /VERDICT:\s*(.+?)\s*$/.exec(l)?.[1]).filter((x): x is string => !!x);
  const text = lines.at(-1);
  if (!text) return null;
  const v = VERDICTS.find((x) => x.re.test(text));
  return v ? { text, outcome: v.outcome, status: v.status } : { text, outcome: `unknown verdict '${text}'`, status: EXIT.sandboxHung };
}

/** A unique sandbox name: offhost-<target>-<UTC time>-<random>, lowercase letters, digits and dashes. */
export function sandboxName(vm: VmSpec, now: Date): string {
  const target = vm.id.replace(/^s\.[^.]+\.(dev|stg|prd)-/, '').replace(/[^a-z0-9]+/g, '-').slice(0, 24);
  const t = now.toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, '').replace('T', '-').toLowerCase();
  return `offhost-${target}-${t}-${Math.random().toString(36).slice(2, 6)}`;
}

function line(vm: VmSpec, template: string, name: string, job: Job): string {
  return expandTemplate({ ...vm, backend: 'template', template, instance: name }, job);
}

function bash(command: string, env: NodeJS.ProcessEnv, o: { tee?: FreshOptions; capture?: boolean; stdin?: 'ignore' }): Promise<{ status: number; out: string; buf: Buffer }> {
  return new Promise((res) => {
    const child = spawn('bash', ['-c', command], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    const chunks: Buffer[] = [];
    let text = '';
    child.stdout.on('data', (d: Buffer) => {
      if (o.capture) chunks.push(d);
      else {
        text += d.toString('utf8');
        o.tee?.stdout(d.toString('utf8'));
      }
    });
    child.stderr.on('data', (d: Buffer) => {
      text += d.toString('utf8');
      o.tee?.stderr(d.toString('utf8'));
    });
    child.on('error', () => res({ status: 127, out: text, buf: Buffer.alloc(0) }));
    child.on('close', (code, sig) => res({ status: code ?? (sig ? 128 + 15 : 1), out: text, buf: Buffer.concat(chunks) }));
  });
}

/** Runs `job` in a fresh sandbox of `vm`; the exit status is the job's, or the verdict's. */
export async function runFresh(vm: VmSpec, job: Job, o: FreshOptions): Promise<number> {
  const lc = vm.lifecycle;
  if (!lc) {
    o.stderr(`offhost run: --fresh needs a VM with lifecycle verbs (up/exec/rm templates), and ${vm.id} has none; see docs/VMS.md "Disposable sandboxes". Nothing was run.\n`);
    return EXIT.error;
  }
  const name = sandboxName(vm, o.now);
  const say = (s: string) => o.stderr(`offhost run: ${s}\n`);
  say(`fresh sandbox ${name} of ${vm.id}`);
  let created = false;
  try {
    if (lc.up) {
      const up = await bash(line(vm, lc.up, name, job), o.env, { tee: o });
      if (up.status !== 0) {
        say(`could not create the sandbox (\`${line(vm, lc.up, name, job)}\` exited ${up.status}). Nothing was run.`);
        created = true; // it may exist in part: removed below
        return EXIT.preflightFailed;
      }
    }
    created = true;
    const verdicts = vm.verdicts === 'vmbox';
    const runTemplate = verdicts && lc.run ? lc.run : lc.exec;
    const r = await bash(line(vm, runTemplate, name, job), o.env, { tee: o });
    let status = r.status;
    if (verdicts) {
      const v = readVerdict(r.out);
      if (v) {
        say(`sandbox verdict (read from the host): ${v.outcome}${v.status ? ` (exit ${v.status})` : ''}`);
        status = v.status;
      }
    }
    for (const p of o.fetch) {
      const abs = p.startsWith('/') ? p : posix.join(job.cwd, p);
      const dest = join(o.fetchTo, name);
      mkdirSync(dest, { recursive: true });
      const tarJob: Job = { argv: ['tar', '-cf', '-', '-C', posix.dirname(abs), posix.basename(abs)], cwd: '/', env: {} };
      const got = await bash(line(vm, lc.exec, name, tarJob), o.env, { capture: true });
      if (got.status !== 0) {
        say(`WARNING: could not copy ${abs} back (exit ${got.status}): ${got.out.trim().split('\n')[0] ?? ''}`);
        continue;
      }
      const untar = await new Promise<number>((res) => {
        const c = spawn('tar', ['-xf', '-', '-C', dest], { stdio: ['pipe', 'ignore', 'inherit'] });
        c.on('close', (code) => res(code ?? 1));
        c.stdin.end(got.buf);
      });
      if (untar === 0) say(`copied ${abs} to ${join(dest, posix.basename(abs))}`);
      else say(`WARNING: could not unpack ${abs} into ${dest}`);
    }
    return status;
  } finally {
    if (created) {
      const rm = await bash(line(vm, lc.rm, name, job), o.env, { tee: o });
      if (rm.status === 0) say(`removed sandbox ${name}`);
      else say(`WARNING: could not remove sandbox ${name} (\`${line(vm, lc.rm, name, job)}\` exited ${rm.status}); remove it yourself`);
    }
  }
}
