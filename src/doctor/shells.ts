// doctor's checks of the doors people and wrappers use: the shell snippets (`offhost init --shell`, put in
// place by the user and sourced from an rc file) and the $SHELL wrapper (hooks/offhost-shell). Each is run:
// the snippet's own offhost command is asked about a heavy and a light line as the snippet asks it, and the
// wrapper in $SHELL is given both with -c.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { spawnSync } from 'node:child_process';
import { parse } from '../shell/parser.js';
import { commandsOf } from '../shell/commands.js';
import { PROBE_HEAVY, PROBE_LIGHT } from './agents.js';
import type { DoctorCheck, DoctorContext, DoctorItem } from './check.js';

/** The rc files a snippet is sourced from (fish: config.fish and conf.d). */
function rcFiles(home: string, env: NodeJS.ProcessEnv): string[] {
  const fishDir = join(env.XDG_CONFIG_HOME || join(home, '.config'), 'fish');
  const out = ['.bashrc', '.bash_profile', '.profile', '.zshrc', '.zprofile'].map((f) => join(env.ZDOTDIR && f.startsWith('.z') ? env.ZDOTDIR : home, f));
  out.push(join(fishDir, 'config.fish'));
  try {
    for (const f of readdirSync(join(fishDir, 'conf.d')).sort()) if (f.endsWith('.fish')) out.push(join(fishDir, 'conf.d', f));
  } catch {
    /* no conf.d */
  }
  return out;
}

function readSmall(file: string): string | null {
  try {
    const st = statSync(file);
    if (!st.isFile() || st.size > 1024 * 1024) return null;
    return readFileSync(file, 'utf8');
  } catch {
    return null;
  }
}

