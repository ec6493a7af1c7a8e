// The grammar: lists, and-or lists, pipelines, simple and compound commands, redirections, functions, coproc.
// Part of the parser (src/shell/parser.ts); the layers, lowest first: tokens, words, expansions, arith,
// heredocs, conditionals, grammar. A layer calls up into a later one through an abstract method.
import type { Assignment, Case, Command, For, HereDoc, List, Pipeline, Redirect, Script, SimpleCommandNode, Word } from '../ast.js';
import { C_LPAREN, DECLARATION_BUILTINS, unquoteDelimiter } from '../lexer.js';
import { ConditionalParser } from './conditionals.js';
import { T_EOF, T_WORD, T_OP, T_IONUM, M_NORMAL, M_ASSIGN, S_THEN, S_ELIF, S_ELSE, S_FI, S_DO, S_DONE, S_ESAC, S_RBRACE, STOP_BITS, REDIRECT_OPS, span } from './tokens.js';

export class Parser extends ConditionalParser {
  /** A backtick body: its un-escaped text parsed by a parser of its own, offsets mapped back through `map`. */
  protected parseNested(inner: string, map: Int32Array): Script {
    return new Parser(inner, this.maxDepth, this.depth, this, map).parseScript();
  }

  parseScript(): Script {
    const list = this.parseList(0);
    if (this.peek(M_ASSIGN) !== T_EOF) this.unexpected();
    // heredocs never followed by a newline: delimited by end of file (a bash warning, not an error)
    for (const h of this.pending) {
      h.doc.span = span(this.len, this.len);
      if (!h.doc.quoted) h.doc.word = { type: 'Word', parts: [], raw: '', span: span(this.len, this.len) };
    }
    this.pending = [];
    return list;
  }

  /**
   * A compound list: and-or lists separated by `;`, `&`, newlines. Stops (without consuming) at end of
   * input, `)`, `;;`/`;&`/`;;&`, or a reserved word in `stop` in command position.
   */
  protected parseList(stop: number): List {
    const items: List['items'] = [];
    let start = -1;
    let end = this.pos;
    for (;;) {
      const k = this.skipNewlines(M_ASSIGN);
      if (k === T_EOF) break;
      if (k === T_OP && (this.top() === ')' || this.top() === ';;' || this.top() === ';&' || this.top() === ';;&')) break;
      if (k === T_WORD && stop !== 0) {
        const r = this.reserved();
        if (r !== null && ((STOP_BITS[r] ?? 0) & stop) !== 0) break;
      }
      if (start < 0) start = this.tkStart;
      const cmd = this.parseAndOr();
      end = cmd.span.end;
      const k2 = this.peek(M_NORMAL);
      if (k2 === T_OP && (this.top() === ';' || this.top() === '&' || this.top() === '\n')) {
        const sep = this.tkOp as ';' | '&' | '\n';
        if (sep !== '\n') end = this.tkStart + 1;
        this.next();
        items.push({ command: cmd, separator: sep });
        continue;
      }
      items.push({ command: cmd, separator: null });
      break;
    }
    if (start < 0) start = end = this.tkValid ? this.tkStart : this.pos;
    return { type: 'List', items, span: span(start, end) };
  }

  protected parseNonEmptyList(stop: number, close: string, what: string, openAt: number): List {
    const l = this.parseList(stop);
    if (l.items.length === 0) {
      if (this.peek(M_ASSIGN) === T_EOF) {
        this.fail(`syntax error: unexpected end of file, \`${close}' expected to close ${what}`, openAt);
      }
      this.unexpected();
    }
    return l;
  }

  protected parseAndOr(): Command {
    const first = this.parsePipeline();
    let k = this.peek(M_NORMAL);
    if (k !== T_OP || (this.top() !== '&&' && this.top() !== '||')) return first;
    const rest: { op: '&&' | '||'; command: Command }[] = [];
    let end = first.span.end;
    while (k === T_OP && (this.top() === '&&' || this.top() === '||')) {
      const op = this.tkOp as '&&' | '||';
      this.next();
      this.skipNewlines(M_ASSIGN);
      const cmd = this.parsePipeline();
      rest.push({ op, command: cmd });
      end = cmd.span.end;
      k = this.peek(M_NORMAL);
    }
    return { type: 'AndOr', first, rest, span: span(first.span.start, end) };
  }

