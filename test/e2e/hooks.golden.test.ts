// Golden tests of each agent protocol: fixtures/hooks/<agent>/<case>.input.json is the exact stdin (with
// {{HOME}} standing for a temporary HOME holding ~/dev/koder/engines/lang/koda), <case>.output.json the exact
// exit status, stdout and stderr of `node dist/offhost.mjs hook <agent>` (fresh process per case).
// Regenerate after a deliberate change: UPDATE_GOLDEN=1 npx vitest run test/e2e/hooks.golden.test.ts
import { beforeAll, describe, expect, it } from 'vitest';
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type FakeHome, ROOT, fakeHome, hookEnv, requireBuild, runHook } from './hooks-helpers.js';

const AGENTS = ['claude-code', 'codex', 'gemini', 'cursor', 'copilot', 'windsurf', 'opencode'] as const;
const UPDATE = process.env.UPDATE_GOLDEN === '1';

interface Expected {
  exitCode: number | null;
  stdout: unknown;
  stderr: string;
}

let h: FakeHome;
beforeAll(() => {
  requireBuild();
  h = fakeHome();
});

// The temporary HOME and this checkout's path vary from run to run and machine to machine, and so does the
// length of an input holding the HOME: a message giving that length says {{INPUT_LENGTH}}.
const norm = (s: string, input?: string) => {
  const out = s.split(h.home).join('{{HOME}}').split(ROOT).join('{{ROOT}}');
  return input === undefined ? out : out.split(`input, ${input.length} characters)`).join('input, {{INPUT_LENGTH}} characters)');
};

for (const agent of AGENTS) {
  const dir = join(ROOT, 'fixtures', 'hooks', agent);
  const meta = JSON.parse(readFileSync(join(dir, 'cases.json'), 'utf8')) as Record<string, { args?: string[]; env?: Record<string, string> }>;
  const names = readdirSync(dir)
    .filter((f) => f.endsWith('.input.json'))
    .map((f) => f.slice(0, -'.input.json'.length))
    .sort();

  describe(`offhost hook ${agent}`, () => {
    it('every fixture is listed in cases.json', () => {
      expect(names.sort()).toEqual(Object.keys(meta).sort());
    });

    for (const name of names) {
      it(name, () => {
        const template = readFileSync(join(dir, `${name}.input.json`), 'utf8');
        const input = template.split('{{HOME}}').join(h.home);
        const length = template.includes('{{HOME}}') ? input : undefined;
        const m = meta[name] ?? {};
        const r = runHook(agent, input, hookEnv(h, m.env), m.args);
        const got: Expected = {
          exitCode: r.status,
          stdout: r.stdout === '' ? null : JSON.parse(norm(r.stdout, length)),
          stderr: norm(r.stderr, length),
        };
        const file = join(dir, `${name}.output.json`);
        if (UPDATE) writeFileSync(file, `${JSON.stringify(got, null, 2)}\n`);
        const want = JSON.parse(readFileSync(file, 'utf8')) as Expected;
        expect(got).toEqual(want);
        // Protocol invariants, whatever the rule texts say:
        if (name.startsWith('allow') && ['claude-code', 'codex', 'copilot', 'windsurf'].includes(agent)) expect(r.stdout).toBe('');
        // Each agent's blocking form for input it cannot trust: exit 2, or (Codex, Copilot, OpenCode's plugin) a deny on stdout.
        if (name.startsWith('broken') && ['claude-code', 'gemini', 'cursor', 'windsurf'].includes(agent)) expect(r.status).toBe(2);
        if (name.startsWith('broken') && ['codex', 'copilot', 'opencode'].includes(agent)) expect(r.stdout).toMatch(/"deny"/);
        if (name.startsWith('broken') || name.startsWith('deny') || name === 'nul-byte' || name === 'parse-error') {
          expect(r.stdout + r.stderr).toMatch(/refused/);
        }
      });
    }
  });
}
