// The exec-time judge through symbolic links (issue 21): a program the shim reaches under another name
// (`~/bin/flutter -> make`, a PATH directory of renamed programs) is judged as what it is too, and the
// stricter verdict stands; a link to a program neither the registry nor a rule knows changes nothing. Real files, the built
// executable, a real directory of links first on PATH.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BIN, type Tree, laptopEnv, makeTree } from './tree.js';

let t: Tree;
let links: string;
beforeAll(() => {
  t = makeTree('plain');
  links = join(t.base, 'renamed');
  mkdirSync(links);
  symlinkSync(join(t.localBin, 'make'), join(links, 'flutter')); // flutter -> the make stand-in
  writeFileSync(join(t.base, 'plain-tool'), '#!/bin/sh\n', { mode: 0o755 });
  symlinkSync(join(t.base, 'plain-tool'), join(links, 'rg'));
});
afterAll(() => t.cleanup());

function judge(prog: string, args: string[], cwd: string, pathFront: string[]) {
  const env = laptopEnv(t);
  env.PATH = [...pathFront, env.PATH].join(':');
  return spawnSync(process.execPath, [BIN, 'shim', 'judge', prog, '--', ...args], { cwd, env, encoding: 'utf8', timeout: 60_000 });
}

describe('shim judge: programs reached through symbolic links', () => {
  it('a link named flutter that is make is judged as make too: build-safe in the engine reroutes', () => {
    const r = judge('flutter', ['build-safe'], t.koda, [links]);
    expect(r.status, r.stderr).toBe(3);
    expect(r.stdout).toBe('make build-safe');
  });
  it('the same start without the link is flutter, which build-safe does not make heavy', () => {
    const r = judge('flutter', ['build-safe'], t.koda, []);
    expect(r.status, r.stderr).toBe(0);
  });
  it('a light program behind the link stays light (the name is judged as well: never lighter)', () => {
    expect(judge('rg', ['make', 'build-safe'], t.koda, [links]).status).toBe(0);
    expect(judge('flutter', ['clean'], t.koda, [links]).status).toBe(0);
  });
});