  protected parsePipeline(): Command {
    this.peek(M_ASSIGN);
    const start = this.tkStart;
    let negated = false;
    let timed = false;
    let timePosix = false;
    let prefixEnd = start;
    for (;;) {
      const r = this.reserved();
      if (r === '!') {
        negated = !negated;
        prefixEnd = this.tkEnd;
        this.next();
      } else if (r === 'time') {
        timed = true;
        prefixEnd = this.tkEnd;
        this.next();
        if (this.peek(M_NORMAL) === T_WORD && this.tkWord!.raw === '-p') {
          timePosix = true;
          prefixEnd = this.tkEnd;
          this.next();
          if (this.peek(M_NORMAL) === T_WORD && this.wordRaw() === '--') {
            prefixEnd = this.tkEnd;
            this.next();
          }
        }
      } else break;
      this.peek(M_ASSIGN);
    }
    if (prefixEnd > start && (this.tkKind === T_EOF || (this.tkKind === T_OP && (this.top() === ';' || this.top() === '\n')))) {
      const p: Pipeline = { type: 'Pipeline', negated, timed, commands: [], pipeStderr: [], span: span(start, prefixEnd) };
      if (timed) p.timePosix = timePosix;
      return p;
    }
    const commands: Command[] = [this.parseCommand()];
    const pipeStderr: boolean[] = [];
    for (;;) {
      const k = this.peek(M_NORMAL);
      if (k !== T_OP || (this.top() !== '|' && this.top() !== '|&')) break;
      pipeStderr.push(this.top() === '|&');
      this.next();
      this.skipNewlines(M_ASSIGN);
      commands.push(this.parseCommand());
    }
    const last = commands[commands.length - 1]!;
    if (commands.length === 1 && prefixEnd === start) return last;
    const p: Pipeline = { type: 'Pipeline', negated, timed, commands, pipeStderr, span: span(start, last.span.end) };
    if (timed) p.timePosix = timePosix;
    return p;
  }

  protected parseCommand(): Command {
    const k = this.peek(M_ASSIGN);
    if (k === T_OP) {
      if (this.top() === '(') {
        if (this.code(this.tkStart + 1) === C_LPAREN) return this.parseArithCommand();
        return this.parseSubshell();
      }
      if (REDIRECT_OPS.has(this.tkOp)) return this.parseSimple();
      this.unexpected();
    }
    if (k === T_IONUM) return this.parseSimple();
    if (k === T_EOF) this.unexpected();
    const r = this.reserved();
    if (r !== null) {
      switch (r) {
        case '{':
          return this.parseGroup();
        case 'if':
          return this.parseIf();
        case 'while':
        case 'until':
          return this.parseLoop(r);
        case 'for':
        case 'select':
          return this.parseFor(r);
        case 'case':
          return this.parseCase();
        case 'function':
          return this.parseFunctionKeyword();
        case '[[':
          return this.parseCond();
        case 'coproc':
          return this.parseCoproc();
        case 'time':
          break; // ordinary words here (`time` after `|` is the external command, like bash)
        default:
          this.unexpected();
      }
    }
    return this.parseSimple();
  }

  /** Trailing redirections of a compound command. */
  protected parseRedirects(): Redirect[] {
    const list: Redirect[] = [];
    for (;;) {
      const k = this.peek(M_NORMAL);
      if (k === T_IONUM || (k === T_OP && REDIRECT_OPS.has(this.tkOp))) list.push(this.parseRedirect());
      else return list;
    }
  }

  protected withRedirects(node: Command & { redirects: Redirect[] }): Command {
    const r = this.parseRedirects();
    if (r.length > 0) {
      node.redirects = r;
      node.span.end = r[r.length - 1]!.span.end;
    }
    return node;
  }

  protected parseRedirect(): Redirect {
    const start = this.tkStart;
    let fd: number | string | undefined;
    if (this.tkKind === T_IONUM) {
      fd = this.tkFd;
      this.next();
      if (this.peek(M_NORMAL) !== T_OP || !REDIRECT_OPS.has(this.tkOp)) this.unexpected();
    }
    const op = this.tkOp;
    this.next();
    if (this.peek(M_NORMAL) !== T_WORD) this.unexpected();
    const w = this.tkWord!;
    this.next();
    const r: Redirect = { type: 'Redirect', op, target: w, span: span(start, w.span.end) };
    if (fd !== undefined) r.fd = fd;
    if (op === '<<' || op === '<<-') {
      // line continuations are not part of the delimiter (`<<E\<newline>OF` is an unquoted `EOF`)
      const raw = w.raw.includes('\\\n') ? w.raw.replace(/\\\n/g, '') : w.raw;
      const quoted = raw.includes("'") || raw.includes('"') || raw.includes('\\');
      const doc: HereDoc = {
        delimiter: quoted ? unquoteDelimiter(raw) : raw,
        quoted,
        stripTabs: op === '<<-',
        body: '',
        word: null,
        span: span(this.len, this.len),
      };
      r.target = null;
      r.heredoc = doc;
      this.pending.push({ doc });
    }
    return r;
  }

