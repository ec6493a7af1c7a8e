// Shared by the GitHub Actions and GitLab CI extractors: scalar nodes of the `yaml` package mapped back
// to file offsets (block literals line by line, plain and quoted one-liners character by character).
import { isScalar, isSeq, Scalar, type Node } from 'yaml';
import type { SnippetBuilder } from './snippet.js';

/** `${{ expr }}` (GitHub) is substituted before the shell sees the text: an unknown word to us. */
function addShellText(b: SnippetBuilder, s: string, src: number, mapped: boolean, ghExpr: boolean): void {
  if (!ghExpr || !s.includes('${{')) {
    b.add(s, src, mapped);
    return;
  }
  const re = /\$\{\{[\s\S]*?\}\}/g;
  let last = 0;
  for (const m of s.matchAll(re)) {
    b.add(s.slice(last, m.index), src + (mapped ? last : 0), mapped);
    b.add('${GITHUB_EXPR}', src + (mapped ? m.index : 0), false);
    last = m.index + m[0].length;
  }
  b.add(s.slice(last), src + (mapped ? last : 0), mapped);
}

/** Appends the string value of a scalar node to `b`, mapped to the file where possible. */
export function addScalar(b: SnippetBuilder, node: Scalar, text: string, ghExpr = false): void {
  const value = String(node.value ?? '');
  const [r0, r1] = node.range ?? [0, 0];
  const src = text.slice(r0, r1);
  if (node.type === Scalar.BLOCK_LITERAL) {
    const nl = src.indexOf('\n');
    const header = nl < 0 ? src : src.slice(0, nl);
    const explicit = /\d/.exec(header);
    const body = nl < 0 ? '' : src.slice(nl + 1);
    const bodyLines = body.split('\n');
    let indent = explicit ? Number(explicit[0]) : -1;
    if (indent < 0) {
      const first = bodyLines.find((l) => l.trim() !== '');
      indent = first ? /^ */.exec(first)![0].length : 0;
    }
    // Explicit indicators are relative to the parent's indentation: take the first line's own indent.
    if (explicit) {
      const first = bodyLines.find((l) => l.trim() !== '');
      if (first) indent = /^ */.exec(first)![0].length;
    }
    let off = r0 + nl + 1;
    const out: { s: string; at: number }[] = [];
    for (const l of bodyLines) {
      out.push({ s: l.length >= indent ? l.slice(indent).replace(/\r$/, '') : '', at: off + Math.min(indent, l.length) });
      off += l.length + 1;
    }
    while (out.length && out[out.length - 1]!.s.trim() === '') out.pop();
    out.forEach((o, k) => {
      addShellText(b, o.s, o.at, true, ghExpr);
      if (k < out.length - 1) b.add('\n', o.at + o.s.length);
    });
    return;
  }
  if (!value.includes('\n')) {
    if (node.type === Scalar.PLAIN && src === value) return addShellText(b, value, r0, true, ghExpr);
    if ((node.type === Scalar.QUOTE_SINGLE || node.type === Scalar.QUOTE_DOUBLE) && src.slice(1, -1) === value)
      return addShellText(b, value, r0 + 1, true, ghExpr);
  }
  // Folded or escaped text: every character points at the scalar's start.
  addShellText(b, value, r0, false, ghExpr);
}

/** The scalars of a string-or-list-of-strings node (nested lists flattened, as GitLab does). */
export function scalarsOf(node: Node | null | undefined): Scalar[] {
  if (!node) return [];
  // `!reference [.job, script]` (GitLab) points at another job's lines, scanned where they are written.
  if (node.tag === '!reference') return [];
  if (isScalar(node)) return typeof node.value === 'string' ? [node] : [];
  if (isSeq(node)) return node.items.flatMap((i) => scalarsOf(i as Node));
  return [];
}

export function stringsOf(node: unknown): string[] {
  if (typeof node === 'string') return [node];
  if (Array.isArray(node)) return node.flatMap(stringsOf);
  return [];
}
