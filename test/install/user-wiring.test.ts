// The record of per-user installs as a unit (src/install/user-wiring.ts): who still uses a shared thing, the
// record after an uninstall, and the records offhost refuses to read.
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ledgerWithout, readLedger, usersOf, type Ledger } from '../../src/install/user-wiring.js';

const S = '/h/.local/share/offhost/shims';
const C = '/h/.codex/hooks.json';
const ledger: Ledger = {
  version: 1,
  wiring: [
    { kind: 'shims', path: S, repositories: ['/r/a', '/r/b', '/r/gone'] },
    { kind: 'agent-settings', agent: 'codex', path: C, repositories: ['/r/b'] },
  ],
};
const exists = (p: string) => p !== '/r/gone';

describe('usersOf', () => {
  it.each([
    ['/r/a', 'shims', S, { recorded: true, others: ['/r/b'], gone: ['/r/gone'] }],
    ['/r/b', 'agent-settings', C, { recorded: true, others: [], gone: [] }],
    ['/r/a', 'agent-settings', C, { recorded: false, others: ['/r/b'], gone: [] }],
    ['/r/c', 'shims', '/elsewhere', { recorded: false, others: [], gone: [] }],
  ] as const)('%s, %s %s', (repo, kind, path, want) => {
    expect(usersOf(ledger, kind, path, repo, exists)).toEqual(want);
  });
});

describe('ledgerWithout', () => {
  it('takes the repository off every list and drops the repositories that are gone', () => {
    expect(ledgerWithout(ledger, '/r/a', [], exists).wiring).toEqual([
      { kind: 'shims', path: S, repositories: ['/r/b'] },
      { kind: 'agent-settings', agent: 'codex', path: C, repositories: ['/r/b'] },
    ]);
  });
  it('drops the entry of what was removed, whoever was on it', () => {
    expect(ledgerWithout(ledger, '/r/a', [{ kind: 'shims', path: S }], exists).wiring).toEqual([{ kind: 'agent-settings', agent: 'codex', path: C, repositories: ['/r/b'] }]);
  });
});

describe('readLedger', () => {
  const dir = mkdtempSync(join(tmpdir(), 'offhost-ledger-'));
  const env = { OFFHOST_STATE_DIR: dir };
  it('no record: an empty one', () => {
    expect(readLedger({ OFFHOST_STATE_DIR: join(dir, 'none') })).toEqual({ version: 1, wiring: [] });
  });
  it.each([
    ['not JSON', '{ "version": 1, ', /installs\.json: cannot be read as offhost's record/],
    ['another version', '{ "version": 2, "wiring": [] }', /is not offhost's record/],
    ['an unknown kind', '{ "version": 1, "wiring": [{ "kind": "x", "path": "/p", "repositories": [] }] }', /is not offhost's record/],
    ['a repository that is not a string', '{ "version": 1, "wiring": [{ "kind": "shims", "path": "/p", "repositories": [1] }] }', /is not offhost's record/],
  ])('refuses %s, naming the file', (_what, text, error) => {
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'installs.json'), text);
    expect(() => readLedger(env)).toThrow(error);
  });
});
