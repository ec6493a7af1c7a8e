// Programs the walker looks into beyond wrappers: `make -C DIR` (where the recipes run), files run by path
// and interpreter files (script-files.ts), `ssh localhost '…'` (runs here), git's configured commands
// (`-c alias.x=!…`, `core.pager`, `GIT_PAGER`), `trap '…'`, `ssh -o ProxyCommand=…`.
import { posix } from 'node:path';
import type { Span } from './ast.js';
import type { Field } from './expand.js';
import { emit, resolveDir, runScript, type Ctx, type State } from './commands.js';
import { CODE_INTERPRETERS, executableFile, interpreterFile, makefileRecipes } from './script-files.js';

/** Options of ssh whose value is a command run locally through a shell. */
const SSH_LOCAL_COMMAND = /^(ProxyCommand|LocalCommand|KnownHostsCommand)[= ](.*)$/is;

export function emitSpecial(
  name: string | null,
  fields: Field[],
  env: Record<string, string>,
  cwd: string | null,
  st: State,
  ctx: Ctx,
  span: Span,
): void {
  if (name === 'make' || name === 'gmake') {
    // make -C DIR / --directory=DIR / -CDIR: the recipes run in DIR (several -C compose).
    let dir = cwd;
    for (let i = 1; i < fields.length; i++) {
      const f = fields[i]!;
      if (!f.known) continue;
      if (f.value === '--') break;
      let target: Field | null = null;
      if (f.value === '-C' || f.value === '--directory') target = fields[++i] ?? null;
      else if (f.value.startsWith('--directory=')) target = { value: f.value.slice(12), known: true };
      else if (/^-[^-]*C/.test(f.value)) {
        const at = f.value.indexOf('C');
        target = at === f.value.length - 1 ? (fields[++i] ?? null) : { value: f.value.slice(at + 1), known: true };
      }
      if (target) dir = resolveDir(dir, target);
    }
    // make -f DIR/Makefile builds that directory's project: judge it as run there.
    let makefile: Field | null = null;
    for (let i = 1; i < fields.length; i++) {
      const f = fields[i]!;
      if (f.known && f.value === '--') break;
      if (f.known && (f.value === '-f' || f.value === '--file' || f.value === '--makefile')) makefile = fields[++i] ?? null;
      else if (f.known && /^--(file|makefile)=/.test(f.value)) makefile = { value: f.value.slice(f.value.indexOf('=') + 1), known: true };
      else if (f.known && /^-f./.test(f.value)) makefile = { value: f.value.slice(2), known: true };
    }
    const runDir = dir;
    if (makefile && makefile.value.includes('/')) {
      const file = resolveDir(dir, makefile);
      dir = file === null ? null : posix.dirname(file);
    } else if (makefile && !makefile.known) dir = null;
    emit(ctx, fields, env, dir, span, st);
    makefileRecipes(fields, makefile, runDir, env, st, ctx, span);
    return;
  }
  emit(ctx, fields, env, cwd, span, st);
  if (ctx.files && name !== null && fields[0]!.known) {
    if (fields[0]!.value.includes('/')) executableFile(fields, env, cwd, st, ctx, span);
    if (CODE_INTERPRETERS.test(name)) interpreterFile(name, fields, env, cwd, st, ctx, span);
  }
  if (name === 'ssh') sshToLocalhost(fields, env, cwd, st, ctx, span);
  if (name === 'git') gitCommands(fields, env, cwd, st, ctx, span);
  if (name === 'trap' && fields.length >= 3) {
    // `trap 'make build' EXIT`: the action runs later in this shell.
    let i = 1;
    if (fields[i]?.known && fields[i]!.value === '--') i++;
    const action = fields[i];
    if (action && !(action.known && (action.value === '-' || action.value === '' || /^-[lp]$/.test(action.value)))) {
      runScript(action, 'trap', cwd, env, st, ctx, span);
    }
  }
  if (name === 'ssh' || name === 'scp' || name === 'sftp') {
    for (let i = 1; i < fields.length; i++) {
      const f = fields[i]!;
      let opt: string | null = null;
      if (f.value === '-o') opt = fields[++i]?.value ?? null;
      else if (f.value.startsWith('-o')) opt = f.value.slice(2);
      const m = opt === null ? null : SSH_LOCAL_COMMAND.exec(opt);
      if (m) runScript({ value: m[2]!, known: fields[i]!.known }, `ssh -o ${m[1]}`, cwd, env, st, ctx, span);
    }
  }
}

