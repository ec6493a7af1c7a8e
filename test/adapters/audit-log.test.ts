import { describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync, existsSync, writeFileSync, chmodSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { spawn } from 'node:child_process';
import { buildSync } from 'esbuild';
import fc from 'fast-check';
import { appendAudit, auditLine, auditLogPath, isoUtc, redactSecrets, rotateIfOver, tryAppendAudit } from '../../src/adapters/audit-log.js';
import type { AuditRecord } from '../../src/adapters/common.js';

const rec = (n = 0): AuditRecord => ({ agent: 'claude-code', session: 'claude-s', cwd: '/w', command: `make build-safe # ${n}`, decision: 'reroute', rule: 'koda-make' });
const tmp = () => mkdtempSync(join(tmpdir(), 'offhost-audit-'));
const lines = (p: string) => readFileSync(p, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));

async function writers(p: string, maxBytes: string): Promise<void> {
    const mod = resolve('src/adapters/audit-log.ts');
    const script = `
      import { appendAudit } from ${JSON.stringify(mod)};
      const id = process.argv[2];
      for (let i = 0; i < 100; i++) appendAudit({ agent: 'codex', session: id, cwd: '/w', command: 'x'.repeat(200) + ' ' + i, decision: 'allow', rule: null }, process.env);
    `;
    // Node 20 cannot run .ts: bundle the writer with esbuild (a dev dependency) into one .mjs.
    const dir = tmp();
    writeFileSync(join(dir, 'w.ts'), script);
    const file = join(dir, 'w.mjs');
    buildSync({ entryPoints: [join(dir, 'w.ts')], bundle: true, platform: 'node', format: 'esm', outfile: file, logLevel: 'silent' });
    const env = { ...process.env, OFFHOST_AUDIT_LOG: p, OFFHOST_AUDIT_MAX_BYTES: maxBytes, OFFHOST_AUDIT: 'all' };
    const run = (id: string) =>
      new Promise<number>((res) => {
        const c = spawn(process.execPath, [file, id], { env, stdio: 'inherit' });
        c.on('exit', (code) => res(code ?? 1));
      });
    const codes = await Promise.all(['w1', 'w2', 'w3', 'w4'].map(run));
    expect(codes).toEqual([0, 0, 0, 0]);
}

describe('audit log', () => {
  it('path: OFFHOST_AUDIT_LOG, XDG_STATE_HOME, ~/.local/state, off', () => {
    expect(auditLogPath({ OFFHOST_AUDIT_LOG: '/a/b.jsonl', HOME: '/h' })).toBe('/a/b.jsonl');
    expect(auditLogPath({ XDG_STATE_HOME: '/s', HOME: '/h' })).toBe('/s/offhost/audit.jsonl');
    expect(auditLogPath({ HOME: '/h' })).toBe('/h/.local/state/offhost/audit.jsonl');
    expect(auditLogPath({ OFFHOST_AUDIT_LOG: 'off', HOME: '/h' })).toBeNull();
  });

  it('appends one JSON line with the fields, time first; long commands are capped', () => {
    const p = join(tmp(), 'a.jsonl');
    appendAudit(rec(), { OFFHOST_AUDIT_LOG: p }, new Date('2026-11-29T20:00:00Z'));
    appendAudit({ ...rec(), command: `echo ${'x'.repeat(10_000)}\nsecond line` }, { OFFHOST_AUDIT_LOG: p });
    const [a, b] = lines(p);
    expect(a).toEqual({ time: '2026-11-29T20:00:00.000Z', agent: 'claude-code', session: 'claude-s', cwd: '/w', command: 'make build-safe # 0', decision: 'reroute', rule: 'koda-make' });
    expect(b.command.length).toBe(4096);
    expect(b.commandLength).toBe(10_017);
  });

  it('rotates past the cap and keeps three generations', () => {
    const p = join(tmp(), 'a.jsonl');
    const env = { OFFHOST_AUDIT_LOG: p, OFFHOST_AUDIT_MAX_BYTES: '400' };
    for (let i = 0; i < 40; i++) appendAudit(rec(i), env);
    for (const s of ['', '.1', '.2', '.3']) expect(existsSync(p + s)).toBe(true);
    expect(existsSync(`${p}.4`)).toBe(false);
    expect(readFileSync(p).length).toBeLessThanOrEqual(400);
    expect(lines(p).at(-1).command).toBe('make build-safe # 39');
  });

  it('a second process that saw the old file too big does not rotate again once it gets the lock (no generation lost, .1 kept)', () => {
    const p = join(tmp(), 'a.jsonl');
    writeFileSync(p, 'x'.repeat(500));
    writeFileSync(`${p}.1`, 'one');
    writeFileSync(`${p}.2`, 'two');
    const now = new Date();
    // Both writers measured 500 bytes; the first rotates, the second takes the lock afterwards.
    expect(rotateIfOver(p, 50, 400, now)).toBe(true);
    expect(rotateIfOver(p, 50, 400, now)).toBe(false); // nothing at `p` yet
    writeFileSync(p, 'y'.repeat(100)); // other writers appended a little
    expect(rotateIfOver(p, 50, 400, now)).toBe(false);
    expect(readFileSync(`${p}.1`, 'utf8')).toBe('x'.repeat(500));
    expect(readFileSync(`${p}.2`, 'utf8')).toBe('one');
    expect(readFileSync(`${p}.3`, 'utf8')).toBe('two');
    expect(existsSync(`${p}.rotating`)).toBe(false);
  });

  it('a failure is noted on stderr, never thrown', () => {
    const d = tmp();
    mkdirSync(join(d, 'ro'));
    chmodSync(join(d, 'ro'), 0o500);
    const errs: string[] = [];
    tryAppendAudit(rec(), { OFFHOST_AUDIT_LOG: join(d, 'ro', 'x', 'a.jsonl') }, (t) => errs.push(t));
    writeFileSync(join(d, 'file'), '');
    tryAppendAudit(rec(), { OFFHOST_AUDIT_LOG: join(d, 'file', 'a.jsonl') }, (t) => errs.push(t));
    expect(errs.length).toBeGreaterThanOrEqual(1);
    expect(errs.join('')).toContain('could not write the audit log');
  });

  it('concurrent writers (separate processes) never interleave or lose lines', async () => {
    const p = join(tmp(), 'a.jsonl');
    await writers(p, String(1 << 30));
    const all = lines(p);
    expect(all.length).toBe(400);
    for (const w of ['w1', 'w2', 'w3', 'w4']) expect(all.filter((l) => l.session === w).length).toBe(100);
  });

  it('rotating under concurrent writers: every line of every generation is whole JSON, none twice', async () => {
    const p = join(tmp(), 'a.jsonl');
    await writers(p, '20000');
    const all = ['', '.1', '.2', '.3'].filter((g) => existsSync(p + g)).flatMap((g) => lines(p + g));
    // 400 lines of ~300 bytes against a 20 kB cap rotate about six times: every kept generation is there.
    for (const g of ['', '.1', '.2', '.3']) expect(existsSync(p + g), `${p}${g}`).toBe(true);
    const keys = all.map((l) => `${l.session}:${l.command}`);
    expect(new Set(keys).size).toBe(keys.length);
    expect(all.length).toBeGreaterThan(150);
  });
});

