// Dockerfile / Containerfile `RUN` instructions. `docker build` on a laptop runs every RUN on the
// laptop's own CPU and memory (in a container, or in Docker Desktop's VM, which is the laptop too), so
// RUN lines are scanned by default (config `scan.dockerfile: laptop`; `skip` turns it off).
// - shell form, with the escape character's line continuations (comment lines inside a continuation are
//   dropped, as docker does) and BuildKit heredocs (`RUN <<EOF` … `EOF`);
// - exec form (`RUN ["make", "build"]`): the argv quoted back into a command line;
// - `RUN --mount=… --network=…` flags skipped;
// - `WORKDIR` tracked (absolute inside the container, reset by `FROM`): the cwd of a RUN is a container
//   path, so rules about laptop directories do not fire on it while rules about programs do;
// - `SHELL ["pwsh", …]` stops scanning until a POSIX shell is set again.
import { quoteArgv } from '../../routes/quote.js';
import { lineStarts, SnippetBuilder, type Snippet } from './snippet.js';

export function isDockerfile(path: string): boolean {
  const base = path.slice(path.lastIndexOf('/') + 1);
  return /^(Dockerfile|Containerfile)(\..+)?$/i.test(base) || /\.(dockerfile|containerfile)$/i.test(base);
}

export function extractDockerfile(_path: string, text: string): Snippet[] {
  const starts = lineStarts(text);
  const raw = starts.map((s, i) => ({ text: text.slice(s, i + 1 < starts.length ? starts[i + 1]! - 1 : text.length).replace(/\r$/, ''), start: s }));
  let escape = '\\';
  // Parser directives: leading `# directive=value` comments.
  for (const l of raw) {
    const m = /^#\s*([a-z]+)\s*=\s*(\S+)\s*$/i.exec(l.text);
    if (!m) break;
    if (m[1]!.toLowerCase() === 'escape' && (m[2] === '`' || m[2] === '\\')) escape = m[2];
  }
  const out: Snippet[] = [];
  let workdir = '/';
  let posix = true;
  for (let i = 0; i < raw.length; i++) {
    const l = raw[i]!;
    const m = /^\s*([A-Za-z]+)(\s+|$)/.exec(l.text);
    if (!m || l.text.trimStart().startsWith('#')) continue;
    const instr = m[1]!.toUpperCase();
    // Gather the instruction's physical lines.
    const parts: { text: string; start: number }[] = [{ text: l.text.slice(m[0].length), start: l.start + m[0].length }];
    while (continues(parts[parts.length - 1]!.text, escape) && i + 1 < raw.length) {
      i++;
      const n = raw[i]!;
      if (/^\s*#/.test(n.text)) {
        // comment lines inside a continuation are removed; keep the continuation going
        parts.push({ text: escape, start: n.start });
        continue;
      }
      parts.push(n);
    }
    const joined = parts.map((p) => p.text).join('\n');
    if (instr === 'FROM') {
      workdir = '/';
      continue;
    }
    if (instr === 'WORKDIR') {
      const w = joined.replace(new RegExp(`${escapeRe(escape)}\\n`, 'g'), '').trim().replace(/^["']|["']$/g, '');
      workdir = w.startsWith('/') ? normalize(w) : normalize(`${workdir}/${w}`);
      continue;
    }
    if (instr === 'SHELL') {
      try {
        const argv = JSON.parse(joined.replace(new RegExp(`${escapeRe(escape)}\\n`, 'g'), '')) as unknown;
        posix = Array.isArray(argv) && /(^|\/)(ba|da|a|z)?sh$/.test(String(argv[0] ?? ''));
      } catch {
        posix = false;
      }
      continue;
    }
    if (instr !== 'RUN' || !posix) continue;
    // Skip `--flag=value` options.
    let first = parts[0]!;
    let skip = /^(\s*--[a-z-]+(=("[^"]*"|'[^']*'|\S*))?\s+)*/.exec(first.text)![0].length;
    first = { text: first.text.slice(skip), start: first.start + skip };
    const b = new SnippetBuilder(starts);
    const rest = [first, ...parts.slice(1)];
    const heredoc = /^<<(-?)\s*(["']?)([A-Za-z_][A-Za-z0-9_]*)\2\s*$/.exec(first.text.trim());
    if (heredoc && rest.length === 1) {
      // RUN <<EOF … EOF: the body is the script.
      const delim = heredoc[3]!;
      let k = i + 1;
      const body: { text: string; start: number }[] = [];
      while (k < raw.length && (heredoc[1] ? raw[k]!.text.replace(/^\t+/, '') : raw[k]!.text) !== delim) body.push(raw[k++]!);
      i = k;
      body.forEach((p, n) => {
        b.add(p.text, p.start);
        if (n < body.length - 1) b.add('\n', p.start + p.text.length);
      });
    } else if (first.text.trimStart().startsWith('[')) {
      try {
        const argv = JSON.parse(rest.map((p) => p.text).join(' ').replace(new RegExp(`${escapeRe(escape)}(?= )`, 'g'), '')) as unknown;
        if (!Array.isArray(argv) || !argv.every((a) => typeof a === 'string')) continue;
        b.add(quoteArgv(argv as string[]), first.start, false);
      } catch {
        continue;
      }
    } else {
      rest.forEach((p, n) => {
        let t = p.text;
        if (escape === '`' && n < rest.length - 1 && t.endsWith('`')) t = t.slice(0, -1) + '\\';
        b.add(t, p.start);
        if (n < rest.length - 1) b.add('\n', p.start + p.text.length);
      });
    }
    const snip = b.build({ cwd: workdir, cwdKind: 'container', where: 'RUN' });
    if (snip.text.trim()) out.push(snip);
  }
  return out;
}

function continues(s: string, escape: string): boolean {
  return s.trimEnd().endsWith(escape) && !s.trimEnd().endsWith(escape + escape);
}

function escapeRe(s: string): string {
  return s.replace(/[\\^$.*+?()[\]{}|]/g, '\\$&');
}

function normalize(p: string): string {
  const out: string[] = [];
  for (const seg of p.split('/')) {
    if (!seg || seg === '.') continue;
    if (seg === '..') out.pop();
    else out.push(seg);
  }
  return '/' + out.join('/');
}
