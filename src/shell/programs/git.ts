// git: the commands it runs (aliases with `!`, editors, pagers, filters, hooks, `--upload-pack`, `ext::`
// remotes, `bisect run`, `rebase -x`,
// `submodule foreach`, `difftool -x`, `filter-branch --*-filter`), from every place git reads its
// configuration (`-c`, `--config-env`, GIT_CONFIG_COUNT/KEY_n/VALUE_n, GIT_CONFIG_PARAMETERS, a `git config`
// earlier in the line, the editor variables, and with the disk its config files: git-repo.ts), and where: git changes to the repository's top level before
// it runs anything (`git -C dir` first), so these commands run there, not in the caller's directory.
import type { Field } from '../expand.js';
import { executableFile, scriptFile, unknownScript, writesUnseenIn } from '../script-files.js';
import { envField, resolveDir, withVia, type Call, type Walker } from '../walk-state.js';
import { extCommand, fileConfig, gitDirs, hookFile, hooksOf, readConfigFile, remoteOverSsh, type GitDirs } from './git-repo.js';
import { parseOptions, type Grammar } from './grammar.js';
import type { ProgramModule, Unwrapped } from './types.js';

const GLOBAL: Grammar = {
  value: ['-C', '-c', '--config-env', '--git-dir', '--work-tree', '--namespace', '--super-prefix', '--list-cmds', '--attr-source'],
  flags: ['-p', '--paginate', '-P', '--no-pager', '--bare', '--no-replace-objects', '--literal-pathspecs', '--glob-pathspecs', '--noglob-pathspecs', '--icase-pathspecs', '--no-optional-locks', '--no-lazy-fetch', '--html-path', '--man-path', '--info-path', '--exec-path'],
  info: ['--version', '--help', '-h', '--html-path', '--man-path', '--info-path'],
  exactLong: true,
};

/** git config keys whose value is a command git runs through a shell. */
const COMMAND_KEYS = /^(core\.(pager|editor|sshcommand|fsmonitor|askpass|hookspath)|sequence\.editor|diff\.external|gpg\.program|gpg\.\w+\.program|interactive\.difffilter|pager\..+|filter\..+\.(clean|smudge|process)|merge\..+\.driver|diff\..+\.(textconv|command)|difftool\..+\.cmd|mergetool\..+\.cmd|credential\.(.+\.)?helper|alias\..+|uploadpack\.packobjectshook|sendemail\..*(cccmd|tocmd)|remote\..+\.(uploadpack|receivepack|vcs)|protocol\..+|core\.gitproxy)$/i;
/** Environment variables whose value is a command git runs. */
const COMMAND_ENV = ['GIT_SSH_COMMAND', 'GIT_SSH', 'GIT_EDITOR', 'GIT_PAGER', 'GIT_EXTERNAL_DIFF', 'GIT_SEQUENCE_EDITOR', 'GIT_ASKPASS', 'GIT_PROXY_COMMAND', 'VISUAL', 'EDITOR', 'PAGER'];

/** The directory git works in: the top level of the repository holding `dir` (null when it cannot be found). */
function topLevel(dir: string | null, call: Call, workTree: Field | null): string | null {
  if (workTree) return resolveDir(dir, workTree);
  const files = call.ctx.files;
  if (!files || dir === null) return null;
  for (let d = dir; ; d = d.slice(0, d.lastIndexOf('/')) || '/') {
    const r = files.read(d === '/' ? '/.git' : `${d}/.git`);
    if (r.kind === 'directory' || r.kind === 'text') return d;
    if (d === '/') return null;
  }
}

function envValue(call: Call, key: string): Field | undefined {
  return envField(call, key);
}

/** Every configuration entry this call sees from the line: key (lowercase) -> value. */
const NO_CONFIG = new Map<string, Field>();