  protected parseSimple(): Command {
    this.peek(M_ASSIGN);
    const start = this.tkStart;
    const assignments: Assignment[] = [];
    const words: Word[] = [];
    const redirects: Redirect[] = [];
    let end = start;
    let decl = false;
    for (;;) {
      const k = this.peek(words.length === 0 || decl ? M_ASSIGN : M_NORMAL);
      if (k === T_WORD) {
        const w = this.tkWord!;
        const a = this.tkAssign;
        this.next();
        end = w.span.end;
        if (words.length === 0 && a !== null) {
          const as: Assignment = { type: 'Assignment', name: a.name, append: a.append, value: a.array ? null : a.value, span: w.span };
          if (a.index !== undefined) {
            as.index = a.index;
            as.indexWord = a.indexWord!;
          }
          if (a.array) as.array = a.array;
          assignments.push(as);
          continue;
        }
        words.push(w);
        if (words.length === 1) {
          decl = DECLARATION_BUILTINS.has(w.raw);
          if (assignments.length === 0 && redirects.length === 0) {
            if (this.peek(M_NORMAL) === T_OP && this.top() === '(') return this.parseFunctionDef(w);
          }
        }
      } else if (k === T_IONUM || (k === T_OP && REDIRECT_OPS.has(this.tkOp))) {
        const r = this.parseRedirect();
        redirects.push(r);
        end = r.span.end;
        decl = false; // bash: after a redirection, `name=(…)` arguments are no longer recognised
      } else break;
    }
    if (assignments.length === 0 && words.length === 0 && redirects.length === 0) this.unexpected();
    const node: SimpleCommandNode = { type: 'Simple', assignments, words, redirects, span: span(start, end) };
    return node;
  }

  /** `name ( )` seen up to `(`: the rest of a function definition. */
  protected parseFunctionDef(name: Word): Command {
    this.next(); // (
    this.expectOp(')', 'the function definition', name.span.start);
    return this.functionBody(name.raw, name.span.start);
  }

  protected functionBody(name: string, start: number): Command {
    this.enter(start);
    this.skipNewlines(M_ASSIGN);
    const body = this.parseCompoundOnly();
    this.depth--;
    return { type: 'Function', name, body, span: span(start, body.span.end) };
  }

  /** A compound command (function body): `{`, `(`, `((`, if, while, until, for, select, case, [[. */
  protected parseCompoundOnly(): Command {
    const k = this.peek(M_ASSIGN);
    if (k === T_OP && this.top() === '(') return this.parseCommand();
    const r = this.reserved();
    if (r === '{' || r === 'if' || r === 'while' || r === 'until' || r === 'for' || r === 'select' || r === 'case' || r === '[[') {
      return this.parseCommand();
    }
    this.unexpected();
  }

  protected parseFunctionKeyword(): Command {
    const start = this.tkStart;
    this.next();
    if (this.peek(M_NORMAL) !== T_WORD) this.unexpected();
    const name = this.tkWord!.raw;
    this.next();
    if (this.peek(M_NORMAL) === T_OP && this.top() === '(') {
      this.next();
      this.expectOp(')', 'the function definition', start);
    }
    return this.functionBody(name, start);
  }

  protected parseSubshell(): Command {
    const start = this.tkStart;
    this.enter(start);
    this.next();
    const body = this.parseNonEmptyList(0, ')', 'the subshell', start);
    this.expectOp(')', 'the subshell', start);
    this.depth--;
    return this.withRedirects({ type: 'Subshell', body, redirects: [], span: span(start, this.pos) });
  }

  protected parseArithCommand(): Command {
    const start = this.tkStart;
    this.pos = start + 2;
    this.tkValid = false;
    this.enter(start);
    const body = this.scanArith(start, true);
    this.depth--;
    if (body === null) {
      // `( (…) …)`: a subshell whose first command is a subshell
      this.pos = start;
      this.tkValid = false;
      this.peek(M_ASSIGN);
      return this.parseSubshell();
    }
    return this.withRedirects({ type: 'ArithCommand', expr: body.expr, subs: body.subs, redirects: [], span: span(start, this.pos) });
  }

