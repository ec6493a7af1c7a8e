// The PowerShell reader: which bash commands a PowerShell line is judged as (src/adapters/powershell.ts).
// Judged through the real guard in test/e2e/hooks.e2e.test.ts and the golden fixtures; here the reading.
import { describe, expect, it } from 'vitest';
import { powershellCandidates, programName } from '../../src/adapters/powershell.js';

const heads = (line: string) => powershellCandidates(line).lines;
const names = (line: string) => heads(line).map((l) => l.split(' ')[0]);

describe('PowerShell lines', () => {
  it('true positives: a trigger in command position, with its arguments', () => {
    expect(heads('make build-safe')).toContain('make build-safe');
    expect(heads("& 'C:\\msys64\\usr\\bin\\make.exe' build-safe")).toContain('make build-safe');
    expect(heads('cd engines\\lang\\koda; make.exe build-safe')).toContain('make build-safe');
    expect(heads('Get-Date && make build-safe || echo x')).toContain('make build-safe');
    expect(heads("Start-Process -FilePath qemu-system-x86_64 -ArgumentList '-hda','win10.qcow2' -Wait")).toContain("qemu-system-x86_64 -hda win10.qcow2");
  });

  it('bypass attempts: names hidden in strings, variables, blocks, iex, cmd /c, wsl, call operators', () => {
    expect(names("$m = 'make'; & $m build-safe")).toContain('make');
    expect(heads('Invoke-Expression "make build-safe"')).toContain('make build-safe');
    expect(heads("iex 'make build-safe'")).toContain('make build-safe');
    expect(heads('cmd /c "make build-safe"')).toContain('make build-safe');
    expect(heads('wsl make build-safe')).toContain('make build-safe');
    expect(heads('if ($true) { make build-safe }')).toContain('make build-safe');
    expect(heads('Write-Output "$(make build-safe)"')).toContain('make build-safe');
    expect(heads('. .\\tools\\MAKE.CMD build-safe')).toContain('make build-safe');
    expect(heads('m`ake build-safe')).toContain('make build-safe');
  });

  it('false positives stay allowed by the guard: a trigger word inside a longer string is not a program word', () => {
    expect(names("Write-Host 'make sure it builds'")).not.toContain('make');
    expect(names('Get-ChildItem -Filter *.make')).not.toContain('make');
  });

  it('edge cases: comments, empty lines, program names, too many candidates', () => {
    expect(heads('# make build-safe')).toEqual([]);
    expect(heads('')).toEqual([]);
    expect(programName('C:\\Tools\\Qemu-System-X86_64.EXE')).toBe('qemu-system-x86_64');
    expect(powershellCandidates(Array.from({ length: 500 }, (_, i) => `echo w${i}`).join('; ')).tooMany).toBe(true);
  });
});
