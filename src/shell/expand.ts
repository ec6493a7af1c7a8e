// Static word expansion: what a word becomes when bash runs it, as far as it can be known without
// running anything. Tilde, `$HOME`, variables assigned earlier in the same line and quote removal are
// resolved; command substitutions, unknown variables, unquoted globs and brace expansions make the
// word (or the field) unknown, which the rules treat as "could be anything" (fail closed).
import type { Word, WordPart } from './ast.js';

/** A variable's value as far as offhost knows: a string, or null for "set to something unknown". */
export type VarValue = string | null;

export interface Scope {
  /** Variables assigned earlier in the script (and HOME/PWD/OLDPWD from the environment). */
  vars: Map<string, VarValue>;
}

export interface Field {
  value: string;
  known: boolean;
  /** For an unknown field: the offset in `value` where the last unknown text ends (what follows is
   * static, so `$SDK/emulator/emulator` still has a known basename). */
  unknownEnd?: number;
  /** For an unknown field: how many leading characters are static (`@$(…)` has the static `@`). */
  knownPrefix?: number;
}

/** Hooks the walker passes in so that substitutions found while expanding are walked too. */
export interface ExpandHooks {
  /** A `$( )`, backtick or process substitution: its commands run (in a subshell). */
  onSubstitution(part: Extract<WordPart, { type: 'CommandSub' | 'ProcessSub' }>): void;
}

// `[` alone is literal (`[ -f x ]`); `[...]` is a bracket glob.
const GLOB = /[*?]|\[[^\]]*\]/;
const BRACE = /\{[^{}]*(,|\.\.)[^{}]*\}/;
const IFS_WS = /[ \t\n]+/;

/** Walks every substitution inside a word (also inside `${x:-$(…)}` operands and `$(( ))`). */
export function visitSubstitutions(parts: WordPart[], hooks: ExpandHooks): void {
  for (const p of parts) {
    switch (p.type) {
      case 'CommandSub':
      case 'ProcessSub':
        hooks.onSubstitution(p);
        break;
      case 'DoubleQuoted':
        visitSubstitutions(p.parts, hooks);
        break;
      case 'Param':
        if (p.index) visitSubstitutions(p.index.parts, hooks); // ${a[$(cmd)]}
        for (const w of p.operands) visitSubstitutions(w.parts, hooks);
        break;
      case 'Arith':
        visitSubstitutions(p.subs, hooks);
        break;
      default:
        break;
    }
  }
}

interface Piece {
  text: string;
  known: boolean;
  /** Unquoted text: subject to word splitting (for expansions) and globbing / brace expansion. */
  unquoted: boolean;
  /** The piece came from an expansion (splits on IFS when unquoted). */
  expansion: boolean;
}

function paramValue(name: string, op: string, scope: Scope, indexed = false): VarValue {
  if (op !== '') return null; // ${x:-y}, ${x#y}, ${#x}...: not worth modelling; unknown
  if (indexed) return null; // ${a[0]}, ${a[@]}: arrays are not modelled; unknown
  if (!scope.vars.has(name)) return null;
  return scope.vars.get(name) ?? null;
}

function pieces(parts: WordPart[], scope: Scope, quoted: boolean, out: Piece[]): void {
  for (const p of parts) {
    switch (p.type) {
      case 'Literal':
        out.push({ text: p.value, known: true, unquoted: !quoted && !p.escaped, expansion: false });
        break;
      case 'SingleQuoted':
      case 'AnsiC':
        out.push({ text: p.value, known: true, unquoted: false, expansion: false });
        break;
      case 'DoubleQuoted':
        pieces(p.parts, scope, true, out);
        // An empty "" still makes a field.
        if (p.parts.length === 0) out.push({ text: '', known: true, unquoted: false, expansion: false });
        break;
      case 'Param': {
        const v = paramValue(p.name, p.op, scope, p.index !== undefined);
        out.push(
          v === null
            ? { text: p.braced ? `\${${p.name}${p.op}}` : `$${p.name}`, known: false, unquoted: !quoted, expansion: true }
            : { text: v, known: true, unquoted: !quoted, expansion: true },
        );
        break;
      }
      case 'CommandSub':
      case 'ProcessSub':
      case 'Arith':
        out.push({ text: p.type === 'Arith' ? '$((…))' : '$(…)', known: false, unquoted: !quoted, expansion: true });
        break;
    }
  }
}

