// Parse a VM lock file (POLICY R3): the frontmatter is the text between the first line `---` and the next line
// starting `---` (split here: a lock has one YAML block, no other engines), the `yaml` package parses it (its core
// schema keeps timestamps as strings), a LineCounter maps every field to its line and column, and zod validates.
// Every problem is a Finding naming the file and the line. Pure: no fs, no git, no clock.
import { isMap, isScalar, isSeq, LineCounter, parseDocument, type Document, type Node as YamlNode } from 'yaml';
import type { Finding, Lock } from '../types.js';
import {
  DEFAULT_TTL_MINUTES,
  FIELD_EXAMPLES,
  LOCK_FIELDS,
  REQUIRED_FIELDS,
  isProductionContainer,
  lockFrontmatterSchema,
  parseUtc,
  type LockField,
} from './schema.js';

/** Files larger than this are not parsed (a lock file is a few hundred bytes). */
export const MAX_LOCK_BYTES = 1024 * 1024;

export interface ParseResult {
  /**
   * The lock, when the frontmatter could be read and every field is valid. It may be non-null while
   * `findings` still holds errors about the file as a whole (name mismatch, heartbeat before started): check
   * `findings.some(f => f.severity === 'error')` for validity.
   */
  lock: Lock | null;
  findings: Finding[];
  /** Every field of the frontmatter as YAML read it (offhost's own among them), when it could be read. */
  fields?: Record<string, unknown>;
}

interface FieldPos {
  keyLine: number;
  keyColumn: number;
  line: number;
  column: number;
  raw: string;
}

class YamlFailure extends Error {
  constructor(
    message: string,
    readonly line?: number,
    readonly column?: number,
  ) {
    super(message);
  }
}

const LOCK_FIELD_SET = new Set<string>(LOCK_FIELDS);
/** Fields offhost's lock store adds (src/locks/record.ts: explicit, claims, host): known, not R3's, never warned about. */
const OFFHOST_FIELD_SET = new Set<string>(['explicit', 'claims', 'host']);

function fileParts(file: string): { base: string; parent: string } {
  const parts = file.split(/[\\/]+/).filter((p) => p !== '');
  return { base: parts[parts.length - 1] ?? file, parent: parts[parts.length - 2] ?? '' };
}

/**
 * The VM id a lock file's name promises: `lock-<vm>.md` in vm-active, `lock-<vm>[-expired]-<date>[-N].md` in
 * vm-active-archive. null when the name is not `lock-*.md`.
 */
export function vmFromFileName(file: string): string | null {
  const { base, parent } = fileParts(file);
  const m = /^lock-(.+)\.md$/.exec(base);
  if (!m) return null;
  let id = m[1]!;
  if (parent === 'vm-active-archive') id = id.replace(/-(?:expired-)?\d{4}-\d{2}-\d{2}(?:-\d+)?$/, '');
  return id;
}

function finding(file: string, ruleId: string, message: string, line?: number, column?: number, severity: Finding['severity'] = 'error'): Finding {
  const f: Finding = { file, ruleId, severity, message };
  if (line !== undefined) f.line = line;
  if (column !== undefined) f.column = column;
  return f;
}

/** Parses a file's bytes: rejects a too large file and binary junk (NUL bytes, invalid UTF-8) before parsing. */
export function parseLockBuffer(buf: Uint8Array, file: string): ParseResult {
  if (buf.length > MAX_LOCK_BYTES) {
    return {
      lock: null,
      findings: [finding(file, 'lock-too-large', `is ${buf.length} bytes, over the ${MAX_LOCK_BYTES}-byte limit for a lock file: not parsed; a lock file holds a short frontmatter and a few notes`, 1, 1)],
    };
  }
  const nul = buf.indexOf(0);
  if (nul !== -1) return { lock: null, findings: [binaryFinding(file, buf, nul, 'a NUL byte')] };
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(buf);
  } catch {
    const bad = firstInvalidUtf8(buf);
    return { lock: null, findings: [binaryFinding(file, buf, bad, 'bytes that are not valid UTF-8')] };
  }
  return parseLockText(text, file);
}

