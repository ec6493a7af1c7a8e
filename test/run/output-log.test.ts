// The run's output log (src/run/output-log.ts): what the command printed, in order and whole, written
// off the event loop; a full disk stops the log, not the run.
import { afterAll, describe, expect, it } from 'vitest';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { OutputLog } from '../../src/run/output-log.js';

const tmp = mkdtempSync(join(tmpdir(), 'offhost-output-log-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
const ended = (log: OutputLog) => new Promise<void>((r) => log.end(r));

describe('the output log', () => {
  it('holds every chunk in the order written, however they come (many small ones while a write is under way, large ones, strings)', async () => {
    const file = join(tmp, 'order.log');
    const log = new OutputLog(file);
    const expected: Buffer[] = [];
    for (let i = 0; i < 2000; i++) {
      const b = i % 97 === 0 ? Buffer.alloc(300_000, i % 251) : Buffer.from(`line ${i}\n`);
      expected.push(b);
      log.write(b);
      if (i % 500 === 0) await new Promise((r) => setImmediate(r));
    }
    log.write('the end\n');
    expected.push(Buffer.from('the end\n'));
    await ended(log);
    expect(log.failure).toBeNull();
    expect(readFileSync(file).equals(Buffer.concat(expected))).toBe(true);
    // Written after its end: nothing more, and a second end calls back at once.
    log.write('late\n');
    await ended(log);
    expect(readFileSync(file).subarray(-8).toString()).toBe('the end\n');
  });

  it('an empty run leaves an empty log', async () => {
    const file = join(tmp, 'empty.log');
    await ended(new OutputLog(file));
    expect(readFileSync(file).length).toBe(0);
  });

  it.skipIf(!existsSync('/dev/full'))('a write that fails (a full disk: /dev/full) is kept as the reason, throws nothing, and end still calls back', async () => {
    const log = new OutputLog('/dev/full');
    log.write('a');
    log.write(Buffer.alloc(100_000));
    await ended(log);
    expect(log.failure).toMatch(/ENOSPC|no space/i);
  });

  it('a log that cannot be created throws at once (the run stops before its command, saying why)', () => {
    expect(() => new OutputLog(join(tmp, 'no-such-folder', 'x.log'))).toThrow(/ENOENT/);
  });
});
