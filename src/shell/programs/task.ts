// Task (go-task, `task` / `go-task`): `task e2e` runs the task's deps, its cmds (each by a shell, in the
// task's `dir`, from the Taskfile's folder) and the tasks its cmds call; `task` alone runs `default`;
// `task web:e2e` a task of an included Taskfile. The Taskfile is read from disk (src/shell/mini-yaml.ts):
// a Taskfile outside the YAML that reader follows, a task shape it does not know, or a Taskfile the line
// writes is unknown; a template (`{{.VAR}}`) is an unknown variable.
import { posix } from 'node:path';
import type { Field } from '../expand.js';
import { readMiniYaml, type YamlValue } from '../mini-yaml.js';
import { lineMayWrite, nearest, searchFrom, unknownScript } from '../script-files.js';
import { NestedParseError, resolveDir, withVia, type Call, type Walker } from '../walk-state.js';
import type { ProgramModule } from './types.js';

const VALUE_OPTS = new Set(['-t', '--taskfile', '-d', '--dir', '-C', '--concurrency', '-o', '--output', '--output-group-begin', '--output-group-end', '--sort', '-I', '--interval', '--remote-cache-dir', '--expiry', '--cacert', '--cert', '--cert-key']);
const NO_RUN = new Set(['-l', '--list', '-a', '--list-all', '--summary', '-n', '--dry', '--status', '-i', '--init', '-h', '--help', '--version', '--json', '--completion', '--experiments']);
const TASKFILES = ['Taskfile.yml', 'taskfile.yml', 'Taskfile.yaml', 'taskfile.yaml', 'Taskfile.dist.yml', 'taskfile.dist.yml', 'Taskfile.dist.yaml', 'taskfile.dist.yaml'];
/** A template (`{{.VAR}}`, `{{.CLI_ARGS}}`) becomes a variable nothing sets. */
const UNKNOWN_TEMPLATE = '${__offhost_task}';

type Obj = { [k: string]: YamlValue };
const isObj = (v: YamlValue | undefined): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

interface Loaded {
  file: string;
  dir: string;
  tasks: Obj;
  includes: Obj;
}

class Unknown extends Error {}

/** A Taskfile outside the YAML mini-yaml reads: its text, for a reading line by line. */
class UnreadableTaskfile extends Unknown {
  constructor(
    readonly path: string,
    readonly text: string,
  ) {
    super(`${path}: YAML offhost does not read`);
  }
}

/**
 * Every line of a Taskfile offhost cannot read that could be a command (a list item, a `cmd:` value, a
 * block scalar's line), walked as a command that counts only where a rule matches it for sure: a task file
 * written to be unreadable does not hide `playwright test` in one of its tasks.
 */
