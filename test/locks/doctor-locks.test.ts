// `offhost doctor`'s locks line (src/locks/sharing-check.ts): says when a clone's locks are not shared
// with the other clones and machines that reach the same VMs. Real repositories, the built CLI.
import { beforeAll, describe, expect, it } from 'vitest';
import { mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { cliInProcess, ensureBuilt, g, offhost, sessionEnv, tempRepo, VM, bareWithClones } from './lifecycle-helpers.js';

// Lock commands' decisions and writes, not the process boundary: the CLI runs in this process.
cliInProcess();

beforeAll(() => ensureBuilt());

const locksLine = (out: string) => out.split('\n').find((l) => /^\S+\s+locks\s/.test(l)) ?? '';

describe('doctor: where the locks are shared', () => {
  it('a clone with no commit: FIX; a clone with one: a note (this machine only); shared through the remote: ok', async () => {
    const empty = join(dirname(tempRepo('x')), 'empty');
    mkdirSync(empty);
    g(empty, 'init', '-q', '-b', 'main');
    expect(locksLine((await offhost(['doctor'], { cwd: empty })).stdout)).toMatch(/^FIX\s+locks\s+locks: this clone's own/);
    expect(locksLine((await offhost(['doctor'], { cwd: tempRepo() })).stdout)).toMatch(/^note\s+locks\s+locks: shared by every clone and worktree of this repository on this machine/);
    const { clones } = bareWithClones(2);
    expect((await offhost(['lock', 'acquire', VM, '--reason', 'r', '--push'], { cwd: clones[0]!, env: sessionEnv('a') })).code).toBe(0);
    expect(locksLine((await offhost(['doctor'], { cwd: clones[0]! })).stdout)).toMatch(/^ok\s+locks\s+locks: shared through the remote origin/);
  }, 240_000);
});