/**
 * Expands one word into the fields bash would pass as arguments. A word may become several fields
 * (unquoted expansion split on whitespace) or none (an unquoted empty expansion).
 */
/** Simple brace group inside one unquoted literal: `{a,b}` with no nested braces. */
const SIMPLE_BRACE = /\{([^{}]*,[^{}]*)\}/;
const BRACE_LIMIT = 64;

/**
 * Brace expansion of `make build{,-safe}` into `build` and `build-safe`: only comma groups inside one
 * unquoted literal piece, without nesting; anything fancier (`{1..9}`, nested groups) stays unknown.
 */
function braceExpand(ps: Piece[]): Piece[][] {
  let out: Piece[][] = [ps];
  for (let guard = 0; guard < 8; guard++) {
    let changed = false;
    const next: Piece[][] = [];
    for (const word of out) {
      const at = word.findIndex((p) => p.unquoted && !p.expansion && SIMPLE_BRACE.test(p.text));
      if (at < 0) {
        next.push(word);
        continue;
      }
      changed = true;
      const p = word[at]!;
      const m = SIMPLE_BRACE.exec(p.text)!;
      const pre = p.text.slice(0, m.index);
      const post = p.text.slice(m.index + m[0].length);
      for (const alt of m[1]!.split(',')) {
        next.push([...word.slice(0, at), { ...p, text: pre + alt + post }, ...word.slice(at + 1)]);
      }
    }
    out = next;
    if (!changed || out.length > BRACE_LIMIT) break;
  }
  return out.length > BRACE_LIMIT ? [ps] : out;
}

/**
 * Field splitting of one expansion's text on a non-default IFS, as bash does it: blanks of IFS around a
 * delimiter are part of it and a run of them alone is one delimiter; each other IFS character is a
 * delimiter of its own (`a::b` has an empty field between). `hard[i]`: delimiter i holds a non-blank
 * IFS character. A delimiter at the very end of the word makes no empty field (the caller's rule).
 */
function splitOnIfs(text: string, ifs: string): { pieces: string[]; hard: boolean[] } {
  const esc = (chars: string) => chars.replace(/[\\\]^-]/g, '\\$&');
  const blanks = [...ifs].filter((c) => c === ' ' || c === '\t' || c === '\n').join('');
  const others = [...ifs].filter((c) => c !== ' ' && c !== '\t' && c !== '\n').join('');
  const ws = blanks ? `[${esc(blanks)}]` : '';
  const re = new RegExp(others ? `${ws ? `${ws}*` : ''}[${esc(others)}]${ws ? `${ws}*` : ''}${ws ? `|${ws}+` : ''}` : `${ws}+`, 'g');
  const pieces: string[] = [];
  const hard: boolean[] = [];
  let at = 0;
  for (let m = re.exec(text); m !== null; m = re.exec(text)) {
    pieces.push(text.slice(at, m.index));
    hard.push(others !== '' && [...m[0]].some((c) => others.includes(c)));
    at = m.index + m[0].length;
  }
  pieces.push(text.slice(at));
  return { pieces, hard };
}