function commandLines(call: Call, w: Walker, t: UnreadableTaskfile): void {
  const { ctx } = call;
  const dir = posix.dirname(t.path);
  const was = ctx.certainOnly;
  ctx.certainOnly = true;
  try {
    for (const raw of t.text.split(/\r?\n/)) {
      let line = raw.trim().replace(/^(?:-\s+)+/, '');
      const kv = /^[\w.-]+\s*:(?:\s+(.*))?$/.exec(line);
      if (kv) line = kv[1] ?? '';
      if (line === '' || line.startsWith('#') || /^[|>][+-]?$/.test(line) || /^[&*]\S*$/.test(line)) continue;
      // `[a, b]`: each item; a quoted scalar: its text.
      const items = line.startsWith('[') && line.endsWith(']') ? line.slice(1, -1).split(',') : [line];
      for (const item of items) {
        const text = item.trim().replace(/^[&*]\S+\s*/, '').replace(/^(['"])(.*)\1$/, '$2');
        if (text === '') continue;
        try {
          w.runScript({ value: template(text), known: true }, `task (${posix.basename(t.path)}, read line by line)`, dir, call.env, call.st, ctx, call.span);
        } catch (err) {
          if (!(err instanceof NestedParseError) || ctx.nodes > ctx.maxNodes) throw err;
        }
      }
    }
  } finally {
    ctx.certainOnly = was;
  }
}

function load(path: string, call: Call): Loaded | null {
  if (lineMayWrite(path, call.ctx, false)) throw new Unknown(`${posix.basename(path)} written by the line`);
  const r = call.ctx.files!.read(path);
  if (r.kind === 'missing' || r.kind === 'directory') return null;
  if (r.kind !== 'text') throw new Unknown(`${path} cannot be read`);
  const doc = readMiniYaml(r.text);
  if (!isObj(doc)) throw new UnreadableTaskfile(path, r.text);
  return { file: path, dir: posix.dirname(path), tasks: isObj(doc.tasks) ? doc.tasks : {}, includes: isObj(doc.includes) ? doc.includes : {} };
}

function find(dir: string, call: Call): Loaded | null {
  return nearest(dir, TASKFILES, (path) => load(path, call));
}

const template = (s: string): string => s.replace(/\{\{[\s\S]*?\}\}/g, () => UNKNOWN_TEMPLATE);

function runTask(tf: Loaded, name: string, call: Call, w: Walker, done: Set<string>, depth: number): void {
  if (depth > 32) throw new Unknown('tasks nested too deep');
  if (name.includes('{{')) throw new Unknown(`a task named by a template (${name})`);
  const key = `${tf.file}\u0000${name}`;
  if (done.has(key)) return;
  done.add(key);
  let task = tf.tasks[name];
  if (task === undefined) {
    const colon = name.indexOf(':');
    if (colon < 0) return; // no such task: task stops
    const inc = tf.includes[name.slice(0, colon)];
    if (inc === undefined) return;
    const spec = typeof inc === 'string' ? inc : isObj(inc) && typeof inc.taskfile === 'string' ? inc.taskfile : null;
    if (spec === null || spec.includes('{{')) throw new Unknown(`include ${name.slice(0, colon)}`);
    let path = posix.resolve(tf.dir, spec.replace(/^~(?=\/)/, call.ctx.home ?? '~'));
    let inner = load(path, call);
    if (!inner) for (const n of TASKFILES) if ((inner = load((path = posix.join(posix.resolve(tf.dir, spec), n)), call))) break;
    if (!inner) return;
    if (isObj(inc) && typeof inc.dir === 'string') inner = { ...inner, dir: posix.resolve(tf.dir, template(inc.dir)) };
    return runTask(inner, name.slice(colon + 1), call, w, done, depth + 1);
  }
  // `build: make build` and `build: [a, b]` are the short forms of `cmds`.
  if (typeof task === 'string' || Array.isArray(task)) task = { cmds: task };
  if (!isObj(task)) throw new Unknown(`task ${name}`);
  const dir = typeof task.dir === 'string' ? resolveDir(tf.dir, { value: template(task.dir), known: !task.dir.includes('{{') }) : tf.dir;
  const label = `task ${name} (${posix.basename(tf.file)})`;
  const list = (v: YamlValue | undefined): YamlValue[] => (v === undefined || v === null ? [] : Array.isArray(v) ? v : [v]);
  for (const d of list(task.deps)) {
    const n = typeof d === 'string' ? d : isObj(d) && typeof d.task === 'string' ? d.task : null;
    if (n === null) throw new Unknown(`a dependency of ${name}`);
    runTask(tf, n, call, w, done, depth + 1);
  }
  const cmds = [...list(task.cmds), ...list(task.cmd)];
  for (const c of cmds) {
    const text = typeof c === 'string' ? c : isObj(c) && typeof c.cmd === 'string' ? c.cmd : isObj(c) && typeof c.defer === 'string' ? c.defer : null;
    if (text !== null) {
      w.runScript({ value: template(text), known: true }, label, dir, call.env, call.st, call.ctx, call.span);
      continue;
    }
    const sub = isObj(c) ? (typeof c.task === 'string' ? c.task : isObj(c.defer) && typeof c.defer.task === 'string' ? c.defer.task : null) : null;
    if (sub === null) throw new Unknown(`a command of ${name}`);
    runTask(tf, sub, call, w, done, depth + 1);
  }
}

function walk(call: Call, w: Walker): void {
  w.emitSelf(call);
  const { fields, ctx } = call;
  let file: Field | undefined;
  let dirOpt: Field | undefined;
  const names: Field[] = [];
  for (let i = 1; i < fields.length; i++) {
    const f = fields[i]!;
    if (!f.known) {
      names.push(f);
      continue;
    }
    const v = f.value;
    if (v === '--') break; // CLI_ARGS: a template's value
    if (NO_RUN.has(v)) return;
    if (v === '-t' || v === '--taskfile') file = fields[++i];
    else if (v.startsWith('--taskfile=')) file = { value: v.slice(11), known: true };
    else if (v === '-d' || v === '--dir') dirOpt = fields[++i];
    else if (v.startsWith('--dir=')) dirOpt = { value: v.slice(6), known: true };
    else if (VALUE_OPTS.has(v)) i++;
    else if (!v.startsWith('-')) names.push(f); // a task, or VAR=value
  }
  if (!ctx.files || call.cwd === null) return;
  const where = `task ${names.map((n) => n.value).join(' ')}`.trim();
  try {
    const start = dirOpt ? resolveDir(call.cwd, dirOpt) : call.cwd;
    if (start === null) throw new Unknown('a directory offhost cannot resolve');
    let tf: Loaded | null;
    if (file) {
      const path = file.known ? resolveDir(start, file) : null;
      if (path === null) throw new Unknown('a Taskfile named at run time');
      tf = load(path, call) ?? (() => {
        for (const n of TASKFILES) {
          const got = load(posix.join(path, n), call);
          if (got) return got;
        }
        return null;
      })();
    } else {
      // task takes its directory from $PWD when it names this one (Go's os.Getwd), so from a symlinked
      // checkout it searches the link's parents; a shell started with a physical directory, the
      // checkout's. Both, the link's first.
      tf = find(start, call);
      const real = searchFrom(start, ctx);
      if (!tf && real !== start) tf = find(real, call);
    }
    if (!tf) return; // no Taskfile: task stops
    const tasks = names.filter((n) => !(n.known && /^[A-Za-z_][A-Za-z0-9_]*=/.test(n.value)));
    if (tasks.some((n) => !n.known)) throw new Unknown('a task named at run time');
    const done = new Set<string>();
    if (tasks.length === 0) runTask(tf, 'default', call, w, done, 0);
    for (const t of tasks) runTask(tf, t.value, call, w, done, 0);
  } catch (err) {
    if (!(err instanceof Unknown)) throw err;
    withVia(ctx, `${where} (${err.message})`, () => unknownScript({ value: where, known: false }, where, call.env, call.cwd, call.st, ctx, call.span));
    if (err instanceof UnreadableTaskfile) commandLines(call, w, err);
  }
}

export const task: ProgramModule = {
  family: 'task',
  names: ['task', 'go-task'],
  walk,
  examples: {
    // The tasks come from a Taskfile on disk: test/policy/script-files.test.ts.
    match: [{ line: 'task --list-all', runs: 'task --list-all' }],
    not_match: [{ line: 'task --list', runs: 'make build' }],
  },
};

/** The YAML subset reader, for the containers family's compose files (one family owns mini-yaml.ts: docs/BUILD.md). */
export { readMiniYaml } from '../mini-yaml.js';
