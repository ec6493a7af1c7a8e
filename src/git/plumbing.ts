// Parsers for git's machine output, once: NUL-separated lists, `ls-tree -z`, `cat-file --batch`, and
// `--raw -z` diffs. Pure (bytes in, values out).

/** Splits NUL-terminated output (`-z`), dropping the empty tail. */
export function splitZ(buf: Buffer | string): string[] {
  const parts = (typeof buf === 'string' ? buf : buf.toString('utf8')).split('\0');
  if (parts[parts.length - 1] === '') parts.pop();
  return parts;
}

export interface TreeEntry {
  mode: string;
  type: 'blob' | 'tree' | 'commit';
  sha: string;
  path: string;
}

/** `git ls-tree -z [-r] [-t]` output. */
export function parseLsTree(buf: Buffer | string): TreeEntry[] {
  const out: TreeEntry[] = [];
  for (const rec of splitZ(buf)) {
    const tab = rec.indexOf('\t');
    if (tab < 0) continue;
    const [mode, type, sha] = rec.slice(0, tab).split(' ');
    if (!mode || !sha || (type !== 'blob' && type !== 'tree' && type !== 'commit')) continue;
    out.push({ mode, type, sha, path: rec.slice(tab + 1) });
  }
  return out;
}

/**
 * `git cat-file --batch` output for the requests in order; a request answered `missing`/`ambiguous` maps
 * to nothing. Keys are the requests as asked (a sha, `HEAD:path`, `:path`).
 */
export function parseCatFileBatch(out: Buffer, requests: readonly string[]): Map<string, { type: string; data: Buffer }> {
  const result = new Map<string, { type: string; data: Buffer }>();
  let pos = 0;
  for (const req of requests) {
    const nl = out.indexOf(10, pos);
    if (nl < 0) break;
    const header = out.subarray(pos, nl).toString('utf8');
    pos = nl + 1;
    const m = /^[0-9a-f]+ (\w+) (\d+)$/.exec(header);
    if (!m) continue; // "<req> missing" / "ambiguous"
    const size = Number(m[2]);
    result.set(req, { type: m[1]!, data: out.subarray(pos, pos + size) });
    pos += size + 1;
  }
  return result;
}

/** The input `cat-file --batch` takes for `requests` (requests holding a newline cannot be asked). */
export function catFileInput(requests: readonly string[]): { asked: string[]; input: string } {
  const asked = requests.filter((r) => !/[\r\n]/.test(r));
  return { asked, input: asked.map((r) => `${r}\n`).join('') };
}

export interface RawChange {
  oldId: string;
  newId: string;
  status: string;
  path: string;
  /** The path before a rename or copy (else the same as path). */
  oldPath: string;
}

/**
 * Parses `--raw -z` entries from `tokens[i]` on: `:mode mode old new S\0path\0`, or for renames and copies
 * `:mode mode old new R86\0old path\0new path\0` (the new path is kept). Stops at the first token that is
 * not an entry (diff-tree --stdin puts the commit id between groups).
 */
export function parseRawEntries(tokens: string[], i = 0): { changes: RawChange[]; next: number } {
  const changes: RawChange[] = [];
  while (i < tokens.length && tokens[i]!.startsWith(':')) {
    const f = tokens[i]!.slice(1).split(' ');
    const status = f[4]!;
    const two = status.startsWith('R') || status.startsWith('C');
    changes.push({ oldId: f[2]!, newId: f[3]!, status, path: tokens[i + (two ? 2 : 1)]!, oldPath: tokens[i + 1]! });
    i += two ? 3 : 2;
  }
  return { changes, next: i };
}

/** `diff --name-status -z --no-renames`: status letter and path pairs. */
export function parseNameStatus(buf: Buffer | string): { status: string; path: string }[] {
  const parts = splitZ(buf);
  const out: { status: string; path: string }[] = [];
  for (let i = 0; i + 1 < parts.length; i += 2) out.push({ status: parts[i]!.charAt(0), path: parts[i + 1]! });
  return out;
}

export const EMPTY_TREE = '4b825dc642cb6eb9a060e54bf8d69288fbee4904';
export const ZERO_SHA = '0000000000000000000000000000000000000000';
