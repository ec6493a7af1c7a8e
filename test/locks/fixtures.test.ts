// Table test: every lock fixture under fixtures/locks/files with its expected findings (fixtures/locks/cases.json):
// exact rule id, line (and column where given), severity and a message fragment; and nothing on disk changes,
// in-process or through the built CLI.
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { lintLockContent } from '../../src/locks/lint.js';
import { parseLockBuffer } from '../../src/locks/parse.js';

const root = join(import.meta.dirname, '..', '..');
const fixtures = join(root, 'fixtures', 'locks');
const bin = process.env.OFFHOST_BIN ?? join(root, 'dist', 'offhost.mjs');

interface Case {
  case: string;
  file: string;
  now: string;
  why: string;
  expect: { rule: string; line: number | null; column?: number; severity: 'error' | 'warning'; message: string }[];
}
const cases = JSON.parse(readFileSync(join(fixtures, 'cases.json'), 'utf8')) as Case[];

function snapshot(dir: string): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (d: string): void => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else {
        const st = statSync(p);
        out.set(relative(dir, p), `${createHash('sha256').update(readFileSync(p)).digest('hex')} ${st.mtimeMs} ${st.mode}`);
      }
    }
  };
  walk(dir);
  return out;
}

describe('lock fixtures', () => {
  const before = snapshot(fixtures);

  it.each(cases.map((c) => [c.case, c] as const))('%s', (_name, c) => {
    const buf = readFileSync(join(fixtures, c.file));
    const kind = c.file.includes('/vm-active-archive/') ? 'archive' : 'active';
    const { findings } = lintLockContent(c.file, buf, kind, { now: new Date(c.now), severityForTime: 'warning' });
    const got = findings.map((f) => ({ rule: f.ruleId, line: f.line ?? null, column: f.column, severity: f.severity, message: f.message, file: f.file }));
    expect(got.map((g) => g.rule), JSON.stringify(got, null, 1)).toEqual(c.expect.map((e) => e.rule));
    c.expect.forEach((e, i) => {
      const g = got[i]!;
      expect(g.file).toBe(c.file);
      expect(g.severity).toBe(e.severity);
      if (e.line !== null) expect(g.line).toBe(e.line);
      else expect(g.line ?? 1).toBeGreaterThan(0);
      if (e.column !== undefined) expect(g.column).toBe(e.column);
      expect(g.message).toContain(e.message);
    });
  });

  it('valid fixtures parse to a Lock with the R3 fields and field lines', () => {
    const r = parseLockBuffer(readFileSync(join(fixtures, 'files/valid/vm-active/lock-s.khost1.dev-linux-koda.md')), 'x/vm-active/lock-s.khost1.dev-linux-koda.md');
    expect(r.findings).toEqual([]);
    expect(r.lock).toMatchObject({
      vm: 's.khost1.dev-linux-koda',
      session: 'claude-2026-05-19-rfc019',
      ai: 'claude',
      started: new Date('2026-05-19T22:30:00Z'),
      heartbeat: new Date('2026-05-19T23:10:00Z'),
      ttlMinutes: 60,
      reason: 'run make build-safe for RFC-019 (ticket KODA-123)',
      positions: { vm: 2, session: 3, ai: 4, started: 5, reason: 6, heartbeat: 8, ttl_minutes: 9 },
    });
    expect(r.lock!.body).toContain('Running `make build-safe`');
    const min = parseLockBuffer(readFileSync(join(fixtures, 'files/valid-minimal/vm-active/lock-s.khost1.dev-linux-koda.md')), 'lock-s.khost1.dev-linux-koda.md');
    expect(min.lock?.ttlMinutes).toBe(120);
    expect(min.lock?.heartbeat).toBeUndefined();
  });

  it('the CLI reports every fixture and changes nothing on disk', () => {
    const r = spawnSync(process.execPath, [bin, 'lint', '--format', 'json', '--now', '2026-05-19T23:20:00Z', join(fixtures, 'files')], {
      cwd: root,
      encoding: 'utf8',
      env: { ...process.env, CI: 'true' },
    });
    expect(r.status, r.stderr).toBe(1);
    const out = JSON.parse(r.stdout) as { file: string; ruleId: string }[];
    const rules = new Set(out.map((f) => f.ruleId));
    for (const id of ['lock-schema', 'lock-yaml', 'lock-empty', 'lock-binary', 'lock-too-large', 'lock-no-frontmatter', 'lock-name-mismatch', 'lock-production-vm', 'lock-unknown-field']) {
      expect(rules).toContain(id);
    }
    expect(out.some((f) => f.file.endsWith('files/valid/vm-active/lock-s.khost1.dev-linux-koda.md'))).toBe(false);
    expect(snapshot(fixtures)).toEqual(before);
  });

  it('exit 0 for a valid file, 1 for an error, 0 for warnings only', () => {
    const lint = (f: string, now = '2026-05-19T23:20:00Z') =>
      spawnSync(process.execPath, [bin, 'lint', '--now', now, join(fixtures, 'files', f)], { cwd: root, encoding: 'utf8' });
    expect(lint('valid').status).toBe(0);
    expect(lint('valid').stdout).toBe('');
    const bad = lint('started-space');
    expect(bad.status).toBe(1);
    expect(bad.stdout).toContain('5:10');
    expect(bad.stdout).toContain('started: "2026-05-19 22:30" is not an ISO-8601 UTC timestamp; write it like 2026-05-19T22:30:00Z');
    expect(bad.stdout).toContain('lock-schema');
    const warn = lint('expired-by-ttl', '2026-05-20T00:13:00Z');
    expect(warn.status).toBe(0);
    expect(warn.stdout).toContain('lock-expired');
    expect(snapshot(fixtures)).toEqual(before);
  });
});
