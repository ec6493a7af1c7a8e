// src/shell/justfiles.ts: what a justfile's recipes run (tables), and any text read without throwing.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { readJustfile, UNKNOWN_INTERPOLATION } from '../../src/shell/justfiles.js';

describe('readJustfile', () => {
  const text = [
    'set shell := ["bash", "-cu"]',
    'goal := "build-safe"',
    'sha := `git rev-parse HEAD`',
    'export CC := "clang"',
    '',
    '# the default',
    'default: lint',
    '[private]',
    '_helper:',
    '  echo hidden',
    'lint:',
    '  @shellcheck *.sh',
    '  -echo done # not a justfile comment: the shell sees it',
    'build mode="debug" +targets: lint (_helper) && notes',
    '  make {{goal}} MODE={{mode}} {{targets}}',
    'notes:',
    '  echo {{{{literal}}',
    '[no-cd]',
    "[working-directory: 'engines/lang/koda']",
    'here:',
    '  make',
    'py:',
    '  #!/usr/bin/env python3',
    '  print("x")',
    'alias b := build',
    "mod web 'apps/web/justfile'",
    "import? 'extra.just'",
    '',
  ].join('\n');
  const j = readJustfile(text);

  it('recipes, in order, with their dependencies before and after &&', () => {
    expect(j.order).toEqual(['default', '_helper', 'lint', 'build', 'notes', 'here', 'py']);
    expect(j.recipes.get('build')).toMatchObject({ params: ['mode', 'targets'], before: ['lint', '_helper'], after: ['notes'] });
    expect(j.recipes.get('_helper')!.private).toBe(true);
  });
  it('lines without their @ and - prefixes; a plain string variable is put in, anything else is unknown', () => {
    expect(j.recipes.get('lint')!.lines).toEqual(['shellcheck *.sh', 'echo done # not a justfile comment: the shell sees it']);
    expect(j.recipes.get('build')!.lines).toEqual([`make build-safe MODE=${UNKNOWN_INTERPOLATION} ${UNKNOWN_INTERPOLATION}`]);
    expect(j.recipes.get('notes')!.lines).toEqual(['echo {{literal}}']);
  });
  it('attributes, shebang recipes, aliases, modules, imports and backticks', () => {
    expect(j.recipes.get('here')).toMatchObject({ noCd: true, workingDirectory: 'engines/lang/koda' });
    expect(j.recipes.get('py')!.shebang).toEqual(['/usr/bin/env', 'python3']);
    expect(j.aliases.get('b')).toBe('build');
    expect(j.mods.get('web')).toBe('apps/web/justfile');
    expect(j.imports).toEqual(['extra.just']);
    expect(j.backticks).toEqual(['git rev-parse HEAD']);
  });
  it('reads any text without throwing', () => {
    const piece = fc.constantFrom('a:', ' b', '\n', '  ', '\t', '@', '-', ':=', '{{', '}}', '`', "'", '"', '#', '[', ']', '&&', '(', ')', 'alias x := y', 'mod m', 'import', 'set x := 1', '#!/bin/sh', 'export');
    fc.assert(fc.property(fc.array(fc.oneof(piece, fc.string({ maxLength: 5 })), { maxLength: 40 }), (parts) => void readJustfile(parts.join(''))), { numRuns: 3000 });
  });
});
