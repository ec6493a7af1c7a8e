// What the rule compiler takes from the registry: shared program lists (`@browsers`) and option grammars
// (`grammar: make`). Kept apart from index.ts so that compiling rules does not load the walker.
import type { Grammar } from './grammar.js';
import { HEAVY_LISTS } from './heavy-lists.js';
import { MAKE_GRAMMAR } from './make-grammar.js';

export function sharedList(name: string): readonly string[] | null {
  return Object.hasOwn(HEAVY_LISTS, name) ? HEAVY_LISTS[name]! : null;
}

const GRAMMARS: Record<string, Grammar> = { make: MAKE_GRAMMAR };

export function sharedGrammar(name: string): Grammar | null {
  return Object.hasOwn(GRAMMARS, name) ? GRAMMARS[name]! : null;
}