function configOf(call: Call, globals: [string, Field | null][]): Map<string, Field> {
  // Most git calls have none of these: no map to build.
  let any = globals.length > 0 || call.st.gitConfig !== null || call.st.exported !== null;
  if (!any) for (const _ in call.env) any = true;
  if (!any) return NO_CONFIG;
  const config = new Map<string, Field>(call.st.gitConfig ?? []);
  const count = envValue(call, 'GIT_CONFIG_COUNT');
  if (count) {
    const n = count.known ? Math.min(Number.parseInt(count.value, 10) || 0, 64) : 0;
    for (let i = 0; i < n; i++) {
      const k = envValue(call, `GIT_CONFIG_KEY_${i}`);
      const v = envValue(call, `GIT_CONFIG_VALUE_${i}`);
      if (k && v) config.set(k.value.toLowerCase(), { value: v.value, known: v.known && k.known });
    }
  }
  const params = envValue(call, 'GIT_CONFIG_PARAMETERS');
  if (params) {
    // 'key'='value' pairs, shell-quoted.
    for (const m of params.value.matchAll(/'([^']*)'(?:='((?:[^']|'\\'')*)')?/g)) config.set(m[1]!.toLowerCase(), { value: (m[2] ?? '').replace(/'\\''/g, "'"), known: params.known });
  }
  for (const [name, v] of globals) {
    if (!v) continue;
    const eq = v.value.indexOf('=');
    if (name === '-c') {
      if (eq <= 0) continue;
      const key = v.value.slice(0, eq).toLowerCase();
      const value = v.value.slice(eq + 1);
      config.set(key, { value, known: v.known });
      // `-c include.path=FILE` (and includeIf): the file's entries count as given here. git takes only an
      // absolute or ~/ path from the command line (a relative one is an error there).
      if (/^include(if\..*)?\.path$/.test(key)) {
        const home = call.ctx.home;
        const path = value.startsWith('~/') && home ? `${home}${value.slice(1)}` : value;
        if (v.known && path.startsWith('/')) readConfigFile(path, call.ctx, home, config);
      }
    } else if (name === '--config-env' && eq > 0) {
      // --config-env=core.editor=MY_EDITOR: the value of the variable.
      config.set(v.value.slice(0, eq).toLowerCase(), envValue(call, v.value.slice(eq + 1)) ?? { value: '', known: false });
    }
  }
  return config;
}

/** `git config [scope] KEY VALUE`, `git config set KEY VALUE`, `git config --add KEY VALUE`: remembered for later git calls. */
function recordConfig(call: Call, args: Field[]): void {
  const words = args.filter((a) => !(a.known && /^--(global|local|system|worktree|add|replace-all|type=.*|bool|int|path)$/.test(a.value)));
  if (words[0]?.known && /^(set|--file|-f|--blob)$/.test(words[0].value)) {
    if (words[0].value === 'set') words.shift();
    else words.splice(0, 2);
  }
  if (words.some((w) => w.known && w.value.startsWith('-'))) return; // --get, --unset, --list...
  const [key, value] = words;
  if (key && value) (call.st.gitConfig ??= new Map()).set(key.value.toLowerCase(), { value: value.value, known: value.known && key.known });
}

const REBASE: Grammar = { value: ['-x', '--exec', '-s', '--strategy', '-X', '--strategy-option', '--onto', '-C', '--whitespace', '--empty', '--rebase-merges', '-r', '--gpg-sign', '-S'], flags: ['-i', '--interactive', '--root', '--autosquash', '--continue', '--abort', '--skip'], info: ['-h', '--help'] };
const DIFFTOOL: Grammar = { value: ['-x', '--extcmd', '-t', '--tool'], flags: ['-y', '--no-prompt', '--prompt', '-d', '--dir-diff', '--gui', '-g', '--symlinks', '--no-symlinks', '--trust-exit-code'], info: ['-h', '--help', '--tool-help'] };
const FILTERS = /^--(tree|index|msg|commit|env|parent|tag-name)-filter$/;

