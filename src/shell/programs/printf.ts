// printf's and `echo -e`'s escapes, as bash writes them: what `printf 'make build-saf\x65\n' | bash`
// really feeds the shell, and what `printf -v c %s make` stores.

const SIMPLE: Record<string, string> = { n: '\n', t: '\t', r: '\r', a: '\x07', b: '\b', f: '\f', v: '\v', e: '\x1b', E: '\x1b', '\\': '\\', '"': '"', "'": "'" };

/** Backslash escapes of a printf format or `%b` argument (`\n`, `\x65`, `\0145`, `\u00e9`, `\c` ends). */
export function unescape(text: string, octalNeedsZero: boolean): { text: string; stop: boolean } {
  let out = '';
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c !== '\\' || i + 1 >= text.length) {
      out += c;
      continue;
    }
    const n = text[++i]!;
    if (n in SIMPLE) out += SIMPLE[n];
    else if (n === 'c') return { text: out, stop: true };
    else if (n === 'x') {
      const m = /^[0-9a-fA-F]{1,2}/.exec(text.slice(i + 1));
      if (m) {
        out += String.fromCharCode(parseInt(m[0], 16));
        i += m[0].length;
      } else out += '\\x';
    } else if (n === 'u' || n === 'U') {
      const m = new RegExp(`^[0-9a-fA-F]{1,${n === 'u' ? 4 : 8}}`).exec(text.slice(i + 1));
      if (m) {
        out += String.fromCodePoint(parseInt(m[0], 16));
        i += m[0].length;
      } else out += `\\${n}`;
    } else if (/[0-7]/.test(n) && (!octalNeedsZero || n === '0')) {
      const digits = /^[0-7]{1,3}/.exec(text.slice(octalNeedsZero ? i + 1 : i))?.[0] ?? '';
      out += String.fromCharCode(parseInt(digits || '0', 8) & 0xff);
      i += octalNeedsZero ? digits.length : digits.length - 1;
    } else out += `\\${n}`;
  }
  return { text: out, stop: false };
}

/** `echo -e` text. */
export function echoText(text: string): string {
  return unescape(text, true).text;
}

/** The output of `printf FORMAT ARGS...` (the format is reused while arguments remain). */
export function formatPrintf(format: string, args: string[]): string {
  let out = '';
  let k = 0;
  for (let round = 0; round < 64; round++) {
    let used = false;
    const re = /%([-+ #0]*[0-9]*(?:\.[0-9]*)?)([sbdiouxXcfgeEq%])|\\(?:[0-7]{1,3}|x[0-9a-fA-F]{1,2}|u[0-9a-fA-F]{1,4}|.)|[^%\\]+|[%\\]/gs;
    for (const m of format.matchAll(re)) {
      const tok = m[0];
      if (tok.startsWith('\\')) {
        const u = unescape(tok, false);
        out += u.text;
        if (u.stop) return out;
      } else if (m[2] === '%') out += '%';
      else if (m[2]) {
        used = true;
        const a = args[k++] ?? '';
        if (m[2] === 'b') {
          const u = unescape(a, true);
          out += u.text;
          if (u.stop) return out;
        } else if (m[2] === 'c') out += a.slice(0, 1);
        else if (/[diouxX]/.test(m[2])) out += String(parseInt(a, 10) || 0);
        else out += a;
      } else out += tok;
    }
    if (!used || k >= args.length) break;
  }
  return out;
}
