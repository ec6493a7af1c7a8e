// Static word expansion (src/shell/expand.ts) against real bash: for every word whose fields offhost
// claims to know, bash must produce exactly those fields; a word offhost cannot know must be marked
// unknown (never guessed).
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { parse } from '../../src/shell/parser.js';
import { expandWord, staticText, type Scope } from '../../src/shell/expand.js';
import type { SimpleCommandNode, Word } from '../../src/shell/ast.js';

const HOME = '/home/u';

/** The second word of `: WORD`, as the parser gives it. */
function wordOf(text: string): Word {
  const cmd = parse(`: ${text}`).items[0]!.command as SimpleCommandNode;
  return cmd.words[1]!;
}

/** The fields bash makes of WORD after `vars` are set (globbing off: a glob stays as written). */
function bashFields(text: string, vars: Record<string, string>): string[] {
  const assigns = Object.entries(vars).map(([k, v]) => `${k}='${v.replace(/'/g, `'\\''`)}'`).join('; ');
  const out = execFileSync('bash', ['--norc', '--noprofile', '-c', `${assigns}${assigns ? '; ' : ''}set -f; for w in ${text}; do printf '%s\\0' "$w"; done`], {
    encoding: 'utf8',
    env: { PATH: process.env.PATH, HOME },
  });
  return out.split('\0').slice(0, -1);
}

const scope = (vars: Record<string, string | null>): Scope => ({ vars: new Map(Object.entries(vars)) });

describe('known words: exactly the fields bash makes', () => {
  it.each([
    ['plain', 'make', {}],
    ['single quotes', "'a b'", {}],
    ['double quotes with a known variable', '"$X/y"', { X: '/opt' }],
    ['an unquoted known variable is split on blanks', '$X', { X: 'a  b\tc' }],
    ['quoted, it is one field', '"$X"', { X: 'a  b' }],
    ['split on IFS as the line set it: each non-blank delimiter counts', '$X', { X: 'a:b::c', IFS: ':' }],
    ['a leading non-blank delimiter makes an empty field, a trailing one does not', '$X', { X: ':a:b:', IFS: ':' }],
    ['blanks around a non-blank delimiter belong to it', '$X', { X: ' a : b ', IFS: ' :' }],
    ['delimiters join the text around the expansion', 'pre${X}post', { X: '::', IFS: ':' }],
    ['an empty IFS does not split', '$X', { X: 'a b', IFS: '' }],
    ['tilde', '~/dev', {}],
    ['tilde after HOME was reassigned', '~/x', { HOME: '/other' }],
    ['a quoted tilde stays', '"~"/x', {}],
    ['$HOME in quotes', '"$HOME"/.config', {}],
    ['escapes', 'a\\ b\\$c', {}],
    ['adjacent parts make one word', 'pre"$X"\'post\'', { X: 'mid' }],
    ['brace expansion', 'a{b,c}d', {}],
    ['ANSI-C quoting', "$'a\\tb'", {}],
    ['an empty quoted word is one empty field', '""', {}],
    ['an unquoted empty variable is no field', '$E', { E: '' }],
  ] as const)('%s: %s', (_what, text, vars) => {
    const fields = expandWord(wordOf(text), scope({ HOME, ...vars }), HOME);
    expect(fields).toEqual(bashFields(text, { ...vars }).map((value) => ({ value, known: true })));
  });
});

describe('words offhost cannot know are unknown, never guessed', () => {
  it.each([
    // Not expanded statically (yet): fail closed.
    ['a sequence', 'x{1..3}', {}],
    ['${x:-default}', '${NOPE:-fallback}', {}],
    ['${#x}', '${#X}', { X: 'four' }],
    ['an unset variable', '$NOPE', {}],
    ['a variable set to something unknown', '$U', { U: null }],
    ['a command substitution', '$(pwd)', {}],
    ['backticks', '`pwd`', {}],
    ['arithmetic', '$((1+2))', {}],
    ['an unquoted glob', '*.c', {}],
    ['a bracket glob', 'file[12]', {}],
    ['~user (needs the password database)', '~root/x', {}],
    ['a glob that came from a variable', '$G', { G: 'src/*.ts' }],
  ] as const)('%s: %s', (_what, text, vars) => {
    const fields = expandWord(wordOf(text), scope({ HOME, ...vars }), HOME);
    expect(fields.some((f) => !f.known)).toBe(true);
  });

  it('the static prefix and suffix of an unknown field are kept (a known basename)', () => {
    const [f] = expandWord(wordOf('"$SDK"/emulator/emulator'), scope({ HOME }), HOME);
    expect(f).toMatchObject({ known: false, value: expect.stringMatching(/\/emulator\/emulator$/) });
    expect(f!.value.slice(f!.unknownEnd)).toBe('/emulator/emulator');
    const [g] = expandWord(wordOf('@$(cat avd)'), scope({ HOME }), HOME);
    expect(g).toMatchObject({ known: false, knownPrefix: 1 });
    expect(g!.value.slice(0, g!.knownPrefix)).toBe('@');
  });
});

describe('staticText', () => {
  it.each([
    ['EOF', 'EOF'],
    ["'EOF'", 'EOF'],
    ['"$X"', null],
    ['a b', 'a'],
    ['x{1,2}', null],
  ] as const)('%s', (text, expected) => {
    expect(staticText(wordOf(text), scope({ HOME }), HOME)).toBe(expected);
  });
});
