// doctor's checks of the configuration, the pre-commit hook, the exec-time shims and the per-user installs init
// recorded (each one entry of CHECKS, src/doctor/index.ts).
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { configFiles } from '../config/discover.js';
import { loadConfig } from '../config/load-config.js';
import { runGitSync } from '../git/run.js';
import { defaultShimsDir, readMarker } from '../shims/install.js';
import { MARKER, SHIM_REFUSED } from '../shims/script.js';
import { ledgerPath, readLedger } from '../install/user-wiring.js';
import type { DoctorCheck, DoctorItem } from './check.js';

export function git(cwd: string, args: string[], env: NodeJS.ProcessEnv): string | null {
  const r = runGitSync(args, { cwd, env });
  return r.code === 0 ? r.stdout.toString('utf8').trim() : null;
}

export const configCheck: DoctorCheck = {
  id: 'config',
  summary: 'every config file in force here loads (file:line on an error)',
  run({ cwd, env }) {
    try {
      const files = configFiles({ cwd, env });
      const c = loadConfig({ cwd, env });
      return [{ check: 'config', ok: true, detail: `${files.length ? files.join(', ') : 'built-in rules only'}: ${c.rules.length} rules, ${c.vms.size} VMs, ${c.routes.size} routes` }];
    } catch (err) {
      return [{ check: 'config', ok: false, detail: (err as Error).message, fix: 'fix that line; `offhost rules` shows the rules once it loads' }];
    }
  },
};

export const huskyCheck: DoctorCheck = {
  id: 'husky',
  summary: '.husky/pre-commit runs the lock checks, and git runs .husky (core.hooksPath)',
  run({ repo, cwd, env }) {
    if (!repo) return [{ check: 'husky', ok: true, note: true, detail: `${cwd} is in no git repository: no pre-commit hook to check` }];
    const pre = join(repo, '.husky', 'pre-commit');
    const hooksPath = git(repo, ['config', '--get', 'core.hooksPath'], env);
    if (!existsSync(pre) || !/offhost lint --staged|lint-staged/.test(readFileSync(pre, 'utf8'))) {
      return [{ check: 'husky', ok: false, detail: '.husky/pre-commit does not run offhost\'s lock checks', fix: 'run `offhost init` at the repository root' }];
    }
    if (!hooksPath || !hooksPath.startsWith('.husky')) {
      return [{ check: 'husky', ok: false, detail: `.husky/pre-commit exists but git does not run it (core.hooksPath is ${hooksPath ?? 'unset'})`, fix: 'run `npm install` (husky\'s prepare script sets core.hooksPath) or `npx husky`' }];
    }
    return [{ check: 'husky', ok: true, detail: `.husky/pre-commit runs the lock checks (core.hooksPath ${hooksPath})` }];
  },
};

/**
 * A shim run for real: PATH holds the shims, then a stand-in of the program that records a run. A heavy call
 * must be refused (126) with the stand-in never started. Null when it is, else the problem.
 */
