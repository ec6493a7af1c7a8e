// tmux's own command language, where it runs shell commands here: the commands of a line (`tmux set -g
// default-command 'make build' \; new -d`), `if-shell` and its branches, `set-hook`, `default-command` and
// `default-shell`, and the configuration a starting server reads (`-f FILE`, else /etc/tmux.conf and the
// user's ~/.tmux.conf or ~/.config/tmux/tmux.conf), with the files it `source-file`s. Key bindings run only
// when a key is pressed: not judged (a limit, docs/GUARD.md).
import type { Field } from '../expand.js';
import { writtenText } from '../script-files.js';
import { resolveDir, type Call } from '../walk-state.js';
import type { Unwrapped } from './types.js';

/** Deeper `source-file`/`if-shell` nesting than any configuration has: judged as unknown (fail closed). */
const DEPTH_MAX = 8;
const UNKNOWN: Field = { value: '', known: false };

/** One tmux command as words; `block` marks a `{ … }` argument (a command list of its own). */
type Word = { value: string; known: boolean; block?: boolean };

/**
 * Splits tmux command text (a configuration file, an `if-shell` branch) into commands: newlines and `;`
 * words separate them, `#` starts a comment, '…' and "…" quote (\ escapes in "…" and outside quotes),
 * `{ … }` is one argument, a line ending in \ goes on, and `%if`/`%else`/`%endif` lines are dropped (every
 * branch is judged). Null when the text cannot be split (an open quote or brace).
 */
export function tmuxCommands(text: string): Word[][] | null {
  const out: Word[][] = [];
  let cmd: Word[] = [];
  let i = 0;
  const end = () => {
    if (cmd.length) out.push(cmd);
    cmd = [];
  };
  while (i < text.length) {
    const c = text[i]!;
    if (c === '\\' && text[i + 1] === '\n') {
      i += 2;
      continue;
    }
    if (c === '\n' || c === '\r') {
      end();
      i++;
      continue;
    }
    if (c === ' ' || c === '\t') {
      i++;
      continue;
    }
    if (c === '#') {
      while (i < text.length && text[i] !== '\n') i++;
      continue;
    }
    if (c === '%' && cmd.length === 0 && /^%(if|elif|else|endif|hidden)\b/.test(text.slice(i, i + 8))) {
      while (i < text.length && text[i] !== '\n') i++;
      continue;
    }
    if (c === '{') {
      let depth = 1;
      let j = i + 1;
      for (; j < text.length && depth > 0; j++) {
        if (text[j] === '{') depth++;
        else if (text[j] === '}') depth--;
      }
      if (depth !== 0) return null;
      cmd.push({ value: text.slice(i + 1, j - 1), known: true, block: true });
      i = j;
      continue;
    }
    // A word: quoted and bare parts up to white space, a newline or `;` ending it.
    let value = '';
    let known = true;
    while (i < text.length && !/[\s]/.test(text[i]!)) {
      const d = text[i]!;
      if (d === "'") {
        const close = text.indexOf("'", i + 1);
        if (close < 0) return null;
        value += text.slice(i + 1, close);
        i = close + 1;
      } else if (d === '"') {
        let j = i + 1;
        for (; j < text.length && text[j] !== '"'; j++) {
          if (text[j] === '\\' && j + 1 < text.length) value += text[++j];
          else {
            // tmux expands $VAR in double quotes: unknown here.
            if (text[j] === '$') known = false;
            value += text[j];
          }
        }
        if (j >= text.length) return null;
        i = j + 1;
      } else if (d === '\\' && i + 1 < text.length && text[i + 1] !== '\n') {
        value += text[i + 1];
        i += 2;
      } else {
        // tmux expands $VAR outside quotes too ('…' keeps it for the shell that runs the command).
        if (d === '$') known = false;
        value += d;
        i++;
      }
    }
    if (value === ';') end();
    else if (value.endsWith(';') && !value.endsWith('\\;')) {
      cmd.push({ value: value.slice(0, -1), known });
      end();
    } else cmd.push({ value, known });
  }
  end();
  return out;
}

/** Options of the commands read here that take a value (the others are flags). */
const IF_VALUE = new Set(['-t']);
const SET_VALUE = new Set(['-t']);
const SOURCE_VALUE = new Set(['-t']);