/** What a git subcommand runs itself: `bisect run`, `rebase -x`, `submodule foreach`, `difftool -x`, `filter-branch`. */
function subcommandRuns(sub: string, rest: Field[]): Unwrapped[] {
  const out: Unwrapped[] = [];
  if (sub === 'bisect' && rest[0]?.known && rest[0].value === 'run' && rest.length > 1) out.push({ kind: 'run', via: 'git bisect run', argv: rest.slice(1) });
  if (sub === 'rebase') {
    for (const [n, v] of parseOptions(REBASE, [{ value: 'rebase', known: true }, ...rest]).opts) if ((n === '-x' || n === '--exec') && v) out.push({ kind: 'script', via: 'git rebase --exec', text: v });
  }
  if (sub === 'submodule') {
    let i = 0;
    while (rest[i]?.known && rest[i]!.value.startsWith('-')) i++;
    if (rest[i]?.known && rest[i]!.value === 'foreach') {
      let j = i + 1;
      while (rest[j]?.known && /^(--recursive|-q|--quiet)$/.test(rest[j]!.value)) j++;
      // Run in each submodule's directory: not known here.
      if (rest[j]) out.push({ kind: 'script', via: 'git submodule foreach', text: { value: rest.slice(j).map((a) => a.value).join(' '), known: rest.slice(j).every((a) => a.known) }, cwdUnknown: true });
    }
  }
  if (sub === 'difftool' || sub === 'mergetool') {
    for (const [n, v] of parseOptions(DIFFTOOL, [{ value: sub, known: true }, ...rest]).opts) if ((n === '-x' || n === '--extcmd') && v) out.push({ kind: 'script', via: `git ${sub} --extcmd`, text: v });
  }
  if (sub === 'filter-branch') {
    for (let i = 0; i < rest.length; i++) {
      const f = rest[i]!;
      if (f.known && FILTERS.test(f.value) && rest[i + 1]) out.push({ kind: 'script', via: `git filter-branch ${f.value}`, text: rest[++i]!, cwdUnknown: true });
    }
  }
  return out;
}

function walk(call: Call, w: Walker): void {
  w.emitSelf(call);
  const argv = call.fields;
  // Global options, up to the subcommand.
  const globals: [string, Field | null][] = [];
  let i = 1;
  let dir = call.cwd;
  let workTree: Field | null = null;
  let gitDirOpt: Field | null = null;
  while (i < argv.length && argv[i]!.known && argv[i]!.value.startsWith('-')) {
    const p = parseOptions(GLOBAL, [argv[0]!, argv[i]!, ...(argv[i + 1] ? [argv[i + 1]!] : [])]);
    const [name, value] = p.opts[0] ?? ['', null];
    const took = GLOBAL.value.includes(name) && !argv[i]!.value.includes('=') && !(name === '-c' && argv[i]!.value.length > 2) && !(name === '-C' && argv[i]!.value.length > 2) ? 2 : 1;
    if (name === '-C' && value) dir = resolveDir(dir, value);
    if (name === '--work-tree' && value) workTree = value;
    if (name === '--git-dir' && value) gitDirOpt = value;
    globals.push([name, value]);
    i += took;
  }
  const wt = envValue(call, 'GIT_WORK_TREE');
  // Found only when something runs there (most git calls run nothing: no walk up the tree looking for .git).
  let topFound: { dir: string | null } | null = null;
  const top = () => (topFound ??= { dir: topLevel(dir, call, workTree ?? wt ?? null) }).dir;
  const lineConfig = configOf(call, globals);
  const subField = argv[i];
  const sub = subField?.known ? subField.value : null;
  const rest = argv.slice(i + 1);
  const run = (text: Field, via: string) => w.apply({ kind: 'script', via, text, absoluteCwd: top() }, call, false);
  // The configuration files git reads (with the disk only: the system, global and repository files).
  let dirs: GitDirs | null = null;
  let config = lineConfig;
  if (call.ctx.files && !(sub !== null && NO_FILE_CONFIG.has(sub))) {
    const t = top();
    // `--git-dir`/GIT_DIR name the repository (its config and hooks) directly.
    const named = gitDirOpt ?? envValue(call, 'GIT_DIR') ?? null;
    const namedDir = named ? resolveDir(dir, named) : null;
    dirs = namedDir ? { gitDir: namedDir, commonDir: namedDir } : t === null ? null : gitDirs(t, call.ctx);
    const files = fileConfig(dirs, call.ctx, (k) => envValue(call, k));
    if (files.size) config = new Map([...files, ...lineConfig]);
  }

  if (sub === 'config') recordConfig(call, rest);
  // Commands from the configuration (judged whether or not this subcommand reaches them: fail closed).
  for (const [key, value] of config) {
    if (!COMMAND_KEYS.test(key)) continue;
    if (key.startsWith('alias.') && key.slice(6) !== sub?.toLowerCase()) continue;
    if (key.startsWith('alias.') || /^credential\./.test(key)) {
      if (value.value.startsWith('!')) run({ value: value.value.slice(1), known: value.known }, `git ${key}`);
      else if (key.startsWith('alias.')) {
        // A plain alias expands to git's own arguments: `git b` with alias.b='bisect run make build'.
        const words: Field[] = value.value.split(/\s+/).filter(Boolean).map((v) => ({ value: v, known: value.known }));
        if (words.length && !(words[0]!.value === sub)) w.apply({ kind: 'run', via: `git ${key}`, argv: [argv[0]!, ...argv.slice(1, i), ...words, ...rest] }, call, false);
      }
      continue;
    }
    if (key === 'core.hookspath') continue; // a directory: its hooks are read below
    run(value, `git -c ${key}`);
  }
  if (sub) {
    remoteCommands(call, w, sub, rest, config, top);
    runHooks(call, sub, rest, config, dirs, top);
  }
  if (config !== NO_CONFIG) {
    for (const k of COMMAND_ENV) {
      const v = envValue(call, k);
      if (v !== undefined && v.value !== '') run(v, `git ${k}`);
    }
  }
  if (sub) for (const u of subcommandRuns(sub, rest)) w.apply(u.kind === 'run' || u.kind === 'script' ? (u.cwdUnknown ? u : { ...u, absoluteCwd: top() }) : u, call, false);
}

