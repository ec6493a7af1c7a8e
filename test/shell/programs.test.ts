// Every program module's own examples (src/shell/programs/*): the walk finds what each says it runs.
import { describe, expect, it } from 'vitest';
import { checkProgramExamples } from '../../src/shell/programs/self-test.js';
import { MODULES, programFor } from '../../src/shell/programs/index.js';

describe('program registry', () => {
  it('every module example holds', () => {
    const failures = checkProgramExamples().map((f) => `${f.family} ${f.kind}: \`${f.example.line}\` runs \`${f.example.runs}\`${f.example.in ? ` in ${f.example.in}` : ''}; found: ${f.found.join(' | ')}`);
    expect(failures).toEqual([]);
  });
  it('every module has examples, or is a grammar-only heavy program', () => {
    for (const m of MODULES) if (m.family !== 'heavy programs') expect(m.examples.match.length + m.examples.not_match.length, m.family).toBeGreaterThan(0);
  });
  it('finds modules by name and by pattern', () => {
    expect(programFor('make')?.family).toBe('make');
    expect(programFor('python3.12')?.family).toBe('interpreters');
    expect(programFor('qemu-system-riscv64')?.family).toBe('heavy programs');
    expect(programFor('ls')).toBeNull();
  });
});
