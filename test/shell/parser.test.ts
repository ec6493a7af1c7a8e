import { describe, expect, it } from 'vitest';
import { parse } from '../../src/shell/parser.js';
import { ParseError } from '../../src/errors.js';
import type {
  Case,
  Command,
  For,
  Group,
  If,
  List,
  Pipeline,
  Script,
  SimpleCommandNode,
  Word,
  WordPart,
} from '../../src/shell/ast.js';

/** The only command of a one-command line. */
function only(src: string): Command {
  const s = parse(src);
  expect(s.items.length).toBe(1);
  return s.items[0]!.command;
}

function simple(src: string): SimpleCommandNode {
  const c = only(src);
  expect(c.type).toBe('Simple');
  return c as SimpleCommandNode;
}

function text(src: string, n: { span: { start: number; end: number } }): string {
  return src.slice(n.span.start, n.span.end);
}

function words(c: SimpleCommandNode): string[] {
  return c.words.map((w) => w.raw);
}

/** Every span of the tree is inside the text, and every word outside backticks slices back to its raw. */
function checkSpans(src: string, node: unknown, inBacktick = false): void {
  if (Array.isArray(node)) {
    for (const n of node) checkSpans(src, n, inBacktick);
    return;
  }
  if (node === null || typeof node !== 'object') return;
  const o = node as Record<string, unknown>;
  const sp = o.span as { start: number; end: number } | undefined;
  if (sp) {
    expect(sp.start).toBeGreaterThanOrEqual(0);
    expect(sp.end).toBeGreaterThanOrEqual(sp.start);
    expect(sp.end).toBeLessThanOrEqual(src.length);
    if (o.type === 'Word' && !inBacktick) expect(src.slice(sp.start, sp.end)).toBe(o.raw);
  }
  const bt = inBacktick || (o.type === 'CommandSub' && o.backtick === true);
  for (const k in o) if (k !== 'span') checkSpans(src, o[k], bt);
}

function part(w: Word, i = 0): WordPart {
  return w.parts[i]!;
}

describe('parse: simple commands and lists', () => {
  it('splits words and keeps spans', () => {
    const src = '  echo  hello   world ';
    const c = simple(src);
    expect(words(c)).toEqual(['echo', 'hello', 'world']);
    expect(text(src, c)).toBe('echo  hello   world');
    expect(text(src, c.words[1]!)).toBe('hello');
    checkSpans(src, parse(src));
  });

  it('empty and comment-only input is an empty list', () => {
    expect(parse('').items).toEqual([]);
    expect(parse('   \n\n  # just a comment').items).toEqual([]);
  });

  it('lists with ; & newline', () => {
    const src = 'a; b & c\nd';
    const s = parse(src);
    expect(s.items.map((i) => i.separator)).toEqual([';', '&', '\n', null]);
    expect(s.items.map((i) => text(src, i.command))).toEqual(['a', 'b', 'c', 'd']);
    expect(text(src, s)).toBe(src);
  });

  it('and-or lists', () => {
    const src = 'a && b || c';
    const c = only(src);
    expect(c.type).toBe('AndOr');
    if (c.type !== 'AndOr') return;
    expect(text(src, c.first)).toBe('a');
    expect(c.rest.map((r) => [r.op, text(src, r.command)])).toEqual([
      ['&&', 'b'],
      ['||', 'c'],
    ]);
    expect(text(src, c)).toBe(src);
  });

  it('pipelines with | and |&', () => {
    const src = 'a | b |& c';
    const p = only(src) as Pipeline;
    expect(p.type).toBe('Pipeline');
    expect(p.commands.map((x) => text(src, x))).toEqual(['a', 'b', 'c']);
    expect(p.pipeStderr).toEqual([false, true]);
    expect(p.negated).toBe(false);
  });

  it('! and time prefixes', () => {
    expect(only('! true')).toMatchObject({ type: 'Pipeline', negated: true, timed: false });
    expect(only('time -p make')).toMatchObject({ type: 'Pipeline', timed: true, timePosix: true });
    expect(only('time ! a | b')).toMatchObject({ type: 'Pipeline', timed: true, negated: true });
    expect(only('time')).toMatchObject({ type: 'Pipeline', timed: true, commands: [] });
    // `time` after `|` is the external command
    const p = only('a | time b') as Pipeline;
    expect((p.commands[1] as SimpleCommandNode).words[0]!.raw).toBe('time');
  });

  it('newlines after && and | continue the command', () => {
    const s = parse('a &&\n\n b |\n c');
    expect(s.items.length).toBe(1);
  });

  it('reserved words only in command position', () => {
    expect(words(simple('echo done if then fi {'))).toEqual(['echo', 'done', 'if', 'then', 'fi', '{']);
    expect(words(simple('"if" x'))).toEqual(['"if"', 'x']);
    expect(() => parse('done')).toThrow(ParseError);
    expect(() => parse('echo; fi')).toThrow(ParseError);
  });
});

