// A PowerShell line read well enough to refuse what it runs that the guard would stop in bash.
//
// offhost has no PowerShell parser. What this reads, honestly:
// - statements split on `;`, `|`, `&&`, `||` and newlines outside quotes; the insides of `{ … }` script
//   blocks, `$( … )` / `@( … )` subexpressions and `( … )` are read as statements of their own;
// - words split on blanks outside quotes; '…' (with '' for a quote) and "…" (with ` escapes) are unquoted;
//   a leading `&` or `.` call operator is dropped; a program word loses its directory and a
//   .exe/.cmd/.bat/.com/.ps1 ending, case-insensitively (`C:\tools\Make.EXE` is `make`);
// - `Start-Process X -ArgumentList …`, `Invoke-Expression STRING` / `iex STRING`, `cmd /c STRING`,
//   `wsl …` and `bash|sh -c STRING` are followed into what they run.
// Every word that could name a program is then judged as the start of a bash command (`word rest…`), so a
// line that NAMES a trigger anywhere (`$p = 'make'; & $p build-safe` included) is refused when the guard
// would refuse or reroute that command there. Not read: variables' values, aliases and functions defined
// elsewhere, scripts (.ps1) the line runs, here-strings' insides as code, and anything built at run time.
import { joinArgv } from './common.js';

/** More candidate commands than this in one line: refused as too long to read (never let through). */
export const MAX_CANDIDATES = 400;

const EXT = /\.(exe|cmd|bat|com|ps1)$/i;

/** Splits text into statements (arrays of words); nested blocks become statements of their own. */
function statements(text: string, out: string[][], depth = 0): void {
  if (depth > 20) return;
  let words: string[] = [];
  let word = '';
  let hasWord = false;
  const flushWord = () => {
    if (hasWord) words.push(word);
    word = '';
    hasWord = false;
  };
  const flushStatement = () => {
    flushWord();
    if (words.length > 0) out.push(words);
    words = [];
  };
  for (let i = 0; i < text.length; i++) {
    const ch = text[i] as string;
    if (ch === "'") {
      hasWord = true;
      for (i++; i < text.length; i++) {
        if (text[i] === "'") {
          if (text[i + 1] === "'") {
            word += "'";
            i++;
            continue;
          }
          break;
        }
        word += text[i];
      }
      continue;
    }
    if (ch === '"') {
      hasWord = true;
      for (i++; i < text.length && text[i] !== '"'; i++) {
        if (text[i] === '`' && i + 1 < text.length) {
          word += text[++i];
          continue;
        }
        if (text[i] === '$' && text[i + 1] === '(') {
          const end = closing(text, i + 1);
          statements(text.slice(i + 2, end), out, depth + 1);
          word += text.slice(i, end + 1);
          i = end;
          continue;
        }
        word += text[i];
      }
      continue;
    }
    if (ch === '`' && i + 1 < text.length) {
      hasWord = true;
      word += text[++i];
      continue;
    }
    if (ch === '#' && !hasWord) {
      // a comment to the end of the line
      while (i < text.length && text[i] !== '\n') i++;
      flushStatement();
      continue;
    }
    if (ch === '{' || ch === '(' || ((ch === '$' || ch === '@') && text[i + 1] === '(')) {
      const open = ch === '$' || ch === '@' ? i + 1 : i;
      const end = closing(text, open);
      flushWord();
      statements(text.slice(open + 1, end), out, depth + 1);
      i = end;
      continue;
    }
    if (ch === ';' || ch === '|' || ch === '\n' || ch === '\r' || (ch === '&' && text[i + 1] === '&')) {
      if (text[i + 1] === ch) i++;
      flushStatement();
      continue;
    }
    if (ch === ' ' || ch === '\t') {
      flushWord();
      continue;
    }
    hasWord = true;
    word += ch;
  }
  flushStatement();
}

/** Index of the bracket that closes the one at `open` (or the end of the text). Quotes are skipped. */
function closing(text: string, open: number): number {
  const pair: Record<string, string> = { '(': ')', '{': '}', '[': ']' };
  const want = pair[text[open] as string] ?? ')';
  const stack: string[] = [want];
  for (let i = open + 1; i < text.length; i++) {
    const ch = text[i] as string;
    if (ch === "'" || ch === '"') {
      for (i++; i < text.length && text[i] !== ch; i++) if (ch === '"' && text[i] === '`') i++;
      continue;
    }
    if (pair[ch]) stack.push(pair[ch] as string);
    else if (ch === stack[stack.length - 1]) {
      stack.pop();
      if (stack.length === 0) return i;
    }
  }
  return text.length;
}

/** A word as a program name: directory and Windows extension dropped, lower case. */
export function programName(word: string): string {
  const base = word.split(/[\\/]/).pop() ?? word;
  return base.replace(EXT, '').toLowerCase();
}

const PROGRAMISH = /^[A-Za-z0-9_.+-]+$/;

/**
 * The bash command lines a PowerShell line is judged as: for every word that could be a program, that word
 * (as a program name) with the rest of its statement. Strings run by iex/cmd /c/bash -c are read too.
 */
export function powershellCandidates(line: string): { lines: string[]; tooMany: boolean } {
  const sts: string[][] = [];
  statements(line, sts);
  const lines: string[] = [];
  const seen = new Set<string>();
  const queue = sts.slice();
  let guard = 0;
  while (queue.length > 0 && guard++ < 10_000) {
    const words = (queue.shift() as string[]).slice();
    while (words[0] === '&' || words[0] === '.') words.shift();
    if (words.length === 0) continue;
    const head = programName(words[0] as string);
    // Things that run a string: read the string as PowerShell (iex) or as a shell line (cmd /c, bash -c).
    if ((head === 'invoke-expression' || head === 'iex') && words[1] !== undefined) statements(words.slice(1).join(' '), queue);
    if (head === 'cmd' && /^\/[ck]$/i.test(words[1] ?? '') && words[2] !== undefined) statements(words.slice(2).join(' '), queue);
    for (let i = 0; i < words.length; i++) {
      const w = words[i] as string;
      if (w.startsWith('-') || w.startsWith('$') || w.startsWith('/')) {
        if (!(i === 0 && w.startsWith('/'))) continue;
      }
      const name = programName(w);
      if (!PROGRAMISH.test(name)) continue;
      const rest = words.slice(i + 1).filter((a) => !/^-(ArgumentList|FilePath|NoNewWindow|Wait|PassThru)$/i.test(a));
      const cand = joinArgv([name, ...rest.flatMap((a) => (a.includes(',') && i > 0 && head === 'start-process' ? a.split(',') : [a]))]);
      if (seen.has(cand)) continue;
      seen.add(cand);
      lines.push(cand);
      if (lines.length > MAX_CANDIDATES) return { lines, tooMany: true };
    }
  }
  return { lines, tooMany: false };
}
