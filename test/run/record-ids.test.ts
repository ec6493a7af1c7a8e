// Run ids sort as runs started: `offhost runs` and "the last run" read them in that order.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { listRecords, newRunId, readRecord, writeRecord, type RunRecord } from '../../src/run/record.js';

const home = mkdtempSync(join(tmpdir(), 'offhost-run-ids-'));
const env = { HOME: home, XDG_STATE_HOME: join(home, 'state') };
afterAll(() => rmSync(home, { recursive: true, force: true }));

const rec = (id: string, line: string): RunRecord => ({ id, command: { line, argv: [], cwd: '/', env: {} }, log: '' }) as unknown as RunRecord;

describe('run ids', () => {
  it('two runs started in one second list in the order they started, whatever their random tails', () => {
    const t0 = new Date('2026-12-04T20:44:28.009Z');
    const t1 = new Date('2026-12-04T20:44:28.120Z');
    // Many pairs, so a random tail cannot put the second before the first by luck and pass.
    for (let i = 0; i < 50; i++) {
      const a = newRunId(t0);
      const b = newRunId(t1);
      expect([b, a].sort()).toEqual([a, b]);
    }
  });

  it('a 9 ms and a 120 ms start in one second keep their order (the milliseconds are zero-padded)', () => {
    expect(newRunId(new Date('2026-12-04T20:44:28.009Z')).slice(0, 20)).toBe('20261204T204428.009Z');
  });

  it('listRecords reads new ids and the older second-resolution ones, oldest first', () => {
    const ids = ['20261204T204427Z-aaaaaa', newRunId(new Date('2026-12-04T20:44:28.500Z')), newRunId(new Date('2026-12-04T20:44:28.501Z'))];
    for (const [i, id] of [...ids].reverse().entries()) writeRecord(env, rec(id, `run ${2 - i}`));
    expect(listRecords(env).map((r) => r.command.line)).toEqual(['run 0', 'run 1', 'run 2']);
    expect(readRecord(env, ids[1]!)?.id).toBe(ids[1]);
    // Not a run id: never read as a path.
    expect(readRecord(env, '../20261204T204427Z-aaaaaa')).toBeNull();
    expect(readRecord(env, '20261204T204427.Z-aa')).toBeNull();
  });
});