  protected parseGroup(): Command {
    const start = this.tkStart;
    this.enter(start);
    this.next();
    const body = this.parseNonEmptyList(S_RBRACE, '}', 'the group', start);
    this.expectWord('}', 'the group', start);
    this.depth--;
    return this.withRedirects({ type: 'Group', body, redirects: [], span: span(start, this.pos) });
  }

  protected parseIf(): Command {
    const start = this.tkStart;
    this.enter(start);
    this.next();
    const clauses: { condition: List; body: List }[] = [];
    let elseBody: List | null = null;
    for (;;) {
      const condition = this.parseNonEmptyList(S_THEN, 'then', '`if\'', start);
      this.expectWord('then', '`if\'', start);
      const body = this.parseNonEmptyList(S_ELIF | S_ELSE | S_FI, 'fi', '`if\'', start);
      clauses.push({ condition, body });
      this.peek(M_ASSIGN);
      const r = this.reserved();
      if (r === 'elif') {
        this.next();
        continue;
      }
      if (r === 'else') {
        this.next();
        elseBody = this.parseNonEmptyList(S_FI, 'fi', '`if\'', start);
      }
      this.expectWord('fi', '`if\'', start);
      break;
    }
    this.depth--;
    return this.withRedirects({ type: 'If', clauses, elseBody, redirects: [], span: span(start, this.pos) });
  }

  protected parseLoop(kind: 'while' | 'until'): Command {
    const start = this.tkStart;
    this.enter(start);
    this.next();
    const condition = this.parseNonEmptyList(S_DO, 'do', `\`${kind}'`, start);
    this.expectWord('do', `\`${kind}'`, start);
    const body = this.parseNonEmptyList(S_DONE, 'done', `\`${kind}'`, start);
    this.expectWord('done', `\`${kind}'`, start);
    this.depth--;
    return this.withRedirects({
      type: kind === 'while' ? 'While' : 'Until',
      condition,
      body,
      redirects: [],
      span: span(start, this.pos),
    });
  }

  /** `do … done` or `{ … }` body of for/select. */
  protected parseForBody(what: string, start: number): List {
    this.peek(M_ASSIGN);
    const r = this.reserved();
    if (r === 'do') {
      this.next();
      const body = this.parseNonEmptyList(S_DONE, 'done', what, start);
      this.expectWord('done', what, start);
      return body;
    }
    if (r === '{') {
      this.next();
      const body = this.parseNonEmptyList(S_RBRACE, '}', what, start);
      this.expectWord('}', what, start);
      return body;
    }
    if (this.tkKind === T_EOF) this.fail(`syntax error: unexpected end of file, \`do' expected in ${what}`, start);
    this.unexpected();
  }

  protected parseFor(kind: 'for' | 'select'): Command {
    const start = this.tkStart;
    this.enter(start);
    this.next();
    const what = `\`${kind}'`;
    let k = this.peek(M_NORMAL);
    if (kind === 'for' && k === T_OP && this.top() === '(' && this.code(this.tkStart + 1) === C_LPAREN) {
      const at = this.tkStart;
      this.pos = at + 2;
      this.tkValid = false;
      this.enter(at);
      const b = this.scanArith(at, true);
      this.depth--;
      if (b === null || b.semis.length !== 2) this.fail('syntax error: `for ((init; condition; step))\' expected', at);
      const expr = b.expr;
      const s0 = b.semis[0]!;
      const s1 = b.semis[1]!;
      k = this.peek(M_ASSIGN);
      if (k === T_OP && (this.top() === ';' || this.top() === '\n')) {
        this.next();
        this.skipNewlines(M_ASSIGN);
      }
      const body = this.parseForBody(what, start);
      this.depth--;
      return this.withRedirects({
        type: 'ArithFor',
        init: expr.slice(0, s0).trim(),
        condition: expr.slice(s0 + 1, s1).trim(),
        step: expr.slice(s1 + 1).trim(),
        subs: b.subs,
        body,
        redirects: [],
        span: span(start, this.pos),
      });
    }
    if (k !== T_WORD) this.unexpected();
    const variable = this.tkWord!.raw;
    this.next();
    let items: Word[] | null = null;
    k = this.peek(M_ASSIGN);
    if (k === T_OP && this.top() === ';') {
      this.next();
      this.skipNewlines(M_ASSIGN);
    } else {
      this.skipNewlines(M_ASSIGN);
      if (this.isWord('in')) {
        this.next();
        items = [];
        for (;;) {
          k = this.peek(M_NORMAL);
          if (k !== T_WORD) break;
          items.push(this.tkWord!);
          this.next();
        }
        if (k === T_OP && (this.top() === ';' || this.top() === '\n')) this.next();
        else if (k !== T_EOF) this.unexpected();
        this.skipNewlines(M_ASSIGN);
      }
    }
    const body = this.parseForBody(what, start);
    this.depth--;
    const node: For = { type: kind === 'for' ? 'For' : 'Select', variable, items, body, redirects: [], span: span(start, this.pos) };
    return this.withRedirects(node);
  }