describe('parse: assignments', () => {
  it('prefix assignments and values', () => {
    const src = 'A=1 B="two words" make -j4';
    const c = simple(src);
    expect(c.assignments.map((a) => [a.name, a.value?.raw])).toEqual([
      ['A', '1'],
      ['B', '"two words"'],
    ]);
    expect(words(c)).toEqual(['make', '-j4']);
    expect(text(src, c.assignments[1]!)).toBe('B="two words"');
    expect(text(src, c.assignments[1]!.value!)).toBe('"two words"');
  });

  it('assignment-only command, +=, index, arrays', () => {
    const c = simple('x+=1 a[$i]=v arr=(x "y z" $(cmd)) e=');
    expect(c.words).toEqual([]);
    const [x, a, arr, e] = c.assignments;
    expect(x).toMatchObject({ name: 'x', append: true });
    expect(a).toMatchObject({ name: 'a', index: '$i', append: false });
    expect(a!.indexWord!.parts[0]!.type).toBe('Param');
    expect(arr!.value).toBeNull();
    expect(arr!.array!.map((w) => w.raw)).toEqual(['x', '"y z"', '$(cmd)']);
    expect(arr!.array![2]!.parts[0]!.type).toBe('CommandSub');
    expect(e!.value!.parts).toEqual([]);
  });

  it('multi-line arrays with comments and [k]=v elements', () => {
    const c = simple('a=(\n x # c\n [k]=v\n)');
    expect(c.assignments[0]!.array!.map((w) => w.raw)).toEqual(['x', '[k]=v']);
  });

  it('after the command name, x=y is a word; declaration builtins keep arrays as words', () => {
    expect(simple('echo a=b').assignments).toEqual([]);
    const d = simple('declare -a a=(1 $(two))');
    expect(words(d)).toEqual(['declare', '-a', 'a=(1 $(two))']);
    expect(d.words[2]!.parts.some((p) => p.type === 'CommandSub')).toBe(true);
    expect(() => parse('echo a=(1 2)')).toThrow(ParseError);
  });
});

