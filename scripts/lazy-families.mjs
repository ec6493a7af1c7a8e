// The program families as lazily loaded files (docs/BUILD.md): each family that no other core code
// imports is bundled alone into dist/programs/<file>.cjs, with every import it makes resolved at run time
// to the hot bundle's own module (one instance of each module, the walker's classes included); the hot
// bundle gets, in place of src/shell/programs/families.ts, a table that knows each family's names and
// loads its file the first time one of them is asked for.
import { build } from 'esbuild';
import { readFileSync } from 'node:fs';
import { isBuiltin } from 'node:module';
import { join, relative } from 'node:path';

const FAMILIES_TS = 'src/shell/programs/families.ts';

/**
 * What families.ts declares: which identifier comes from which file, and the MODULES list in order
 * (`...x` for an exported array of modules). Read from its text; anything else there stops the build.
 */
export function readFamilies(root) {
  const text = readFileSync(join(root, FAMILIES_TS), 'utf8');
  const fileOf = new Map();
  for (const m of text.matchAll(/^import \{([^}]*)\} from '\.\/([a-z-]+)\.js';$/gm)) {
    for (const name of m[1].split(',').map((s) => s.trim()).filter(Boolean)) fileOf.set(name, m[2]);
  }
  const list = /^export const MODULES: readonly ProgramModule\[\] = \[\n([^\]]*)\];$/m.exec(text);
  if (!list) throw new Error(`${FAMILIES_TS}: the MODULES list is not in the form scripts/lazy-families.mjs reads`);
  const order = list[1].split(',').map((s) => s.trim()).filter(Boolean).map((item) => {
    const spread = item.startsWith('...');
    const name = spread ? item.slice(3) : item;
    if (!fileOf.has(name)) throw new Error(`${FAMILIES_TS}: MODULES names ${name}, which no import of a family file gives`);
    return { name, spread, file: fileOf.get(name) };
  });
  return { fileOf, order };
}

const programsDir = (root) => join(root, 'src', 'shell', 'programs');

/**
 * Bundles each lazy family into dist/programs/<file>.cjs. `core` is what the hot bundle holds without the
 * families (paths relative to root): a family's import of one of those is handed over at run time; any
 * other module it imports is bundled with it (makefiles.ts with make), and may belong to one family only
 * (two copies would not be one module). Returns the hot bundle's modules the families import.
 */
export async function buildLazyFamilies({ root, lazyFiles, options, core }) {
  /** rel path of a hot-bundle module -> the names the families import from it ('*': the whole module). */
  const deps = new Map();
  const texts = new Map();
  const namesImported = (importer, specifier) => {
    if (!texts.has(importer)) texts.set(importer, readFileSync(importer, 'utf8'));
    const names = [];
    const quoted = specifier.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    for (const m of texts.get(importer).matchAll(new RegExp(`^import\\s+(type\\s+)?(\\{[^}]*\\}|\\*\\s+as\\s+\\w+)\\s+from\\s+'${quoted}';$`, 'gm'))) {
      if (m[1]) continue;
      if (m[2].startsWith('*')) return null;
      for (const part of m[2].slice(1, -1).split(',').map((x) => x.trim()).filter(Boolean)) {
        if (part.startsWith('type ')) continue;
        names.push(part.split(/\s+as\s+/)[0]);
      }
    }
    // Not a static import of names (a dynamic import, or another form): the whole module.
    return names.length > 0 ? names : null;
  };
  const owner = new Map();
  const lazyPaths = new Map(lazyFiles.map((f) => [join(programsDir(root), `${f}.ts`), f]));
  for (const file of lazyFiles) {
    const entry = join(programsDir(root), `${file}.ts`);
    const result = await build({
      ...options,
      entryPoints: [entry],
      outfile: join(root, 'dist', 'programs', `${file}.cjs`),
      // The same CommonJS module function as hot.cjs: the loader runs it from its code cache.
      banner: { js: '(function (exports, require, module) {' },
      footer: { js: '\n})' },
      plugins: [
        {
          name: 'family-imports-from-hot',
          setup(b) {
            b.onResolve({ filter: /.*/ }, async (a) => {
              if (a.kind === 'entry-point' || a.pluginData?.inner) return undefined;
              if (isBuiltin(a.path)) return { path: a.path, external: true };
              const r = await b.resolve(a.path, { resolveDir: a.resolveDir, kind: a.kind, importer: a.importer, pluginData: { inner: true } });
              if (r.errors.length > 0) return { errors: r.errors };
              if (lazyPaths.has(r.path)) return { path: `family:${lazyPaths.get(r.path)}`, external: true };
              const rel = relative(root, r.path);
              if (core.has(rel)) {
                const names = namesImported(a.importer, a.path);
                const had = deps.get(rel) ?? new Set();
                if (names === null) had.add('*');
                else for (const n of names) had.add(n);
                deps.set(rel, had);
                return { path: `hot:${rel}`, external: true };
              }
              if (owner.has(rel) && owner.get(rel) !== file) {
                return { errors: [{ text: `${rel} is imported by the families ${owner.get(rel)} and ${file} and by nothing in the hot bundle: move it into the hot bundle's core or into one family` }] };
              }
              owner.set(rel, file);
              return { path: r.path };
            });
          },
        },
      ],
    });
    const entryRel = relative(root, entry);
    const strays = Object.keys(result.metafile.inputs).filter((f) => f !== entryRel && owner.get(f) !== file);
    if (strays.length > 0) throw new Error(`dist/programs/${file}.cjs must hold its family and the modules only it imports, but bundles:\n  ${strays.join('\n  ')}`);
  }
  // What each bundle really reads of a module handed over (`v.name` after `v=require("hot:…")`) must be
  // among the names read from the imports above: a name missing there would be undefined at run time.
  for (const file of lazyFiles) {
    const out = readFileSync(join(root, 'dist', 'programs', `${file}.cjs`), 'utf8');
    for (const m of out.matchAll(/([A-Za-z_$][\w$]*)=require\("hot:([^"]+)"\)/g)) {
      const names = deps.get(m[2]);
      if (names.has('*')) continue;
      // Not after `/`: a regular expression's flags (`/…/i.test(s)`) are no module read.
      for (const u of out.matchAll(new RegExp(`(?<![\\w$./])${m[1].replace(/\$/g, '\\$')}\\.([A-Za-z_$][\\w$]*)`, 'g'))) {
        if (!names.has(u[1])) throw new Error(`dist/programs/${file}.cjs reads ${u[1]} of ${m[2]}, which scripts/lazy-families.mjs did not find among its imports`);
      }
    }
  }
  return [...deps.entries()].sort(([a], [b]) => (a < b ? -1 : 1)).map(([rel, names]) => ({ rel, names: names.has('*') ? null : [...names].sort() }));
}

