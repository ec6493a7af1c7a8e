// The file-system side of lock files (src/locks/store.ts).
import { describe, expect, it } from 'vitest';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, writeFileSync, existsSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { archiveMove, createExclusive, unarchive, withMutex } from '../../src/locks/store.js';
import { LockError } from '../../src/errors.js';

const tmp = () => mkdtempSync(join(tmpdir(), 'offhost-store-'));

describe('createExclusive', () => {
  it('creates once, never overwrites, leaves no temporary file', () => {
    const d = tmp();
    const p = join(d, 'a', 'lock-x.md');
    expect(createExclusive(p, 'first')).toBe(true);
    expect(createExclusive(p, 'second')).toBe(false);
    expect(readFileSync(p, 'utf8')).toBe('first');
    expect(readdirSync(join(d, 'a'))).toEqual(['lock-x.md']);
  });
});

describe('archiveMove / unarchive', () => {
  it('moves with a note appended, refuses to overwrite an archive, and undoes', () => {
    const d = tmp();
    const from = join(d, 'active.md');
    const to = join(d, 'arch', 'a.md');
    writeFileSync(from, '---\nx: 1\n---\nbody');
    const original = archiveMove(from, to, '\n## Released\n');
    expect(existsSync(from)).toBe(false);
    expect(readFileSync(to, 'utf8')).toBe('---\nx: 1\n---\nbody\n\n## Released\n');
    writeFileSync(from, 'another');
    expect(() => archiveMove(from, to, 'n')).toThrow(LockError);
    expect(readFileSync(from, 'utf8')).toBe('another');
    // Undo does not overwrite a lock written meanwhile; the archive then stays.
    unarchive(from, to, original);
    expect(readFileSync(from, 'utf8')).toBe('another');
    expect(existsSync(to)).toBe(true);
    const from2 = join(d, 'active2.md');
    unarchive(from2, to, original);
    expect(readFileSync(from2, 'utf8')).toBe(original);
    expect(existsSync(to)).toBe(false);
  });
});

describe('withMutex', () => {
  it('serialises critical sections', async () => {
    const d = tmp();
    const log: string[] = [];
    const section = (name: string) =>
      withMutex(d, async () => {
        log.push(`${name}+`);
        await new Promise((r) => setTimeout(r, 20));
        log.push(`${name}-`);
      });
    await Promise.all([section('a'), section('b'), section('c')]);
    for (let i = 0; i < log.length; i += 2) expect(log[i]!.slice(0, -1)).toBe(log[i + 1]!.slice(0, -1));
    expect(existsSync(join(d, 'offhost', 'lock.mutex'))).toBe(false);
  });

  it("breaks a dead process's mutex, never a live one's", async () => {
    const d = tmp();
    mkdirSync(join(d, 'offhost'));
    const m = join(d, 'offhost', 'lock.mutex');
    writeFileSync(m, `999999999 ${hostname()} ${Date.now()}\n`);
    expect(await withMutex(d, async () => 'ran')).toBe('ran');
    writeFileSync(m, `${process.ppid} ${hostname()} ${Date.now() - 10 * 60_000}\n`);
    await expect(withMutex(d, async () => 'ran', { timeoutMs: 300 })).rejects.toThrow(LockError);
    expect(readFileSync(m, 'utf8')).toContain(String(process.ppid));
  });
});
