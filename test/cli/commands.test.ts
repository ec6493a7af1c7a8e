// The CLI as units: the command table, main()'s dispatch and its error contract, the rewrite a door adds.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { COMMANDS } from '../../src/cli/commands-table.js';
import { commandEntry, main } from '../../src/cli/main.js';
import { runCommand } from '../../src/cli/run-command.js';
import { withRunRewrite } from '../../src/adapters/run-rewrite.js';
import { parseOptions, oneCommandLine } from '../../src/cli/common.js';
import type { Io } from '../../src/io.js';
import { BackendMissingError, ConfigError, EXIT, UsageError } from '../../src/errors.js';
import type { RouteRef } from '../../src/types.js';

function io(): Io & { out: string[]; err: string[] } {
  const out: string[] = [];
  const err: string[] = [];
  return {
    argv: [],
    env: { HOME: '/home/koder', OFFHOST_ROLE: 'laptop', OFFHOST_AUDIT_LOG: '/dev/null' },
    cwd: '/tmp',
    stdout: (s) => void out.push(s),
    stderr: (s) => void err.push(s),
    readStdin: async () => '',
    clock: { now: () => new Date('2026-05-19T22:30:00Z') },
    out,
    err,
  };
}

describe('the command table (src/cli/commands-table.ts)', () => {
  it('every entry loads a module with run(args, io)', async () => {
    for (const [name, entry] of Object.entries(COMMANDS)) {
      const mod = await entry.load();
      expect(typeof mod.run, name).toBe('function');
    }
  });
  it('the hot commands are the ones run before every agent or shell command; the hook and the shell door start in their own bundles', () => {
    expect(Object.keys(COMMANDS).filter((n) => COMMANDS[n]!.hot)).toEqual(['check', 'explain', 'shim']);
    const own = Object.keys(COMMANDS).filter((n) => COMMANDS[n]!.ownBundle);
    expect(own).toEqual(['hook', 'shell']);
    // The loader knows them by name (it reads no table): the same list.
    const loader = readFileSync(join(import.meta.dirname, '..', '..', 'src', 'cli', 'loader.cjs'), 'utf8');
    expect([...loader.matchAll(/OWN_BUNDLES = new Set\(\[([^\]]*)\]\)/g)].map((m) => m[1]!.split(',').map((x) => x.trim().replace(/'/g, '')))).toEqual([own]);
  });
  it('names are lowercase words; summaries are one line', () => {
    for (const [name, entry] of Object.entries(COMMANDS)) {
      expect(name).toMatch(/^[a-z][a-z-]*$/);
      expect(entry.summary).toMatch(/^[^\n]{10,100}$/);
    }
  });
  it('commandEntry: only own names (no prototype keys)', () => {
    expect(commandEntry('check')).toBe(COMMANDS.check);
    for (const name of ['constructor', 'toString', '__proto__', 'hasOwnProperty', undefined]) expect(commandEntry(name)).toBeUndefined();
  });
});

describe('main()', () => {
  it('--help lists every command of the table, in its order, on stdout (exit 0)', async () => {
    const t = io();
    expect(await main(['--help'], t)).toBe(EXIT.ok);
    const listed = [...t.out.join('').matchAll(/^ {2}([a-z-]+) {2,}/gm)].map((m) => m[1]);
    expect(listed).toEqual(Object.keys(COMMANDS));
  });
  it('no command: the usage on stderr, exit 2', async () => {
    const t = io();
    expect(await main([], t)).toBe(EXIT.error);
    expect(t.err.join('')).toMatch(/^Usage: offhost <command>/);
    expect(t.out).toEqual([]);
  });
  it('an unknown command (also a prototype key): named, usage, exit 2', async () => {
    for (const name of ['frobnicate', 'constructor']) {
      const t = io();
      expect(await main([name], t)).toBe(EXIT.error);
      expect(t.err.join('')).toContain(`offhost: unknown command '${name}'`);
    }
  });
  it('--version prints package.json version', async () => {
    const t = io();
    expect(await main(['--version'], t)).toBe(EXIT.ok);
    expect(t.out.join('')).toBe(`${JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')).version}\n`);
  });
  it('dispatches to the command with the remaining arguments', async () => {
    const t = io();
    expect(await main(['check', '--json', 'ls -la'], t)).toBe(EXIT.ok);
    expect(JSON.parse(t.out.join(''))).toMatchObject({ decision: 'allow', rewrite: null });
  });
});

describe('runCommand: the error contract', () => {
  const failing = (err: unknown) => async () => ({ run: async () => Promise.reject(err) });
  it.each([
    ['a UsageError', new UsageError('bad flag'), EXIT.error, 'offhost x: bad flag\n'],
    ['a ConfigError with its file and line', new ConfigError('broken', '/p/c.yaml', 3), EXIT.error, 'offhost x: /p/c.yaml:3: broken\n'],
    ['a missing backend (69)', new BackendMissingError('no incus', 'install it'), EXIT.backendMissing, 'offhost x: no incus\n'],
  ] as const)('%s: its message and exit status', async (_what, err, status, text) => {
    const t = io();
    expect(await runCommand('x', failing(err), [], t)).toBe(status);
    expect(t.err.join('')).toBe(text);
  });
  it('an error from another bundle copy of the classes is recognised by its brand', async () => {
    const foreign = Object.assign(new Error('from the other bundle'), { exitCode: 2, [Symbol.for('offhost.error')]: true });
    const t = io();
    expect(await runCommand('x', failing(foreign), [], t)).toBe(2);
    expect(t.err.join('')).toBe('offhost x: from the other bundle\n');
  });
  it('anything else is a bug: its stack is printed, exit 2', async () => {
    const t = io();
    expect(await runCommand('x', failing(new TypeError('oops')), [], t)).toBe(EXIT.error);
    expect(t.err.join('')).toMatch(/^offhost x: TypeError: oops\n\s+at /);
  });
  it('a module that cannot load is the same error', async () => {
    const t = io();
    expect(await runCommand('x', () => Promise.reject(new UsageError('cannot load')), [], t)).toBe(EXIT.error);
  });
});

describe('withRunRewrite: the rewrite a door adds to the guard verdict', () => {
  const route: RouteRef = { name: 'koda', vm: 's.khost1.dev-linux-koda', cwd: '/k', command: 'ssh khost1 -- …' };
  const base = { rule: 'r', reason: 'why', commands: [] };
  it.each([
    ['allow', { ...base, decision: 'allow' as const, route: null }, null],
    ['deny', { ...base, decision: 'deny' as const, route: null }, null],
    ['reroute', { ...base, decision: 'reroute' as const, route }, "offhost run -- 'make build-safe'"],
  ])('%s', (_what, v, rewrite) => {
    const out = withRunRewrite(v, 'make build-safe');
    expect(out).toEqual({ ...v, rewrite });
  });
});

describe('parseOptions and oneCommandLine (check, explain)', () => {
  const USAGE = 'Usage: offhost check …';
  it('an unknown option is a UsageError of one line, with a suggestion when one is close', () => {
    expect(() => parseOptions(['--nope'], { json: { type: 'boolean' } }, USAGE)).toThrow(UsageError);
    expect(() => parseOptions(['--nope'], { json: { type: 'boolean' } }, USAGE)).toThrow(/^unknown option '--nope'$/);
    expect(() => parseOptions(['--jsn'], { json: { type: 'boolean' } }, USAGE)).toThrow(/^unknown option '--jsn' \(did you mean --json\?\)$/);
  });
  it.each([
    [['ls -la'], 'ls -la'],
    [[], /missing COMMAND/],
    // Several words are an argv (as `offhost run` takes them): judged as the line quoting each once.
    [['make', 'build'], 'make build'],
    [['printf', '%s|', 'a b', "it's", '$HOME', ''], `printf '%s|' 'a b' "it's" '$HOME' ''`],
  ] as const)('%j', (positionals, expected) => {
    if (typeof expected === 'string') expect(oneCommandLine([...positionals], USAGE)).toBe(expected);
    else expect(() => oneCommandLine([...positionals], USAGE)).toThrow(expected);
  });
});

describe('offhost run: numeric options are checked before anything runs', () => {
  it.each([
    ['--wait=abc', /--wait takes a number, not 'abc'/],
    ['--poll=0', /--poll takes a number above 0/],
    ['--ttl=1.5', /--ttl takes a whole number/],
    ['--timeout=-3', /--timeout takes a number above 0/],
    ['--grace=x', /--grace takes a number/],
  ])('%s is a usage error (config-error, 247) and runs nothing', async (opt, message) => {
    const { run } = await import('../../src/cli/commands/run.js');
    const o = io();
    // A line that would write a file if it ran here (allowed, outside any engine).
    const marker = `/tmp/offhost-run-numeric-${process.pid}-${Math.random().toString(36).slice(2)}`;
    const code = await run([opt, '--', `touch ${marker}`], o);
    expect(code).toBe(247);
    expect(o.err.join('')).toMatch(message);
    let exists = true;
    try { readFileSync(marker); } catch { exists = false; }
    expect(exists).toBe(false);
  });
});
