// Every program module's own examples (src/shell/programs/*): the walk finds what each says it runs.
import { describe, expect, it } from 'vitest';
import { checkProgramExamples } from '../../src/shell/programs/self-test.js';
import { everyProgramModule, indexAgreesWithScan, namesDeclaredTwice, programFor } from '../../src/shell/programs/index.js';
import { FAMILIES } from '../../src/shell/programs/families.js';

describe('program registry', () => {
  it('every module example holds', () => {
    const failures = checkProgramExamples().map((f) => `${f.family} ${f.kind}: \`${f.example.line}\` runs \`${f.example.runs}\`${f.example.in ? ` in ${f.example.in}` : ''}; found: ${f.found.join(' | ')}`);
    expect(failures).toEqual([]);
  });
  it('every module has examples, or is a grammar-only heavy program', () => {
    for (const m of everyProgramModule()) if (m.family !== 'heavy programs') expect(m.examples.match.length + m.examples.not_match.length, m.family).toBeGreaterThan(0);
  });
  it('no name is declared by two families that walk it', () => {
    expect(namesDeclaredTwice()).toEqual([]);
  });
  it('a heavy program grammar never shadows a family that walks the name; among heavy grammars the last wins', () => {
    const walkers = FAMILIES.filter((m) => m.family !== 'heavy programs');
    const heavy = FAMILIES.filter((m) => m.family === 'heavy programs');
    for (const h of heavy) {
      for (const n of h.names) {
        const walker = walkers.find((w) => w.names.includes(n));
        const lastHeavy = [...heavy].reverse().find((x) => x.names.includes(n))!;
        expect(programFor(n), n).toBe((walker ?? lastHeavy).load());
      }
    }
    expect(walkers.some((w) => heavy.some((h) => h.names.some((n) => w.names.includes(n)))), 'the table has a name both kinds declare').toBe(true);
  });
  it('the name index a long line builds gives every name the family the scan gives', () => {
    expect(indexAgreesWithScan()).toEqual([]);
  });
  it('finds modules by name and by pattern', () => {
    expect(programFor('make')?.family).toBe('make');
    expect(programFor('python3.12')?.family).toBe('interpreters');
    expect(programFor('qemu-system-riscv64')?.family).toBe('heavy programs');
    expect(programFor('ls')?.family).toBe('programs that run none of their arguments');
    expect(programFor('mytool')).toBeNull();
  });
});
