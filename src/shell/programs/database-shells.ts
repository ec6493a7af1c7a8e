// Database shells that run shell commands from the commands they are given: sqlite3 and duckdb
// (`.system CMD`, `.shell CMD`, `.once '|CMD'`, `.output '|CMD'`, `.import '|CMD' TABLE`), psql (`\! CMD`,
// `\o |CMD`, `\g |CMD`, `COPY … FROM/TO PROGRAM 'CMD'`, which a server on this machine runs here), and
// mysql/mariadb (`system CMD`, `\! CMD`, `pager CMD`). The commands come from options (`-cmd`, `-c`, `-e`,
// `--command`), from the SQL operands (sqlite3 DB 'SQL'…), from files (psql `-f FILE`, sqlite3 `-init
// FILE`, and the files the commands include: sqlite3 `.read`, psql `\i`/`\ir`, mysql `source`/`\.`; read
// as a script run by its path is, when the disk is), or else from standard input (a heredoc, a
// here-string, a pipe). Each escape runs through
// the user's shell in the program's directory: judged as the line it is there. What cannot be read
// (computed text, unreadable input) is no escape: SQL itself runs nothing here. Their pagers (PSQL_PAGER,
// `--pager`) are ./pagers.ts's.
import type { Field } from '../expand.js';
import type { Call } from '../walk-state.js';
import type { ProgramModule } from './types.js';
import { optionValues } from './grammar.js';
import { readCommandFile } from '../script-files.js';
import { pagerItems } from './pagers.js';
import type { Unwrapped } from '../unwrapped.js';

interface Shell {
  /** Options whose value is commands the shell runs (a `long` of one dash is matched whole: sqlite3's `-cmd`). */
  commands: readonly { long: string; short?: string }[];
  /** Options that take a value (skipped when finding the operands). */
  values: readonly string[];
  /** sqlite3 and duckdb: the operands after the database are commands. */
  operands: boolean;
  /** Options naming a file of commands (psql `-f FILE`, sqlite3 `-init FILE`). */
  files?: readonly { long: string; short?: string }[];
}

const SQLITE: Shell = {
  commands: [{ long: '-cmd' }, { long: '-c' }, { long: '-s' }],
  files: [{ long: '-init' }],
  values: ['-cmd', '-c', '-s', '-separator', '-newline', '-nullvalue', '-init', '-vfs', '-maxsize', '-mmap', '-pagecache', '-lookaside', '-heap', '-zip'],
  operands: true,
};
const MYSQL: Shell = {
  commands: [{ long: '--execute', short: '-e' }],
  values: ['-u', '--user', '-h', '--host', '-P', '--port', '-D', '--database', '-S', '--socket', '--pager', '--defaults-file', '--defaults-extra-file', '--login-path', '--init-command', '--default-character-set'],
  operands: false,
};
const SHELLS: Record<string, Shell> = {
  sqlite3: SQLITE,
  duckdb: SQLITE,
  psql: {
    commands: [{ long: '--command', short: '-c' }],
    values: ['-c', '--command', '-f', '--file', '-d', '--dbname', '-h', '--host', '-p', '--port', '-U', '--username', '-v', '--set', '--variable', '-o', '--output', '-L', '--log-file', '-P', '--pset', '-F', '-R', '-T'],
    operands: false,
    files: [{ long: '--file', short: '-f' }],
  },
  mysql: MYSQL,
  mariadb: MYSQL,
};

