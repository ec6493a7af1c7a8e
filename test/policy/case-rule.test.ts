// The file system's case rule (src/policy/case-rule.ts): the probe, the stored spelling, the canonical
// directory the guard judges, and the names the walker compares, over an in-memory case-folding file
// system (a Mac's APFS cannot exist here) injected into the guard's FileAccess and canonicalizer.
// test/e2e/case-insensitive.test.ts does the same on a real case-insensitive volume (vfat through FUSE).
import { describe, expect, it } from 'vitest';
import { foldCase, isUnder, makeCaseProbe, samePath, storedSpelling } from '../../src/policy/case-rule.js';
import { makeCanonicalizer } from '../../src/config/physical-paths.js';
import { makeGuard } from '../../src/policy/guard.js';
import { loadGuard } from '../../src/config/load-guard.js';
import { CaseFoldFs } from './case-fold-fs.js';

const HOME = '/Users/koder';
const ROOT = `${HOME}/dev/koder`;
const KODA = `${ROOT}/engines/lang/koda`;

function tree(rule: 'sensitive' | 'insensitive', freshInodes = false): CaseFoldFs {
  return new CaseFoldFs(rule, freshInodes)
    .mkdir(`${KODA}/Src`)
    .write(`${KODA}/Makefile`, 'build-safe:\n\ttrue\n')
    .write(`${KODA}/run.sh`, 'echo light\n');
}

describe('the in-memory case-folding file system (the tests stand-in for a Mac disk)', () => {
  it('finds a name in any case, keeps the stored spelling, and refuses a second name differing only in case', () => {
    const fs = tree('insensitive');
    expect(fs.caseFs.stat(`${HOME}/DEV/Koder/ENGINES`)).toEqual(fs.caseFs.stat(`${ROOT}/engines`));
    expect(fs.caseFs.names(`${KODA}`)!.sort()).toEqual(['Makefile', 'Src', 'run.sh']);
    expect(() => fs.write(`${KODA}/RUN.sh`, 'x')).toThrow(/EEXIST/);
  });
  it('with case, the two spellings are two names', () => {
    const fs = tree('sensitive');
    expect(fs.caseFs.stat(`${ROOT}/Engines`)).toBeNull();
    fs.write(`${KODA}/RUN.sh`, 'x');
    expect(fs.caseFs.names(KODA)!.sort()).toEqual(['Makefile', 'RUN.sh', 'Src', 'run.sh']);
  });
});

describe('the probe', () => {
  it('tells a case-sensitive volume (one failed lookup) from a case-insensitive one', () => {
    const sens = tree('sensitive');
    expect(makeCaseProbe(sens.caseFs)(KODA)).toBe('sensitive');
    expect(makeCaseProbe(tree('insensitive').caseFs)(KODA)).toBe('insensitive');
  });
  it('reads the listing when each lookup reports its own inode (FUSE without use_ino)', () => {
    expect(makeCaseProbe(tree('insensitive', true).caseFs)(KODA)).toBe('insensitive');
    // Case-sensitive with both spellings present: two entries, so the listing says sensitive.
    const both = tree('sensitive', true).mkdir(`${ROOT}/engines/lang/KODA`);
    expect(makeCaseProbe(both.caseFs)(KODA)).toBe('sensitive');
  });
  it('is not fooled by a path written in a case other than the stored one, whose flip is the stored name', () => {
    // Stored `koda`; asked about `KODA`: its flip `koda` is listed, but `KODA` is not: one entry, folding.
    expect(makeCaseProbe(tree('insensitive', true).caseFs)(`${ROOT}/engines/lang/KODA`)).toBe('insensitive');
    expect(makeCaseProbe(tree('insensitive', true).caseFs)(`${HOME}/DEV/KODER`)).toBe('insensitive');
  });
  it('probes a volume once, and a missing tail on the volume that holds its existing part', () => {
    const fs = tree('insensitive');
    const probe = makeCaseProbe(fs.caseFs);
    expect(probe(KODA)).toBe('insensitive');
    const after = fs.stats;
    expect(probe(`${KODA}/Src`)).toBe('insensitive');
    expect(fs.stats - after).toBe(1); // the directory's own stat (its volume), no second probe
    expect(probe(`${KODA}/no/such/Dir`)).toBe('insensitive');
  });
  it('without a letter to flip, assumes folding (never fewer matches)', () => {
    const fs = new CaseFoldFs('sensitive').mkdir('/1/2');
    expect(makeCaseProbe(fs.caseFs)('/1/2')).toBe('insensitive');
  });
});