function binaryFinding(file: string, buf: Uint8Array, at: number, what: string): Finding {
  let line = 1;
  let col = 1;
  for (let i = 0; i < at && i < buf.length; i++) {
    if (buf[i] === 10) {
      line++;
      col = 1;
    } else col++;
  }
  return finding(file, 'lock-binary', `holds ${what} (at byte ${at}): this is not a text lock file; write it as UTF-8 Markdown with a YAML frontmatter`, line, col);
}

function firstInvalidUtf8(buf: Uint8Array): number {
  for (let i = 0; i < buf.length; i++) {
    const b = buf[i]!;
    if (b < 0x80) continue;
    const n = b >= 0xf0 && b < 0xf5 ? 3 : b >= 0xe0 ? 2 : b >= 0xc2 && b < 0xe0 ? 1 : -1;
    if (n < 0 || i + n >= buf.length) return i;
    for (let k = 1; k <= n; k++) if (((buf[i + k] ?? 0) & 0xc0) !== 0x80) return i;
    i += n;
  }
  return 0;
}

function describeRaw(raw: string): string {
  const one = raw.replace(/\s+/g, ' ').trim();
  return one.length > 60 ? `${one.slice(0, 57)}...` : one;
}

function nodeKind(node: unknown): string {
  if (isMap(node)) return 'a nested mapping';
  if (isSeq(node)) return 'a list';
  return '';
}

/**
 * Parses a lock file's text. `file` is the path used in findings and for the file-name check (`lock-<vm>.md`;
 * in a `vm-active-archive` folder the `[-expired]-<date>[-N]` suffix is allowed).
 */
