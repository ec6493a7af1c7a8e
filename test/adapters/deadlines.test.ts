// Every hook deadline ends before the timeout `offhost init` writes for the agent, whatever the environment asks.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { AGENTS, HOOK_TIMEOUT_MS, hookDeadlines } from '../../src/adapters/common.js';

describe('hookDeadlines', () => {
  it('stdin + budget stay below the agent timeout for any OFFHOST_HOOK_STDIN_MS / OFFHOST_HOOK_BUDGET_MS', () => {
    fc.assert(
      fc.property(fc.constantFrom(...AGENTS), fc.option(fc.integer({ min: -5, max: 10_000_000 })), fc.option(fc.integer({ min: -5, max: 10_000_000 })), (agent, a, b) => {
        const env: NodeJS.ProcessEnv = {};
        if (a !== null) env.OFFHOST_HOOK_STDIN_MS = String(a);
        if (b !== null) env.OFFHOST_HOOK_BUDGET_MS = String(b);
        const d = hookDeadlines(agent, env);
        expect(d.stdinMs).toBeGreaterThan(0);
        expect(d.budgetMs).toBeGreaterThan(0);
        expect(d.stdinMs + d.budgetMs).toBeLessThan(HOOK_TIMEOUT_MS[agent]);
      }),
    );
  });
  it('the defaults are kept when nothing is set, and a capped value is named', () => {
    expect(hookDeadlines('claude-code', {})).toEqual({ stdinMs: 10_000, budgetMs: 5_000, capped: [] });
    expect(hookDeadlines('codex', { OFFHOST_HOOK_BUDGET_MS: '60000' }).capped).toEqual(['OFFHOST_HOOK_BUDGET_MS (capped at 14000)']);
  });
});