/**
 * Builtins that run no hook and reach no remote, and that an alias cannot replace (git's own commands win
 * over aliases): their config files are not read (an agent's `git status` pays for no file). A pager,
 * external diff or fsmonitor they may start is judged from the line's configuration only.
 */
const NO_FILE_CONFIG = new Set(['status', 'log', 'diff', 'show', 'grep', 'blame', 'ls-files', 'ls-tree', 'rev-parse', 'rev-list', 'describe', 'shortlog', 'cat-file', 'config', 'help', 'version', 'show-ref', 'for-each-ref', 'name-rev', 'reflog', 'whatchanged', 'var', 'check-ignore', 'diff-tree', 'diff-files', 'diff-index', 'merge-base']);

const NETWORK = new Set(['clone', 'fetch', 'pull', 'push', 'ls-remote', 'archive', 'remote', 'submodule']);
/** Options whose value is a command git runs for the remote side: `--upload-pack`, `--receive-pack`, push's `--exec`, archive's `--exec`, clone's `-u`. */
const PACK_OPTION: Record<string, readonly string[]> = {
  clone: ['--upload-pack'],
  fetch: ['--upload-pack'],
  pull: ['--upload-pack'],
  'ls-remote': ['--upload-pack'],
  push: ['--receive-pack', '--exec'],
  archive: ['--exec'],
};

/**
 * What git starts to reach a remote: the `--upload-pack`/`--receive-pack` command (through a shell, here
 * unless the repository is another machine over ssh: then it runs there) and an `ext::` URL's command
 * (here, always: git-remote-ext starts it itself), given on the line or as a remote's url in the config.
 */