export function parseLockText(text: string, file: string): ParseResult {
  const findings: Finding[] = [];
  if (text.length > MAX_LOCK_BYTES) {
    return { lock: null, findings: [finding(file, 'lock-too-large', `is ${text.length} characters, over the ${MAX_LOCK_BYTES} limit for a lock file: not parsed; a lock file holds a short frontmatter and a few notes`, 1, 1)] };
  }
  const nul = text.indexOf('\0');
  const junk = nul !== -1 ? nul : text.indexOf('\uFFFD');
  if (junk !== -1) {
    const lines = text.slice(0, junk).split('\n');
    return {
      lock: null,
      findings: [finding(file, 'lock-binary', `holds ${nul !== -1 ? 'a NUL byte' : 'bytes that are not valid UTF-8'}: this is not a text lock file; write it as UTF-8 Markdown with a YAML frontmatter`, lines.length, (lines[lines.length - 1]?.length ?? 0) + 1)],
    };
  }
  const src = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  if (src.trim() === '') {
    return { lock: null, findings: [finding(file, 'lock-empty', 'is empty: a lock file starts with a YAML frontmatter between two --- lines (vm, session, ai, started, reason)', 1, 1)] };
  }
  const firstLine = src.slice(0, (src.indexOf('\n') + 1 || src.length + 1) - 1).replace(/\r$/, '');
  if (firstLine.trimEnd() !== '---') {
    const msg = firstLine.startsWith('---')
      ? `opens its frontmatter with '${describeRaw(firstLine)}': the first line must be exactly --- (YAML only)`
      : 'has no frontmatter: the file must start with a line --- followed by the fields (vm, session, ai, started, reason) and another --- line';
    return { lock: null, findings: [finding(file, 'lock-no-frontmatter', msg, 1, 1)] };
  }
  // The closing delimiter: the next line that starts with ---.
  const closeAt = src.indexOf('\n---', firstLine.length);
  if (closeAt === -1) {
    return { lock: null, findings: [finding(file, 'lock-no-frontmatter', 'opens a frontmatter at line 1 that is never closed: add a line --- after the last field', 1, 1)] };
  }
  // The block keeps the newline after the opening ---, so that YAML's line numbers are the file's; with CRLF
  // endings its last line keeps its '\r'.
  const block = src.slice(3, closeAt);
  let body = src.slice(closeAt + 4);
  if (body[0] === '\r') body = body.slice(1);
  if (body[0] === '\n') body = body.slice(1);

  let doc: Document.Parsed | undefined;
  let lc: LineCounter | undefined;
  let engineSrc = '';
  const parseYaml = (str: string): object => {
    engineSrc = str.endsWith('\r') ? str.slice(0, -1) : str;
    lc = new LineCounter();
    doc = parseDocument(engineSrc, { lineCounter: lc, uniqueKeys: true, prettyErrors: true, schema: 'core', strict: true });
    const err = doc.errors[0];
    if (err) {
      const pos = err.linePos?.[0];
      let msg = err.message.split('\n')[0]!.replace(/ at line \d+, column \d+:?$/, '');
      let line = pos?.line;
      let col = pos?.col;
      // An error detected after the field that caused it (an unclosed quote or bracket): name the field.
      const map = doc.contents;
      if (isMap(map)) {
        const before = map.items.filter((it) => ((it.key as YamlNode | null)?.range?.[0] ?? Infinity) < err.pos[0]);
        const item = before[before.length - 1];
        const v = item?.value as (YamlNode & { flow?: boolean; type?: string }) | null | undefined;
        const kr = (item?.key as YamlNode | null | undefined)?.range;
        const opened = v && (v.flow === true || v.type === 'QUOTE_DOUBLE' || v.type === 'QUOTE_SINGLE');
        if (item && kr && v?.range && opened && err.pos[0] <= v.range[2] && isScalar(item.key)) {
          const start = lc.linePos(kr[0]);
          if (start.line !== line) {
            msg = `${msg} (in the value of '${String(item.key.value)}' that starts at line ${start.line}; the parser stopped at line ${line}, column ${col})`;
            line = start.line;
            col = start.col;
          }
        }
      }
      throw new YamlFailure(msg, line, col);
    }
    return (doc.toJS({ maxAliasCount: 50 }) ?? {}) as object;
  };
  const deep = nestingProblem(block);
  if (deep) return { lock: null, findings: [finding(file, 'lock-yaml', deep.message, deep.line, deep.column)] };
  let parsed: { data: unknown; content: string };
  try {
    // A block of only blank and comment lines holds no fields.
    const empty = block.replace(/^\s*#[^\n]+/gm, '').trim() === '';
    parsed = { data: empty ? {} : parseYaml(block), content: body };
  } catch (e) {
    if (e instanceof YamlFailure) {
      return { lock: null, findings: [finding(file, 'lock-yaml', `frontmatter is not valid YAML: ${e.message}`, e.line, e.column)] };
    }
    if (e instanceof RangeError) return { lock: null, findings: [finding(file, 'lock-yaml', `frontmatter nests too deeply to be read (offhost reads at most ${MAX_YAML_DEPTH} levels; a lock's fields are flat)`, 2, 1)] };
    return { lock: null, findings: [finding(file, 'lock-yaml', `frontmatter is not valid YAML: ${(e as Error).message}`, 1, 1)] };
  }

  // Field positions from the YAML document (absent when the frontmatter is empty or only comments).
  const pos = new Map<string, FieldPos>();
  const closeLine = src.slice(0, closeAt + 1).split('\n').length;
  if (doc && lc && doc.contents !== null && !isMap(doc.contents)) {
    const r = (doc.contents as YamlNode).range;
    const p = r ? lc.linePos(r[0]) : { line: 2, col: 1 };
    return { lock: null, findings: [finding(file, 'lock-yaml', "frontmatter must be a list of 'field: value' lines (vm, session, ai, started, reason)", p.line, p.col)] };
  }
  if (doc && lc && isMap(doc.contents)) {
    for (const item of doc.contents.items) {
      const key = isScalar(item.key) ? String(item.key.value) : String(item.key);
      const kr = (item.key as YamlNode | null)?.range;
      const kp = kr ? lc.linePos(kr[0]) : { line: 1, col: 1 };
      const v = item.value as YamlNode | null;
      const vr = v?.range;
      const vp = vr ? lc.linePos(vr[0]) : kp;
      const raw = vr && isScalar(v) ? engineSrc.slice(vr[0], vr[1]) : nodeKind(v);
      pos.set(key, { keyLine: kp.line, keyColumn: kp.col, line: vp.line, column: vp.col, raw: raw || '' });
    }
  }

  const data = (parsed.data && typeof parsed.data === 'object' ? parsed.data : {}) as Record<string, unknown>;
  const at = (field: string): { line: number; column: number } => {
    const p = pos.get(field);
    return p ? { line: p.line, column: p.column } : { line: 1, column: 1 };
  };

  // Unknown fields: a warning each (a typo of a known one says so).
  for (const key of Object.keys(data)) {
    if (LOCK_FIELD_SET.has(key) || OFFHOST_FIELD_SET.has(key)) continue;
    const p = pos.get(key);
    const near = nearestField(key);
    findings.push(
      finding(file, 'lock-unknown-field', `unknown field '${key}'${near ? `: did you mean '${near}'?` : `: a lock has ${LOCK_FIELDS.join(', ')}; put notes in the body below the frontmatter`}`, p?.keyLine ?? 1, p?.keyColumn ?? 1, 'warning'),
    );
  }

  // Present but empty (`heartbeat:` with nothing after it).
  const input: Record<string, unknown> = { ...data };
  for (const field of LOCK_FIELDS) {
    if (Object.hasOwn(data, field) && data[field] === null) {
      const { line, column } = at(field);
      const required = REQUIRED_FIELDS.includes(field);
      findings.push(finding(file, 'lock-schema', `${field}: has no value; ${required ? 'write' : 'remove the line or write'} it like ${FIELD_EXAMPLES[field]}`, pos.get(field)?.keyLine ?? line, pos.get(field)?.keyColumn ?? column));
      delete input[field];
    }
  }

  const result = lockFrontmatterSchema.safeParse(input);
  const bad = new Set<string>();
  if (!result.success) {
    for (const issue of result.error.issues) {
      const field = String(issue.path[0] ?? '');
      if (bad.has(field)) continue;
      bad.add(field);
      if (input[field] === undefined) {
        if (Object.hasOwn(data, field)) continue; // reported above as empty
        findings.push(finding(file, 'lock-schema', `missing required field '${field}': add a line like ${FIELD_EXAMPLES[field as LockField] ?? `${field}: ...`} before the closing --- (line ${closeLine})`, 1, 1));
        continue;
      }
      const { line, column } = at(field);
      const raw = describeRaw(pos.get(field)?.raw ?? String(input[field]));
      const rule = field === 'vm' && typeof input.vm === 'string' && isProductionContainer(input.vm) ? 'lock-production-vm' : 'lock-schema';
      findings.push(finding(file, rule, `${field}: ${raw ? `${raw} ` : ''}${issue.message}`, line, column));
    }
  }

  // File name: lock-<vm>.md.
  const vm = typeof input.vm === 'string' && !bad.has('vm') ? input.vm : null;
  const fromName = vmFromFileName(file);
  const { base } = fileParts(file);
  if (fromName === null) {
    findings.push(finding(file, 'lock-name-mismatch', `file name '${base}' is not lock-<vm-id>.md${vm ? `: rename it to lock-${vm}.md` : ''}`, at('vm').line, at('vm').column));
  } else if (vm !== null && fromName !== vm) {
    findings.push(
      finding(file, 'lock-name-mismatch', `vm: ${vm} does not match the file name '${base}' (which names ${fromName}): rename the file to lock-${vm}.md or correct vm`, at('vm').line, at('vm').column),
    );
  }

  findings.sort((a, b) => (a.line ?? 0) - (b.line ?? 0) || (a.column ?? 0) - (b.column ?? 0));
  if (!result.success) return { lock: null, findings };
  const d = result.data;
  const started = parseUtc(d.started)!;
  const heartbeat = d.heartbeat !== undefined ? parseUtc(d.heartbeat)! : undefined;
  if (heartbeat && heartbeat.getTime() < started.getTime()) {
    const { line, column } = at('heartbeat');
    findings.push(finding(file, 'lock-schema', `heartbeat: ${d.heartbeat} is before started: ${d.started} (line ${at('started').line}); a heartbeat is a time after the lock was taken`, line, column));
  }
  const positions: Lock['positions'] = {};
  for (const f of LOCK_FIELDS) {
    const p = pos.get(f);
    if (p) positions[f] = p.keyLine;
  }
  const lock: Lock = {
    vm: d.vm,
    session: d.session,
    ai: d.ai,
    started,
    ttlMinutes: d.ttl_minutes ?? DEFAULT_TTL_MINUTES,
    reason: d.reason.trim(),
    body: parsed.content,
    file,
    positions,
  };
  if (heartbeat) lock.heartbeat = heartbeat;
  return { lock, findings, fields: data };
}

function nearestField(key: string): string | null {
  const k = key.toLowerCase().replace(/[^a-z]/g, '');
  const aliases: Record<string, LockField> = { ttl: 'ttl_minutes', ttlmin: 'ttl_minutes', ttlminutes: 'ttl_minutes', agent: 'ai', host: 'vm', machine: 'vm', start: 'started', startedat: 'started', heartbeatat: 'heartbeat', lastheartbeat: 'heartbeat', why: 'reason', owner: 'session' };
  if (aliases[k]) return aliases[k]!;
  for (const f of LOCK_FIELDS) if (f.replace(/_/g, '') === k || levenshtein(f, key.toLowerCase()) <= 2) return f;
  return null;
}

function levenshtein(a: string, b: string): number {
  if (Math.abs(a.length - b.length) > 2) return 3;
  const prev = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let diag = prev[0]!;
    prev[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const tmp = prev[j]!;
      prev[j] = Math.min(prev[j]! + 1, prev[j - 1]! + 1, diag + (a[i - 1] === b[j - 1] ? 0 : 1));
      diag = tmp;
    }
  }
  return prev[b.length]!;
}

