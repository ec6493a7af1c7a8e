// Reads one YAML config or rule pack, validates it, and reports any problem as file:line:column.
// Loaded only when a config file exists (yaml and zod stay off the hot path otherwise).
import { LineCounter, parseDocument, isMap, isSeq, type Node } from 'yaml';
import { ConfigError } from '../errors.js';
import { configSchema, type ConfigFile } from './schema.js';

/** Line/column of the node at `path` in the document (or of its nearest existing parent). */
function locate(doc: ReturnType<typeof parseDocument>, lc: LineCounter, path: PropertyKey[], atKey = false): { line: number; col: number } | undefined {
  let node: unknown = doc.contents;
  let best: Node | null = (doc.contents as Node | null) ?? null;
  for (const [i, key] of path.entries()) {
    if (isMap(node)) {
      const pair = node.items.find((p) => (p.key as { value?: unknown } | null)?.value === key);
      if (!pair) break;
      best = (pair.key as Node) ?? best;
      // An unknown key: its own position, not its value's.
      if (atKey && i === path.length - 1) break;
      node = pair.value;
      if (node && (node as Node).range) best = node as Node;
    } else if (isSeq(node) && typeof key === 'number') {
      node = node.items[key];
      if (!node) break;
      best = node as Node;
    } else break;
  }
  const offset = best?.range?.[0];
  if (offset === undefined) return undefined;
  return lc.linePos(offset);
}

export function parseConfigText(text: string, file: string): ConfigFile {
  if (text.includes('\0')) throw new ConfigError('the file contains a NUL byte; it is not a YAML config', file);
  const lc = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lc, prettyErrors: false, uniqueKeys: true });
  if (doc.errors.length > 0) {
    const e = doc.errors[0]!;
    const pos = lc.linePos(e.pos[0]);
    throw new ConfigError(`invalid YAML: ${e.message.split('\n')[0]}`, file, pos.line, pos.col);
  }
  const data = doc.toJS({ maxAliasCount: 100 }) ?? {};
  if (typeof data !== 'object' || Array.isArray(data)) {
    throw new ConfigError('the file must be a YAML mapping (key: value lines)', file, 1, 1);
  }
  const result = configSchema.safeParse(data);
  if (!result.success) {
    const issue = result.error.issues[0]!;
    // zod reports an unknown key on its parent: point at the key itself instead.
    const unknownKey = issue.code === 'unrecognized_keys' ? issue.keys[0] : undefined;
    const pos = unknownKey !== undefined ? locate(doc, lc, [...issue.path, unknownKey], true) : locate(doc, lc, issue.path);
    const where = issue.path.length ? `${issue.path.join('.')}: ` : '';
    throw new ConfigError(`${where}${issue.message}`, file, pos?.line, pos?.col);
  }
  return result.data;
}
