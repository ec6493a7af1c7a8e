// The import boundaries of src/, read from the sources themselves by a real parser: every
// `import … from`, `export … from`, `import '…'`, `import('…')`, `typeof import('…')` and `require('…')`
// (type-only imports included: a cycle of types is still a cycle of modules), the relative ones resolved
// to files, and the rules below checked on that graph.
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAst } from 'rolldown/parseAst';
import { afterAll, describe, expect, it } from 'vitest';

const SRC = join(dirname(fileURLToPath(import.meta.url)), '..', 'src');

interface Edge {
  from: string;
  /** A file under the root (relative), or the bare specifier (`node:fs`, `yaml`). */
  to: string;
  typeOnly: boolean;
}

interface AstNode {
  type?: string;
  [key: string]: unknown;
}

const literal = (n: unknown): string | undefined => {
  const node = n as AstNode | null | undefined;
  return node && node.type === 'Literal' && typeof node.value === 'string' ? node.value : undefined;
};

/**
 * Every module specifier a file names, read by a real parser (oxc, through rolldown's parseAst, which
 * vite brings): import/export declarations (type-only ones marked), `import('…')`, `typeof import('…')`
 * in types, and `require('…')`. Comments and strings are the parser's business, so a `/*` inside a line
 * comment (`// programs/* and …`) or an import written in a string cannot hide or invent an import.
 */
function specifiers(file: string, text: string): { spec: string; typeOnly: boolean }[] {
  const lang = /\.[cm]?js$/.test(file) ? 'js' : 'ts';
  const ast = parseAst(text, { lang, sourceType: 'module' }, file) as unknown as AstNode;
  const out: { spec: string; typeOnly: boolean }[] = [];
  const visit = (node: unknown, inType: boolean): void => {
    if (Array.isArray(node)) {
      for (const n of node) visit(n, inType);
      return;
    }
    if (!node || typeof node !== 'object') return;
    const n = node as AstNode;
    const t = n.type;
    let typeOnly = inType;
    if (t === 'ImportDeclaration' || t === 'ExportNamedDeclaration' || t === 'ExportAllDeclaration') {
      const spec = literal(n.source);
      const kind = t === 'ImportDeclaration' ? n.importKind : n.exportKind;
      // `import { type A, type B } from` is type-only too: every specifier says so.
      const specs = (n.specifiers as AstNode[] | undefined) ?? [];
      const allTypes = specs.length > 0 && specs.every((s) => s.importKind === 'type' || s.exportKind === 'type');
      if (spec !== undefined) out.push({ spec, typeOnly: inType || kind === 'type' || allTypes });
    } else if (t === 'ImportExpression') {
      const spec = literal(n.source);
      if (spec !== undefined) out.push({ spec, typeOnly: inType });
    } else if (t === 'TSImportType') {
      const spec = literal(n.source) ?? literal((n.argument as AstNode | undefined)?.literal);
      if (spec !== undefined) out.push({ spec, typeOnly: true });
    } else if (t === 'CallExpression' && (n.callee as AstNode | undefined)?.type === 'Identifier' && (n.callee as AstNode).name === 'require') {
      const spec = literal((n.arguments as unknown[] | undefined)?.[0]);
      if (spec !== undefined) out.push({ spec, typeOnly: inType });
    }
    if (t === 'TSTypeAliasDeclaration' || t === 'TSInterfaceDeclaration' || t === 'TSTypeAnnotation') typeOnly = true;
    for (const [key, value] of Object.entries(n)) {
      if (key === 'source' && (t === 'ImportDeclaration' || t === 'ExportNamedDeclaration' || t === 'ExportAllDeclaration')) continue;
      if (value && typeof value === 'object') visit(value, typeOnly);
    }
  };
  visit(ast, false);
  return out;
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
    for (const { spec, typeOnly } of specifiers(from, readFileSync(join(root, from), 'utf8'))) {
      if (!spec.startsWith('.')) {
        edges.push({ from, to: spec, typeOnly });
        continue;
      }
      const abs = relative(root, resolve(root, dirname(from), spec));
      if (abs.startsWith('..') && existsSync(resolve(root, abs))) {
        edges.push({ from, to: abs, typeOnly }); // outside the tree (package.json): a leaf
        continue;
      }
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

  it('nothing outside src/cli/ imports it, not even a type (the CLI is the top floor: it parses, calls one function, prints)', () => {
    const bad = graph.edges.filter((e) => !inDir('cli')(e.from) && inDir('cli')(e.to)).map((e) => `${e.from} -> ${e.to}`);
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

  it('is blinded neither by a `/*` in a line comment nor by imports in strings or block comments', () => {
    // The old regex scanner read the `/*` below as a block comment and lost every import after it.
    write('w.ts', 'export const w = 1;\n');
    write('x.ts', 'export const x = 1;\nexport type T = number;\n');
    write('fooled.ts', [
      '// Program modules (programs/*) and the walker share these types.',
      "import { x } from './x.js';",
      "import { type T } from './x.js';",
      'const s = "import { y } from \'./y.js\'";',
      "/* import { z } from './z.js' */",
      "export * from './w.js';",
      "export type L = typeof import('./x.js');",
      '',
    ].join('\n'));
    const g = importGraph(dir);
    const from = g.edges.filter((e) => e.from === 'fooled.ts').map((e) => `${e.to}${e.typeOnly ? ':type' : ''}`);
    expect(from).toEqual(['x.ts', 'x.ts:type', 'w.ts', 'x.ts:type']);
  });

  it('refuses an import that names no file', () => {
    write('broken.ts', "import { z } from './missing.js';\n");
    expect(() => importGraph(dir)).toThrow(/broken\.ts: import '\.\/missing\.js' names no file/);
  });
});
