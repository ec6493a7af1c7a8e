// A reader for the YAML that task files are written in (Taskfile.yml): block mappings and sequences,
// plain, quoted and block (`|`, `>`) scalars, flow sequences and mappings of scalars, comments. The hot
// bundle may not carry a YAML library (docs/BUILD.md), and a guard must not guess at what it cannot read:
// anchors, aliases, tags, multi-documents and anything else outside this subset make the whole file
// unreadable (undefined), which the caller treats as unknown.

export type YamlValue = string | number | boolean | YamlValue[] | { [key: string]: YamlValue } | null;

interface Line {
  indent: number;
  text: string;
}

class Unreadable extends Error {}

/** Deeper nesting than any task file has: refused, rather than recursing until the stack runs out. */
const MAX_DEPTH = 64;

function stripComment(s: string): string {
  let q: string | null = null;
  for (let i = 0; i < s.length; i++) {
    const c = s[i]!;
    if (q) {
      if (c === q && !(q === '"' && s[i - 1] === '\\')) q = null;
    } else if ((c === '"' || c === "'") && (i === 0 || /[\s:[{,-]/.test(s[i - 1]!))) q = c;
    else if (c === '#' && (i === 0 || /\s/.test(s[i - 1]!))) return s.slice(0, i).trimEnd();
  }
  return s;
}

function scalar(raw: string): YamlValue {
  const s = raw.trim();
  if (s === '') return null;
  if (/^[&*!]/.test(s)) throw new Unreadable('anchor, alias or tag');
  if (s.startsWith("'")) {
    // '' is a quote inside; the first lone quote must end the scalar.
    let i = 1;
    for (; i < s.length; i++) {
      if (s[i] !== "'") continue;
      if (s[i + 1] === "'") i++;
      else break;
    }
    if (i !== s.length - 1) throw new Unreadable('quote');
    return s.slice(1, -1).replace(/''/g, "'");
  }
  if (s.startsWith('"')) {
    if (!s.endsWith('"') || s.length < 2) throw new Unreadable('quote');
    try {
      return JSON.parse(s) as string;
    } catch {
      throw new Unreadable('escape');
    }
  }
  if (s.startsWith('[') || s.startsWith('{')) return flow(s);
  return plain(s);
}

/** A plain scalar as YAML 1.2's core schema reads it: null, booleans, numbers, else the text. */
function plain(s: string): YamlValue {
  // A plain scalar cannot start with an indicator (YAML 1.2, 7.3.3).
  if (/^[,[\]{}#&*!|>'"%@`]/.test(s) || /^[-?:](\s|$)/.test(s)) throw new Unreadable('a scalar starting with an indicator');
  // `echo "built: ok"` is not one plain scalar in YAML (a mapping where none may be): refused, as YAML does.
  if (/:\s|:$|\s#/.test(s)) throw new Unreadable('a plain scalar with ": " or " #"');
  if (/^(null|Null|NULL|~)$/.test(s)) return null;
  if (/^(true|True|TRUE)$/.test(s)) return true;
  if (/^(false|False|FALSE)$/.test(s)) return false;
  if (/^[-+]?[0-9]+$/.test(s)) return Number(s);
  if (/^0o[0-7]+$/.test(s)) return parseInt(s.slice(2), 8);
  if (/^0x[0-9a-fA-F]+$/.test(s)) return parseInt(s.slice(2), 16);
  if (/^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$/.test(s)) return Number(s);
  if (/^[-+]?\.(inf|Inf|INF)$/.test(s)) return s.startsWith('-') ? -Infinity : Infinity;
  if (/^\.(nan|NaN|NAN)$/.test(s)) return NaN;
  return s;
}

/** `[a, 'b', {task: c}]`, `{task: x, vars: {A: 1}}`: one level of nesting is enough for task files. */
function flow(s: string): YamlValue {
  let i = 0;
  const ws = () => {
    while (i < s.length && /\s/.test(s[i]!)) i++;
  };
  let depth = 0;
  const item = (): YamlValue => {
    if (++depth > MAX_DEPTH) throw new Unreadable('nested too deep');
    try {
      return itemAt();
    } finally {
      depth--;
    }
  };
  const itemAt = (): YamlValue => {
    ws();
    if (s[i] === '[') {
      i++;
      const out: YamlValue[] = [];
      ws();
      if (s[i] === ']') return i++, out;
      for (;;) {
        out.push(item());
        ws();
        if (s[i] === ',') i++;
        else if (s[i] === ']') return i++, out;
        else throw new Unreadable('flow sequence');
      }
    }
    if (s[i] === '{') {
      i++;
      const out: { [k: string]: YamlValue } = {};
      ws();
      if (s[i] === '}') return i++, out;
      for (;;) {
        ws();
        const start = i;
        while (i < s.length && s[i] !== ':' && s[i] !== ',' && s[i] !== '}') i++;
        if (/[[\]{}]/.test(s.slice(start, i))) throw new Unreadable('a flow indicator in a key');
        const key = scalar(s.slice(start, i));
        if (typeof key !== 'string' || s[i] !== ':' || Object.hasOwn(out, key)) throw new Unreadable('flow mapping');
        i++;
        out[key] = item();
        ws();
        if (s[i] === ',') i++;
        else if (s[i] === '}') return i++, out;
        else throw new Unreadable('flow mapping');
      }
    }
    const start = i;
    if (s[i] === '"' || s[i] === "'") {
      const q = s[i]!;
      for (i++; i < s.length && s[i] !== q; i++) if (q === '"' && s[i] === '\\') i++;
      i++;
    } else while (i < s.length && !/[,\]}]/.test(s[i]!)) i++;
    const text = s.slice(start, i);
    // An empty entry (`[a,,b]`) or a flow indicator inside a plain scalar is not YAML.
    if (text.trim() === '' || /[[{]/.test(text)) throw new Unreadable('flow entry');
    return scalar(text);
  };
  const v = item();
  ws();
  if (i !== s.length) throw new Unreadable('after a flow value');
  return v;
}

/** The document as a value; undefined when it is outside the subset (or not YAML at all). */
export function readMiniYaml(text: string): YamlValue | undefined {
  const lines: Line[] = [];
  const raw = text.replace(/\r\n?/g, '\n').split('\n');
  try {
    for (let k = 0; k < raw.length; k++) {
      const r = raw[k]!;
      if (/^\t/.test(r)) throw new Unreadable('tab indentation');
      if (/^---\s*$/.test(r)) {
        if (lines.length) throw new Unreadable('several documents');
        continue;
      }
      if (/^\.\.\.(\s|$)/.test(r)) throw new Unreadable('a document end');
      if (/^(---|\.\.\.)\s/.test(r)) throw new Unreadable('content on a document marker line');
      if (/^%/.test(r)) throw new Unreadable('a directive');
      const indent = /^ */.exec(r)![0].length;
      const body = r.slice(indent);
      // Block scalars keep their lines as they are: mark them for the parser.
      if (/^\s*\t/.test(r)) throw new Unreadable('a tab');
      const t = stripComment(body);
      if (t.trim() === '') continue;
      // Tabs are separation in some places and an error in others: refused outside block scalars.
      if (t.includes('\t')) throw new Unreadable('a tab');
      lines.push({ indent, text: t });
      const indicator = /(^|:\s+|^(?:-\s+)+)([|>])([+-]?)\s*$/.exec(t);
      if (indicator) {
        // The content is indented more than the node that holds it: the key's column (`- a: |`), or
        // the dash's for a sequence item (`- |`).
        const dashes = /^(?:-\s+)*/.exec(t)![0];
        const keyForm = /:\s+[|>][+-]?\s*$/.test(t);
        const lastDash = /(-\s+)$/.exec(dashes)?.[1]?.length ?? 0;
        const parent = indent + (keyForm ? dashes.length : dashes.length - lastDash);
        const block: string[] = [];
        let j = k + 1;
        let inner = -1;
        for (; j < raw.length; j++) {
          const b = raw[j]!;
          if (b.includes('\t') && /^\s*\t/.test(b)) throw new Unreadable('a tab in a block scalar');
          if (b.trim() === '') {
            block.push('');
            continue;
          }
          const bi = /^ */.exec(b)![0].length;
          if (bi <= parent) break;
          if (inner < 0) inner = bi;
          if (bi < inner) throw new Unreadable('block scalar indentation');
          if (/^\t/.test(b.slice(bi))) throw new Unreadable('tab in a block scalar');
          block.push(b.slice(inner));
        }
        let trailing = 0;
        while (block.length && block.at(-1) === '') {
          block.pop();
          trailing++;
        }
        let text2: string;
        if (indicator[2] === '>') {
          // Folding with blank or more-indented lines has rules of its own: not followed here.
          if (block.some((b) => b === '' || /^\s/.test(b))) throw new Unreadable('folded block scalar');
          text2 = block.join(' ');
        } else text2 = block.join('\n');
        const chomp = indicator[3];
        if (block.length) text2 += chomp === '-' ? '' : chomp === '+' ? '\n'.repeat(trailing + 1) : '\n';
        else if (chomp === '+') text2 = '\n'.repeat(trailing);
        lines[lines.length - 1] = { indent, text: t.replace(/[|>][+-]?\s*$/, () => JSON.stringify(text2)) };
        k = j - 1;
      }
    }
    let at = 0;
    let depth = 0;
    const parse = (indent: number): YamlValue => {
      if (++depth > MAX_DEPTH) throw new Unreadable('nested too deep');
      try {
        return parseAt(indent);
      } finally {
        depth--;
      }
    };
    const parseAt = (indent: number): YamlValue => {
      const first = lines[at];
      if (!first || first.indent < indent) return null;
      const ind = first.indent;
      if (first.text.startsWith('- ') || first.text === '-') {
        const out: YamlValue[] = [];
        while (at < lines.length && lines[at]!.indent === ind && (lines[at]!.text.startsWith('- ') || lines[at]!.text === '-')) {
          const rest = lines[at]!.text.slice(1).trimStart();
          if (rest === '') {
            at++;
            out.push(parse(ind + 1));
          } else if (rest.startsWith('- ') || /^[^'"[{][^:]*:(\s|$)/.test(rest) || /^["'][^"']*["']\s*:(\s|$)/.test(rest)) {
            // `- cmd: make build` starts a mapping at the dash's content column, `- - a` a sequence.
            const col = ind + lines[at]!.text.length - rest.length;
            lines[at] = { indent: col, text: rest };
            out.push(parse(col));
          } else {
            at++;
            out.push(scalar(rest));
          }
        }
        return out;
      }
      const out: { [k: string]: YamlValue } = {};
      while (at < lines.length && lines[at]!.indent === ind) {
        const t = lines[at]!.text;
        const m = /^("(?:[^"\\]|\\.)*"|'[^']*'|[^'"\s][^:]*?)\s*:(?:\s+(.*))?$/.exec(t);
        if (!m) throw new Unreadable(`not a mapping entry: ${t}`);
        const key = scalar(m[1]!);
        if (typeof key !== 'string' || key === '<<') throw new Unreadable('key');
        if (Object.hasOwn(out, key)) throw new Unreadable(`the key ${key} twice`);
        at++;
        if (m[2] !== undefined && m[2].trim() !== '') out[key] = scalar(m[2]);
        else out[key] = lines[at] && lines[at]!.indent > ind ? parse(ind + 1) : lines[at] && lines[at]!.indent === ind && lines[at]!.text.startsWith('- ') ? parse(ind) : null;
      }
      return out;
    };
    const doc = parse(0);
    if (at !== lines.length) throw new Unreadable('indentation');
    return doc;
  } catch (err) {
    if (err instanceof Unreadable) return undefined;
    throw err;
  }
}
