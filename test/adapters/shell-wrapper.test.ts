import { describe, expect, it } from 'vitest';
import { planShell, replaceAt } from '../../src/adapters/shell-wrapper.js';

describe('planShell', () => {
  it.each([
    [['-c', 'make'], 'make', 1],
    [['-lc', 'make'], 'make', 1],
    [['-ic', 'make'], 'make', 1],
    [['-ec', 'make', 'name', 'a1'], 'make', 1],
    [['-xec', 'make'], 'make', 1],
    [['-l', '-c', 'make'], 'make', 2],
    [['--login', '--noprofile', '-c', 'make'], 'make', 3],
    [['-o', 'pipefail', '-c', 'make'], 'make', 3],
    [['-oc', 'pipefail', 'make'], 'make', 2],
    [['+o', 'history', '-c', 'make'], 'make', 3],
    [['--rcfile', '/x', '-c', 'make'], 'make', 3],
    [['-c', '--', 'x'], 'x', 2],
  ])('%j -> command', (args, command, index) => {
    expect(planShell(args, false)).toEqual({ kind: 'command', command, commandIndex: index, interactive: args.join(' ').includes('i') && args[0] === '-ic' });
  });

  it('script files, stdin and interactive use', () => {
    expect(planShell(['build.sh', 'a'], false)).toEqual({ kind: 'script', file: 'build.sh', fileIndex: 0 });
    expect(planShell(['-e', 'build.sh'], true)).toEqual({ kind: 'script', file: 'build.sh', fileIndex: 1 });
    expect(planShell(['--', '-weird.sh'], false)).toEqual({ kind: 'script', file: '-weird.sh', fileIndex: 1 });
    expect(planShell([], false)).toEqual({ kind: 'stdin' });
    expect(planShell(['-s', 'arg'], false)).toEqual({ kind: 'stdin' });
    expect(planShell([], true)).toEqual({ kind: 'interactive' });
    expect(planShell(['-i'], true)).toEqual({ kind: 'interactive' });
    expect(planShell(['-i'], false)).toEqual({ kind: 'stdin' });
    expect(planShell(['-s'], false)).toEqual({ kind: 'stdin' });
    expect(planShell(['--version'], false)).toMatchObject({ kind: 'passthrough' });
    expect(planShell(['-l'], true)).toEqual({ kind: 'interactive' });
    expect(planShell(['-c'], false)).toMatchObject({ kind: 'passthrough' });
  });

  it('replaceAt swaps the command string only', () => {
    expect(replaceAt(['-lc', 'make', '$0', 'x'], 1, 'ssh h')).toEqual(['-lc', 'ssh h', '$0', 'x']);
  });
});