const SSH_VALUE_OPTS = new Set(['-B', '-b', '-c', '-D', '-E', '-e', '-F', '-I', '-i', '-J', '-L', '-l', '-m', '-O', '-o', '-P', '-p', '-Q', '-R', '-S', '-W', '-w']);
const LOCAL_HOSTS = /^(?:[^@]*@)?(localhost|localhost\.localdomain|127(?:\.\d{1,3}){3}|::1|\[::1\]|0\.0\.0\.0|ip6-localhost)$/i;

/** `ssh localhost 'make build'` runs on this machine: judge the remote command as local. */
function sshToLocalhost(fields: Field[], env: Record<string, string>, cwd: string | null, st: State, ctx: Ctx, span: Span): void {
  let i = 1;
  while (i < fields.length) {
    const v = fields[i]!.value;
    if (v === '--') {
      i++;
      break;
    }
    if (!v.startsWith('-') || v.length < 2) break;
    i += SSH_VALUE_OPTS.has(v) ? 2 : 1;
  }
  const host = fields[i];
  if (!host) return;
  // A destination from a variable is taken as remote (what R1 allows); only a literal local host is local.
  if (!host.known || !LOCAL_HOSTS.test(host.value) || i + 1 >= fields.length) return;
  // sshd starts the command in the login directory (HOME), through the user's shell.
  runScript(joinFields(fields.slice(i + 1)), `ssh ${host.value}`, st.vars.get('HOME') ?? null, env, st, ctx, span);
}

function joinFields(fields: Field[]): Field {
  return { value: fields.map((f) => f.value).join(' '), known: fields.every((f) => f.known) };
}

/** git config keys whose value is a command git runs through a shell. */
const GIT_COMMAND_KEYS = /^(core\.(pager|editor|sshcommand|fsmonitor|askpass)|sequence\.editor|diff\.external|gpg\.program|interactive\.difffilter|pager\..+|filter\..+\.(clean|smudge|process)|merge\..+\.driver|diff\..+\.(textconv|command))$/i;
const GIT_COMMAND_ENV = ['GIT_SSH_COMMAND', 'GIT_EDITOR', 'GIT_PAGER', 'GIT_EXTERNAL_DIFF', 'GIT_SEQUENCE_EDITOR', 'GIT_ASKPASS'];

/**
 * `git -c alias.b='!make build' b`, `git -c core.pager='make build' log`, `GIT_PAGER=… git log`: git runs
 * these strings through a shell, here. They are judged whether or not git would reach them (fail closed).
 */
function gitCommands(fields: Field[], env: Record<string, string>, cwd: string | null, st: State, ctx: Ctx, span: Span): void {
  for (let i = 1; i < fields.length; i++) {
    const f = fields[i]!;
    let kv: Field | null = null;
    if (f.known && f.value === '-c') kv = fields[++i] ?? null;
    else if (f.known && f.value.startsWith('-c') && f.value.length > 2) kv = { value: f.value.slice(2), known: true };
    else if (f.known && f.value.startsWith('--config-env')) continue;
    else if (f.known && !f.value.startsWith('-')) break; // the subcommand: global options end here
    if (!kv) continue;
    const eq = kv.value.indexOf('=');
    if (eq < 0) continue;
    const key = kv.value.slice(0, eq);
    const value = kv.value.slice(eq + 1);
    if (/^alias\./i.test(key) && value.startsWith('!')) runScript({ value: value.slice(1), known: kv.known }, `git -c ${key}`, cwd, env, st, ctx, span);
    else if (/^credential\.(.+\.)?helper$/i.test(key) && value.startsWith('!')) runScript({ value: value.slice(1), known: kv.known }, `git -c ${key}`, cwd, env, st, ctx, span);
    else if (GIT_COMMAND_KEYS.test(key)) runScript({ value, known: kv.known }, `git -c ${key}`, cwd, env, st, ctx, span);
  }
  for (const k of GIT_COMMAND_ENV) {
    const v = env[k];
    if (v !== undefined) runScript({ value: v, known: true }, `git ${k}`, cwd, env, st, ctx, span);
  }
}
