// Shell scripts: `*.sh`, `*.bash`, and files whose shebang names bash, sh or dash. The whole file is one
// snippet; it runs in the script's own directory (see scan.ts for why).
import { dirOf, lineStarts, SnippetBuilder, type Snippet } from './snippet.js';

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

export function extractShell(path: string, text: string): Snippet[] {
  if (text.trim() === '') return [];
  const b = new SnippetBuilder(lineStarts(text)).add(text, 0);
  return [b.build({ cwd: dirOf(path), cwdKind: 'repo', where: 'script' })];
}
