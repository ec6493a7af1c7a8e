// Where a script is: the idioms a script uses to find its own folder, resolved to the literal path, so that
// `cd "$(dirname "$0")/.."` or `source "${BASH_SOURCE[0]%/*}/lib.sh"` is judged for the directory it names
// (the walker cannot run `dirname`; a substitution is unknown to it). Textual and conservative: only the
// spellings below, only for a path of plain characters; anything else is left as written (and stays
// unknown to the guard, which says so).
//   $0, ${0}, $BASH_SOURCE, ${BASH_SOURCE}, ${BASH_SOURCE[0]}          -> the script's path
//   ${0%/*}, ${BASH_SOURCE[0]%/*}, ${BASH_SOURCE%/*}                   -> its folder
//   $(dirname P), `dirname P`, $(dirname -- P)                         -> the folder of P
//   $(readlink -f P), $(realpath P), $(realpath -s P)                  -> P (normalised)
//   $(cd P && pwd), $(cd -- P &>/dev/null && pwd -P), $(cd P; pwd)     -> P (normalised)
// (P a literal path, quoted or not, once the inner idioms are resolved.)
import { posix } from 'node:path';

export interface Rewritten {
  text: string;
  /** For each character of `text`, its offset in the original (a rewritten piece maps to its start). */
  map: number[];
}

const PLAIN = /^\/[A-Za-z0-9_.+@%,:/-]*$/;
const LIT = String.raw`(\/[A-Za-z0-9_.+@%,:/-]*)`;
/** P quoted with " or ', or bare. */
const P = String.raw`(?:"${LIT}"|'${LIT}'|${LIT})`;
const litOf = (m: RegExpExecArray, from: number): string | undefined => m[from] ?? m[from + 1] ?? m[from + 2];

const SCRIPT_VAR = /\$\{(?:0|BASH_SOURCE(?:\[0\])?)%\/\*\}|\$\{(?:0|BASH_SOURCE(?:\[0\])?)\}|\$BASH_SOURCE\b(?!\[)|\$0(?![0-9])/g;
/** In a sourced file `$0` is the sourcing shell's: only BASH_SOURCE names the file. */
const SOURCED_VAR = /\$\{BASH_SOURCE(?:\[0\])?%\/\*\}|\$\{BASH_SOURCE(?:\[0\])?\}|\$BASH_SOURCE\b(?!\[)/g;
const DIRNAME = new RegExp(String.raw`\$\(\s*dirname\s+(?:--\s+)?${P}\s*\)|\x60\s*dirname\s+(?:--\s+)?${P}\s*\x60`, 'g');
const REALPATH = new RegExp(String.raw`\$\(\s*(?:readlink\s+-[fme]|realpath(?:\s+-[sePLq])*)\s+(?:--\s+)?${P}\s*\)`, 'g');
const CD_PWD = new RegExp(String.raw`\$\(\s*cd\s+(?:-[LP]\s+)?(?:--\s+)?${P}\s*(?:(?:&>|>|2>|1>)\s*\/dev\/null\s*)*(?:2>&1\s*)?(?:&&|;)\s*pwd(?:\s+-[LP])?\s*\)`, 'g');

function replaceAll(r: Rewritten, re: RegExp, value: (m: RegExpExecArray) => string | null): boolean {
  re.lastIndex = 0;
  let changed = false;
  let text = '';
  const map: number[] = [];
  let last = 0;
  for (let m = re.exec(r.text); m; m = re.exec(r.text)) {
    const v = value(m);
    if (v === null) continue;
    text += r.text.slice(last, m.index);
    for (let i = last; i < m.index; i++) map.push(r.map[i]!);
    text += v;
    for (let i = 0; i < v.length; i++) map.push(r.map[m.index]!);
    last = m.index + m[0].length;
    changed = true;
  }
  if (!changed) return false;
  text += r.text.slice(last);
  for (let i = last; i < r.text.length; i++) map.push(r.map[i]!);
  r.text = text;
  r.map = map;
  return true;
}

/**
 * `text` (a script at absolute path `file`, run by a shell; `sourced`: read by `.`/`source`, where `$0` is
 * not the file) with its own-location idioms resolved; null when it has none (or the path has characters
 * that would need quoting).
 */
export function resolveScriptLocation(text: string, file: string, opts: { sourced?: boolean } = {}): Rewritten | null {
  if (!PLAIN.test(file) || !/\$0|\$\{0|BASH_SOURCE/.test(text)) return null;
  const dir = posix.dirname(file);
  const r: Rewritten = { text, map: Array.from({ length: text.length }, (_, i) => i) };
  // A `'$0'` in single quotes is not expanded by the shell: leave single-quoted text alone.
  const singleQuoted: [number, number][] = [];
  for (let i = 0, q = -1; i < text.length; i++) {
    const c = text[i];
    if (q === -1 && c === '\\') i++;
    else if (q === -1 && c === "'" ) q = i;
    else if (q !== -1 && c === "'") {
      singleQuoted.push([q, i]);
      q = -1;
    } else if (q === -1 && c === '#' && (i === 0 || /\s/.test(text[i - 1]!))) {
      const nl = text.indexOf('\n', i);
      i = nl === -1 ? text.length : nl;
    }
  }
  const quoted = (at: number) => singleQuoted.some(([a, b]) => a < at && at < b);
  let changed = replaceAll(r, opts.sourced ? SOURCED_VAR : SCRIPT_VAR, (m) => (quoted(r.map[m.index]!) ? null : m[0].includes('%/*') ? dir : file));
  if (!changed) return null;
  for (let round = 0; round < 8; round++) {
    const a = replaceAll(r, DIRNAME, (m) => posix.dirname((litOf(m, 1) ?? litOf(m, 4))!));
    const b = replaceAll(r, REALPATH, (m) => posix.normalize(litOf(m, 1)!));
    const c = replaceAll(r, CD_PWD, (m) => posix.normalize(litOf(m, 1)!));
    if (!a && !b && !c) break;
    changed = true;
  }
  return r;
}
