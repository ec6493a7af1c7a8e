// Programs that run a pager or an editor the line names: in an environment variable set for them
// (`PAGER='…' man ls`, `EDITOR='…' crontab -e`, `export SYSTEMD_PAGER=…; journalctl`) or in an option
// (`man -P '…'`, `bat --pager '…'`, `svn --editor-cmd '…'`). The program hands the value to a shell
// (`sh -c "$PAGER"`, `sh -c "$EDITOR FILE"`) in its own directory, so the value is judged as the command
// line it is there. A pager runs only when the output is a terminal, which the line does not say: judged
// as run (fail closed), as git's are (./git.ts). The user's own variables, not set in the line, are theirs.
// less runs its input preprocessor (LESSOPEN, `|cmd %s`) and `+!cmd` at start-up. kubectl (KUBE_EDITOR)
// is not here: unknown to the registry, its arguments are read as the commands they may be (src/shell/guess.ts),
// which `kubectl exec POD -- …` against a cluster on the laptop needs.
import type { Field } from '../expand.js';
import { envField, type Call } from '../walk-state.js';
import type { ProgramModule } from './types.js';
import { optionValues } from './grammar.js';
import type { Unwrapped } from '../unwrapped.js';

interface Runs {
  /** Variables whose value is a command line the program runs. */
  env: readonly string[];
  /** Options whose value (the next word, or after `=`) is a command line it runs. */
  opts?: readonly { long: string; short?: string }[];
}

const SYSTEMD: Runs = { env: ['SYSTEMD_PAGER', 'PAGER'] };
const EDITORS: Runs = { env: ['VISUAL', 'EDITOR'] };

const PROGRAMS: Record<string, Runs> = {
  man: { env: ['MANPAGER', 'PAGER'], opts: [{ long: '--pager', short: '-P' }] },
  systemctl: SYSTEMD,
  journalctl: SYSTEMD,
  loginctl: SYSTEMD,
  busctl: SYSTEMD,
  machinectl: SYSTEMD,
  coredumpctl: SYSTEMD,
  psql: { env: ['PSQL_PAGER', 'PAGER'] },
  mysql: { env: [], opts: [{ long: '--pager' }] },
  mariadb: { env: [], opts: [{ long: '--pager' }] },
  aws: { env: ['AWS_PAGER'] },
  bat: { env: ['BAT_PAGER', 'PAGER'], opts: [{ long: '--pager' }] },
  batcat: { env: ['BAT_PAGER', 'PAGER'], opts: [{ long: '--pager' }] },
  gh: { env: ['GH_PAGER', 'PAGER', 'GH_EDITOR', 'GIT_EDITOR', 'VISUAL', 'EDITOR'] },
  visudo: { env: ['SUDO_EDITOR', 'VISUAL', 'EDITOR'] },
  sudoedit: { env: ['SUDO_EDITOR', 'VISUAL', 'EDITOR'] },
  vipw: EDITORS,
  vigr: EDITORS,
  hg: { env: ['HGEDITOR', 'VISUAL', 'EDITOR', 'PAGER'] },
  svn: { env: ['SVN_EDITOR', 'VISUAL', 'EDITOR'], opts: [{ long: '--editor-cmd' }] },
  less: { env: ['LESSOPEN', 'LESSCLOSE'] },
};

/** LESSOPEN's `|cmd %s`, `||cmd %s`, `|-cmd %s` (a pipe) or `cmd %s` (a command that names a file): the command. */
function lessCommand(v: Field): Field {
  return { value: v.value.replace(/^\|\|?-?/, '').replaceAll('%s', 'FILE'), known: v.known };
}

/** The pager and editor commands a call runs (also for the database shells: ./database-shells.ts). */
export function pagerItems(call: Call): Unwrapped[] {
  const spec = PROGRAMS[call.name];
  const items: Unwrapped[] = [];
  if (!spec) return items;
  const script = (text: Field, via: string) => {
    if (text.value.trim() !== '' || !text.known) items.push({ kind: 'script', via: `${call.name} ${via}`, text });
  };
  for (const k of spec.env) {
    const v = envField(call, k);
    if (v !== undefined) script(call.name === 'less' ? lessCommand(v) : v, k);
  }
  for (const o of spec.opts ?? []) for (const v of optionValues(call.fields, o.long, o.short)) script(v, o.long);
  // less `+!cmd` (and in $LESS): a shell command run at start-up.
  if (call.name === 'less') for (const f of call.fields.slice(1)) if (f.known && /^\+!/.test(f.value)) script({ value: f.value.slice(2), known: true }, '+!');
  if (call.name === 'less') {
    const opts = envField(call, 'LESS');
    const bang = opts?.value.match(/(?:^|\s)\+!(.*)$/);
    if (opts && bang) script({ value: bang[1]!, known: opts.known }, 'LESS=+!');
  }
  return items;
}

function unwrap(call: Call): Unwrapped {
  const items = pagerItems(call);
  return items.length === 0 ? { kind: 'none' } : items.length === 1 ? items[0]! : { kind: 'many', items };
}

/** Theirs are read with their shell escapes, by ./database-shells.ts. */
const DATABASE_SHELLS = new Set(['psql', 'mysql', 'mariadb']);

export const pagers: ProgramModule = {
  family: 'programs that run a pager or an editor',
  names: Object.keys(PROGRAMS).filter((n) => !DATABASE_SHELLS.has(n)),
  unwrap,
  examples: {
    match: [
      { line: "PAGER='make build-safe' man ls", runs: 'make build-safe' },
      { line: "man -P 'make build-safe' ls", runs: 'make build-safe' },
      { line: "man --pager='make build-safe' ls", runs: 'make build-safe' },
      { line: "SYSTEMD_PAGER='make build-safe' journalctl -u x", runs: 'make build-safe' },
      { line: "export EDITOR='make build-safe'; visudo", runs: 'make build-safe' },
      { line: "LESSOPEN='|make build-safe %s' less README.md", runs: 'make build-safe FILE' },
      { line: "less '+!make build-safe' README.md", runs: 'make build-safe' },
      { line: "bat --pager 'make build-safe' README.md", runs: 'make build-safe' },
    ],
    not_match: [
      { line: 'man make', runs: 'make' },
      { line: "PAGER=less man -k 'make build'", runs: 'make build' },
      { line: 'journalctl -u make-build-safe', runs: 'make-build-safe' },
      { line: 'less Makefile', runs: 'Makefile' },
    ],
  },
};