describe('parse: quoting', () => {
  it('single, double, ANSI-C, locale quotes', () => {
    const src = `echo 'a b' "c $x" $'d\\te\\x41\\u00e9\\'' $"f"`;
    const c = simple(src);
    expect(part(c.words[1]!)).toMatchObject({ type: 'SingleQuoted', value: 'a b' });
    const dq = part(c.words[2]!);
    expect(dq.type).toBe('DoubleQuoted');
    if (dq.type === 'DoubleQuoted') {
      expect(dq.parts.map((p) => p.type)).toEqual(['Literal', 'Param']);
    }
    expect(part(c.words[3]!)).toMatchObject({ type: 'AnsiC', value: "d\teAé'" });
    expect(part(c.words[4]!)).toMatchObject({ type: 'DoubleQuoted' });
    expect(text(src, part(c.words[4]!))).toBe('$"f"');
    checkSpans(src, parse(src));
  });

  it('backslash escapes and line continuation', () => {
    const c = simple('echo a\\ b c\\\nd');
    expect(c.words.length).toBe(3);
    expect(part(c.words[1]!)).toMatchObject({ type: 'Literal', value: 'a b', escaped: true });
    expect(part(c.words[2]!)).toMatchObject({ type: 'Literal', value: 'cd', escaped: false });
    expect(words(simple('ec\\\nho hi'))).toEqual(['ec\\\nho', 'hi']);
    // a continued reserved word is still reserved
    expect(only('i\\\nf true; then :; fi').type).toBe('If');
  });

  it('escapes inside double quotes', () => {
    const c = simple('echo "a\\"b\\$c\\d"');
    const dq = part(c.words[1]!);
    expect(dq.type).toBe('DoubleQuoted');
    if (dq.type === 'DoubleQuoted') expect(dq.parts).toMatchObject([{ type: 'Literal', value: 'a"b$c\\d' }]);
  });

  it('comments only at word start', () => {
    expect(words(simple('echo a#b # c'))).toEqual(['echo', 'a#b']);
    expect(words(simple('echo \\#x'))).toEqual(['echo', '\\#x']);
  });
});

