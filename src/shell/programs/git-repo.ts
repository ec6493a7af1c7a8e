// What git itself reads from the repository and runs: its configuration files (system, global, the
// repository's own, with their includes), the hooks a subcommand runs (`.git/hooks/*`, `core.hooksPath`,
// husky's `.husky/`), and the commands an `ext::` remote or `--upload-pack` starts. Read through the
// walker's file access only (no disk of its own); used by git.ts.
import { posix } from 'node:path';
import type { Field } from '../expand.js';
import type { Ctx } from '../walk-state.js';
import { writtenText } from '../script-files.js';

/** The repository's git directory and common directory (they differ in a linked worktree). */
export interface GitDirs {
  gitDir: string;
  commonDir: string;
}

/** `.git` under the top level: a directory, or a file saying `gitdir: PATH` (worktrees, submodules). */
export function gitDirs(top: string, ctx: Ctx): GitDirs | null {
  const files = ctx.files;
  if (!files) return null;
  const dotGit = top === '/' ? '/.git' : `${top}/.git`;
  const r = files.read(dotGit);
  let gitDir: string;
  if (r.kind === 'directory') gitDir = dotGit;
  else if (r.kind === 'text') {
    const m = /^gitdir:[ \t]*(.+?)[ \t]*$/m.exec(r.text);
    if (!m) return null;
    gitDir = posix.resolve(top, m[1]!);
  } else return null;
  const common = files.read(`${gitDir}/commondir`);
  const commonDir = common.kind === 'text' && common.text.trim() ? posix.resolve(gitDir, common.text.trim()) : gitDir;
  return { gitDir, commonDir };
}

const MAX_INCLUDE_DEPTH = 10;

/**
 * A git config file's entries, in order (key lowercased, as git compares them; the last value wins),
 * with `include.path` and `includeIf.*.path` files read in place (every condition taken as true: an
 * include offhost cannot evaluate may hold an alias, so it counts). Unreadable or missing files add nothing.
 */
export function readConfigFile(path: string, ctx: Ctx, home: string | null, into: Map<string, Field>, depth = 0): void {
  if (depth > MAX_INCLUDE_DEPTH) return;
  // What the line wrote there first (`printf '[core]…' > ~/x.cfg && git -c include.path=~/x.cfg …`), else the disk.
  const written = writtenText(path, ctx);
  let text: string;
  if (written) {
    if (!written.known) return;
    text = written.value;
  } else {
    const r = ctx.files?.read(path);
    if (!r || r.kind !== 'text') return;
    text = r.text;
  }
  let section = '';
  const lines = text.split('\n');
  for (let n = 0; n < lines.length; n++) {
    let line = lines[n]!;
    // A value continued on the next line (`\` at the end).
    while (/(^|[^\\])(\\\\)*\\\r?$/.test(line) && n + 1 < lines.length) line = line.replace(/\\\r?$/, '') + lines[++n]!;
    const head = /^\s*\[\s*([A-Za-z0-9.-]+)(?:\s+"((?:[^"\\]|\\.)*)")?\s*\]\s*(.*)$/.exec(line);
    if (head) {
      section = head[2] !== undefined ? `${head[1]!.toLowerCase()}.${head[2].replace(/\\(.)/g, '$1')}` : head[1]!.toLowerCase();
      line = head[3]!;
      if (!line.trim()) continue;
    }
    const kv = /^\s*([A-Za-z][A-Za-z0-9-]*)\s*(?:=(.*))?$/.exec(line.replace(/^\s*[#;].*$/, ''));
    if (!kv || !section) continue;
    const key = `${section}.${kv[1]!.toLowerCase()}`;
    const value = kv[2] === undefined ? 'true' : configValue(kv[2]);
    into.set(key.toLowerCase(), { value, known: true });
    if (/^include(if\..*)?\.path$/i.test(key)) {
      const inc = value.startsWith('~/') && home ? `${home}${value.slice(1)}` : value;
      readConfigFile(posix.resolve(posix.dirname(path), inc), ctx, home, into, depth + 1);
    }
  }
}

/** A config value: quotes removed, `\"`, `\\`, `\n`, `\t` and `\b` unescaped, a comment outside quotes dropped. */
function configValue(raw: string): string {
  let out = '';
  let quoted = false;
  let pendingSpace = '';
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i]!;
    if (c === '"') {
      quoted = !quoted;
      out += pendingSpace;
      pendingSpace = '';
    } else if (c === '\\' && i + 1 < raw.length) {
      const e = raw[++i]!;
      out += pendingSpace + (e === 'n' ? '\n' : e === 't' ? '\t' : e === 'b' ? '\b' : e);
      pendingSpace = '';
    } else if (!quoted && (c === '#' || c === ';')) break;
    else if (!quoted && (c === ' ' || c === '\t')) {
      if (out !== '') pendingSpace += c;
    } else {
      out += pendingSpace + c;
      pendingSpace = '';
    }
  }
  return out;
}

