// The configuration in force for a directory: the built-in pack, then the files discover.ts finds, layered
// (resolve.ts); user rules are checked against their own examples as they load.
import { ConfigError } from '../errors.js';
import { selfTest } from '../policy/guard.js';
import { builtinLayer } from './builtin.js';
import { configFiles, type ConfigLocation } from './discover.js';
import { loadLayer } from './layer-loader.js';
import { resolveLayers, type ResolvedConfig } from './resolve.js';

export function loadConfig(opts: ConfigLocation): ResolvedConfig {
  const userLayers = configFiles(opts).map((f) => loadLayer(f));
  const config = resolveLayers([builtinLayer(), ...userLayers], opts.env);
  if (userLayers.length > 0) {
    // A pack cannot ship a rule that misses its own example: user rules are checked as they load (the
    // built-in ones when offhost is built).
    const ids = new Set(userLayers.flatMap((l) => l.rules.map((r) => r.id)));
    const failures = selfTest(config, config.rules.filter((r) => ids.has(r.id)));
    const f = failures[0];
    if (f) {
      throw new ConfigError(`rule '${f.rule}': ${f.problem}: ${f.kind} example \`${f.line}\` (cwd ${f.cwd})`, f.source?.file, f.source?.line);
    }
  }
  return config;
}