describe('parse: expansions', () => {
  it('parameters', () => {
    const c = simple('echo $name $1 $@ $? $$ $# $- $! $0 $* ${x}');
    const names = c.words.slice(1).map((w) => {
      const p = part(w);
      return p.type === 'Param' ? p.name : p.type;
    });
    expect(names).toEqual(['name', '1', '@', '?', '$', '#', '-', '!', '0', '*', 'x']);
  });

  it('${…} operators and nested substitutions', () => {
    const src = 'echo ${x:-$(cmd)} ${x/a/b} ${#x} ${!x} ${x[@]} ${x:1:2} ${x##*/}';
    const c = simple(src);
    const ps = c.words.slice(1).map((w) => part(w));
    expect(ps[0]).toMatchObject({ type: 'Param', name: 'x', braced: true, op: ':-' });
    if (ps[0]!.type === 'Param') {
      expect(ps[0]!.operands[0]!.parts[0]!.type).toBe('CommandSub');
      expect(text(src, ps[0]!.operands[0]!)).toBe('$(cmd)');
    }
    expect(ps[1]).toMatchObject({ name: 'x', op: '/' });
    if (ps[1]!.type === 'Param') expect(ps[1]!.operands.map((w) => w.raw)).toEqual(['a', 'b']);
    expect(ps[2]).toMatchObject({ name: 'x', prefix: '#', op: '#', operands: [] });
    expect(ps[3]).toMatchObject({ name: 'x', prefix: '!', op: '!', operands: [] });
    expect(ps[4]).toMatchObject({ name: 'x', index: { raw: '@' } });
    expect(ps[5]).toMatchObject({ name: 'x', op: ':' });
    if (ps[5]!.type === 'Param') expect(ps[5]!.operands.map((w) => w.raw)).toEqual(['1', '2']);
    expect(ps[6]).toMatchObject({ name: 'x', op: '##' });
    checkSpans(src, parse(src));
  });

  it('$( ) nested at any depth, also inside double quotes', () => {
    const src = 'echo "$(a "$(b $(c))")"';
    const c = simple(src);
    const dq = part(c.words[1]!);
    expect(dq.type).toBe('DoubleQuoted');
    const sub = dq.type === 'DoubleQuoted' ? dq.parts[0]! : dq;
    expect(sub.type).toBe('CommandSub');
    if (sub.type === 'CommandSub') {
      expect(sub.backtick).toBe(false);
      expect(text(src, sub)).toBe('$(a "$(b $(c))")');
      expect(text(src, sub.script)).toBe('a "$(b $(c))"');
    }
    checkSpans(src, parse(src));
  });

  it('case with ) inside $( ), comments with ) inside $( )', () => {
    const c = simple('x $(case y in a) echo;; (b|c) ;; esac) z');
    expect(words(c)).toEqual(['x', '$(case y in a) echo;; (b|c) ;; esac)', 'z']);
    const d = simple('x $(echo a # )\n) z');
    expect(c.words.length).toBe(3);
    expect(d.words.length).toBe(3);
  });

  it('backticks: inner text un-escaped and parsed, spans mapped back', () => {
    const src = 'echo `echo \\`echo hi\\``';
    const c = simple(src);
    const outer = part(c.words[1]!);
    expect(outer).toMatchObject({ type: 'CommandSub', backtick: true });
    if (outer.type !== 'CommandSub') return;
    const inner = outer.script.items[0]!.command as SimpleCommandNode;
    expect(inner.words[0]!.raw).toBe('echo');
    expect(text(src, inner.words[0]!)).toBe('echo');
    const innerSub = part(inner.words[1]!);
    expect(innerSub).toMatchObject({ type: 'CommandSub', backtick: true });
    if (innerSub.type !== 'CommandSub') return;
    const hi = (innerSub.script.items[0]!.command as SimpleCommandNode).words[1]!;
    expect(hi.raw).toBe('hi');
    expect(text(src, hi)).toBe('hi');
    checkSpans(src, parse(src));
  });

  it('arithmetic: $(( )), $[ ], (( )), with substitutions; $(( vs $( (', () => {
    const c = simple('echo $(( (1+2) * $(n) )) $[x+1]');
    expect(part(c.words[1]!)).toMatchObject({ type: 'Arith', expr: ' (1+2) * $(n) ' });
    const a = part(c.words[1]!);
    if (a.type === 'Arith') expect(a.subs.map((s) => s.type)).toEqual(['CommandSub']);
    expect(part(c.words[2]!)).toMatchObject({ type: 'Arith', expr: 'x+1' });
    expect(only('(( i++ ))')).toMatchObject({ type: 'ArithCommand', expr: ' i++ ' });
    const sub = part(simple('echo $((echo a); (echo b))').words[1]!);
    expect(sub.type).toBe('CommandSub');
    expect(only('((echo a); (echo b))').type).toBe('Subshell');
    // a failed `((` attempt, then a successful one inside: substitutions are kept
    const sub2 = only('((( 1 + (2) + $(c) )) )');
    expect(sub2.type).toBe('Subshell');
    if (sub2.type === 'Subshell') {
      const a = sub2.body.items[0]!.command;
      expect(a).toMatchObject({ type: 'ArithCommand', expr: ' 1 + (2) + $(c) ' });
      if (a.type === 'ArithCommand') expect(a.subs.map((x) => x.type)).toEqual(['CommandSub']);
    }
  });

  it('process substitution', () => {
    const src = 'diff <(ls a) >(cat)';
    const c = simple(src);
    expect(c.words.slice(1).map((w) => part(w))).toMatchObject([
      { type: 'ProcessSub', op: '<(' },
      { type: 'ProcessSub', op: '>(' },
    ]);
    expect(text(src, c.words[1]!)).toBe('<(ls a)');
    // inside a word it continues the word, like bash (`a<(x)` is `a/dev/fd/63`)
    const w = simple('echo a<(x)b 2>(y)').words;
    expect(w.map((x) => x.raw)).toEqual(['echo', 'a<(x)b', '2>(y)']);
    expect(w[1]!.parts.map((p) => p.type)).toEqual(['Literal', 'ProcessSub', 'Literal']);
  });
});

