// The shipped workflow and composite action: valid YAML, the right triggers, and a run script that bash
// accepts and that runs `offhost ci` with the event's base and head.
import { readFileSync, mkdtempSync, writeFileSync, chmodSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { ROOT } from '../scan/helpers.js';

const workflow = parse(readFileSync(join(ROOT, '.github/workflows/offhost.yml'), 'utf8'));
const action = parse(readFileSync(join(ROOT, 'action.yml'), 'utf8'));

describe('workflow', () => {
  it('runs on pull_request and merge_group with full history', () => {
    expect(Object.keys(workflow.on)).toEqual(['pull_request', 'merge_group']);
    const steps = workflow.jobs.policy.steps;
    expect(steps[0]).toMatchObject({ uses: 'actions/checkout@v4', with: { 'fetch-depth': 0 } });
    expect(steps[1]).toMatchObject({ uses: './', with: { format: 'github', 'sarif-file': 'offhost.sarif' } });
    expect(workflow.jobs.policy.permissions['security-events']).toBe('write');
  });
});

describe('composite action', () => {
  it('declares every input it uses', () => {
    expect(action.runs.using).toBe('composite');
    const text = readFileSync(join(ROOT, 'action.yml'), 'utf8');
    for (const m of text.matchAll(/inputs\.([a-z-]+)/g)) expect(Object.keys(action.inputs)).toContain(m[1]);
  });

  it('its run script passes bash -n and calls offhost ci with the event base/head', () => {
    const step = action.runs.steps.find((s: { id?: string }) => s.id === 'check');
    const script: string = step.run;
    expect(spawnSync('bash', ['-n'], { input: script }).status).toBe(0);
    // Run it with a stand-in offhost that prints its arguments.
    const dir = mkdtempSync(join(tmpdir(), 'offhost-action-'));
    const fake = join(dir, 'fake.mjs');
    writeFileSync(fake, 'console.log(JSON.stringify(process.argv.slice(2))); process.exit(1);\n');
    chmodSync(fake, 0o755);
    const out = join(dir, 'out');
    writeFileSync(out, '');
    const r = spawnSync('bash', ['-e', '-c', script], {
      encoding: 'utf8',
      cwd: dir,
      env: {
        PATH: process.env.PATH,
        GITHUB_OUTPUT: out,
        OFFHOST_BIN: fake,
        INPUT_BASE: '',
        INPUT_HEAD: '',
        INPUT_FORMAT: 'github',
        INPUT_SARIF: 'o.sarif',
        INPUT_ARGS: '--all-locks --skew 60',
        EVENT_BASE: 'abc123',
        EVENT_HEAD: 'def456',
      },
    });
    expect(r.status).toBe(1);
    expect(JSON.parse(r.stdout)).toEqual(['ci', '--base', 'abc123', '--head', 'def456', '--format', 'github', '--sarif', 'o.sarif', '--all-locks', '--skew', '60']);
    expect(readFileSync(out, 'utf8')).toBe('exit-code=1\n');
  });
});
