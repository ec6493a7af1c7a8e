// A tiny hand-written classify for the adapters' unit tests (the real guard is used end to end).
import type { Verdict } from '../../src/types.js';
import type { Classify } from '../../src/adapters/common.js';

export const REWRITE = "offhost run -- 'make build-safe'";

export const calls: { line: string; cwd?: string }[] = [];

export const fakeClassify: Classify = (line, at) => {
  calls.push({ line, cwd: at?.cwd });
  const base = { route: null, rewrite: null, commands: [] };
  if (line.includes('explode')) throw new Error('kaboom');
  if (/make build-safe/.test(line)) {
    return {
      decision: 'reroute',
      rule: 'koda-make',
      reason: 'the Koda self-hosting build is heavy',
      route: { name: 'koda', vm: 's.khost1.dev-linux-koda', cwd: at?.cwd ?? '/', command: 'ssh khost1 -- true' },
      rewrite: REWRITE,
      commands: [],
    } satisfies Verdict;
  }
  if (/qemu-system/.test(line)) {
    return { ...base, decision: 'deny', rule: 'qemu-windows', reason: 'migrate the VM to s.khost1.dev-win10' } satisfies Verdict;
  }
  if (line.includes('((')) return { ...base, decision: 'deny', rule: 'parse-error', reason: 'unexpected end of input at line 1, column 3' };
  return { ...base, decision: 'allow', rule: null, reason: 'no rule matched' } satisfies Verdict;
};

export const at = (_cwd: string): Classify => fakeClassify;
