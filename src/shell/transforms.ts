// Programs that only transform their standard input into their output, computed here when both are
// static: `echo … | base64 -d | sh`, `… | tr a-z n-za-m | bash`, `rev <<< … | sh`, `xxd -r -p`. A script
// encoded on the line is then judged as the text the shell will read, not as an unknown one. Anything
// this does not follow exactly (an option it does not know, a set it cannot expand) is unknown, never a
// guess.
import type { Field } from './expand.js';

const UNKNOWN: Field = { value: '', known: false };

/** Whether `name` is one of the programs followed here (cheap: asked of every command whose output is read). */
export function isTransformer(name: string): boolean {
  return TRANSFORMERS.has(name);
}

/** The output of `fields` (a transformer and its arguments) for standard input `input`; null when it is not one. */
export function transformed(name: string, fields: Field[], input: Field): Field | null {
  const t = TRANSFORMERS.get(name);
  // Only a call that reads standard input (`cat FILE` reads the file: another module's business).
  if (!t || !fields.every((f) => f.known) || !READS_STDIN[name]!(fields.slice(1).map((f) => f.value))) return null;
  if (!input.known) return UNKNOWN;
  const out = t(fields.slice(1).map((f) => f.value), input.value);
  return out === null ? UNKNOWN : { value: out, known: true };
}

/** Whether these arguments leave the program reading standard input (no file operand). */
const READS_STDIN: Record<string, (args: string[]) => boolean> = {
  base64: (args) => args.every((a) => a.startsWith('-') && a !== '-') || (args.at(-1) === '-' && args.slice(0, -1).every((a) => a.startsWith('-'))),
  tr: () => true,
  rev: (args) => args.length === 0,
  cat: (args) => args.length === 0 || (args.length === 1 && args[0] === '-'),
  xxd: (args) => args.every((a) => a.startsWith('-')),
};

const TRANSFORMERS = new Map<string, (args: string[], input: string) => string | null>([
  ['base64', (args, input) => base64(args, input)],
  ['tr', (args, input) => tr(args, input)],
  ['rev', (args, input) => (args.length ? null : input.split('\n').map((l) => [...l].reverse().join('')).join('\n'))],
  ['cat', (args, input) => (args.length === 0 || (args.length === 1 && args[0] === '-') ? input : null)],
  ['xxd', (args, input) => xxd(args, input)],
]);

function base64(args: string[], input: string): string | null {
  let decode = false;
  for (const a of args) {
    if (a === '-d' || a === '--decode' || a === '-D') decode = true;
    else if (a === '-i' || a === '--ignore-garbage' || a === '-di' || a === '-id') decode = true;
    else return null; // a file operand, -w: not followed
  }
  if (!decode) {
    // Lines of 76 characters, each ended by a newline (GNU base64's default wrapping).
    const b = Buffer.from(input, 'utf8').toString('base64');
    return b === '' ? '' : `${b.match(/.{1,76}/g)!.join('\n')}\n`;
  }
  const clean = input.replace(/[\s]/g, '');
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(clean)) return null;
  return Buffer.from(clean, 'base64').toString('utf8');
}

function xxd(args: string[], input: string): string | null {
  const a = args.join(' ');
  if (a !== '-r -p' && a !== '-p -r' && a !== '-rp' && a !== '-pr' && a !== '-r -ps' && a !== '-ps -r') return null;
  const hex = input.replace(/\s/g, '');
  if (!/^([0-9a-fA-F]{2})*$/.test(hex)) return null;
  return Buffer.from(hex, 'hex').toString('utf8');
}

/** A tr set: ranges (`a-z`), `\n`/`\t`/`\\` escapes and plain characters; null for classes and repeats. */
function trSet(s: string): string[] | null {
  if (/\[[:=]|\[.\*/.test(s)) return null;
  const chars: string[] = [];
  for (let i = 0; i < s.length; i++) {
    let c = s[i]!;
    if (c === '\\' && i + 1 < s.length) {
      const e = s[++i]!;
      c = e === 'n' ? '\n' : e === 't' ? '\t' : e === 'r' ? '\r' : e;
    }
    if (s[i + 1] === '-' && i + 2 < s.length) {
      const end = s[i + 2]!;
      const from = c.codePointAt(0)!;
      const to = end.codePointAt(0)!;
      // A reversed range is an error to tr; a huge one is not a script's alphabet (and would cost).
      if (to < from || to - from > 4096) return null;
      for (let x = from; x <= to; x++) chars.push(String.fromCodePoint(x));
      i += 2;
      continue;
    }
    chars.push(c);
  }
  return chars;
}

function tr(args: string[], input: string): string | null {
  if (args[0] === '-d' && args.length === 2) {
    const set = trSet(args[1]!);
    if (set === null) return null;
    const del = new Set(set);
    return [...input].filter((c) => !del.has(c)).join('');
  }
  if (args.length !== 2 || args[0]!.startsWith('-')) return null;
  const from = trSet(args[0]!);
  const to = trSet(args[1]!);
  if (from === null || to === null || to.length === 0) return null;
  // SET2 shorter than SET1 is padded with its last character (GNU tr).
  const map = new Map<string, string>();
  from.forEach((c, i) => map.set(c, to[Math.min(i, to.length - 1)]!));
  return [...input].map((c) => map.get(c) ?? c).join('');
}
