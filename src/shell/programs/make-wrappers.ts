// Programs that run make with their own arguments: colormake (and its -short variant and the clmake
// names it installs), which colour make's output. `colormake build-safe` in the engine is `make build-safe`.
import type { ProgramModule } from './types.js';

export const makeWrappers: ProgramModule = {
  family: 'make wrappers',
  names: ['colormake', 'colormake-short', 'clmake', 'clmake-short'],
  unwrap: (call) => ({ kind: 'run', via: call.name, argv: [{ value: 'make', known: true }, ...call.fields.slice(1)] }),
  examples: {
    match: [
      { line: 'colormake build-safe', runs: 'make build-safe' },
      { line: 'colormake -C engines/lang/koda build', runs: 'make -C engines/lang/koda build' },
    ],
    not_match: [{ line: 'echo colormake build-safe', runs: 'make build-safe' }],
  },
};