/** The words after a command's options (`-abc` flags, `-t VALUE`), and which flags it had. */
function operands(words: Word[], withValue: Set<string>): { flags: string; rest: Word[] } {
  let k = 1;
  let flags = '';
  while (k < words.length && words[k]!.known && /^-[A-Za-z]/.test(words[k]!.value) && !words[k]!.block) {
    const w = words[k]!.value;
    if (w === '--') {
      k++;
      break;
    }
    if (withValue.has(w.slice(0, 2))) {
      k += w.length > 2 ? 1 : 2;
      continue;
    }
    flags += w.slice(1);
    k++;
  }
  return { flags, rest: words.slice(k) };
}

/** What one tmux command runs here, besides what tmux's own command-line handling judges (new, run, send-keys). */
export function tmuxCommandRuns(words: Word[], call: Call, depth: number, plain: (words: Field[]) => Unwrapped): Unwrapped[] {
  const name = words[0];
  if (!name?.known) return [];
  if (depth > DEPTH_MAX) return [{ kind: 'script', via: 'tmux (nested too deep)', text: UNKNOWN }];
  const nested = (w: Word | undefined): Unwrapped[] => {
    if (!w) return [];
    if (!w.known) return [{ kind: 'script', via: `tmux ${name.value}`, text: UNKNOWN }];
    return runsOfText(w.value, `tmux ${name.value}`, call, depth + 1, plain);
  };
  switch (name.value) {
    case 'if-shell':
    case 'if': {
      const { flags, rest } = operands(words, IF_VALUE);
      const items: Unwrapped[] = [];
      // -F: the condition is a format, not a shell command.
      if (!flags.includes('F') && rest[0]) items.push({ kind: 'script', via: `tmux ${name.value}`, text: rest[0] });
      items.push(...nested(rest[1]), ...nested(rest[2]));
      return items;
    }
    case 'set-option':
    case 'set':
    case 'set-window-option':
    case 'setw': {
      const { rest } = operands(words, SET_VALUE);
      const option = rest[0];
      const value = rest[1];
      if (!option?.known || !value) return [];
      // The command every new window runs (through the default shell), and that shell itself.
      if (option.value === 'default-command') return [{ kind: 'script', via: 'tmux default-command', text: value }];
      if (option.value === 'default-shell') return [{ kind: 'run', via: 'tmux default-shell', argv: [value] }];
      return [];
    }
    case 'set-hook': {
      const { rest } = operands(words, SET_VALUE);
      return nested(rest[1]);
    }
    case 'source-file':
    case 'source': {
      const { rest } = operands(words, SOURCE_VALUE);
      return rest.flatMap((f) => configRuns(f, call, depth + 1, plain));
    }
    default:
      return [plain(words)].filter((u) => u.kind !== 'none');
  }
}

/** What tmux command text runs (a configuration file's, an `if-shell` branch's). */
function runsOfText(text: string, via: string, call: Call, depth: number, plain: (words: Field[]) => Unwrapped): Unwrapped[] {
  const cmds = tmuxCommands(text);
  if (cmds === null) return [{ kind: 'script', via: `${via} (unreadable)`, text: UNKNOWN }];
  return cmds.flatMap((c) => tmuxCommandRuns(c, call, depth, plain));
}

/**
 * What a configuration file runs: what the line wrote there, else the disk. A file the line may write
 * with content offhost cannot follow is unknown (fail closed); a missing one runs nothing.
 */
export function configRuns(file: Field, call: Call, depth: number, plain: (words: Field[]) => Unwrapped): Unwrapped[] {
  if (!call.ctx.files) return [];
  if (!file.known) return [{ kind: 'script', via: 'tmux -f', text: UNKNOWN }];
  const path = resolveDir(call.cwd, file);
  if (path === null) return [{ kind: 'script', via: 'tmux -f', text: UNKNOWN }];
  const written = writtenText(path, call.ctx);
  let text: Field;
  if (written) text = written;
  else {
    const r = call.ctx.files.read(path);
    if (r.kind === 'missing' || r.kind === 'directory') return [];
    text = r.kind === 'text' ? { value: r.text, known: true } : UNKNOWN;
  }
  if (!text.known) return [{ kind: 'script', via: `tmux ${file.value}`, text: UNKNOWN }];
  return runsOfText(text.value, `tmux ${file.value}`, call, depth, plain);
}