/**
 * The configuration git reads from files, lowest priority first: the system file (unless
 * GIT_CONFIG_NOSYSTEM), the global files (GIT_CONFIG_GLOBAL, else ~/.gitconfig and the XDG one), the
 * repository's `config` and `config.worktree`.
 */
export function fileConfig(dirs: GitDirs | null, ctx: Ctx, env: (key: string) => Field | undefined): Map<string, Field> {
  const config = new Map<string, Field>();
  const home = ctx.home;
  const noSystem = env('GIT_CONFIG_NOSYSTEM');
  if (!(noSystem?.known && /^(1|true|yes|on)$/i.test(noSystem.value))) readConfigFile(env('GIT_CONFIG_SYSTEM')?.value ?? '/etc/gitconfig', ctx, home, config);
  const global = env('GIT_CONFIG_GLOBAL');
  if (global?.known) readConfigFile(global.value, ctx, home, config);
  else if (home) {
    const xdg = env('XDG_CONFIG_HOME');
    readConfigFile(xdg?.known ? `${xdg.value}/git/config` : `${home}/.config/git/config`, ctx, home, config);
    readConfigFile(`${home}/.gitconfig`, ctx, home, config);
  }
  if (dirs) {
    readConfigFile(`${dirs.commonDir}/config`, ctx, home, config);
    if (dirs.gitDir !== dirs.commonDir) readConfigFile(`${dirs.gitDir}/config.worktree`, ctx, home, config);
  }
  return config;
}

/**
 * The hooks each subcommand may run (githooks(5)), and the ones `--no-verify` skips. Fail closed: a hook
 * a subcommand runs only sometimes (post-rewrite after `--amend`, pre-auto-gc when gc is due,
 * reference-transaction on every ref update) counts whenever it may run.
 */
const HOOKS: Record<string, { hooks: string[]; verify?: string[] }> = {
  commit: { hooks: ['pre-commit', 'prepare-commit-msg', 'commit-msg', 'post-commit', 'post-rewrite', 'pre-auto-gc', 'reference-transaction', 'post-index-change'], verify: ['pre-commit', 'commit-msg'] },
  merge: { hooks: ['pre-merge-commit', 'prepare-commit-msg', 'commit-msg', 'post-merge', 'pre-auto-gc', 'reference-transaction', 'post-index-change'], verify: ['pre-merge-commit', 'commit-msg'] },
  pull: { hooks: ['pre-merge-commit', 'prepare-commit-msg', 'commit-msg', 'post-merge', 'pre-rebase', 'post-rewrite', 'post-checkout', 'pre-auto-gc', 'reference-transaction', 'post-index-change'], verify: ['pre-merge-commit', 'commit-msg'] },
  rebase: { hooks: ['pre-rebase', 'post-checkout', 'post-rewrite', 'prepare-commit-msg', 'commit-msg', 'pre-auto-gc', 'reference-transaction', 'post-index-change'], verify: ['pre-rebase', 'commit-msg'] },
  am: { hooks: ['applypatch-msg', 'pre-applypatch', 'post-applypatch', 'post-rewrite', 'pre-auto-gc', 'reference-transaction', 'post-index-change'], verify: ['applypatch-msg', 'pre-applypatch'] },
  'cherry-pick': { hooks: ['prepare-commit-msg', 'commit-msg', 'post-commit', 'reference-transaction', 'post-index-change'] },
  revert: { hooks: ['prepare-commit-msg', 'commit-msg', 'post-commit', 'reference-transaction', 'post-index-change'] },
  push: { hooks: ['pre-push', 'reference-transaction'], verify: ['pre-push'] },
  checkout: { hooks: ['post-checkout', 'reference-transaction', 'post-index-change'] },
  switch: { hooks: ['post-checkout', 'reference-transaction', 'post-index-change'] },
  worktree: { hooks: ['post-checkout', 'reference-transaction'] },
  reset: { hooks: ['reference-transaction', 'post-index-change'] },
  restore: { hooks: ['post-index-change'] },
  stash: { hooks: ['reference-transaction', 'post-index-change'] },
  branch: { hooks: ['reference-transaction'] },
  tag: { hooks: ['reference-transaction'] },
  'update-ref': { hooks: ['reference-transaction'] },
  fetch: { hooks: ['reference-transaction', 'pre-auto-gc'] },
  gc: { hooks: ['pre-auto-gc'] },
  'send-email': { hooks: ['sendemail-validate'], verify: ['sendemail-validate'] },
};