/** Each lazy family's modules as the table needs them: export name, family, names, pattern. */
export async function describeLazyFamilies({ lazyFiles, importFamily }) {
  const described = new Map();
  for (const file of lazyFiles) {
    const mod = await importFamily(`src/shell/programs/${file}.ts`);
    const isModule = (v) => v && typeof v === 'object' && typeof v.family === 'string' && Array.isArray(v.names);
    const describe = (v) => ({ family: v.family, names: v.names, pattern: v.pattern ?? null });
    for (const [exportName, value] of Object.entries(mod)) {
      if (isModule(value)) described.set(exportName, { file, ...describe(value) });
      else if (Array.isArray(value) && value.length > 0 && value.every(isModule)) described.set(exportName, { file, list: value.map(describe) });
    }
  }
  return described;
}

/** The source of the module that replaces families.ts in the hot bundle. */
export function familiesModuleSource({ root, families, eagerFiles, described, deps }) {
  const abs = (rel) => JSON.stringify(join(root, rel));
  const lines = [
    '// Generated by scripts/lazy-families.mjs in place of src/shell/programs/families.ts (hot bundle only).',
  ];
  const eagerImports = new Map();
  for (const item of families.order) {
    if (!eagerFiles.has(item.file)) continue;
    if (!eagerImports.has(item.file)) eagerImports.set(item.file, new Set());
    eagerImports.get(item.file).add(item.name);
  }
  for (const [file, names] of eagerImports) lines.push(`import { ${[...names].join(', ')} } from ${abs(`src/shell/programs/${file}.ts`)};`);
  // Each module a family imports, as the names it imports (a namespace object would be built, getter by
  // getter, at every start of the bundle, used or not) or as the whole module when that is what it takes.
  deps.forEach(({ rel, names }, i) => {
    if (names === null) lines.push(`import * as dep${i} from ${abs(rel)};`);
    else lines.push(`import { ${names.map((n) => `${n} as dep${i}_${n}`).join(', ')} } from ${abs(rel)};`);
  });
  const provide = ({ names }, i) => (names === null ? `dep${i}` : `({ ${names.map((n) => `${n}: dep${i}_${n}`).join(', ')} })`);
  lines.push(
    `const DEPS = { ${deps.map((d, i) => `${JSON.stringify(`hot:${d.rel}`)}: () => ${provide(d, i)}`).join(', ')} };`,
    'const given = new Map();',
    'const loaded = new Map();',
    'function requireForFamily(id) {',
    "  if (id.startsWith('family:')) return loadFamily(id.slice(7));",
    '  if (Object.hasOwn(DEPS, id)) {',
    '    if (!given.has(id)) given.set(id, DEPS[id]());',
    '    return given.get(id);',
    '  }',
    "  if (!id.startsWith('hot:')) return require(id);",
    "  throw new Error(`a program family imports ${id}, which the hot bundle does not hand over`);",
    '}',
    'function loadFamily(file) {',
    '  let exports = loaded.get(file);',
    '  if (exports === undefined) {',
    '    exports = __offhostLoadScript(`programs/${file}.cjs`, requireForFamily);',
    '    loaded.set(file, exports);',
    '  }',
    '  return exports;',
    '}',
    'const eager = (m) => ({ family: m.family, names: m.names, ...(m.pattern ? { pattern: m.pattern } : {}), load: () => m });',
  );
  const lazyEntry = (d, file, access) => {
    const pattern = d.pattern ? `, pattern: ${d.pattern.toString()}` : '';
    return `{ family: ${JSON.stringify(d.family)}, names: ${JSON.stringify(d.names)}${pattern}, load: () => loadFamily(${JSON.stringify(file)})${access} }`;
  };
  const entries = families.order.flatMap((item) => {
    if (eagerFiles.has(item.file)) return [item.spread ? `...${item.name}.map(eager)` : `eager(${item.name})`];
    const d = described.get(item.name);
    if (!d || d.file !== item.file || item.spread !== 'list' in d) throw new Error(`${FAMILIES_TS}: ${item.spread ? '...' : ''}${item.name} is not ${item.spread ? 'an array of program modules' : 'a program module'} exported by ${item.file}.ts`);
    return item.spread ? d.list.map((m, i) => lazyEntry(m, item.file, `.${item.name}[${i}]`)) : [lazyEntry(d, item.file, `.${item.name}`)];
  });
  lines.push(`export const FAMILIES = [\n  ${entries.join(',\n  ')},\n];`);
  return lines.join('\n');
}
