// package.json `scripts`: each value is a command line npm runs with `sh -c` in the package's directory.
// JSON.parse loses positions, so a small scanner walks the text to find each value's offset; escapes in
// the value (`\"`, `\n`, `\u…`) are decoded and each decoded character keeps its source offset.
import { dirOf, lineStarts, SnippetBuilder, type Snippet } from './snippet.js';

export function extractPackageJson(path: string, text: string): Snippet[] {
  try {
    const doc = JSON.parse(text) as unknown;
    if (!doc || typeof doc !== 'object' || Array.isArray(doc)) return [];
  } catch {
    return [];
  }
  const starts = lineStarts(text);
  const out: Snippet[] = [];
  const s = new JsonScanner(text);
  s.ws();
  if (text[s.i] !== '{') return [];
  s.i++;
  for (;;) {
    s.ws();
    if (text[s.i] === '}') break;
    const key = s.string().value;
    s.ws();
    s.i++; // ':'
    s.ws();
    if (key === 'scripts' && text[s.i] === '{') {
      s.i++;
      for (;;) {
        s.ws();
        if (text[s.i] === '}') {
          s.i++;
          break;
        }
        const name = s.string().value;
        s.ws();
        s.i++;
        s.ws();
        if (text[s.i] === '"') {
          const v = s.string();
          const b = new SnippetBuilder(starts);
          for (let k = 0; k < v.value.length; k++) b.add(v.value[k]!, v.map[k]!);
          if (v.value.trim()) out.push(b.build({ cwd: dirOf(path), cwdKind: 'repo', where: `script "${name}"` }));
        } else s.skipValue();
        s.ws();
        if (text[s.i] === ',') s.i++;
      }
    } else s.skipValue();
    s.ws();
    if (text[s.i] === ',') s.i++;
    else break;
  }
  return out;
}

class JsonScanner {
  i = 0;
  constructor(private readonly t: string) {}
  ws(): void {
    while (this.i < this.t.length && /\s/.test(this.t[this.i]!)) this.i++;
  }
  /** Reads a string at `i` (on its opening quote); `map[k]` is the source offset of decoded char k. */
  string(): { value: string; map: number[] } {
    const t = this.t;
    let value = '';
    const map: number[] = [];
    this.i++;
    while (this.i < t.length && t[this.i] !== '"') {
      const at = this.i;
      if (t[this.i] === '\\') {
        const c = t[this.i + 1]!;
        if (c === 'u') {
          value += String.fromCharCode(parseInt(t.slice(this.i + 2, this.i + 6), 16));
          this.i += 6;
        } else {
          value += ({ n: '\n', t: '\t', r: '\r', b: '\b', f: '\f' } as Record<string, string>)[c] ?? c;
          this.i += 2;
        }
      } else {
        value += t[this.i];
        this.i++;
      }
      map.push(at);
    }
    this.i++;
    return { value, map };
  }
  skipValue(): void {
    const t = this.t;
    const c = t[this.i];
    if (c === '"') return void this.string();
    if (c === '{' || c === '[') {
      let depth = 0;
      while (this.i < t.length) {
        const ch = t[this.i]!;
        if (ch === '"') {
          this.string();
          continue;
        }
        if (ch === '{' || ch === '[') depth++;
        if (ch === '}' || ch === ']') depth--;
        this.i++;
        if (depth === 0) return;
      }
      return;
    }
    while (this.i < t.length && !/[,}\]\s]/.test(t[this.i]!)) this.i++;
  }
}
