// A fish command line, read as the bash the guard understands, for judging only (`offhost shell --check
// --fish`, the fish snippet). The guard parses bash; fish differs where it matters for finding the programs a
// line runs: `(cmd)` is command substitution, `and`/`or`/`not` prefix a command, blocks are
// `begin|if|while|for|switch|function … end`, single quotes take `\'` and `\\` escapes. Read as bash, those
// either hid the program (`true; and make build` ran `and`) or failed to parse (`echo (date)` refused).
//
// The translation keeps every command a fish line can run as a command of the bash text: block keywords
// become `:` or go (their conditions are commands), `for V in WORDS` becomes `: WORDS`, `(…)` becomes `$(…)`.
// `exact` says the text needed no translation at all: only then may a reroute run the line as it is
// (offhost run executes bash on the VM).

export interface FishAsBash {
  text: string;
  exact: boolean;
}

/** Keywords that start a fish command: what each becomes at command position. */
const DROP = new Set(['and', 'or', 'not', 'if', 'while', 'else', 'time']);
const COLON = new Set(['begin', 'end', 'switch', 'case', 'function']);

const WORD_END = /[\s;&|()<>]/;

/** fish single quotes: `\'` and `\\` are escapes, nothing else. Returns the bash single-quoted literal and the index after. */
function singleQuoted(s: string, i: number): { out: string; next: number } {
  let v = '';
  let j = i + 1;
  for (; j < s.length && s[j] !== "'"; j++) {
    if (s[j] === '\\' && (s[j + 1] === "'" || s[j + 1] === '\\')) j++;
    v += s[j];
  }
  return { out: `'${v.replace(/'/g, `'\\''`)}'`, next: j + 1 };
}

export function fishAsBash(line: string): FishAsBash {
  let out = '';
  let atCmd = true;
  let i = 0;
  const n = line.length;
  while (i < n) {
    const c = line[i] as string;
    if (c === '\n' || c === ';') {
      out += c;
      atCmd = true;
      i++;
      continue;
    }
    if (c === ' ' || c === '\t') {
      out += c;
      i++;
      continue;
    }
    if (c === '#' && (i === 0 || /[\s;&|(]/.test(line[i - 1] as string))) {
      const e = line.indexOf('\n', i);
      const stop = e < 0 ? n : e;
      out += line.slice(i, stop);
      i = stop;
      continue;
    }
    if (c === '&' || c === '|') {
      const two = line.slice(i, i + 2);
      if (two === '&&' || two === '||') {
        out += two;
        i += 2;
      } else if (c === '&' && line[i + 1] === '>') {
        // `&>` redirection (both streams)
        out += '&>';
        i += 2;
        atCmd = false;
        continue;
      } else {
        out += c;
        i++;
      }
      atCmd = true;
      continue;
    }
    if (c === '(') {
      // fish command substitution; `$(` (fish 3.4+) reads the same
      out += line[i - 1] === '$' ? '(' : '$(';
      atCmd = true;
      i++;
      continue;
    }
    if (c === ')') {
      out += ')';
      atCmd = false;
      i++;
      continue;
    }
    if (atCmd) {
      let j = i;
      while (j < n && !WORD_END.test(line[j] as string) && line[j] !== "'" && line[j] !== '"' && line[j] !== '\\') j++;
      const word = line.slice(i, j);
      const bare = j >= n || WORD_END.test(line[j] as string);
      if (bare && DROP.has(word)) {
        i = j;
        while (line[i] === ' ' || line[i] === '\t') i++;
        // `else;`, a bare `not`: nothing left of the command, which bash would not parse
        if (/^[ \t]*(?:[;\n&|)]|$)/.test(line.slice(i))) {
          out += ':';
          atCmd = false;
        }
        continue;
      }
      if (bare && COLON.has(word)) {
        out += ':';
        i = j;
        atCmd = false;
        continue;
      }
      if (bare && word === 'for') {
        // `for VAR in WORDS…`: the words are expanded (their substitutions run), the loop body follows
        const m = /^for\s+\S+\s+in\b/.exec(line.slice(i));
        out += ':';
        i += m ? m[0].length : j - i;
        atCmd = false;
        continue;
      }
    }
    // an ordinary word (or the rest of one)
    atCmd = false;
    if (c === "'") {
      const q = singleQuoted(line, i);
      out += q.out;
      i = q.next;
      continue;
    }
    if (c === '"') {
      let j = i + 1;
      for (; j < n && line[j] !== '"'; j++) if (line[j] === '\\') j++;
      out += line.slice(i, j + 1);
      i = j + 1;
      continue;
    }
    if (c === '\\' && i + 1 < n) {
      out += line.slice(i, i + 2);
      i += 2;
      continue;
    }
    out += c;
    i++;
  }
  return { text: out, exact: out === line };
}
