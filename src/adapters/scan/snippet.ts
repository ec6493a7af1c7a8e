// A snippet is the shell text one extractor found in a file (a script, a recipe line, a `run:` step...),
// with a map from every character back to the file, so a finding points at the exact line and column.

export type FileKind = 'shell' | 'package-json' | 'makefile' | 'github-actions' | 'gitlab-ci' | 'dockerfile' | 'markdown';

export interface Snippet {
  /** The shell text, as the shell that runs it would see it. */
  text: string;
  /** File position (1-based line and column) of the character at `offset` in `text`. */
  at(offset: number): { line: number; column: number };
  /**
   * Working directory the text runs in: a repository-relative directory ('' is the root), or an absolute
   * path inside a container (`cwdKind: 'container'`); null when it cannot be known.
   */
  cwd: string | null;
  cwdKind: 'repo' | 'container';
  /**
   * Other directories (repository-relative) the text may just as well run in: a script is run from the
   * repository root (as `offhost check 'bash scripts/x.sh'` judges it) or from its own folder.
   */
  alsoFrom?: string[];
  /** Where in the file, for messages: `script "build"`, `job test, step 3`, `RUN`, ... */
  where: string;
  /** Runner labels (GitHub `runs-on`, GitLab `tags`) of the job holding it, when any. */
  runner?: string[];
}

/** Line starts of a text, for offset -> line/column. */
export function lineStarts(text: string): number[] {
  const starts = [0];
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) === 10) starts.push(i + 1);
  return starts;
}

export function positionOf(starts: number[], offset: number): { line: number; column: number } {
  let lo = 0;
  let hi = starts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (starts[mid]! <= offset) lo = mid;
    else hi = mid - 1;
  }
  return { line: lo + 1, column: offset - starts[lo]! + 1 };
}

/** Builds a snippet's text together with its offset map into the source file. */
export class SnippetBuilder {
  private parts: string[] = [];
  private map: number[] = [];

  constructor(private readonly starts: number[]) {}

  /** Appends `s`; each character maps to `src + i` (mapped) or to `src` (an inserted or rewritten piece). */
  add(s: string, src: number, mapped = true): this {
    this.parts.push(s);
    for (let i = 0; i < s.length; i++) this.map.push(mapped ? src + i : src);
    return this;
  }

  get length(): number {
    return this.map.length;
  }

  build(rest: Omit<Snippet, 'text' | 'at'>): Snippet {
    const text = this.parts.join('');
    const map = this.map;
    const starts = this.starts;
    return {
      text,
      at: (offset) => positionOf(starts, map[Math.max(0, Math.min(offset, map.length - 1))] ?? 0),
      ...rest,
    };
  }
}

/** A snippet from a text and its per-character map of offsets into the file. */
export function snippetFromMap(text: string, map: readonly number[], starts: number[], rest: Omit<Snippet, 'text' | 'at'>): Snippet {
  return { text, at: (offset) => positionOf(starts, map[Math.max(0, Math.min(offset, map.length - 1))] ?? 0), ...rest };
}

export function dirOf(path: string): string {
  const i = path.lastIndexOf('/');
  return i < 0 ? '' : path.slice(0, i);
}

export function baseOf(path: string): string {
  return path.slice(path.lastIndexOf('/') + 1);
}

/** `a/b` + `../c` -> `a/c`; null when it leaves the repository. */
export function joinRel(dir: string, rel: string): string | null {
  const out = rel.startsWith('/') ? [] : dir.split('/').filter(Boolean);
  for (const seg of rel.split('/')) {
    if (seg === '' || seg === '.') continue;
    if (seg === '..') {
      if (out.length === 0) return null;
      out.pop();
    } else out.push(seg);
  }
  return out.join('/');
}
