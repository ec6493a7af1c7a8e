// Programs that start a helper program the line names in an option: `sort --compress-program=PROG` runs
// PROG (and `PROG -d`) for its temporary files, `install -s --strip-program=PROG` runs `PROG FILE` on what it installed,
// and rpm runs the shell command of each `%(…)` in what it evaluates (`rpm --eval '%(cmd)'`, `-E`). Each
// runs here, in the program's directory: PROG as a program with no arguments of its own, `%(…)` as a line.
import type { Field } from '../expand.js';
import type { Call } from '../walk-state.js';
import type { ProgramModule } from './types.js';
import { optionValues } from './grammar.js';
import type { Unwrapped } from '../unwrapped.js';

const OPTION: Record<string, string> = { sort: '--compress-program', install: '--strip-program' };

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
