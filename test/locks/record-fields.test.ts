// A VM lock record's own fields (explicit, host, claims) are read from the same YAML reading as its R3
// fields (src/locks/record.ts parseRecord: one parse a record, on a run's path). Checked two ways: records
// offhost writes read back to the same fields (fast-check), and for hand-written frontmatters the single
// reading agrees with the lenient reader it replaced (readFrontmatterLoose), or the file is refused.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { parseRecord, renderRecord } from '../../src/locks/record.js';
import { parseLockBuffer, readFrontmatterLoose } from '../../src/locks/parse.js';
import type { Claim, LockRecord } from '../../src/locks/lock-types.js';

const VM = 's.khost1.dev-linux-koda';
const FILE = `meta/context/notices/vm-active/lock-${VM}.md`;
const second = (ms: number) => new Date(Math.floor(ms / 1000) * 1000);
const word = fc.stringMatching(/^[a-z0-9][a-z0-9._-]{0,20}$/);
const when = fc.integer({ min: Date.UTC(2025, 0, 1), max: Date.UTC(2030, 0, 1) }).map(second);

const claim: fc.Arbitrary<Claim> = fc.record(
  {
    id: word,
    pid: fc.integer({ min: 1, max: 4_000_000 }),
    host: word,
    command: fc.string({ maxLength: 60 }).map((s) => s.replace(/[\0-\x1f\x7f]/g, ' ')),
    started: when,
    heartbeat: when,
    start: fc.stringMatching(/^[0-9]{1,12}$/),
    boot: fc.uuid(),
    job: fc.stringMatching(/^[0-9a-f]{16}$/),
  },
  { requiredKeys: ['id', 'pid', 'host', 'command', 'started'] },
);

const record: fc.Arbitrary<LockRecord> = fc.record(
  {
    target: fc.constant({ kind: 'vm' as const, vm: VM }),
    session: word,
    ai: fc.constantFrom('claude', 'codex', 'human'),
    started: when,
    ttlMinutes: fc.integer({ min: 1, max: 1440 }),
    reason: fc.string({ minLength: 1, maxLength: 80 }).map((s) => s.replace(/[\0-\x1f\x7f]/g, ' ').trim() || 'a reason'),
    body: fc.constantFrom('', 'notes\n', 'two\nlines\n'),
    explicit: fc.boolean(),
    host: word,
    claims: fc.array(claim, { maxLength: 3 }),
  },
  { requiredKeys: ['target', 'session', 'ai', 'started', 'ttlMinutes', 'reason', 'body', 'explicit', 'claims'] },
);

describe("a VM lock record's own fields", () => {
  it('a record offhost writes reads back with the same explicit, host and claims', () => {
    fc.assert(
      fc.property(record, (r) => {
        const text = renderRecord(r);
        const back = parseRecord(text, r.target, FILE, FILE);
        expect(back.explicit).toBe(r.explicit);
        expect(back.host).toBe(r.host);
        expect(back.claims).toEqual(r.claims);
        // The one reading gives what the lenient reader gives.
        expect(parseLockBuffer(Buffer.from(text), FILE).fields).toEqual(readFrontmatterLoose(text));
      }),
      { numRuns: 300 },
    );
  });

  const base = ['vm: s.khost1.dev-linux-koda', 'session: s1', 'ai: claude', 'started: 2026-05-19T22:30:00Z', 'reason: a build'];
  const variants: [string, string][] = [
    ['CRLF line ends', `---\r\n${[...base, 'explicit: true', 'host: lap'].join('\r\n')}\r\n---\r\nbody\r\n`],
    ['a BOM and comments', `\uFEFF---\n# held by hand\n${[...base, 'explicit: true # yes'].join('\n')}\n---\n`],
    ['spaces after the delimiters', `--- \n${[...base, 'host: lap'].join('\n')}\n---  \n`],
    ['quoted keys and a flow list of claims', `---\n${[...base, '"explicit": true', "claims: [{id: a, pid: 12, host: lap, command: make, started: '2026-05-19T22:30:00Z'}]"].join('\n')}\n---\n`],
    ['a block scalar reason', `---\n${[...base.slice(0, 4), 'reason: |', '  two', '  lines', 'explicit: false'].join('\n')}\n---\n`],
    ['a body holding a --- line', `---\n${[...base, 'explicit: true'].join('\n')}\n---\nnotes\n---\nmore\n`],
  ];
  for (const [name, text] of variants) {
    it(`a hand-written frontmatter (${name}): the one reading agrees with the lenient reader`, () => {
      const { fields, lock, findings } = parseLockBuffer(Buffer.from(text), FILE);
      expect(findings.filter((f) => f.severity === 'error')).toEqual([]);
      expect(lock).not.toBeNull();
      expect(fields).toEqual(readFrontmatterLoose(text));
      const r = parseRecord(text, { kind: 'vm', vm: VM }, FILE, FILE);
      const loose = readFrontmatterLoose(text)!;
      expect(r.explicit).toBe(loose.explicit === true);
      expect(r.host).toBe(typeof loose.host === 'string' ? loose.host : undefined);
    });
  }

  it('a frontmatter with a duplicated field is refused, as it was (the lenient reader would have taken the last)', () => {
    const text = `---\n${[...base, 'explicit: false', 'explicit: true'].join('\n')}\n---\n`;
    expect(() => parseRecord(text, { kind: 'vm', vm: VM }, FILE, FILE)).toThrow(/cannot be read as a lock/);
  });
});