  protected parseCase(): Command {
    const start = this.tkStart;
    this.enter(start);
    this.next();
    if (this.peek(M_NORMAL) !== T_WORD) this.unexpected();
    const word = this.tkWord!;
    this.next();
    this.skipNewlines(M_ASSIGN);
    if (!this.isWord('in')) {
      if (this.tkKind === T_EOF) this.fail("syntax error: unexpected end of file, `in' expected in `case'", start);
      this.unexpected();
    }
    this.next();
    const items: Case['items'] = [];
    for (;;) {
      let k = this.skipNewlines(M_NORMAL);
      if (this.isWord('esac')) {
        this.next();
        break;
      }
      if (k === T_EOF) this.fail("syntax error: unexpected end of file, `esac' expected to close `case'", start);
      if (k === T_OP && this.top() === '(') {
        this.next();
        k = this.peek(M_NORMAL);
      }
      const patterns: Word[] = [];
      for (;;) {
        if (k !== T_WORD) this.unexpected();
        patterns.push(this.tkWord!);
        this.next();
        k = this.peek(M_NORMAL);
        if (k === T_OP && this.top() === '|') {
          this.next();
          k = this.peek(M_NORMAL);
          continue;
        }
        if (k === T_OP && this.top() === ')') {
          this.next();
          break;
        }
        this.unexpected();
      }
      const body = this.parseList(S_ESAC);
      k = this.peek(M_ASSIGN);
      if (k === T_OP && (this.top() === ';;' || this.top() === ';&' || this.top() === ';;&')) {
        items.push({ patterns, body, terminator: this.tkOp as ';;' | ';&' | ';;&' });
        this.next();
        continue;
      }
      items.push({ patterns, body, terminator: null });
      if (this.isWord('esac')) {
        this.next();
        break;
      }
      if (k === T_EOF) this.fail("syntax error: unexpected end of file, `esac' expected to close `case'", start);
      this.unexpected();
    }
    this.depth--;
    return this.withRedirects({ type: 'Case', word, items, redirects: [], span: span(start, this.pos) });
  }

  protected parseCoproc(): Command {
    const start = this.tkStart;
    this.enter(start);
    this.next();
    let k = this.peek(M_ASSIGN);
    let body: Command;
    let name: string | null = null;
    const compoundStart = (): boolean => {
      if (this.tkKind === T_OP) return this.top() === '(';
      const r = this.reserved();
      return r === '{' || r === 'if' || r === 'while' || r === 'until' || r === 'for' || r === 'select' || r === 'case' || r === '[[';
    };
    if (compoundStart()) {
      body = this.parseCommand();
    } else if (k === T_WORD && (this.reserved() === null || this.reserved() === 'time') && this.tkAssign === null) {
      // `coproc NAME compound` or `coproc simple command` (`time` is an ordinary word here)
      const w = this.tkWord!;
      const save = this.pos;
      this.next();
      k = this.peek(M_ASSIGN);
      if (compoundStart()) {
        name = w.raw;
        body = this.parseCommand();
      } else if (this.reserved() !== null) {
        this.unexpected(); // bash recognises reserved words after `coproc WORD`
      } else {
        this.pos = save;
        this.tkValid = false;
        body = this.parseSimple();
      }
    } else {
      // a simple command (`time` is an ordinary word here); other reserved words are errors
      const r = this.reserved();
      if (r !== null && r !== 'time') this.unexpected();
      body = this.parseSimple();
    }
    this.depth--;
    return { type: 'Coproc', name, body, span: span(start, body.span.end) };
  }
}