function probeShim(dir: string, program: string, args: string[], cwd: string, env: NodeJS.ProcessEnv): string | null {
  const fake = mkdtempSync(join(tmpdir(), 'offhost-doctor-shim-'));
  try {
    const ran = join(fake, 'ran');
    writeFileSync(join(fake, program), `#!/bin/sh\n: > '${ran.replace(/'/g, `'\\''`)}'\n`);
    chmodSync(join(fake, program), 0o755);
    const r = spawnSync(join(dir, program), args, { cwd, env: { ...env, PATH: `${dir}:${fake}`, OFFHOST_AUDIT_LOG: 'off' }, encoding: 'utf8', timeout: 30_000 });
    if (existsSync(ran)) return `\`${program} ${args.join(' ')}\` went through the ${program} shim to the program`;
    if (r.status !== SHIM_REFUSED) return `the ${program} shim answered status ${r.status ?? r.signal ?? r.error?.message} to \`${program} ${args.join(' ')}\` (expected ${SHIM_REFUSED}, refused): ${(r.stderr ?? '').trim().split('\n')[0] ?? ''}`;
    return null;
  } finally {
    rmSync(fake, { recursive: true, force: true });
  }
}

export const shimsCheck: DoctorCheck = {
  id: 'shims',
  summary: 'the shims folder: the node, offhost and bash its marker names exist, and a shim refuses a heavy call when run',
  run({ env, project }) {
    let dir: string | null = null;
    try {
      dir = defaultShimsDir(env);
    } catch {
      /* HOME unset and no OFFHOST_SHIMS_DIR: no shim folder */
    }
    const marker = dir ? join(dir, MARKER) : null;
    if (!dir || !marker || !existsSync(marker)) return [{ check: 'shims', ok: true, note: true, detail: 'no shims folder (optional: `offhost init --shims`)' }];
    const m = readMarker(dir);
    if (!m) return [{ check: 'shims', ok: false, detail: `${marker} cannot be read`, fix: 'run `offhost init --shims` again' }];
    const missing = [m.node, m.bin, m.bash].filter((p) => typeof p !== 'string' || !existsSync(p));
    if (missing.length) return [{ check: 'shims', ok: false, detail: `${dir}: the shims call ${missing.join(', ')}, which no longer exist${missing.length > 1 ? '' : 's'}: every shimmed program is refused`, fix: 'run `offhost init --shims` again' }];
    const absent = m.programs.filter((p) => !existsSync(join(dir as string, p)));
    if (absent.length) return [{ check: 'shims', ok: false, detail: `${dir}: the shims of ${absent.slice(0, 5).join(', ')}${absent.length > 5 ? ` and ${absent.length - 5} more` : ''} are gone: those programs start unchecked`, fix: 'run `offhost init --shims` again' }];
    const onPath = (env.PATH ?? '').split(':').includes(dir);
    const where = onPath ? ', on PATH here' : ' (not on this shell\'s PATH: the doors put them first on PATH themselves)';
    const qemu = m.programs.find((p) => p === 'qemu-system-x86_64');
    if (qemu) {
      const p = probeShim(dir, qemu, ['-hda', 'win10.qcow2'], project, env);
      if (p) return [{ check: 'shims', ok: false, detail: `${dir}: ${p}`, fix: 'run `offhost init --shims` again' }];
      return [{ check: 'shims', ok: true, detail: `${dir}: ${m.programs.length} shims${where}; \`qemu-system-x86_64 -hda win10.qcow2\` is refused through them` }];
    }
    return [{ check: 'shims', ok: true, detail: `${dir}: ${m.programs.length} shims${where}` }];
  },
};

export const sharedCheck: DoctorCheck = {
  id: 'shared',
  summary: 'the per-user things init recorded (installs.json): each still there while a repository that asked for it exists',
  run({ env }) {
    const items: DoctorItem[] = [];
    let ledger: ReturnType<typeof readLedger>;
    try {
      ledger = readLedger(env);
    } catch (err) {
      return [{ check: 'shared', ok: false, detail: (err as Error).message, fix: `fix or remove ${ledgerPath(env)} (then run \`offhost init --shims\` / \`offhost init --agent NAME\` again in each repository that uses them)` }];
    }
    for (const w of ledger.wiring) {
      const live = w.repositories.filter((r) => existsSync(r));
      const gone = w.repositories.filter((r) => !existsSync(r));
      const what = w.kind === 'shims' ? 'the shims folder' : `${w.agent ?? 'an agent'}'s personal settings`;
      let there: boolean;
      try {
        there = w.kind === 'shims' ? readMarker(w.path) !== null : existsSync(w.path) && /offhost/.test(readFileSync(w.path, 'utf8'));
      } catch {
        there = false;
      }
      const users = `${live.length} repositor${live.length === 1 ? 'y' : 'ies'} use${live.length === 1 ? 's' : ''} it${gone.length ? `; recorded for ${gone.join(', ')}, which no longer exist${gone.length === 1 ? 's' : ''} (dropped at the next uninstall)` : ''}`;
      if (!there && live.length) {
        items.push({ check: 'shared', subject: w.path, ok: false, detail: `${w.path} (${what}) is gone, but ${users}`, fix: w.kind === 'shims' ? 'run `offhost init --shims` again in one of them' : `run \`offhost init --agent ${w.agent ?? 'NAME'}\` again in one of them` });
      } else items.push({ check: 'shared', subject: w.path, ok: true, note: !there, detail: `${w.path} (${what}, per user): ${users}` });
    }
    return items;
  },
};
