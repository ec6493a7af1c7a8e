// `offhost lint [PATHS]` over many files: worker threads (large sets) give exactly the sequential result.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { offhost, tempDir } from './helpers.js';

describe('offhost lint over a folder', () => {
  it('gives the same findings with and without worker threads', () => {
    const dir = tempDir('offhost-lint-tree-');
    mkdirSync(join(dir, 'vm-active'));
    mkdirSync(join(dir, 'vm-active-archive'));
    mkdirSync(join(dir, 'active'));
    for (let i = 0; i < 2500; i++) {
      const vm = `s.khost1.dev-t-${i}`;
      const folder = i % 11 === 0 ? 'vm-active-archive' : 'vm-active';
      writeFileSync(
        join(dir, folder, `lock-${vm}${folder === 'vm-active-archive' ? '-2026-05-19' : ''}.md`),
        `---\nvm: ${vm}\nsession: s-${i}\nai: ${i % 7 === 0 ? 'X' : 'claude'}\nstarted: 2026-05-19T2${i % 4}:30:00Z\nreason: r\nheartbeat: 2026-05-19T23:10:00Z\n---\n`,
      );
    }
    writeFileSync(join(dir, 'active', 'lock-component.md'), 'not a VM lock\n');
    const args = ['lint', '--format', 'json', '--now', '2026-05-19T23:20:00Z', dir];
    const par = offhost(args, dir, { OFFHOST_LINT_THREADS: '2' });
    const seq = offhost(args, dir, { OFFHOST_LINT_THREADS: '1' });
    expect(par.status, par.stderr).toBe(1);
    expect(seq.status).toBe(1);
    expect(par.stdout).toBe(seq.stdout);
    const f = JSON.parse(par.stdout) as { file: string; ruleId: string; severity: string }[];
    expect(f.some((x) => x.file.includes('lock-component'))).toBe(false); // component locks are not VM locks
    expect(f.filter((x) => x.ruleId === 'lock-schema' && x.severity === 'error').length).toBeGreaterThan(0);
    expect(f.filter((x) => x.file.includes('vm-active-archive')).every((x) => x.severity === 'warning')).toBe(true);
    expect(f.some((x) => x.ruleId === 'lock-future-timestamp')).toBe(true); // started 23:30 > now 23:20 + 120 s
  });
});
