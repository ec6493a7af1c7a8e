// The registry of program modules: every program whose name changes how the walker goes is declared in
// one module of a family (families.ts lists them; types.ts is the interface, docs/GUARD.md says how to add
// one). The walker asks `programFor(name)` and knows no program by name; the rule compiler asks
// `sharedList` / `sharedGrammar`. A module is loaded the first time a name of it is asked for.
import type { ProgramModule } from './types.js';
import { FAMILIES, type FamilyEntry } from './families.js';

const patterned = FAMILIES.filter((m) => m.pattern);
const cache = new Map<string, FamilyEntry | null>();
/** After this many scans a line is long (an unknown program's many arguments): index every name once. */
const SCANS_BEFORE_INDEX = 64;
let scans = 0;
let index: Map<string, FamilyEntry> | null = null;

/** The family of a declared name, by the rule of familyOf, for every name at once. */
function buildIndex(): Map<string, FamilyEntry> {
  const ix = new Map<string, FamilyEntry>();
  const walked = new Set<string>();
  for (const m of FAMILIES) {
    const walks = m.family !== 'heavy programs';
    for (const n of m.names) {
      if (walked.has(n)) continue;
      if (walks) {
        walked.add(n);
        ix.set(n, m);
      } else ix.set(n, m); // the last heavy grammar, unless a walking family has the name
    }
  }
  return ix;
}

/**
 * The family that declares `name`: the first one that walks it, else the last heavy program's grammar
 * (a heavy program's grammar never shadows a module that walks it); else the first whose pattern matches.
 * Looked up when first asked (a scan of a few hundred names) rather than indexed at start-up: building
 * the index cost more than the lookups of a whole command line. A line that asks for many names (an
 * unknown program's arguments, src/shell/guess.ts) gets the index after SCANS_BEFORE_INDEX scans. Two
 * walking families declaring one name is a mistake `namesDeclaredTwice` finds, at build time and in the
 * tests.
 */
function familyOf(name: string): FamilyEntry | null {
  let c = cache.get(name);
  if (c === undefined) {
    if (index === null && ++scans > SCANS_BEFORE_INDEX) index = buildIndex();
    if (index !== null) c = index.get(name) ?? null;
    else {
      let heavy: FamilyEntry | null = null;
      c = null;
      for (const m of FAMILIES) {
        if (!m.names.includes(name)) continue;
        if (m.family !== 'heavy programs') {
          c = m;
          break;
        }
        heavy = m;
      }
      c ??= heavy;
    }
    c ??= patterned.find((p) => p.pattern!.test(name)) ?? null;
    if (cache.size < 10_000) cache.set(name, c);
  }
  return c;
}

/** For the tests: the index against the scan, for every declared name. */
export function indexAgreesWithScan(): string[] {
  const ix = buildIndex();
  const wrong: string[] = [];
  for (const m of FAMILIES) {
    for (const n of m.names) {
      let heavy: FamilyEntry | null = null;
      let c: FamilyEntry | null = null;
      for (const f of FAMILIES) {
        if (!f.names.includes(n)) continue;
        if (f.family !== 'heavy programs') {
          c = f;
          break;
        }
        heavy = f;
      }
      if ((c ?? heavy) !== ix.get(n)) wrong.push(n);
    }
  }
  return wrong;
}

/** The module that knows `name` (a basename), or null for a program that only runs itself. */
export function programFor(name: string): ProgramModule | null {
  return familyOf(name)?.load() ?? null;
}

/** Names that two families which walk them both declare (the registry must have none). */
export function namesDeclaredTwice(): string[] {
  const seen = new Map<string, string>();
  const twice: string[] = [];
  for (const m of FAMILIES) {
    if (m.family === 'heavy programs') continue;
    for (const n of m.names) {
      const had = seen.get(n);
      if (had !== undefined && had !== m.family) twice.push(`${n} (${had}, ${m.family})`);
      else if (had !== undefined) twice.push(`${n} (twice in ${m.family})`);
      seen.set(n, m.family);
    }
  }
  return twice;
}

/** Every module of the registry, each loaded (the examples' self-test; the code-cache warm-up). */
export function everyProgramModule(): ProgramModule[] {
  return FAMILIES.map((m) => m.load());
}

export { sharedList, sharedGrammar } from './shared.js';