/** `~`, `$HOME`, `${HOME}`, `$XDG_CONFIG_HOME` in a sourced path; quotes removed. */
function expandPath(word: string, home: string, env: NodeJS.ProcessEnv, base: string): string {
  const w = word.replace(/^['"]|['"]$/g, '');
  const cfg = env.XDG_CONFIG_HOME || join(home, '.config');
  const x = w.replace(/^~(?=\/|$)/, home).replace(/\$\{?HOME\}?/g, home).replace(/\$\{?XDG_CONFIG_HOME\}?/g, cfg);
  return resolve(base, x);
}

interface Snippet {
  /** Where it was found: `~/.bashrc:12` (sourced there) or the rc file itself (pasted in). */
  from: string;
  file: string;
  text: string | null;
}

/** Every snippet the rc files load: sourced files whose path names offhost, or the snippet pasted into the rc. */
function snippetsOf(home: string, env: NodeJS.ProcessEnv): Snippet[] {
  const show = (p: string) => (p.startsWith(`${home}/`) ? `~/${p.slice(home.length + 1)}` : p);
  const out: Snippet[] = [];
  const seen = new Set<string>();
  for (const rc of rcFiles(home, env)) {
    const text = readSmall(rc);
    if (text === null || !/offhost/.test(text)) continue;
    if ((/offhost shell integration for/.test(text) || /__offhost_cmd/.test(text)) && !seen.has(rc)) {
      seen.add(rc);
      out.push({ from: show(rc), file: rc, text });
    }
    text.split('\n').forEach((line, i) => {
      if (/^\s*#/.test(line)) return;
      for (const m of line.matchAll(/(?:^|[;&|\s])(?:source|\.)\s+("[^"]*"|'[^']*'|[^\s;&|]+)/g)) {
        if (!/offhost/.test(m[1] as string)) continue;
        const file = expandPath(m[1] as string, home, env, home);
        if (seen.has(file)) continue;
        seen.add(file);
        out.push({ from: `${show(rc)}:${i + 1}`, file, text: readSmall(file) });
      }
    });
  }
  return out;
}

/** The offhost command a snippet runs (`__offhost_cmd=(…)` in bash and zsh, `set -g __offhost_cmd …` in fish). */
export function snippetCommand(text: string, file = ''): { shell: 'bash' | 'zsh' | 'fish'; argv: string[] } | null {
  // The header says which shell; a snippet pasted without it, the file it is in.
  const kind = (/offhost shell integration for (bash|zsh|fish)/.exec(text)?.[1] ?? (/\.fish$/.test(file) ? 'fish' : /zsh/.test(file) ? 'zsh' : 'bash')) as 'bash' | 'zsh' | 'fish';
  if (kind === 'fish') {
    const m = /^set -g __offhost_cmd (.*)$/m.exec(text);
    if (!m) return null;
    const argv = [...(m[1] as string).matchAll(/'((?:[^'\\]|\\.)*)'/g)].map((x) => (x[1] as string).replace(/\\(.)/g, '$1'));
    return argv.length ? { shell: kind, argv } : null;
  }
  const m = /^__offhost_cmd=\((.*)\)$/m.exec(text);
  if (!m) return null;
  try {
    const [c] = commandsOf(parse(m[1] as string), m[1] as string, { cwd: '/', env: {} });
    return c && c.argv.length ? { shell: kind, argv: [...c.argv] } : null;
  } catch {
    return null;
  }
}

function probeSnippet(s: Snippet, ctx: DoctorContext): DoctorItem {
  const subject = s.from;
  const fix = (shell: string) => `regenerate it: \`offhost init --shell ${shell} > ${s.file}\`, or take the line out of ${s.from.replace(/:\d+$/, '')}`;
  if (s.text === null) return { check: 'shell', subject, ok: false, detail: `${s.from} loads ${s.file}, which is not there (or not a file): nothing is checked in that shell`, fix: `regenerate it with \`offhost init --shell …\`, or take the line out of ${s.from.replace(/:\d+$/, '')}` };
  const cmd = snippetCommand(s.text, s.file);
  if (!cmd) return { check: 'shell', subject, ok: false, detail: `${s.file} (loaded by ${s.from}) is not a snippet offhost can read`, fix: fix('bash|zsh|fish') };
  const ask = (line: string) =>
    spawnSync(cmd.argv[0] as string, [...cmd.argv.slice(1), 'shell', '--check', ...(cmd.shell === 'fish' ? ['--fish'] : []), '--cwd', ctx.project, '--', line], { env: { ...ctx.env, OFFHOST_AUDIT_LOG: 'off' }, encoding: 'utf8', timeout: 30_000 });
  const heavy = ask(PROBE_HEAVY);
  if (heavy.error || heavy.status !== 126) {
    const why = heavy.error ? heavy.error.message : `status ${heavy.status}: ${(heavy.stderr ?? '').trim().split('\n')[0] ?? ''}`;
    return { check: 'shell', subject, ok: false, detail: `${s.file} (${cmd.shell}, loaded by ${s.from}) runs ${cmd.argv.join(' ')}, which did not refuse \`${PROBE_HEAVY}\` (${why}): that shell refuses only the heavy program names it lists until this is fixed`, fix: fix(cmd.shell) };
  }
  const light = ask(PROBE_LIGHT);
  if (light.status !== 0) return { check: 'shell', subject, ok: false, detail: `${s.file} (${cmd.shell}) refuses \`${PROBE_LIGHT}\` (status ${light.status})`, fix: fix(cmd.shell) };
  return { check: 'shell', subject, ok: true, detail: `${s.file} (${cmd.shell}, loaded by ${s.from}): refuses \`${PROBE_HEAVY}\`, lets \`${PROBE_LIGHT}\` through` };
}

export const shellCheck: DoctorCheck = {
  id: 'shell',
  summary: 'each shell snippet the rc files load (bash, zsh, fish): it is there, and its offhost refuses a heavy line and lets a light one through',
  run(ctx) {
    const home = ctx.env.HOME;
    if (!home) return [{ check: 'shell', ok: true, note: true, detail: 'HOME is not set: no rc files to read' }];
    const snippets = snippetsOf(home, ctx.env);
    if (snippets.length === 0) return [{ check: 'shell', ok: true, note: true, detail: 'no rc file loads an offhost snippet (optional: `offhost init --shell bash|zsh|fish`)' }];
    return snippets.map((s) => probeSnippet(s, ctx));
  },
};

export const wrapperCheck: DoctorCheck = {
  id: 'wrapper',
  summary: 'the $SHELL wrapper (hooks/offhost-shell), when $SHELL is it: `-c` refuses a heavy line and runs a light one',
  run(ctx) {
    const shell = ctx.env.SHELL;
    const text = shell ? readSmall(shell) : null;
    if (!shell || text === null || !/offhost/.test(text) || !/\bshell\b/.test(text)) {
      return [{ check: 'wrapper', ok: true, note: true, detail: `$SHELL is ${shell ?? 'unset'}, not the offhost wrapper (agents started with SHELL=…/hooks/offhost-shell use it: run doctor under that SHELL to check it)` }];
    }
    const run = (line: string) => spawnSync(shell, ['-c', line], { cwd: ctx.project, env: { ...ctx.env, OFFHOST_AUDIT_LOG: 'off' }, encoding: 'utf8', timeout: 30_000 });
    const heavy = run(PROBE_HEAVY);
    if (heavy.status !== 126) {
      return [{ check: 'wrapper', ok: false, detail: `$SHELL ${shell} did not refuse \`${PROBE_HEAVY}\` (${heavy.error ? heavy.error.message : `status ${heavy.status}: ${(heavy.stderr ?? '').trim().split('\n')[0] ?? ''}`})`, fix: existsSync(shell) ? 'reinstall offhost (npm ci) so that the wrapper finds dist/offhost.cjs, or set OFFHOST_BIN / OFFHOST_NODE for it' : `point SHELL at an existing hooks/offhost-shell` }];
    }
    const light = run('true');
    if (light.status !== 0) return [{ check: 'wrapper', ok: false, detail: `$SHELL ${shell} refuses \`true\` (status ${light.status}: ${(light.stderr ?? '').trim().split('\n')[0] ?? ''}): every command an agent runs is refused`, fix: 'check OFFHOST_REAL_SHELL (default /bin/bash)' }];
    return [{ check: 'wrapper', ok: true, detail: `$SHELL ${shell}: refuses \`${PROBE_HEAVY}\`, runs \`true\`` }];
  },
};