describe('isoUtc (toISOString without loading the time zone)', () => {
  it('equals Date#toISOString for any time from year 0 to 9999, and throws like it for an invalid date', () => {
    fc.assert(
      fc.property(fc.integer({ min: -62167219200000, max: 253402300799999 }), (ms) => {
        const d = new Date(ms);
        expect(isoUtc(d)).toBe(d.toISOString());
      }),
      { numRuns: 2000 },
    );
    for (const ms of [0, -1, 253402300800000, -62167219200001, 8.64e15]) expect(isoUtc(new Date(ms))).toBe(new Date(ms).toISOString());
    expect(() => isoUtc(new Date(NaN))).toThrow(RangeError);
  });

  it('records refusals and reroutes by default, allows only with OFFHOST_AUDIT=all or audit.record: all', () => {
    const d = tmp();
    const p = join(d, 'a.jsonl');
    const allow: AuditRecord = { ...rec(), decision: 'allow', rule: null, command: 'ls' };
    expect(appendAudit(allow, { OFFHOST_AUDIT_LOG: p })).toBeNull();
    expect(existsSync(p)).toBe(false);
    appendAudit(rec(1), { OFFHOST_AUDIT_LOG: p });
    appendAudit({ ...rec(2), decision: 'deny', rule: 'qemu-windows' }, { OFFHOST_AUDIT_LOG: p });
    appendAudit(allow, { OFFHOST_AUDIT_LOG: p, OFFHOST_AUDIT: 'all' });
    appendAudit(allow, { OFFHOST_AUDIT_LOG: p }, new Date(), { record: 'all' });
    expect(lines(p).map((l) => l.decision)).toEqual(['reroute', 'deny', 'allow', 'allow']);
  });

  it('redacts the values of secret-looking variables and options, in the command and the rewrite', () => {
    const cases: [string, string][] = [
      [' export GITHUB_TOKEN=ghp_abc123; make', ' export GITHUB_TOKEN=***; make'],
      ['AWS_SECRET_ACCESS_KEY="a b c" aws s3 ls', 'AWS_SECRET_ACCESS_KEY=*** aws s3 ls'],
      ["DB_PASSWORD='x;y' psql && API_KEY=k1 curl x", 'DB_PASSWORD=*** psql && API_KEY=*** curl x'],
      ['mysql --password=hunter2 -u root', 'mysql --password=*** -u root'],
      ['gh auth login --token ghp_x', 'gh auth login --token ***'],
      ['FOO=bar OFFHOST_SESSION=claude-1 make', 'FOO=bar OFFHOST_SESSION=claude-1 make'],
      ['echo $(NPM_TOKEN=t npm whoami)', 'echo $(NPM_TOKEN=*** npm whoami)'],
    ];
    for (const [line, want] of cases) expect(redactSecrets(line), line).toBe(want);
    const out = JSON.parse(auditLine({ ...rec(), command: 'SECRET=s3 make build-safe', rewrite: "env OFFHOST_AI=claude offhost run -- 'SECRET=s3 make build-safe'" }, new Date(0)));
    expect(out.command).toBe('SECRET=*** make build-safe');
    expect(JSON.stringify(out)).not.toContain('s3');
  });
});
