// Programs that start a helper program the line names in an option: `sort --compress-program=PROG` runs
// PROG (and `PROG -d`) for its temporary files, `install -s --strip-program=PROG` runs `PROG FILE` on what it installed,
// and rpm runs the shell command of each `%(…)` in what it evaluates (`rpm --eval '%(cmd)'`, `-E`). Each
// runs here, in the program's directory: PROG as a program with no arguments of its own, `%(…)` as a line.
import type { Field } from '../expand.js';
import type { Call } from '../walk-state.js';
import type { ProgramModule } from './types.js';
import type { Unwrapped } from '../unwrapped.js';

const OPTION: Record<string, string> = { sort: '--compress-program', install: '--strip-program' };

/** The value of `--name=V`, `--name V` (and a unique prefix of --name, as getopt_long takes it). */
function optionValues(fields: readonly Field[], long: string, short?: string): Field[] {
  const out: Field[] = [];
  for (let i = 1; i < fields.length; i++) {
    const f = fields[i]!;
    if (!f.known) continue;
    if (f.value === '--') break;
    const eq = f.value.indexOf('=');
    const name = eq > 0 ? f.value.slice(0, eq) : f.value;
    const isLong = name.length >= 4 && name.startsWith('--') && long.startsWith(name);
    if (isLong || (short !== undefined && name === short)) {
      const v = eq > 0 ? { value: f.value.slice(eq + 1), known: true } : fields[++i];
      if (v) out.push(v);
    } else if (short !== undefined && f.value.startsWith(short) && f.value.length > short.length) out.push({ value: f.value.slice(short.length), known: true });
  }
  return out;
}

/** The shell commands of `%(…)` in an rpm expression (parentheses balanced). */
function rpmShells(expr: Field): Field[] {
  const out: Field[] = [];
  const s = expr.value;
  for (let i = s.indexOf('%('); i >= 0; i = s.indexOf('%(', i + 2)) {
    let depth = 0;
    let j = i + 1;
    for (; j < s.length; j++) {
      if (s[j] === '(') depth++;
      else if (s[j] === ')' && --depth === 0) break;
    }
    out.push({ value: s.slice(i + 2, j), known: expr.known && j < s.length });
  }
  return out;
}

function unwrap(call: Call): Unwrapped {
  const items: Unwrapped[] = [];
  if (call.name === 'rpm') {
    for (const e of [...optionValues(call.fields, '--eval', '-E')]) for (const sh of rpmShells(e)) items.push({ kind: 'script', via: 'rpm %(…)', text: sh });
  } else {
    // install runs `PROG FILE` on each file it installed (the last operand: the file, or the directory it went to).
    const last = call.fields.length > 1 ? call.fields[call.fields.length - 1]! : null;
    const args = call.name === 'install' && last && !(last.known && last.value.startsWith('-')) ? [last] : [];
    for (const prog of optionValues(call.fields, OPTION[call.name]!)) {
      if (prog.known && prog.value !== '') items.push({ kind: 'run', via: `${call.name} ${OPTION[call.name]}`, argv: [prog, ...args] });
    }
  }
  return items.length === 0 ? { kind: 'none' } : items.length === 1 ? items[0]! : { kind: 'many', items };
}

export const helperPrograms: ProgramModule = {
  family: 'programs that start a helper program named in an option',
  names: ['sort', 'install', 'rpm'],
  unwrap,
  examples: {
    match: [
      { line: 'sort --compress-program=make -S 1k big.txt', runs: 'make' },
      { line: 'sort --compress=make -S 1k big.txt', runs: 'make' },
      { line: 'install -s --strip-program ./strip.sh a /tmp/b', runs: './strip.sh /tmp/b' },
      { line: "rpm --eval '%(make build-safe)'", runs: 'make build-safe' },
      { line: "rpm -E '%{_libdir} %(make build-safe)'", runs: 'make build-safe' },
    ],
    not_match: [
      { line: 'sort -u make.txt', runs: 'make.txt' },
      { line: 'install -m 755 make /usr/local/bin/make', runs: 'make' },
      { line: "rpm --eval '%{_libdir}'", runs: '_libdir' },
    ],
  },
};
