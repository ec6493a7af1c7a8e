// The configuration in force for a directory: the built-in pack, then the files discover.ts finds, layered
// (resolve.ts); user rules are checked against their own examples as they load.
import { ConfigError } from '../errors.js';
import { selfTest } from '../policy/guard.js';
import { builtinLayer } from './builtin.js';
import { configFiles, type ConfigLocation } from './discover.js';
import { layerFromText } from './layer-loader.js';
import { cachedLayer, cachedSelfTest } from './layer-cache.js';
import { closeSync, constants, fstatSync, openSync, readFileSync } from 'node:fs';
import { resolveLayers, type ResolvedConfig } from './resolve.js';

export function loadConfig(opts: ConfigLocation): ResolvedConfig {
  const files = configFiles(opts).map((file) => ({ file, text: readConfigText(file) }));
  // Compiled once per text (layer-cache.ts): the YAML reader and zod stay unloaded on the hot path.
  const userLayers = files.map(({ file, text }) => cachedLayer(file, text, opts.env, () => layerFromText(file, text)));
  const config = resolveLayers([builtinLayer(), ...userLayers], opts.env);
  if (userLayers.length > 0) {
    // A pack cannot ship a rule that misses its own example: user rules are checked as they load (the
    // built-in ones when offhost is built). The result depends on every layer and on HOME (variables).
    cachedSelfTest(JSON.stringify([opts.env.HOME ?? null, files]), opts.env, () => {
      const ids = new Set(userLayers.flatMap((l) => l.rules.map((r) => r.id)));
      const f = selfTest(config, config.rules.filter((r) => ids.has(r.id)))[0];
      if (f) throw new ConfigError(`rule '${f.rule}': ${f.problem}: ${f.kind} example \`${f.line}\` (cwd ${f.cwd})`, f.source?.file, f.source?.line);
    });
  }
  return config;
}

function readConfigText(file: string): string {
  let fd: number | null = null;
  try {
    // O_NONBLOCK and a regular file only: a FIFO nobody writes (or a device) would block every door forever.
    fd = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK | (constants.O_NOCTTY ?? 0));
    if (!fstatSync(fd).isFile()) throw new ConfigError('cannot read the config: not a regular file (a FIFO, a device or a socket)', file);
    return readFileSync(fd, 'utf8');
  } catch (err) {
    if (err instanceof ConfigError) throw err;
    throw new ConfigError(`cannot read the config: ${(err as NodeJS.ErrnoException).code ?? String(err)}`, file);
  } finally {
    if (fd !== null) closeSync(fd);
  }
}
