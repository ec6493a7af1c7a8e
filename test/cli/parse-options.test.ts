// offhost's own option parser (src/cli/common.ts) against node:util parseArgs, which it replaces on the
// hot path: the same values and positionals for every argument list, and an error exactly where
// parseArgs (strict, with positionals) throws one.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { parseArgs } from 'node:util';
import { parseOptions } from '../../src/cli/common.js';
import { UsageError } from '../../src/errors.js';

const OPTIONS = {
  json: { type: 'boolean' },
  cwd: { type: 'string' },
  role: { type: 'string', short: 'r' },
  color: { type: 'boolean' },
  'no-color': { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
  quiet: { type: 'boolean', short: 'q' },
} as const;

function nodes(args: string[]): { values: Record<string, unknown>; positionals: string[] } | 'error' {
  try {
    const r = parseArgs({ args, options: OPTIONS, allowPositionals: true, strict: true });
    return { values: { ...r.values }, positionals: r.positionals };
  } catch {
    return 'error';
  }
}
function ours(args: string[]): { values: Record<string, unknown>; positionals: string[] } | 'error' {
  try {
    const r = parseOptions(args, OPTIONS);
    return { values: { ...r.values }, positionals: r.positionals };
  } catch (err) {
    expect(err).toBeInstanceOf(UsageError);
    expect((err as Error).message.split('\n')).toHaveLength(1);
    return 'error';
  }
}

/** `-q-…`: parseArgs reaches a `-` while expanding short flags and takes it for `--` (the one deliberate difference). */
function dashInFlagGroup(a: string): boolean {
  if (!/^-[^-]/.test(a) || a.length < 3) return false;
  const shorts = new Map<string, string>(Object.values(OPTIONS).flatMap((o) => ('short' in o ? [[o.short as string, o.type as string] as const] : [])));
  for (let j = 1; j < a.length; j++) {
    if (a[j] === '-') return true;
    const t = shorts.get(a[j]!);
    if (t !== 'boolean') return false; // unknown (an error either way) or a string option taking the rest
  }
  return false;
}

const SHORT_TYPES = new Map<string, string>(Object.values(OPTIONS).flatMap((o) => ('short' in o ? [[o.short as string, o.type as string] as const] : [])));

/**
 * Whether a `-q-…` group is read as options: before `--`, and not the value of the option before it
 * (`--cwd -q-`, `-r -q-`); `-- -h-` and `--cwd -q-` are a positional and a value, as parseArgs has them.
 */
function dashGroupReached(args: string[]): boolean {
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === '--') return false;
    if (a === '--cwd' || a === '--role') {
      i++;
      continue;
    }
    if (!/^-[^-]/.test(a)) continue;
    if (dashInFlagGroup(a)) return true;
    // A group whose last letter takes a value (`-r`, `-qr`) takes the next word as it.
    if (SHORT_TYPES.get(a[a.length - 1]!) === 'string' && [...a.slice(1, -1)].every((c) => SHORT_TYPES.get(c) === 'boolean')) i++;
  }
  return false;
}

describe('parseOptions (node:util parseArgs semantics)', () => {
  const cases: string[][] = [
    [], ['ls'], ['--json', 'make build'], ['make', '--json'], ['--cwd', '/x', 'ls'], ['--cwd=/x', 'ls'], ['--cwd=', 'ls'],
    ['--cwd'], ['--cwd', '-x'], ['--cwd=-x', 'ls'], ['-r', 'vm', 'ls'], ['-rvm', 'ls'], ['-hq'], ['-qr', 'ci'], ['-qrci'],
    ['--json=1'], ['--jsn'], ['-x'], ['--', '--json'], ['-', 'x'], ['--no-color', '--color'], ['--json', '--json'],
    ['--cwd', 'a', '--cwd', 'b'], ['-h', '--', '-h'], ['--help=yes'], ['---json'], ['-'], ['--='], ['--constructor'], ['--__proto__'],
  ];
  it('a `-q-` group is the one deliberate difference, and only where it is read as options', () => {
    expect(ours(['-q-'])).toBe('error');
    expect(ours(['--', '-h-'])).toEqual(nodes(['--', '-h-']));
    expect(ours(['--cwd', '-q-'])).toEqual(nodes(['--cwd', '-q-']));
    expect(ours(['-r', '-q-', 'ls'])).toEqual(nodes(['-r', '-q-', 'ls']));
  });
  it.each(cases.map((c) => [JSON.stringify(c), c] as const))('%s', (_, args) => {
    expect(ours(args)).toEqual(nodes(args));
  });

  it('random argument lists give what parseArgs gives', () => {
    const word = fc.oneof(
      fc.constantFrom('--json', '--cwd', '--role', '-r', '-h', '-q', '-hq', '-qr', '--', '-', '--color', '--no-color', '--help', '--cwd=', '--jsn', '-x', 'ls', 'make build-safe'),
      fc.string({ maxLength: 6 }),
      fc.string({ maxLength: 4 }).map((s) => `-${s}`),
      fc.string({ maxLength: 6 }).map((s) => `--${s}`),
    );
    fc.assert(fc.property(fc.array(word, { maxLength: 6 }), (args) => {
      if (dashGroupReached(args)) {
        expect(ours(args)).toBe('error');
        return;
      }
      expect(ours(args)).toEqual(nodes(args));
    }), { numRuns: 20000 });
  });

  it('says what is wrong in one line', () => {
    expect(() => parseOptions(['--jsn'], OPTIONS)).toThrow("unknown option '--jsn' (did you mean --json?)");
    expect(() => parseOptions(['--json=1'], OPTIONS)).toThrow("option '--json' takes no value");
    expect(() => parseOptions(['--cwd'], OPTIONS)).toThrow("option '--cwd' needs a value");
    expect(() => parseOptions(['-r'], OPTIONS)).toThrow("option '-r' needs a value");
    expect(() => parseOptions(['-q-'], OPTIONS)).toThrow("'-q-': a dash inside a group of short options");
    expect(() => parseOptions(['-hq-x'], OPTIONS)).toThrow('a dash inside a group');
    expect(parseOptions(['-qr-x'], OPTIONS).values).toEqual({ quiet: true, role: '-x' });
  });
});