/** The deepest nesting a frontmatter may have (flow brackets or block indentation levels). */
export const MAX_YAML_DEPTH = 64;

/**
 * Where a frontmatter nests deeper than MAX_YAML_DEPTH, found before the YAML parser (which recurses per
 * level and would overflow the stack): flow brackets outside quotes, and block indentation levels. The
 * block keeps the newline after the opening ---, so its first line is the file's line 2.
 */
export function nestingProblem(block: string): { message: string; line: number; column: number } | null {
  let flow = 0;
  let quote: string | null = null;
  const indents: number[] = [];
  const lines = block.split('\n');
  for (let n = 0; n < lines.length; n++) {
    const text = lines[n]!;
    if (quote === null) {
      const m = /^( *)(?:- +)*(\S)/.exec(text);
      if (m && m[2] !== '#') {
        // A list item's dash opens a level of its own: `- - - x` nests like indentation does.
        const width = m[0].length - 1;
        while (indents.length && indents[indents.length - 1]! >= width) indents.pop();
        indents.push(width);
        const dashes = (m[0].match(/- +/g) ?? []).length;
        if (indents.length + dashes > MAX_YAML_DEPTH) {
          return { message: `frontmatter nests more than ${MAX_YAML_DEPTH} levels deep (indentation and list items): offhost reads at most ${MAX_YAML_DEPTH}; a lock's fields are flat`, line: n + 1, column: width + 1 };
        }
      }
    }
    for (let i = 0; i < text.length; i++) {
      const c = text[i]!;
      if (quote) {
        if (c === quote) quote = quote === "'" && text[i + 1] === "'" ? (i++, quote) : null;
        else if (c === '\\' && quote === '"') i++;
        continue;
      }
      if (c === '#' && (i === 0 || /\s/.test(text[i - 1]!))) break;
      if (c === '"' || c === "'") quote = c;
      else if (c === '[' || c === '{') {
        if (++flow > MAX_YAML_DEPTH) return { message: `frontmatter nests more than ${MAX_YAML_DEPTH} brackets deep: offhost reads at most ${MAX_YAML_DEPTH}; a lock's fields are flat`, line: n + 1, column: i + 1 };
      } else if (c === ']' || c === '}') flow = Math.max(0, flow - 1);
    }
  }
  return null;
}

/**
 * Reads a frontmatter without validating it as a VM lock (component locks have their own fields): the
 * top-level mapping as plain values, or null when there is none or it is not YAML.
 */
export function readFrontmatterLoose(text: string): Record<string, unknown> | null {
  if (text.length > MAX_LOCK_BYTES || text.includes('\0')) return null;
  const src = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  const m = /^---[ \t]*\r?\n([\s\S]*?)\r?\n---[ \t]*(?:\r?\n|$)/.exec(src);
  if (!m) return null;
  if (nestingProblem(`\n${m[1]!}`)) return null;
  let doc: Document.Parsed;
  try {
    doc = parseDocument(m[1]!, { schema: 'core', uniqueKeys: false });
  } catch {
    return null;
  }
  if (doc.errors.length || !isMap(doc.contents)) return null;
  try {
    return doc.toJS({ maxAliasCount: 50 }) as Record<string, unknown>;
  } catch {
    return null;
  }
}

export { serializeLock, type LockFields } from './serialize.js';