describe('parse: redirections', () => {
  it('every operator, fd numbers, {var}', () => {
    const src = 'cmd <a >b >>c >|d <>e <&0 >&2 &>f &>>g 2>h 2>&1 {fd}>i <<<"$x"';
    const c = simple(src);
    expect(c.redirects.map((r) => r.op)).toEqual([
      '<', '>', '>>', '>|', '<>', '<&', '>&', '&>', '&>>', '>', '>&', '>', '<<<',
    ]);
    expect(c.redirects[9]).toMatchObject({ fd: 2, op: '>', target: { raw: 'h' } });
    expect(c.redirects[11]).toMatchObject({ fd: 'fd', op: '>' });
    expect(text(src, c.redirects[10]!)).toBe('2>&1');
    expect(words(c)).toEqual(['cmd']);
  });

  it('redirect-only and redirect-first commands', () => {
    expect(simple('>out').redirects.length).toBe(1);
    expect(words(simple('2>/dev/null make all'))).toEqual(['make', 'all']);
    expect(() => parse('echo >')).toThrow(ParseError);
  });

  it('redirects on compound commands', () => {
    const g = only('{ a; } 2>&1 >out') as Group;
    expect(g.redirects.length).toBe(2);
  });
});

describe('parse: heredocs', () => {
  it('unquoted body is parsed for expansions; body starts after the line', () => {
    const src = 'cat <<EOF | grep x; echo after\nhi $USER $(id)\nEOF\necho next';
    const s = parse(src);
    expect(s.items.length).toBe(3);
    const p = s.items[0]!.command as Pipeline;
    const r = (p.commands[0] as SimpleCommandNode).redirects[0]!;
    expect(r.heredoc).toMatchObject({ delimiter: 'EOF', quoted: false, stripTabs: false, body: 'hi $USER $(id)\n' });
    expect(r.heredoc!.word!.parts.map((x) => x.type)).toEqual(['Literal', 'Param', 'Literal', 'CommandSub', 'Literal']);
    expect(text(src, (s.items[2]!.command as SimpleCommandNode).words[0]!)).toBe('echo');
    checkSpans(src, s);
  });

  it('quoted delimiters, <<-, several on one line', () => {
    const src = "cat <<'A' <<-\"B\" <<C\\D\n$x\nA\n\t\tb\n\tB\nc\nCD\n";
    const c = simple(src);
    expect(c.redirects.map((r) => [r.heredoc!.delimiter, r.heredoc!.quoted, r.heredoc!.stripTabs, r.heredoc!.body])).toEqual([
      ['A', true, false, '$x\n'],
      ['B', true, true, 'b\n'],
      ['CD', true, false, 'c\n'],
    ]);
    expect(c.redirects[0]!.heredoc!.word).toBeNull();
  });

  it('missing delimiter: body runs to end of input (bash warns)', () => {
    const c = simple('cat <<EOF\nno end');
    expect(c.redirects[0]!.heredoc!.body).toBe('no end');
  });

  it('heredoc inside $( )', () => {
    const c = simple('x=$(cat <<EOF\n)\nEOF\n)');
    expect(c.assignments[0]!.value!.parts[0]!.type).toBe('CommandSub');
  });
});

