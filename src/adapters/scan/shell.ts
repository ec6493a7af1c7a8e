// Shell scripts: `*.sh`, `*.bash`, and files whose shebang names bash, sh or dash. The whole file is one
// snippet, judged where a script is run from: the repository root (as `offhost check 'bash scripts/x.sh'`
// judges it there) and its own folder; the idioms by which it finds its own folder (`cd "$(dirname "$0")/.."`)
// are resolved to the folder's path on the laptop (script-dir.ts).
import { posix } from 'node:path';
import { resolveScriptLocation } from './script-dir.js';
import { dirOf, lineStarts, snippetFromMap, SnippetBuilder, type Snippet } from './snippet.js';

const SHEBANG = /^#!\s*(?:\/usr)?(?:\/local)?\/bin\/(?:env\s+(?:-\S+\s+)*)?(bash|sh|dash)(?:\s|$)/;

export function isShellScript(path: string, text?: string): boolean {
  if (/\.(sh|bash)$/i.test(path)) return true;
  return text !== undefined && SHEBANG.test(text.slice(0, 200));
}

/** Could this path be a script found by its shebang (no extension, or one that says nothing)? */
export function mayHaveShebang(path: string): boolean {
  const base = path.slice(path.lastIndexOf('/') + 1);
  return !base.includes('.') || /\.(command|run|in)$/.test(base);
}

export interface ExtractContext {
  /** The repository's absolute path on the laptop (where `$0` points). */
  root?: string;
}

export function extractShell(path: string, text: string, ctx: ExtractContext = {}): Snippet[] {
  if (text.trim() === '') return [];
  const dir = dirOf(path);
  const rest = { cwd: '', cwdKind: 'repo' as const, where: 'script', ...(dir ? { alsoFrom: [dir] } : {}) };
  const starts = lineStarts(text);
  const located = ctx.root ? resolveScriptLocation(text, posix.join(ctx.root, path)) : null;
  if (located) return [snippetFromMap(located.text, located.map, starts, rest)];
  return [new SnippetBuilder(starts).add(text, 0).build(rest)];
}