function remoteCommands(call: Call, w: Walker, sub: string, rest: Field[], config: Map<string, Field>, top: () => string | null): void {
  if (!NETWORK.has(sub)) return;
  const longs = PACK_OPTION[sub] ?? [];
  const packs: Field[] = [];
  const urls: Field[] = [];
  for (let k = 0; k < rest.length; k++) {
    const f = rest[k]!;
    if (!f.known) continue;
    const v = f.value;
    if (v.startsWith('--')) {
      const eq = v.indexOf('=');
      const name = eq < 0 ? v : v.slice(0, eq);
      // An unambiguous prefix is the option (git's parse-options): `--upload=CMD`.
      if (name.length >= 5 && longs.some((l) => l.startsWith(name))) {
        const value = eq < 0 ? rest[++k] : { value: v.slice(eq + 1), known: true };
        if (value) packs.push(value);
      } else if (name === '--remote' && eq > 0) urls.push({ value: v.slice(eq + 1), known: true });
      continue;
    }
    if (sub === 'clone' && v.startsWith('-u')) {
      const value = v.length > 2 ? { value: v.slice(2), known: true } : rest[++k];
      if (value) packs.push(value);
      continue;
    }
    if (!v.startsWith('-')) urls.push(f);
  }
  // A remote's name stands for its configured url (`git fetch origin`, `git push` to origin).
  const named = urls.length ? urls : [{ value: 'origin', known: true }];
  const resolved = named.map((u) => config.get(`remote.${u.value.toLowerCase()}.url`) ?? u);
  for (const u of resolved) {
    const ext = extAllowed(call, config) ? extCommand(u) : null;
    if (ext) w.apply({ kind: 'run', via: `git ${sub} ${u.value.slice(0, 40)}`, argv: ext, absoluteCwd: top() }, call, false);
  }
  if (packs.length && !resolved.some((u) => !u.known || !remoteOverSsh(u.value))) return; // they run on the other machine
  for (const p of packs) w.apply({ kind: 'script', via: `git ${sub} --upload-pack`, text: p, absoluteCwd: top() }, call, false);
}

/**
 * `git clone --template=DIR` (or `init.templateDir`, GIT_TEMPLATE_DIR) copies DIR's hooks into the new
 * repository, and the clone's checkout runs its post-checkout there (not with `-n`, `--bare`, `--mirror`).
 * Run in the new clone, a directory judged unknown here.
 */
function cloneHook(call: Call, rest: Field[], config: Map<string, Field>): void {
  let template: Field | null = null;
  for (let k = 0; k < rest.length; k++) {
    const f = rest[k]!;
    if (!f.known) continue;
    if (/^(-n|--no-checkout|--bare|--mirror)$/.test(f.value)) return;
    if (f.value.startsWith('--template=')) template = { value: f.value.slice(11), known: true };
    else if (f.value === '--template' && rest[k + 1]) template = rest[++k]!;
  }
  template ??= envValue(call, 'GIT_TEMPLATE_DIR') ?? config.get('init.templatedir') ?? null;
  if (!template) return; // git's own template holds only .sample hooks, which never run
  const dir = template.known && template.value.startsWith('~/') && call.ctx.home ? `${call.ctx.home}${template.value.slice(1)}` : resolveDir(call.cwd, template);
  const file = { value: dir === null ? template.value : `${dir}/hooks/post-checkout`, known: dir !== null };
  withVia(call.ctx, 'git clone (the template\'s post-checkout hook, in the new clone)', () => {
    if (!file.known) unknownScript(file, 'git clone --template', call.env, null, call.st, call.ctx, call.span);
    else executableFile([file], call.env, null, call.st, call.ctx, call.span);
  });
}

/**
 * Whether git would use an `ext::` remote (git-config(1) protocol.allow): GIT_ALLOW_PROTOCOL lists the
 * protocols allowed; else protocol.ext.allow, else protocol.allow; by default ext is `never`. A value
 * offhost cannot know allows it (fail closed).
 */
function extAllowed(call: Call, config: Map<string, Field>): boolean {
  const list = envValue(call, 'GIT_ALLOW_PROTOCOL');
  if (list) return !list.known || list.value.split(':').includes('ext');
  const v = config.get('protocol.ext.allow') ?? config.get('protocol.allow');
  return v !== undefined && (!v.known || v.value.toLowerCase() !== 'never');
}

/**
 * The hooks `git SUB` runs, read as the scripts they are (a `#!` line says what runs them): from
 * `core.hooksPath` (relative to the top level) or the repository's `hooks/` directory. Only with the
 * disk; a hooks directory offhost cannot know (`-c core.hooksPath=$DIR`) is an unknown script.
 */