describe('parse: compound commands', () => {
  it('subshell and group', () => {
    const src = '( a; b ) && { c; }';
    const c = only(src);
    if (c.type !== 'AndOr') throw new Error('AndOr expected');
    expect(c.first).toMatchObject({ type: 'Subshell' });
    expect(text(src, c.first)).toBe('( a; b )');
    expect(c.rest[0]!.command).toMatchObject({ type: 'Group' });
    expect(text(src, c.rest[0]!.command)).toBe('{ c; }');
    expect(() => parse('{echo;}')).toThrow(ParseError);
    expect(words(simple('{echo;'.slice(0, 5)))).toEqual(['{echo']);
  });

  it('if / elif / else', () => {
    const src = 'if a; then b; elif c; then d; else e; fi';
    const i = only(src) as If;
    expect(i.type).toBe('If');
    expect(i.clauses.map((cl) => [text(src, cl.condition), text(src, cl.body)])).toEqual([
      ['a;', 'b;'],
      ['c;', 'd;'],
    ]);
    expect(text(src, i.elseBody!)).toBe('e;');
    expect(text(src, i)).toBe(src);
  });

  it('while / until', () => {
    expect(only('while a; do b; done')).toMatchObject({ type: 'While' });
    expect(only('until a\ndo b\ndone')).toMatchObject({ type: 'Until' });
  });

  it('for, for without in, for ((;;)), select', () => {
    const f = only('for x in a "b c"; do echo $x; done') as For;
    expect(f).toMatchObject({ type: 'For', variable: 'x' });
    expect(f.items!.map((w) => w.raw)).toEqual(['a', '"b c"']);
    expect(only('for x; do :; done')).toMatchObject({ type: 'For', items: null });
    expect(only('for x do :; done')).toMatchObject({ type: 'For', items: null });
    expect(only('for ((i=0; i<$(n); i++)); do :; done')).toMatchObject({
      type: 'ArithFor',
      init: 'i=0',
      condition: 'i<$(n)',
      step: 'i++',
    });
    expect(only('for ((;;)) { :; }')).toMatchObject({ type: 'ArithFor', init: '', condition: '', step: '' });
    expect(only('select x in a b; do break; done')).toMatchObject({ type: 'Select', variable: 'x' });
  });

  it('case with |, (pat), ;; ;& ;;& and a last item without terminator', () => {
    const src = 'case $x in a|b) one;; (c) two;& *) three;;& d) four; esac';
    const c = only(src) as Case;
    expect(c.word.raw).toBe('$x');
    expect(c.items.map((i) => [i.patterns.map((p) => p.raw), i.terminator])).toEqual([
      [['a', 'b'], ';;'],
      [['c'], ';&'],
      [['*'], ';;&'],
      [['d'], null],
    ]);
    expect(text(src, c.items[0]!.body)).toBe('one');
    expect(() => parse('echo ;;')).toThrow(ParseError);
  });

  it('functions in all three forms', () => {
    expect(only('f() { :; }')).toMatchObject({ type: 'Function', name: 'f', body: { type: 'Group' } });
    expect(only('function g { :; }')).toMatchObject({ type: 'Function', name: 'g' });
    expect(only('function h() ( : )')).toMatchObject({ type: 'Function', name: 'h', body: { type: 'Subshell' } });
    const src = 'f() { :; } >log';
    const fn = only(src);
    if (fn.type !== 'Function') throw new Error('Function expected');
    expect((fn.body as Group).redirects.length).toBe(1);
    expect(text(src, fn)).toBe(src);
  });

  it('coproc', () => {
    expect(only('coproc cat')).toMatchObject({ type: 'Coproc', name: null, body: { type: 'Simple' } });
    expect(only('coproc NAME { cat; }')).toMatchObject({ type: 'Coproc', name: 'NAME', body: { type: 'Group' } });
    expect(only('coproc time x')).toMatchObject({ type: 'Coproc', name: null, body: { type: 'Simple' } });
    expect(() => parse('coproc ! x')).toThrow(ParseError);
  });

  it('[[ … ]]', () => {
    const src = '[[ $x == *")"* && ( -f a || ! -d b ) && y =~ ^(a|b)$ ]]';
    const t = only(src);
    expect(t.type).toBe('Test');
    if (t.type !== 'Test') return;
    expect(t.words.map((w) => w.raw)).toEqual([
      '$x', '==', '*")"*', '&&', '(', '-f', 'a', '||', '!', '-d', 'b', ')', '&&', 'y', '=~', '^(a|b)$',
    ]);
    expect(text(src, t)).toBe(src);
    expect(() => parse('[[ a b ]]')).toThrow(ParseError);
    expect(() => parse('[[ ]]')).toThrow(/empty expression/);
    expect(only('[[ a == @(x|y) ]]').type).toBe('Test');
  });

  it('keywords after ; and newline close their constructs', () => {
    const s = parse('if a\nthen\n  b\nfi; while c; do d; done\n{ e\n}');
    expect(s.items.map((i) => i.command.type)).toEqual(['If', 'While', 'Group']);
  });
});

