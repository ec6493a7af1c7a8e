// Database shells that run shell commands from the commands they are given: sqlite3 and duckdb
// (`.system CMD`, `.shell CMD`, `.once '|CMD'`, `.output '|CMD'`, `.import '|CMD' TABLE`), psql (`\! CMD`,
// `\o |CMD`, `\g |CMD`, `COPY … FROM/TO PROGRAM 'CMD'`, which a server on this machine runs here), and
// mysql/mariadb (`system CMD`, `\! CMD`, `pager CMD`). The commands come from options (`-cmd`, `-c`, `-e`,
// `--command`), from the SQL operands (sqlite3 DB 'SQL'…), from a file psql is given (`-f FILE`, read when
// the disk is), or else from standard input (a heredoc, a here-string, a pipe). Each escape runs through
// the user's shell in the program's directory: judged as the line it is there. What cannot be read
// (computed text, unreadable input) is no escape: SQL itself runs nothing here. Their pagers (PSQL_PAGER,
// `--pager`) are ./pagers.ts's.
import type { Field } from '../expand.js';
import type { Call } from '../walk-state.js';
import type { ProgramModule } from './types.js';
import { optionValues } from './grammar.js';
import { pagerItems } from './pagers.js';
import type { Unwrapped } from '../unwrapped.js';

interface Shell {
  /** Options whose value is commands the shell runs (a `long` of one dash is matched whole: sqlite3's `-cmd`). */
  commands: readonly { long: string; short?: string }[];
  /** Options that take a value (skipped when finding the operands). */
  values: readonly string[];
  /** sqlite3 and duckdb: the operands after the database are commands. */
  operands: boolean;
  /** psql: `-f FILE`, `--file=FILE`. */
  files?: readonly { long: string; short?: string }[];
}

const SQLITE: Shell = {
  commands: [{ long: '-cmd' }, { long: '-c' }, { long: '-s' }],
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
    for (const f of optionValues(call.fields, o.long, o.short)) {
      files++;
      const r = f.known && call.ctx.files && call.cwd !== null ? call.ctx.files.read(f.value.startsWith('/') ? f.value : `${call.cwd}/${f.value}`) : null;
      if (r?.kind === 'text') out.push({ value: r.text, known: true });
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

function unwrap(call: Call): Unwrapped {
  const shell = SHELLS[call.name]!;
  const items: Unwrapped[] = [...pagerItems(call)];
  for (const input of inputs(call, shell)) for (const text of escapesIn(call.name, input)) items.push({ kind: 'script', via: `${call.name} shell escape`, text });
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