/** The files a piece of input of `name` reads more commands from (sqlite3 `.read`, psql `\i`, mysql `source`). */
export function includesIn(name: string, text: Field): Field[] {
  const out: Field[] = [];
  for (const line of text.value.split('\n')) {
    const m =
      name === 'sqlite3' || name === 'duckdb'
        ? /^\s*\.read\s+(['"]?)([^'"\s]+)\1\s*$/.exec(line)
        : name === 'psql'
          ? /(?:^|[\s;])\\(i|ir|include|include_relative)\s+(['"]?)([^'"\s]+)\2/.exec(line)
          : /^\s*(source|\\\.)\s+(['"]?)([^'"\s;]+)\2/i.exec(line);
    if (m) out.push({ value: m[m.length - 1]!, known: text.known });
  }
  return out;
}

/** The shell commands in a piece of input of `name` (one per escape). */
export function escapesIn(name: string, text: Field): Field[] {
  const out: Field[] = [];
  const add = (cmd: string) => {
    if (cmd.trim() !== '') out.push({ value: cmd.trim(), known: text.known });
  };
  for (const line of text.value.split('\n')) {
    if (name === 'sqlite3' || name === 'duckdb') {
      const dot = /^\s*\.(system|shell)\s+(.*)$/.exec(line);
      if (dot) add(dot[2]!);
      const pipe = /^\s*\.(once|output|import)\s+(?:-\S+\s+)*(['"]?)\|(.*?)\2(?:\s+\S+)?\s*$/.exec(line);
      if (pipe) add(pipe[3]!);
    } else if (name === 'psql') {
      const bang = /(?:^|[\s;])\\!\s*(.*)$/.exec(line);
      if (bang) add(bang[1]!);
      const pipe = /(?:^|[\s;])\\(o|out|g|gx|w|write)\s+\|(.*)$/.exec(line);
      if (pipe) add(pipe[2]!);
      for (const m of line.matchAll(/\bprogram\s+'((?:[^']|'')*)'/gi)) add(m[1]!.replace(/''/g, "'"));
    } else {
      for (const stmt of line.split(';')) {
        const m = /^\s*(?:system|\\!|pager|\\P)\s+(.*)$/i.exec(stmt);
        if (m) add(m[1]!);
      }
    }
  }
  return out;
}

/** The values of a one-dash long option (`-cmd X`, `-cmd=X`): matched whole, never as a cluster. */
function singleDashValues(fields: readonly Field[], name: string): Field[] {
  const out: Field[] = [];
  for (let i = 1; i < fields.length; i++) {
    const f = fields[i]!;
    if (!f.known) continue;
    if (f.value === '--') break;
    if (f.value === name && fields[i + 1]) out.push(fields[++i]!);
    else if (f.value.startsWith(`${name}=`)) out.push({ value: f.value.slice(name.length + 1), known: true });
  }
  return out;
}

/** What the shell is given: option values, SQL operands, psql's files, else standard input. */
function inputs(call: Call, shell: Shell): Field[] {
  const out: Field[] = [];
  for (const o of shell.commands) out.push(...(o.long.startsWith('--') ? optionValues(call.fields, o.long, o.short) : singleDashValues(call.fields, o.long)));
  let files = 0;
  for (const o of shell.files ?? []) {
    for (const f of o.long.startsWith('--') ? optionValues(call.fields, o.long, o.short) : singleDashValues(call.fields, o.long)) {
      files++;
      const text = readFile(call, f);
      if (text !== null) out.push(text);
    }
  }
  let operands = 0;
  if (shell.operands) {
    let seenDb = false;
    for (let i = 1; i < call.fields.length; i++) {
      const f = call.fields[i]!;
      if (f.known && f.value.startsWith('-') && f.value !== '-') {
        if (shell.values.includes(f.value)) i++;
        continue;
      }
      if (!seenDb) {
        seenDb = true;
        continue;
      }
      operands++;
      out.push(f);
    }
  }
  if (out.length === 0 && operands === 0 && files === 0) {
    const text = call.stdin();
    if (text) out.push(text);
  }
  return out;
}

/** A file of commands, as a script run by its path is read (src/shell/script-files.ts), or null. */
function readFile(call: Call, file: Field): Field | null {
  const text = readCommandFile(file, `${call.name} reads ${file.value}`, call.env, call.cwd, call.st, call.ctx, call.span);
  return text === null ? null : { value: text, known: true };
}

/** Includes are followed this deep (a file that includes itself stops there). */
const MAX_INCLUDES = 4;

function unwrap(call: Call): Unwrapped {
  const shell = SHELLS[call.name]!;
  const items: Unwrapped[] = [...pagerItems(call)];
  let todo = inputs(call, shell);
  for (let depth = 0; depth <= MAX_INCLUDES && todo.length > 0; depth++) {
    const next: Field[] = [];
    for (const input of todo) {
      for (const text of escapesIn(call.name, input)) items.push({ kind: 'script', via: `${call.name} shell escape`, text });
      if (depth < MAX_INCLUDES) for (const f of includesIn(call.name, input)) {
        const t = readFile(call, f);
        if (t !== null) next.push(t);
      }
    }
    todo = next;
  }
  return items.length === 0 ? { kind: 'none' } : items.length === 1 ? items[0]! : { kind: 'many', items };
}

export const databaseShells: ProgramModule = {
  family: 'database shells with shell escapes',
  names: Object.keys(SHELLS),
  unwrap,
  examples: {
    match: [
      { line: "sqlite3 :memory: '.system make build-safe'", runs: 'make build-safe' },
      { line: "sqlite3 -cmd '.shell make build-safe' app.db 'select 1'", runs: 'make build-safe' },
      { line: "sqlite3 app.db <<< \".once '|make build-safe'\"", runs: 'make build-safe' },
      { line: "duckdb -c '.shell make build-safe'", runs: 'make build-safe' },
      { line: "psql -c '\\! make build-safe'", runs: 'make build-safe' },
      { line: "psql <<'EOF'\nselect 1;\n\\! make build-safe\nEOF", runs: 'make build-safe' },
      { line: "psql -c \"COPY t FROM PROGRAM 'make build-safe'\"", runs: 'make build-safe' },
      { line: "mysql -e 'system make build-safe'", runs: 'make build-safe' },
      { line: "mariadb -e 'select 1; \\! make build-safe'", runs: 'make build-safe' },
      { line: "mysql --pager='make build-safe' -e 'select 1'", runs: 'make build-safe' },
    ],
    not_match: [
      { line: "sqlite3 app.db 'select \"make build-safe\"'", runs: 'make build-safe' },
      { line: "psql -c \"select 'make build-safe'\"", runs: 'make build-safe' },
      { line: "mysql -e 'select \"system make build-safe\"'", runs: 'make build-safe' },
      { line: 'sqlite3 app.db .tables', runs: '.tables' },
    ],
  },
};
