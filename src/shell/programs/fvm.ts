// Flutter Version Management: `fvm flutter test`, `fvm dart test`, `fvm exec flutter test`, `fvm spawn 3.19 test`.
import type { ProgramModule } from './types.js';

export const fvm: ProgramModule = {
  family: 'version managers',
  names: ['fvm'],
  unwrap(call) {
    const argv = call.fields;
    const sub = argv[1];
    if (sub?.known && (sub.value === 'flutter' || sub.value === 'dart')) return { kind: 'run', via: 'fvm', argv: argv.slice(1) };
    if (sub?.known && sub.value === 'exec' && argv.length > 2) return { kind: 'run', via: 'fvm exec', argv: argv.slice(2) };
    if (sub?.known && sub.value === 'spawn' && argv.length > 3) return { kind: 'run', via: 'fvm spawn', argv: [{ value: 'flutter', known: true }, ...argv.slice(3)] };
    return { kind: 'none' };
  },
  examples: {
    match: [{ line: 'fvm flutter test -d chrome', runs: 'flutter test -d chrome' }],
    not_match: [{ line: 'fvm list', runs: 'flutter' }],
  },
};