describe('comparisons', () => {
  it('fold, under and same follow the rule given', () => {
    expect(foldCase('Engines/Lang/ÄÖ')).toBe('engines/lang/äö');
    expect(foldCase('Engines').length).toBe(7);
    expect(isUnder('/Users/K/Dev/Koder/x', '/Users/k/dev/koder', 'insensitive')).toBe(true);
    expect(isUnder('/Users/K/Dev/Koder/x', '/Users/k/dev/koder', 'sensitive')).toBe(false);
    expect(isUnder('/Users/k/dev/koderx', '/Users/k/dev/koder', 'insensitive')).toBe(false);
    expect(samePath('/A/b', '/a/B', 'insensitive')).toBe(true);
    expect(samePath('/A/b', '/a/B', 'sensitive')).toBe(false);
  });
  it('storedSpelling writes each name as stored, and keeps a missing tail as written', () => {
    const fs = tree('insensitive');
    expect(storedSpelling(`${HOME}/DEV/KODER/Engines/Lang/KODA/src`, 0, fs.caseFs)).toBe(`${KODA}/Src`);
    expect(storedSpelling(`${HOME}/DEV/KODER/Engines/No/Such`, 0, fs.caseFs)).toBe(`${ROOT}/engines/No/Such`);
    // The first `keep` characters are left as they are (the configuration's spelling).
    expect(storedSpelling(`/Users/Koder/dev/koder/ENGINES`, 22, fs.caseFs)).toBe('/Users/Koder/dev/koder/engines');
  });
});

const base = loadGuard({ cwd: '/', env: { HOME, PATH: '/usr/bin:/bin', XDG_CONFIG_HOME: '/nonexistent/xdg' }, role: 'laptop' });

function guardOver(fs: CaseFoldFs) {
  const probe = makeCaseProbe(fs.caseFs);
  const canonicalize = makeCanonicalizer(base.config, (p) => p, { rule: probe, fs: fs.caseFs });
  return makeGuard(base.config, 'laptop', { cwd: ROOT, env: { HOME }, files: fs.files(), canonicalize });
}

describe('the guard over a case-insensitive file system (injected)', () => {
  it('the engine reached in another case is the engine: rerouted, with the configured path on the VM', () => {
    const g = guardOver(tree('insensitive'));
    for (const line of ['cd Engines/Lang/Koda && make build-safe', 'cd ENGINES/lang/koda/src && make -C .. build', 'make -C engines/Lang/KODA kasm']) {
      const v = g.classify(line, { cwd: `${HOME}/Dev/Koder` });
      expect(v.decision, line).toBe('reroute');
      expect(v.rule, line).toBe('koda-make');
      expect(v.route!.cwd, line).toMatch(/^\/Users\/koder\/dev\/koder(\/engines\/lang\/koda(\/Src)?)?$/);
    }
    expect(g.classify('make build', { cwd: `${HOME}/DEV/KODER/Engines/Lang/Koda/Src` }).route!.cwd).toBe(`${KODA}/Src`);
  });
  it('with case, another spelling is another directory (not the engine)', () => {
    const g = guardOver(tree('sensitive').mkdir(`${ROOT}/Engines/Lang/Koda`));
    expect(g.classify('cd Engines/Lang/Koda && make build-safe').decision).toBe('allow');
  });
  it('a line that writes the script it runs under another case writes that script: not read from disk', () => {
    const line = "echo 'make build-safe' > RUN.SH; bash run.sh";
    const folding = guardOver(tree('insensitive')).classify(line, { cwd: KODA });
    expect(folding.decision).not.toBe('allow');
    // With case, RUN.SH is another file: run.sh is read and runs nothing heavy.
    expect(guardOver(tree('sensitive')).classify(line, { cwd: KODA }).decision).toBe('allow');
    // A script named in another case is read (the volume finds it).
    const fs = tree('insensitive').write(`${KODA}/build.sh`, 'make build-safe\n');
    expect(guardOver(fs).classify('bash ./BUILD.SH', { cwd: KODA }).decision).toBe('reroute');
  });
});