function runHooks(call: Call, sub: string, rest: Field[], config: Map<string, Field>, dirs: GitDirs | null, top: () => string | null): void {
  const ctx = call.ctx;
  if (!ctx.files) return;
  if (sub === 'clone') return cloneHook(call, rest, config);
  const hooks = hooksOf(sub, rest);
  if (!hooks.length) return;
  const t = top();
  const configured = config.get('core.hookspath');
  let hooksDir: string | null;
  if (configured && configured.value !== '') {
    const v = configured.value.startsWith('~/') && ctx.home ? { ...configured, value: `${ctx.home}${configured.value.slice(1)}` } : configured;
    hooksDir = resolveDir(t, v);
  } else {
    if (!dirs) return; // not a repository: git runs no hook
    hooksDir = `${dirs.commonDir}/hooks`;
  }
  if (hooksDir === null) {
    unknownScript(configured ?? { value: 'core.hooksPath', known: false }, `git ${sub} (its hooks)`, call.env, t, call.st, ctx, call.span);
    return;
  }
  // This git call's own words (`-m "$MSG"`, `-c core.hooksPath="$PWD/…"`) write no file: the rest of the
  // line decides whether a hook may be written at run time (in the top-level line, whose spans these are).
  const saved = ctx.writesUnseen;
  if (ctx.outerSpan === null && ctx.shellDepth === 0) ctx.writesUnseen = writesUnseenIn(ctx.text.slice(0, call.span.start) + ctx.text.slice(call.span.end));
  try {
    for (const hook of hooks) {
      const { path, shell } = hookFile(hooksDir, hook);
      const file = { value: path, known: true };
      withVia(ctx, `git ${sub} (its ${hook} hook)`, () => {
        if (shell) scriptFile(file, [], 'sh -e', false, call.env, t, call.st, ctx, call.span);
        else executableFile([file], call.env, t, call.st, ctx, call.span);
      });
    }
  } finally {
    ctx.writesUnseen = saved;
  }
}

export const git: ProgramModule = {
  family: 'git',
  names: ['git'],
  grammar: GLOBAL,
  walk,
  examples: {
    match: [
      { line: 'git bisect run make -C engines/lang/koda build-safe', runs: 'make -C engines/lang/koda build-safe' },
      { line: "git rebase -x 'make build-safe' HEAD~3", runs: 'make build-safe' },
      { line: "git submodule foreach 'make build-safe'", runs: 'make build-safe' },
      { line: "git difftool -x 'make build-safe' HEAD", runs: 'make build-safe' },
      { line: "git filter-branch --tree-filter 'make build-safe' HEAD", runs: 'make build-safe' },
      { line: "git -c core.editor='make build-safe' commit", runs: 'make build-safe' },
      { line: "GIT_EDITOR='make build-safe' git commit", runs: 'make build-safe' },
      { line: "EDITOR='make build-safe' git commit", runs: 'make build-safe' },
      { line: "MY_ED='make build-safe' git --config-env=core.editor=MY_ED commit", runs: 'make build-safe' },
      { line: "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=alias.b GIT_CONFIG_VALUE_0='!make build-safe' git b", runs: 'make build-safe' },
      { line: "GIT_CONFIG_PARAMETERS=\"'alias.b'='!make build-safe'\" git b", runs: 'make build-safe' },
      { line: "git config alias.b '!make build-safe'; git b", runs: 'make build-safe' },
      { line: "git config alias.b 'bisect run make build-safe'; git b", runs: 'make build-safe' },
      { line: "git -c alias.b='!make build-safe' b", runs: 'make build-safe' },
      { line: "git fetch --upload-pack='make build-safe' ../other", runs: 'make build-safe' },
      { line: "git clone -u 'make build-safe' /srv/repo copy", runs: 'make build-safe' },
      { line: "git push --receive-pack='make build-safe' ./mirror main", runs: 'make build-safe' },
      { line: "git -c protocol.ext.allow=always ls-remote 'ext::make build-safe'", runs: 'make build-safe' },
      { line: "git -c protocol.allow=always clone 'ext::sh -c make% build-safe' x", runs: 'sh -c make build-safe' },
    ],
    not_match: [
      { line: "git -c alias.b='!make build-safe' log", runs: 'make build-safe' },
      { line: "git log --grep='make build-safe'", runs: 'make build-safe' },
      { line: "git commit -m 'make build-safe'", runs: 'make build-safe' },
      { line: "git fetch --upload-pack='make build-safe' khost1:repo", runs: 'make build-safe' },
      { line: "git ls-remote 'ext::make build-safe'", runs: 'make build-safe' },
    ],
  },
};
