// The import boundaries of src/, read from the sources themselves: a small scanner finds every
// `import … from`, `export … from`, `import '…'` and `import('…')` (type-only imports included: a
// cycle of types is still a cycle of modules), resolves the relative ones to files, and the rules below
// are checked on that graph.
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const SRC = join(dirname(fileURLToPath(import.meta.url)), '..', 'src');

interface Edge {
  from: string;
  /** A file under the root (relative), or the bare specifier (`node:fs`, `yaml`). */
  to: string;
  typeOnly: boolean;
}

const IMPORT = /(?:^|[\s;}])(?:import|export)\s+(type\s+)?(?:[^'"`;]*?\sfrom\s+)?(['"])([^'"]+)\2|\bimport\(\s*(['"])([^'"]+)\4\s*\)/g;

/** Source text without comments (a commented-out import is no import); strings are kept. */
function withoutComments(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`\\])\/\/.*$/gm, '$1');
}

function sourceFiles(root: string): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir).sort()) {
      const p = join(dir, name);
      if (statSync(p).isDirectory()) walk(p);
      else if (/\.(ts|cjs|mjs)$/.test(name) && !name.endsWith('.d.ts')) out.push(relative(root, p));
    }
  };
  walk(root);
  return out;
}

/** Every import of every file under root. A relative import that names no file is an error. */
export function importGraph(root: string): { files: string[]; edges: Edge[] } {
  const files = sourceFiles(root);
  const known = new Set(files);
  const edges: Edge[] = [];
  for (const from of files) {
    const text = withoutComments(readFileSync(join(root, from), 'utf8'));
    for (const m of text.matchAll(IMPORT)) {
      const spec = (m[3] ?? m[5])!;
      const typeOnly = m[1] !== undefined;
      if (!spec.startsWith('.')) {
        edges.push({ from, to: spec, typeOnly });
        continue;
      }
      const abs = relative(root, resolve(root, dirname(from), spec));
      const to = [abs.replace(/\.js$/, '.ts'), abs].find((c) => known.has(c));
      if (to === undefined) throw new Error(`${from}: import '${spec}' names no file under ${root}`);
      edges.push({ from, to, typeOnly });
    }
  }
  return { files, edges };
}

/** The import cycles: strongly connected components of more than one file, or a file importing itself. */
export function importCycles(graph: { files: string[]; edges: Edge[] }): string[][] {
  const next = new Map<string, string[]>(graph.files.map((f) => [f, []]));
  for (const e of graph.edges) if (next.has(e.to)) next.get(e.from)!.push(e.to);
  // Tarjan's algorithm, iterative (no recursion limit on a long chain).
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  for (const root of graph.files) {
    if (index.has(root)) continue;
    const work: [string, number][] = [[root, 0]];
    index.set(root, counter);
    low.set(root, counter++);
    stack.push(root);
    onStack.add(root);
    while (work.length > 0) {
      const top = work[work.length - 1]!;
      const [v, i] = top;
      const succ = next.get(v)!;
      if (i < succ.length) {
        top[1]++;
        const w = succ[i]!;
        if (!index.has(w)) {
          index.set(w, counter);
          low.set(w, counter++);
          stack.push(w);
          onStack.add(w);
          work.push([w, 0]);
        } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
        continue;
      }
      work.pop();
      if (work.length > 0) {
        const parent = work[work.length - 1]![0];
        low.set(parent, Math.min(low.get(parent)!, low.get(v)!));
      }
      if (low.get(v) === index.get(v)) {
        const scc: string[] = [];
        let w: string;
        do {
          w = stack.pop()!;
          onStack.delete(w);
          scc.push(w);
        } while (w !== v);
        if (scc.length > 1 || succ.includes(v)) cycles.push(scc.sort());
      }
    }
  }
  return cycles.sort((a, b) => a[0]!.localeCompare(b[0]!));
}

const graph = importGraph(SRC);
const inDir = (dir: string) => (f: string) => f.startsWith(`${dir}/`);

describe('import boundaries of src/', () => {
  it('finds the imports (the scanner reads this tree)', () => {
    expect(graph.files.length).toBeGreaterThan(80);
    expect(graph.edges.some((e) => e.from === 'cli/main.ts' && e.to === 'cli/commands-table.ts')).toBe(true);
    expect(graph.edges.some((e) => e.from === 'cli/commands-table.ts' && e.to === 'cli/commands/lock.ts')).toBe(true);
    expect(graph.edges.some((e) => e.from === 'policy/guard.ts' && e.to === 'shell/parser.ts')).toBe(true);
  });

  it('shell/ imports only shell/, types, errors, quoting (src/routes/quote.ts) and node:path (no I/O)', () => {
    const allowed = (to: string) => to.startsWith('shell/') || to === 'types.ts' || to === 'errors.ts' || to === 'routes/quote.ts' || to === 'node:path';
    const bad = graph.edges.filter((e) => inDir('shell')(e.from) && !allowed(e.to)).map((e) => `${e.from} -> ${e.to}`);
    expect(bad).toEqual([]);
  });

  it('policy/ never imports cli/ or config/ (config imports policy, not the other way)', () => {
    const bad = graph.edges.filter((e) => inDir('policy')(e.from) && (inDir('cli')(e.to) || inDir('config')(e.to))).map((e) => `${e.from} -> ${e.to}`);
    expect(bad).toEqual([]);
  });

  it('the core (shell, policy, config, routes, locks, report) never imports the CLI at run time', () => {
    const core = ['shell', 'policy', 'config', 'routes', 'locks', 'report'];
    const bad = graph.edges
      .filter((e) => core.some((d) => inDir(d)(e.from)) && inDir('cli')(e.to) && !e.typeOnly)
      .map((e) => `${e.from} -> ${e.to}`);
    expect(bad).toEqual([]);
  });

  it('has no import cycle (type-only imports count)', () => {
    expect(importCycles(graph)).toEqual([]);
  });
});

describe('the import scanner and cycle finder themselves', () => {
  const dir = mkdtempSync(join(tmpdir(), 'offhost-arch-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const write = (name: string, text: string) => {
    mkdirSync(dirname(join(dir, name)), { recursive: true });
    writeFileSync(join(dir, name), text);
  };

  it('reports a real cycle (a -> b -> c -> a) through every import form, and nothing for a chain', () => {
    write('a.ts', "import { b } from './b.js';\nexport const a = 1;\n");
    write('b.ts', "export { c } from './sub/c.js';\nexport const b = 2;\n");
    write('sub/c.ts', "const load = () => import('../a.js');\nexport const c = 3;\n");
    write('d.ts', "import type { a } from './a.js';\n// import { e } from './e.js'  (a comment)\n");
    const g = importGraph(dir);
    expect(g.edges.filter((e) => !e.to.startsWith('node:')).map((e) => `${e.from}>${e.to}${e.typeOnly ? ':type' : ''}`).sort()).toEqual(['a.ts>b.ts', 'b.ts>sub/c.ts', 'd.ts>a.ts:type', 'sub/c.ts>a.ts']);
    expect(importCycles(g)).toEqual([['a.ts', 'b.ts', 'sub/c.ts']]);
    write('sub/c.ts', 'export const c = 3;\n');
    expect(importCycles(importGraph(dir))).toEqual([]);
  });

  it('reports a cycle of type-only imports and a file importing itself', () => {
    write('x.ts', "import type { Y } from './y.js';\nexport type X = Y[];\n");
    write('y.ts', "import type { X } from './x.js';\nexport type Y = X | null;\n");
    write('self.ts', "import { s } from './self.js';\nexport const s = 1;\n");
    const cycles = importCycles(importGraph(dir));
    expect(cycles).toContainEqual(['x.ts', 'y.ts']);
    expect(cycles).toContainEqual(['self.ts']);
  });

  it('refuses an import that names no file', () => {
    write('broken.ts', "import { z } from './missing.js';\n");
    expect(() => importGraph(dir)).toThrow(/broken\.ts: import '\.\/missing\.js' names no file/);
  });
});
