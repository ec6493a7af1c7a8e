// Fenced shell blocks in Markdown instructions that people and agents follow (README.md, CLAUDE.md,
// AGENTS.md, GEMINI.md, runbooks, docs). Blocks fenced with ``` or ~~~ whose info string is sh, bash,
// shell, zsh, console, shell-session or terminal. In `console`-style blocks (and in any shell block
// that uses `$ ` prompts) only the `$ `-prompted lines (and their `\` continuations) are commands; the
// rest is output. A block runs in the Markdown file's directory (a runbook next to its code says "run
// this here"); a `cd` inside the block is followed by the guard.
import { dirOf, lineStarts, SnippetBuilder, type Snippet } from './snippet.js';

const LANGS = new Set(['sh', 'bash', 'shell', 'zsh', 'console', 'shell-session', 'shellsession', 'terminal']);
const PROMPT_LANGS = new Set(['console', 'shell-session', 'shellsession', 'terminal']);

export function extractMarkdown(path: string, text: string): Snippet[] {
  const starts = lineStarts(text);
  const raw = starts.map((s, i) => ({ text: text.slice(s, i + 1 < starts.length ? starts[i + 1]! - 1 : text.length).replace(/\r$/, ''), start: s }));
  const out: Snippet[] = [];
  for (let i = 0; i < raw.length; i++) {
    const open = /^(\s*)(`{3,}|~{3,})\s*([^\s`{]*)?[^`]*$/.exec(raw[i]!.text);
    if (!open) continue;
    const indent = open[1]!.length;
    const fence = open[2]!;
    const lang = (open[3] ?? '').toLowerCase().replace(/^\{?\.?/, '');
    const body: { text: string; start: number }[] = [];
    let j = i + 1;
    const close = new RegExp(`^\\s*${fence[0] === '`' ? '`' : '~'}{${fence.length},}\\s*$`);
    while (j < raw.length && !close.test(raw[j]!.text)) {
      const l = raw[j]!;
      const strip = Math.min(indent, /^ */.exec(l.text)![0].length);
      body.push({ text: l.text.slice(strip), start: l.start + strip });
      j++;
    }
    const startLine = i + 1;
    i = j;
    if (!LANGS.has(lang)) continue;
    const prompted = PROMPT_LANGS.has(lang) || body.some((l) => /^\s*\$ /.test(l.text));
    const b = new SnippetBuilder(starts);
    let any = false;
    for (let k = 0; k < body.length; k++) {
      const l = body[k]!;
      if (prompted) {
        const p = /^\s*\$ /.exec(l.text);
        if (!p) continue;
        if (any) b.add('\n', l.start, false);
        b.add(l.text.slice(p[0].length), l.start + p[0].length);
        any = true;
        let cur = l.text;
        while (/(^|[^\\])(\\\\)*\\$/.test(cur) && k + 1 < body.length) {
          const n = body[++k]!;
          const cont = /^\s*> /.exec(n.text)?.[0].length ?? 0;
          b.add('\n', n.start, false);
          b.add(n.text.slice(cont), n.start + cont);
          cur = n.text;
        }
      } else {
        if (any) b.add('\n', l.start, false);
        b.add(l.text, l.start);
        any = true;
      }
    }
    if (!any) continue;
    const snip = b.build({ cwd: dirOf(path), cwdKind: 'repo', where: `\`\`\`${lang} block at line ${startLine}` });
    if (snip.text.trim()) out.push(snip);
  }
  return out;
}
