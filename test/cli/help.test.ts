// Every command's help has the same layout (src/cli/help.ts): a table test over the command table (so a new
// command is checked the day it is registered) and the subcommands that have their own options, run on the
// built executable. Sections in order: Usage (further forms aligned), a description in sentences, the
// options with `-h, --help  show this help`, the exit statuses, at least one example; nothing wider than the
// help width; `-h` and `offhost help NAME` print the same; help goes to stdout and exits 0.
import { spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { COMMANDS } from '../../src/cli/commands-table.js';

const ROOT = join(import.meta.dirname, '..', '..');
const BIN = join(ROOT, 'dist', 'offhost.cjs');
const dir = mkdtempSync(join(tmpdir(), 'offhost-help-'));
const offhost = (args: string[]) =>
  spawnSync(process.execPath, [BIN, ...args], { cwd: dir, env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: dir, OFFHOST_ROLE: 'laptop' }, encoding: 'utf8' });

const SUBCOMMANDS = [
  ['lock', 'acquire'],
  ['lock', 'heartbeat'],
  ['lock', 'release'],
  ['lock', 'status'],
  ['lock', 'gc'],
  ['vm', 'provision'],
  ['vm', 'status'],
];

/** The layout's problems in one help text (empty: none). */
function layoutProblems(words: string[], text: string): string[] {
  const p: string[] = [];
  const lines = text.split('\n');
  if (!lines[0]!.startsWith(`Usage: offhost ${words.join(' ')}`)) p.push(`first line is not "Usage: offhost ${words.join(' ')} …": ${lines[0]}`);
  let i = 1;
  while (i < lines.length && lines[i]!.startsWith('       offhost ')) i++; // further usage forms, aligned
  if (lines[i] !== '') p.push(`no blank line after the usage (line ${i + 1}: ${lines[i]})`);
  const description = lines[i + 1] ?? '';
  if (!/^[A-Z`$]/.test(description)) p.push(`no description in sentences after the usage (line ${i + 2}: ${description})`);
  const at = (re: RegExp) => lines.findIndex((l) => re.test(l));
  const options = at(/^Options:$/);
  // the $SHELL wrapper lists --help alone: -h is bash's own option there (hashall)
  const help = at(words[0] === 'shell' ? /^ {2}--help {2,}show this help/ : /^ {2}-h, --help {2,}show this help/);
  const exit = at(/^Exit status: \S/);
  const example = at(/^Examples?:/);
  if (options < 0) p.push('no "Options:" section');
  if (help < 0) p.push('no "  -h, --help  show this help" line');
  if (exit < 0) p.push('no "Exit status: …" line');
  if (example < 0) p.push('no "Example:" / "Examples:"');
  if (options >= 0 && exit >= 0 && example >= 0 && !(i < options && options < help && help < exit && exit < example)) p.push('sections out of order (usage, description, options, exit status, examples)');
  const examples = example < 0 ? [] : lines[example]!.startsWith('Example: ') ? [lines[example]!.slice(9)] : lines.slice(example + 1).filter((l) => l.startsWith('  ')).map((l) => l.trim());
  if (example >= 0 && (examples.length === 0 || !examples.every((e) => /\boffhost[ -]/.test(e)))) p.push(`examples are not offhost command lines: ${examples.join(' / ')}`);
  for (const [n, l] of lines.entries()) if (l.length > 110) p.push(`line ${n + 1} is ${l.length} characters wide`);
  return p;
}

describe('every command of the command table has full help in the one layout', () => {
  it('offhost --help', () => {
    const r = offhost(['--help']);
    expect(r.status, r.stderr).toBe(0);
    expect(layoutProblems([], r.stdout), r.stdout).toEqual([]);
    expect(r.stdout).toMatch(/^Commands:$/m);
  });

  it.each(Object.keys(COMMANDS))('offhost %s --help', (name) => {
    const r = offhost([name, '--help']);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr).toBe('');
    expect(layoutProblems([name], r.stdout), r.stdout).toEqual([]);
    // -h is bash's own option (hashall) for the $SHELL wrapper; every other command reads it as --help
    if (name !== 'shell') expect(offhost([name, '-h']).stdout).toBe(r.stdout);
    expect(offhost(['help', name]).stdout).toBe(r.stdout);
  });

  it.each(SUBCOMMANDS)('offhost %s %s --help', (name, sub) => {
    const r = offhost([name, sub, '--help']);
    expect(r.status, r.stderr).toBe(0);
    expect(layoutProblems([name, sub], r.stdout), r.stdout).toEqual([]);
  });

  it('the layout check fails on the layouts it replaced (it can fail)', () => {
    expect(layoutProblems(['lock'], 'Usage: offhost lock <subcommand> [options]\n\n  acquire <vm>\n\nCommon options: --session S\n')).not.toEqual([]);
    expect(layoutProblems(['doctor'], 'Usage: offhost doctor\n\nChecks this laptop.\n')).toEqual(['no "Options:" section', 'no "  -h, --help  show this help" line', 'no "Exit status: …" line', 'no "Example:" / "Examples:"']);
  });
});
