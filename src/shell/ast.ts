// The syntax tree of one bash command line. Every node carries `span`: offsets [start, end) into the
// original text, so that errors, `explain` and rewrites can point at the exact characters.

export interface Span {
  start: number;
  end: number;
}

/** One word (an argument, a program name, an assignment value, a redirect target, a `for` item...). */
export interface Word {
  type: 'Word';
  parts: WordPart[];
  /** The word exactly as written in the source (quotes and backslashes included). */
  raw: string;
  span: Span;
}

export type WordPart =
  /** Unquoted text, backslash escapes already removed (`a\ b` -> `a b`); `escaped` says a backslash was used. */
  | { type: 'Literal'; value: string; escaped: boolean; span: Span }
  /** '…' : value is the text between the quotes. */
  | { type: 'SingleQuoted'; value: string; span: Span }
  /** $'…' : value is the decoded text (\n, \x41, \u00e9, \', ...). */
  | { type: 'AnsiC'; value: string; span: Span }
  /** $"…" (locale translation) is treated like "…". */
  | { type: 'DoubleQuoted'; parts: WordPart[]; span: Span }
  /** $name, $1, $@, ${name}, ${name:-word}, ${#name}, ${!name}, ${name[i]}, ... */
  | {
      type: 'Param';
      /** The parameter name: `HOME`, `1`, `@`, `#`, `?`, `arr` ... */
      name: string;
      /** True for the `${…}` form. */
      braced: boolean;
      /** The operator and its operand as written, e.g. `:-`, `#`, `//`; empty for a plain expansion. */
      op: string;
      /** The operand words of the operator (`${x:-$(cmd)}` -> one word whose part is a CommandSub). */
      operands: Word[];
      /**
       * (parser addition) `#` for `${#x}` (length), `!` for `${!x}` / `${!pre*}` (indirection). When no other
       * operator follows, `op` is the prefix too (`${#x}`: op `#`, no operands; `${x#}`: op `#`, one operand).
       */
      prefix?: '#' | '!';
      /** (parser addition) The subscript of `${a[i]}` as a word (`@`, `*`, `$i`, `$(cmd)`...). */
      index?: Word;
      span: Span;
    }
  /** $( … ) or `…`; `script` is the parsed inner command list. */
  | { type: 'CommandSub'; script: Script; backtick: boolean; span: Span }
  /** $(( … )) and the legacy $[ … ]; substitutions inside the expression are parsed. */
  | { type: 'Arith'; expr: string; subs: WordPart[]; span: Span }
  /** <( … ) or >( … ). */
  | { type: 'ProcessSub'; op: '<(' | '>('; script: Script; span: Span };

export interface Assignment {
  type: 'Assignment';
  name: string;
  /** `+=` rather than `=`. */
  append: boolean;
  /** Index for `a[i]=v`, as written. */
  index?: string;
  /** (parser addition) The same index parsed as a word, so substitutions in it (`a[$(cmd)]=v`) are seen. */
  indexWord?: Word;
  /** The value for `x=v`; null for array assignments. */
  value: Word | null;
  /** Elements for `x=(a b c)`. */
  array?: Word[];
  span: Span;
}

export interface HereDoc {
  delimiter: string;
  /** The delimiter was quoted (`<<'EOF'`, `<<"EOF"`, `<<E\OF`): the body is literal text, no expansion. */
  quoted: boolean;
  /** `<<-`: leading tabs are stripped from body lines and from the closing delimiter. */
  stripTabs: boolean;
  /** The body text (tabs already stripped for `<<-`), without the closing delimiter line. */
  body: string;
  /** For an unquoted delimiter, the body parsed as a double-quoted-like word (expansions found). */
  word: Word | null;
  span: Span;
}

export interface Redirect {
  type: 'Redirect';
  /** `<`, `>`, `>>`, `>|`, `<>`, `<&`, `>&`, `&>`, `&>>`, `<<`, `<<-`, `<<<`. */
  op: string;
  /** The explicit fd (`2>`), or `{name}` form's variable name; undefined when absent. */
  fd?: number | string;
  /** Target word (file, fd number, `-`, or here-string word); null for heredocs. */
  target: Word | null;
  heredoc?: HereDoc;
  span: Span;
}

export interface SimpleCommandNode {
  type: 'Simple';
  assignments: Assignment[];
  /** Program name first, then the arguments. Empty for a pure assignment or redirect-only command. */
  words: Word[];
  redirects: Redirect[];
  span: Span;
}

export interface Pipeline {
  type: 'Pipeline';
  /** Leading `!`. */
  negated: boolean;
  /** Leading `time` (with `-p` noted in timePosix). */
  timed: boolean;
  timePosix?: boolean;
  commands: Command[];
  /** For each `|` between commands, whether it was `|&`. length = commands.length - 1. */
  pipeStderr: boolean[];
  span: Span;
}

export interface AndOr {
  type: 'AndOr';
  /** first, then each (op, pipeline) pair in order. */
  first: Command;
  rest: { op: '&&' | '||'; command: Command }[];
  span: Span;
}

/** A command list: items separated by `;`, `&` or newline. A Script is a List. */
export interface List {
  type: 'List';
  items: { command: Command; separator: ';' | '&' | '\n' | null }[];
  span: Span;
}

export type Script = List;

export interface Subshell {
  type: 'Subshell';
  body: List;
  redirects: Redirect[];
  span: Span;
}

export interface Group {
  type: 'Group';
  body: List;
  redirects: Redirect[];
  span: Span;
}

export interface If {
  type: 'If';
  /** `if`/`elif` clauses in order. */
  clauses: { condition: List; body: List }[];
  elseBody: List | null;
  redirects: Redirect[];
  span: Span;
}

export interface Loop {
  type: 'While' | 'Until';
  condition: List;
  body: List;
  redirects: Redirect[];
  span: Span;
}

export interface For {
  type: 'For' | 'Select';
  variable: string;
  /** null when `in` is absent (iterates "$@"). */
  items: Word[] | null;
  body: List;
  redirects: Redirect[];
  span: Span;
}

export interface ArithFor {
  type: 'ArithFor';
  init: string;
  condition: string;
  step: string;
  /** Substitutions found inside the three expressions. */
  subs: WordPart[];
  body: List;
  redirects: Redirect[];
  span: Span;
}

export interface Case {
  type: 'Case';
  word: Word;
  items: { patterns: Word[]; body: List; terminator: ';;' | ';&' | ';;&' | null }[];
  redirects: Redirect[];
  span: Span;
}

export interface FunctionDef {
  type: 'Function';
  name: string;
  body: Command;
  span: Span;
}

export interface Coproc {
  type: 'Coproc';
  name: string | null;
  body: Command;
  span: Span;
}

/** `[[ … ]]`: the words between the brackets (operators included as words). */
export interface TestCommand {
  type: 'Test';
  words: Word[];
  redirects: Redirect[];
  span: Span;
}

/** `(( … ))`. */
export interface ArithCommand {
  type: 'ArithCommand';
  expr: string;
  subs: WordPart[];
  redirects: Redirect[];
  span: Span;
}

export type Command =
  | SimpleCommandNode
  | Pipeline
  | AndOr
  | List
  | Subshell
  | Group
  | If
  | Loop
  | For
  | ArithFor
  | Case
  | FunctionDef
  | Coproc
  | TestCommand
  | ArithCommand;
