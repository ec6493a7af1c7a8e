// run-parts DIR (debianutils, busybox): runs every executable file of DIR whose name is made of ASCII
// letters, digits, `_` and `-` (or matches --regex: every file, here), in the C locale's order, each with the --arg words.
// Each file is judged as the command it is (a script by what it holds); --test and --list run nothing. A
// directory offhost cannot list is an unknown program (judged as such: refused where a heavy command is
// plausible), never nothing.
import type { Field } from '../expand.js';
import { resolveDir, type Call } from '../walk-state.js';
import type { ProgramModule, Unwrapped } from './types.js';

const VALUE = new Set(['-u', '--umask', '-a', '--arg', '--regex']);
const DEFAULT_NAME = /^[A-Za-z0-9_-]+$/;
/** --lsbsysinit: LSB hierarchical and reserved names, Debian cron-script names (run-parts(8)). */
const LSB_NAME = /^([a-z0-9]+|_?([a-z0-9_.]+-)+[a-z0-9]+|[a-zA-Z0-9_-]+)$/;

function unwrap(call: Call): Unwrapped {
  const argv = call.fields;
  const args: Field[] = [];
  let dir: Field | undefined;
  let regex: Field | undefined;
  let lsb = false;
  let reverse = false;
  for (let i = 1; i < argv.length; i++) {
    const f = argv[i]!;
    if (!f.known) {
      dir ??= f;
      continue;
    }
    if (f.value === '--') {
      dir ??= argv[i + 1];
      break;
    }
    const eq = f.value.indexOf('=');
    const name = f.value.startsWith('--') && eq > 0 ? f.value.slice(0, eq) : f.value;
    if (name === '--test' || name === '--list' || name === '-h' || name === '--help' || name === '-V' || name === '--version') return { kind: 'none' };
    if (VALUE.has(name)) {
      const v = eq > 0 && name.startsWith('--') ? { value: f.value.slice(eq + 1), known: true } : argv[++i];
      if (!v) break;
      if (name === '-a' || name === '--arg') args.push(v);
      if (name === '--regex') regex = v;
      continue;
    }
    if (name === '--lsbsysinit') lsb = true;
    else if (name === '--reverse') reverse = true;
    else if (!f.value.startsWith('-')) dir ??= f;
  }
  if (!dir) return { kind: 'none' };
  const unknown: Unwrapped = { kind: 'run', via: 'run-parts', argv: [{ value: `${dir.value}/*`, known: false }] };
  const path = dir.known ? resolveDir(call.cwd, dir) : null;
  const names = path !== null ? (call.ctx.files?.listFiles?.(path) ?? null) : null;
  if (names === null) return unknown;
  // `--regex RE` is the line's own pattern, never compiled here: a pattern made to backtrack (`(a+)+$` on a
  // long name) would hang the guard, and POSIX ERE is not JavaScript's. Every file of the directory is
  // judged instead (a superset of what runs: failing closed).
  const match = regex ? null : lsb ? LSB_NAME : DEFAULT_NAME;
  const chosen = names.filter((n) => match === null || match.test(n)).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  if (reverse) chosen.reverse();
  const items: Unwrapped[] = chosen.map((n) => ({ kind: 'run', via: `run-parts ${dir!.value}`, argv: [{ value: `${path}/${n}`, known: true }, ...args] }));
  return items.length === 0 ? { kind: 'none' } : items.length === 1 ? items[0]! : { kind: 'many', items };
}

export const runParts: ProgramModule = {
  family: 'run-parts',
  names: ['run-parts'],
  unwrap,
  examples: {
    // Without a disk to list (as here), the directory's files are an unknown program.
    match: [{ line: 'run-parts --arg=ci ./ci/steps', runs: './ci/steps/*' }],
    not_match: [
      { line: 'run-parts --test ./ci/steps', runs: './ci/steps/*' },
      { line: 'run-parts --list /etc/cron.daily', runs: '/etc/cron.daily/*' },
    ],
  },
};