/** Characters that make an unquoted literal more than itself: globs, braces, a leading tilde. */
const SPECIAL_LITERAL = /[*?[{~]/;

export function expandWord(word: Word, scope: Scope, home: string | null): Field[] {
  // Fast path for the common word: plain quoted or unquoted text, nothing to expand.
  if (word.parts.length === 1) {
    const p = word.parts[0]!;
    if (p.type === 'SingleQuoted' || p.type === 'AnsiC' || (p.type === 'Literal' && !SPECIAL_LITERAL.test(p.value))) {
      return [{ value: p.value, known: true }];
    }
  }
  const ps0: Piece[] = [];
  pieces(word.parts, scope, false, ps0);
  if (ps0.some((p) => p.unquoted && !p.expansion && SIMPLE_BRACE.test(p.text))) {
    const words = braceExpand(ps0);
    if (words.length > 1) return words.flatMap((w) => fieldsOf(w, scope, home));
  }
  return fieldsOf(ps0, scope, home);
}

function fieldsOf(ps: Piece[], scope: Scope, home: string | null): Field[] {
  // Tilde expansion: an unquoted leading `~` or `~/…` (not `~user`, which stays unknown unless it is us).
  const first = ps[0];
  if (first && first.unquoted && !first.expansion && first.text.startsWith('~')) {
    const m = /^~([^/]*)(\/.*)?$/s.exec(first.text);
    if (m) {
      // `~` is $HOME as the line has it (it may have been reassigned); `~user` needs the password
      // database, which offhost does not read: unknown.
      const h = scope.vars.has('HOME') ? (scope.vars.get('HOME') ?? null) : home;
      const user = m[1] ?? '';
      // ~+ is $PWD and ~- is $OLDPWD, as the line has them.
      const base = user === '' ? h : user === '+' ? (scope.vars.get('PWD') ?? null) : user === '-' ? (scope.vars.get('OLDPWD') ?? null) : null;
      if (base !== null) first.text = base + (m[2] ?? '');
      else first.known = false;
    }
  }
  const fields: Field[] = [];
  let cur: Field | null = null;
  let sawQuoted = false;
  for (const p of ps) {
    if (!p.unquoted) sawQuoted = true;
    if (p.expansion && p.unquoted && p.known) {
      // Word splitting of an unquoted, known expansion, on $IFS as the line set it.
      const ifs = scope.vars.has('IFS') ? scope.vars.get('IFS') : ' \t\n';
      if (ifs === null || ifs === undefined) {
        cur ??= { value: '', known: true };
        if (cur.known) cur.knownPrefix = cur.value.length;
        cur.value += p.text;
        cur.known = false;
        cur.unknownEnd = cur.value.length;
        continue;
      }
      const { pieces: chunks, hard } = ifs === ' \t\n' ? { pieces: p.text.split(IFS_WS), hard: null } : ifs === '' ? { pieces: [p.text], hard: null } : splitOnIfs(p.text, ifs);
      chunks.forEach((c, i) => {
        if (i > 0) {
          // A delimiter with a non-blank IFS character ends a field even when it is empty (`a::b`).
          if (hard?.[i - 1]) fields.push(cur ?? { value: '', known: true });
          else if (cur) fields.push(cur);
          cur = null;
        }
        if (c === '') return;
        cur ??= { value: '', known: true };
        cur.value += c;
        if (GLOB.test(c)) {
          if (cur.known) cur.knownPrefix = cur.value.length - c.length;
          cur.known = false;
          cur.unknownEnd = cur.value.length;
        }
      });
      continue;
    }
    cur ??= { value: '', known: true };
    cur.value += p.text;
    if (!p.known || (p.unquoted && !p.expansion && (GLOB.test(p.text) || BRACE.test(p.text)))) {
      if (cur.known) cur.knownPrefix = cur.value.length - p.text.length;
      cur.known = false;
      cur.unknownEnd = cur.value.length;
    }
  }
  if (cur) fields.push(cur);
  else if (sawQuoted && fields.length === 0) fields.push({ value: '', known: true });
  return fields;
}

/** The text of a word when it is fully static (no expansions at all), else null. For heredoc
 * delimiters, case patterns, `for` variables and similar. */
export function staticText(word: Word, scope: Scope, home: string | null): string | null {
  const f = expandWord(word, scope, home);
  if (f.length !== 1 || !f[0]!.known) return null;
  return f[0]!.value;
}