describe('parse: errors', () => {
  const bad: [string, string][] = [
    ["echo 'x", 'single quote'],
    ['echo "x', 'double quote'],
    ['echo $(x', '`)'],
    ['echo `x', 'backquote'],
    ['echo ${x', '`}'],
    ['if true; then x', '`fi'],
    ['echo ;;', ';;'],
    [')', ')'],
    ['&& x', '&&'],
    ['a | | b', '|'],
    ['while x; do y', 'done'],
    ['case x in a) y', 'esac'],
  ];
  for (const [src, frag] of bad) {
    it(`rejects ${JSON.stringify(src)}`, () => {
      let err: unknown;
      try {
        parse(src);
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(ParseError);
      const pe = err as ParseError;
      expect(pe.message).toContain(frag);
      expect(pe.position.offset).toBeGreaterThanOrEqual(0);
      expect(pe.position.offset).toBeLessThanOrEqual(src.length);
    });
  }

  it('points at the offending token', () => {
    try {
      parse('echo a\necho b | | c');
      expect.unreachable();
    } catch (e) {
      expect((e as ParseError).position).toMatchObject({ line: 2, column: 10, offset: 16 });
    }
  });
});

describe('parse: spans on a larger script', () => {
  it('all spans inside the text, words slice back to raw', () => {
    const src = [
      '#!/bin/bash',
      'set -euo pipefail',
      'for f in "$@"; do',
      '  case "$f" in',
      '    *.c) gcc -c "$f" -o "${f%.c}.o" 2>>err.log || exit 1 ;;',
      '    *) echo "skip $f" >&2 ;;',
      '  esac',
      'done',
      'x=$(ls | wc -l) y=`date +%s`',
      'if [[ $x -gt 0 && -n "$(git status --porcelain)" ]]; then',
      '  cat <<-EOF | tee out',
      '\tcount: $x $((x * 2))',
      '\tEOF',
      'fi',
      'f() { local a=(1 2 3); echo "${a[@]:1}"; } && f',
    ].join('\n');
    const s: Script = parse(src);
    expect(s.items.length).toBe(5);
    checkSpans(src, s);
    const lst: List = s;
    expect(lst.type).toBe('List');
  });
});

describe('parse: assignment corners', () => {
  it('`a=(1)x` keeps reading the word: a plain assignment, the next word is the command', () => {
    const c = simple('a=(1 $(x))echo hi');
    expect(c.assignments[0]!.array).toBeUndefined();
    expect(c.assignments[0]!.value!.raw).toBe('(1 $(x))echo');
    expect(c.assignments[0]!.value!.parts.some((p) => p.type === 'CommandSub')).toBe(true);
    expect(words(c)).toEqual(['hi']);
  });

  it('eval and the declaration builtins take name=(…) arguments', () => {
    expect(words(simple('eval a=(1)'))).toEqual(['eval', 'a=(1)']);
    expect(() => parse('command declare a=(1)')).toThrow(ParseError);
  });
});

describe('parse: line continuation everywhere bash removes it', () => {
  it('inside operators, after $, before an fd redirection', () => {
    expect(only('a &\\\n& b').type).toBe('AndOr');
    const c = simple('echo $\\\nx $\\\n(y) 2\\\n>z');
    expect(part(c.words[1]!)).toMatchObject({ type: 'Param', name: 'x' });
    expect(part(c.words[2]!)).toMatchObject({ type: 'CommandSub' });
    expect(c.redirects[0]).toMatchObject({ fd: 2, op: '>' });
    expect(part(simple('echo $HO\\\nME').words[1]!)).toMatchObject({ type: 'Param', name: 'HOME' });
    const h = simple('cat <<E\\\nOF\n$(id)\nEOF').redirects[0]!.heredoc!;
    expect(h).toMatchObject({ delimiter: 'EOF', quoted: false });
    expect(h.word!.parts[0]!.type).toBe('CommandSub');
    // not inside single quotes
    expect(part(simple("echo '\\\n'").words[1]!)).toMatchObject({ type: 'SingleQuoted', value: '\\\n' });
  });
});
