// Compiling a config/pack file into a Layer (globs turned into regular expressions with picomatch),
// and the self-test that runs every rule's own examples. Used at build time for the built-in pack and
// at load time for user packs; never on the hot path when no config file exists.
import picomatch from 'picomatch';
import { compileRule, GLOB_CHARS, literalPrefixOf, type CompiledGlob, type CompiledRule, type RuleSpec } from '../policy/rule.js';
import type { ConfigFile } from './schema.js';
import { parseConfigText } from './load.js';
import { readFileSync } from 'node:fs';
import { ConfigError } from '../errors.js';
import type { Layer } from './resolve.js';

/** A glob on a path (cwd): `*` stays within one path segment, `**` crosses them. */
export function compilePathGlob(glob: string): CompiledGlob {
  const re = picomatch.makeRe(glob, { dot: true });
  return { source: re.source, flags: re.flags };
}

/** A glob on a word (program, argument, option value, env value): `*` matches `/` too, as in bash. */
export function compileGlob(glob: string): CompiledGlob {
  if (!GLOB_CHARS.test(glob)) return { literal: glob };
  const re = picomatch.makeRe(glob, { dot: true, bash: true });
  const prefix = literalPrefixOf(glob);
  return { source: re.source, flags: re.flags, ...(prefix ? { prefix } : {}) };
}

/** Finds the 1-based line of `key: value` for rule ids, for messages about a rule. */
function lineOfRule(text: string | undefined, id: string): number | undefined {
  if (!text) return undefined;
  const lines = text.split('\n');
  const idx = lines.findIndex((l) => new RegExp(`^\\s*-?\\s*id:\\s*["']?${id.replace(/[-]/g, '\\-')}["']?\\s*$`).test(l));
  return idx >= 0 ? idx + 1 : undefined;
}

export function layerFromConfig(cfg: ConfigFile, file: string, text?: string): Layer {
  const rules: CompiledRule[] = [];
  const seen = new Set<string>();
  for (const r of cfg.rules ?? []) {
    if (seen.has(r.id)) throw new ConfigError(`rule id '${r.id}' is defined twice`, file, lineOfRule(text, r.id));
    seen.add(r.id);
    const line = lineOfRule(text, r.id);
    const spec = { ...r, source: { file, ...(line ? { line } : {}) } } as RuleSpec;
    try {
      rules.push(compileRule(spec, compileGlob, compilePathGlob));
    } catch (err) {
      // An unknown shared list (`@name`) or grammar: named with the rule.
      throw new ConfigError(`rule '${r.id}': ${(err as Error).message}`, file, line);
    }
  }
  const { rules: _r, ...rest } = cfg;
  return { ...rest, file, rules };
}

export function loadLayer(file: string): Layer {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new ConfigError(`cannot read the config: ${(err as NodeJS.ErrnoException).code ?? String(err)}`, file);
  }
  return layerFromText(file, text);
}

/** The layer of config text read from `file` (named in messages). */
export function layerFromText(file: string, text: string): Layer {
  return layerFromConfig(parseConfigText(text, file), file, text);
}
