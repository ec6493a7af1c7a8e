// Makefile recipes. Each logical recipe line (continuations joined: make passes `\`-newline to the shell
// and drops the next line's leading tab) is one shell invocation, run in the Makefile's directory, so it
// is one snippet. Before classification:
//   - the `@`, `-`, `+` prefixes are removed;
//   - `$$` becomes `$` (make's escape for the shell's `$`);
//   - make variables are expanded where the Makefile itself says what they are: `$(MAKE)` -> `make`,
//     `$(CURDIR)` -> `.` (the recipe runs there), `X = …`/`X := …`/`X ?= …`/`X += …` defined in the file,
//     then make's built-in defaults (`$(CC)` -> `cc`, `$(RM)` -> `rm -f`, ...), recursively, depth-limited;
//   - any other reference (`$(KODA_DIR)`, `$@`, `$(shell …)`, `$(wildcard …)`) becomes a shell parameter
//     `${NAME}` (or `${__OFFHOST_MAKE_EXPR}`), i.e. a word whose value is unknown. Left as `$(X)` it would read to
//     the shell as a command substitution running a program named X, which is wrong both ways: it would
//     invent a command and hide the argument. An unknown word lets the guard decide on what is known
//     (`make -C ${KODA} build` still reads as a make build; the Koda rule then needs the directory).
//     Undefined make variables fall back to the environment in make, and `${HOME}` is expanded by the
//     guard from the environment too, so that reading is also the faithful one.
import { dirOf, lineStarts, SnippetBuilder, type Snippet } from './snippet.js';
import { expandRecipe, readMakefile } from '../../shell/makefiles.js';

// The reading itself (rules, recipes with positions, variables, make's built-ins) is the walker's one
// Makefile reader, src/shell/makefiles.ts, in its position-keeping mode; automatic variables stay
// unknown here (`${MAKE_AUTO}`): a recipe is checked on its own, not for one goal.

export function isMakefile(path: string): boolean {
  const base = path.slice(path.lastIndexOf('/') + 1);
  return /^(GNUmakefile|makefile|Makefile)$/.test(base) || /\.(mk|mak|make)$/i.test(base);
}

export function extractMakefile(path: string, text: string): Snippet[] {
  const starts = lineStarts(text);
  const mf = readMakefile(text);
  const out: Snippet[] = [];
  for (const r of mf.recipes) {
    const b = new SnippetBuilder(starts);
    expandRecipe(r, mf.vars, { dir: '.' }, b);
    if (b.length === 0) continue;
    const snip = b.build({ cwd: dirOf(path), cwdKind: 'repo', where: `recipe of ${r.target || 'a rule'}` });
    if (snip.text.trim()) out.push(snip);
  }
  return out;
}