/** The hooks `git SUB ARGS` runs (none for a subcommand that runs none). */
export function hooksOf(sub: string, rest: Field[]): string[] {
  const h = HOOKS[sub];
  if (!h) return [];
  // `--no-verify` (and `-n` for commit, which is its short form there) skips the verification hooks.
  const noVerify = rest.some((a) => a.known && (a.value === '--no-verify' || (sub === 'commit' && /^-[a-zA-Z]*n[a-zA-Z]*$/.test(a.value) && !/^-[a-zA-Z]*[mFCcS]/.test(a.value))));
  return noVerify && h.verify ? h.hooks.filter((x) => !h.verify!.includes(x)) : h.hooks;
}

/**
 * The file each hook is read from: `core.hooksPath` (relative to the top level, where hooks run), else
 * the common directory's `hooks/`. Husky (v9) points core.hooksPath at `.husky/_`, whose scripts only
 * hand over to `.husky/<hook>` run by `sh -e`: that file is the one read (the dispatcher's `${0%/*}`
 * cannot be followed statically).
 */
export function hookFile(hooksDir: string, hook: string): { path: string; shell: boolean } {
  if (posix.basename(hooksDir) === '_' && posix.basename(posix.dirname(hooksDir)) === '.husky') return { path: `${posix.dirname(hooksDir)}/${hook}`, shell: true };
  return { path: `${hooksDir}/${hook}`, shell: false };
}

/**
 * `ext::CMD ARG…` (git-remote-ext(1)): git runs CMD with the arguments, no shell: words split at spaces,
 * every space ends a word (`% ` is a space in one), `%%` a percent, `%s`/`%S` the service name, `%G…`/`%V…` words dropped. Null when the URL
 * is not an ext:: one.
 */
export function extCommand(url: Field): Field[] | null {
  if (!url.value.startsWith('ext::')) return null;
  const words: Field[] = [];
  let cur = '';
  let drop = false;
  const text = url.value.slice(5);
  // Every space ends a word (two spaces make an empty argument, as git-remote-ext splits).
  const push = () => {
    if (!drop) words.push({ value: cur, known: url.known });
    cur = '';
    drop = false;
  };
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === ' ') {
      push();
      continue;
    }
    if (c === '%' && i + 1 < text.length) {
      const e = text[++i]!;
      if (e === ' ' || e === '%') cur += e;
      else if (e === 's') cur += 'upload-pack';
      else if (e === 'S') cur += 'git-upload-pack';
      else if ((e === 'G' || e === 'V') && cur === '') drop = true;
      else cur += `%${e}`;
      continue;
    }
    cur += c;
  }
  if (cur !== '') push(); // a trailing space adds no empty argument
  return words.length ? words : null;
}

/** Whether a repository argument names another machine over ssh (`host:path`, `ssh://host/…`): git runs `--upload-pack` there. */
export function remoteOverSsh(url: string): boolean {
  const m = /^(?:ssh|git\+ssh|ssh\+git):\/\/(?:[^@/]*@)?(\[[^\]]+\]|[^/:]+)/.exec(url) ?? /^(?:[^@/:]*@)?(\[[^\]]+\]|[^/:]+):(?!\/\/)/.exec(url);
  if (!m || url.startsWith('/') || url.startsWith('.')) return false;
  const host = m[1]!.replace(/^\[|\]$/g, '').toLowerCase();
  return !/^(localhost|localhost6|127(\.\d+){0,3}|::1|0|0\.0\.0\.0)$/.test(host);
}
