// Where offhost stands in a directory (issue 20): which checkout of the monorepo it sees there, what the
// rules' {root} is, which rules are bound to the checkout, and the silent-allow case, a directory that
// looks like the monorepo while the policy does not apply to it. `explain` prints these lines, `doctor`
// runs `checkoutCheck` (one self-contained check, its line and its fix).
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { ResolvedConfig } from './resolve.js';
import { gitCheckoutOf, makeRuleSpace, monorepoCheckoutOf, remoteUrlOf, type GitCheckout, type MonorepoCheckout } from './checkout.js';
import { physicalPath } from './physical-paths.js';
import { userConfigPath } from './discover.js';

export interface Standing {
  dir: string;
  physical: string;
  git: GitCheckout | null;
  checkout: MonorepoCheckout | null;
  /** The directory as the rules see it (the same place under {root}) when in another checkout. */
  ruleCwd?: string;
  /** Rules whose cwd conditions name a path variable (`{koda}`): those bound to the checkout. */
  boundRules: string[];
  /** Why the directory looks like the monorepo while the policy does not apply (the silent-allow case). */
  looksLike: string | null;
}

/** Why a git checkout looks like the monorepo without carrying a marker: its layout or its remote. */
function resemblance(git: GitCheckout, config: Pick<ResolvedConfig, 'locks'>): string | null {
  const why: string[] = [];
  if (existsSync(join(git.top, 'engines', 'lang'))) why.push('it has engines/lang/');
  if (existsSync(join(git.top, config.locks.noticesDir))) why.push(`it has ${config.locks.noticesDir}/ (the VM lock notices)`);
  const url = remoteUrlOf(git.commonDir);
  if (url && /(^|[/:])koder(\.git)?\/?$/.test(url)) why.push(`its remote is ${url}`);
  return why.length ? why.join(', ') : null;
}

export function standingOf(dir: string, config: ResolvedConfig): Standing {
  const physical = physicalPath(dir);
  const git = gitCheckoutOf(physical);
  const checkout = monorepoCheckoutOf(physical, config);
  const ruleCwd = makeRuleSpace(config)(physical);
  const boundRules = config.rules.filter((r) => r.cwdVars.length > 0).map((r) => r.id);
  const looksLike = checkout === null && git !== null ? resemblance(git, config) : null;
  return { dir, physical, git, checkout, ...(ruleCwd !== undefined ? { ruleCwd } : {}), boundRules, looksLike };
}

function gitText(g: GitCheckout | null): string {
  if (g === null) return 'in no git checkout';
  if (g.kind === 'linked worktree') return `git ${g.kind} ${g.top} (of ${g.mainTop ?? `the bare repository ${g.commonDir}`})`;
  return `git ${g.kind} ${g.top}`;
}

/** The lines `explain` prints under "where offhost stands". */
export function standingLines(s: Standing, config: Pick<ResolvedConfig, 'root' | 'markers'>): string[] {
  const out = [`here: ${s.physical} (${gitText(s.git)})`];
  const bound = s.boundRules.length ? s.boundRules.join(', ') : 'none';
  if (s.checkout) {
    const why = s.checkout.why === 'marker' ? `it holds ${s.checkout.marker}` : s.checkout.why === 'root' ? 'it is the configured root' : 'it is listed in roots:';
    out.push(`monorepo checkout: ${s.checkout.top} (${why}); {root} = ${config.root ?? '<none>'}`);
    out.push(s.ruleCwd !== undefined ? `the rules judge this directory as ${s.ruleCwd}; bound to the checkout: ${bound}` : `the rules judge this directory as it is; bound to the checkout: ${bound}`);
  } else {
    out.push(`monorepo checkout: none (no directory above holds ${config.markers.join(' or ') || 'a marker'}, and none is the root ${config.root ?? '<none>'} or in roots:)`);
    out.push(`the rules bound to a checkout (${bound}) do not apply here; every other rule does`);
  }
  if (s.looksLike) out.push(`WARNING: this looks like a checkout of the monorepo (${s.looksLike}) but the policy does not apply to it`);
  return out;
}

/** The fix for the silent-allow case. */
function fixFor(s: Standing, env: NodeJS.ProcessEnv): string {
  const file = userConfigPath(env) ?? '~/.config/offhost/config.yaml';
  return `if it is the monorepo, add \`roots: [${JSON.stringify(s.git?.top ?? s.physical)}]\` to ${file} (or check out the engine: the policy finds a checkout by engines/lang/koda)`;
}

/** doctor's check: one line saying which checkout offhost sees here; not ok in the silent-allow case. */
export function checkoutCheck(cwd: string, env: NodeJS.ProcessEnv, config: ResolvedConfig): { area: string; ok: boolean; note?: boolean; detail: string; fix?: string } {
  const s = standingOf(cwd, config);
  if (s.looksLike) return { area: 'repo', ok: false, detail: `${s.git!.top} looks like a checkout of the monorepo (${s.looksLike}) but the policy does not apply to it: heavy builds there would be allowed`, fix: fixFor(s, env) };
  if (s.checkout) {
    const why = s.checkout.why === 'marker' ? `holds ${s.checkout.marker}` : s.checkout.why === 'root' ? 'is the configured root' : 'is listed in roots:';
    return { area: 'repo', ok: true, detail: `monorepo checkout ${s.checkout.top} (${why}${s.git ? `; ${gitText(s.git)}` : ''}); rules judge it as {root} = ${config.root}${s.ruleCwd !== undefined ? ` (here: ${s.ruleCwd})` : ''}` };
  }
  return { area: 'repo', ok: true, note: true, detail: `${s.physical} is in no checkout of the monorepo (${gitText(s.git)}): the rules bound to one (${s.boundRules.join(', ') || 'none'}) do not apply here` };
}
