// The help layout's pieces as units (src/cli/help.ts); every command's help is checked in help.test.ts.
import { describe, expect, it } from 'vitest';
import { formatHelp, wrap } from '../../src/cli/help.js';

describe('wrap', () => {
  it.each([
    ['short', 20, '', 'short'],
    ['one two three four', 9, '', 'one two\nthree\nfour'],
    ['  --x  a b c d', 10, '       ', '  --x  a b\n       c d'],
    ['kept\nbreaks', 80, '', 'kept\nbreaks'],
    ['averyveryverylongword next', 5, '', 'averyveryverylongword\nnext'],
  ])('%j at %i', (text, width, indent, want) => {
    expect(wrap(text, width, indent)).toBe(want);
  });
});

describe('formatHelp', () => {
  it('usage forms aligned, description, subcommands, options with the help option once and last, exit status, examples', () => {
    const text = formatHelp({
      usage: ['offhost x a', 'offhost x b'],
      description: 'Does x.',
      subcommands: [['a', 'the a'], ['bb', 'the b']],
      options: [['-h, --help', 'show this help'], ['--json', 'JSON']],
      exit: '0 ok.',
      examples: ['offhost x a', 'offhost x b --json'],
    });
    expect(text).toBe(
      'Usage: offhost x a\n       offhost x b\n\nDoes x.\n\nSubcommands:\n  a   the a\n  bb  the b\n\nOptions:\n  --json      JSON\n  -h, --help  show this help\n\nExit status: 0 ok.\nExamples:\n  offhost x a\n  offhost x b --json\n',
    );
  });
  it('one example on the line of its own heading', () => {
    expect(formatHelp({ usage: ['offhost y'], description: 'Y.', options: [], exit: '0.', examples: ['offhost y'] })).toMatch(/\nExample: offhost y\n$/);
  });
});
