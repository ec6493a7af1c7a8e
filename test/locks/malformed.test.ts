// A malformed object in the lock store still fails closed with the same message and status as before the
// lock store read through one long-lived `git cat-file --batch` (src/git/batch.ts): when that process
// finds anything odd (a tree missing or not parsing, git dying on a corrupt object), git's one-shot
// commands read it again, and their words are what the error carries. The expected texts are what the
// build before that change printed for these very cases (ids and paths written as SHA, STORE, OBJ).
import { beforeAll, describe, expect, it } from 'vitest';
import { chmodSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { deflateSync } from 'node:zlib';
import { ACTIVE, REF, VM, cliInProcess, ensureBuilt, g, offhost, sessionEnv, tempRepo, userStoreOf } from './lifecycle-helpers.js';

// Lock commands' decisions and writes, not the process boundary: the CLI runs in this process.
cliInProcess();

beforeAll(() => ensureBuilt());

const obj = (store: string, sha: string) => join(store, 'objects', sha.slice(0, 2), sha.slice(2));
function overwrite(store: string, sha: string, bytes: Buffer | string): void {
  chmodSync(obj(store, sha), 0o644);
  writeFileSync(obj(store, sha), bytes);
}

const TAIL = ' It is not read as empty (a holder could be hidden); nothing was changed. Run `offhost lock repair` to archive what can still be read and start a new tip (docs/LOCKS.md "Repair")';
const UNREADABLE = (detail: string) => `offhost lock: the lock store is broken: refs/offhost/locks in the user store STORE points at commit SHA, whose tree cannot be read (${detail}).${TAIL}`;

const cases: [string, (store: string, tip: string) => void, string][] = [
  ['a folder\'s tree object missing', (store, tip) => rmSync(obj(store, g(store, 'rev-parse', `${tip}:meta/context/notices/vm-active`).trim())), UNREADABLE('git ls-tree -r -z ... failed: error: Could not read SHA')],
  ['a tree that does not parse', (store, tip) => overwrite(store, g(store, 'rev-parse', `${tip}:meta`).trim(), deflateSync(Buffer.from('tree 5\0abcde'))), UNREADABLE('git ls-tree -r -z ... failed: fatal: too-short tree object')],
  [
    'a tree whose loose object is not zlib',
    (store, tip) => overwrite(store, g(store, 'rev-parse', `${tip}:meta/context/notices`).trim(), 'garbage\n'),
    UNREADABLE('git ls-tree -r -z ... failed: error: inflate: data stream error (incorrect header check) / error: unable to unpack SHA header / fatal: loose object SHA (stored in ./OBJ) is corrupt'),
  ],
  [
    "a lock file's loose object is not zlib",
    (store, tip) => overwrite(store, g(store, 'rev-parse', `${tip}:${ACTIVE}`).trim(), 'garbage\n'),
    `offhost lock: refs/offhost/locks:${ACTIVE}: the lock store is broken: the object of ${ACTIVE} in refs/offhost/locks in the user store STORE at TIP12 is missing (1 file(s)).${TAIL}`,
  ],
  ["the tip's root tree missing", (store, tip) => rmSync(obj(store, g(store, 'rev-parse', `${tip}^{tree}`).trim())), `offhost lock: the lock store is broken: the user store's refs/offhost/locks points at commit SHA, whose tree is missing (missing object).${TAIL}`],
  ["the tip's commit object is not zlib", (store, tip) => overwrite(store, tip, 'garbage\n'), `offhost lock: the lock store is broken: the user store's refs/offhost/locks points at SHA, an object this repository does not have (missing object).${TAIL}`],
];

describe('a malformed object: exit 230 and the words of before', () => {
  for (const [name, breakIt, expected] of cases) {
    it(name, async () => {
      const dir = tempRepo();
      expect((await offhost(['lock', 'acquire', VM, '--reason', 'live work'], { cwd: dir, env: sessionEnv('a') })).code).toBe(0);
      const store = userStoreOf(dir);
      const tip = g(store, 'rev-parse', REF).trim();
      breakIt(store, tip);
      const norm = (s: string) =>
        s
          .trim()
          .split(store)
          .join('STORE')
          .split(`at ${tip.slice(0, 12)} `)
          .join('at TIP12 ')
          .replace(/objects\/[0-9a-f]{2}\/[0-9a-f]{38}/g, 'OBJ')
          .replace(/[0-9a-f]{40}/g, 'SHA');
      for (const [args, env] of [
        [['lock', 'status'], {}],
        [['lock', 'release', VM], sessionEnv('a')],
        [['lock', 'acquire', 's.khost1.dev-linux-other', '--reason', 'y'], sessionEnv('b')],
      ] as const) {
        const r = await offhost([...args], { cwd: dir, env });
        expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(230);
        expect(norm(r.stderr), args.join(' ')).toBe(expected);
      }
    }, 120_000);
  }
});
