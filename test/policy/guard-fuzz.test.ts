// The guard on random and mutated command lines: it always answers (never throws), the answer is
// well-formed, it never falls back to an internal error, and nothing that mutates a heavy line by adding
// only data around it (echo, comments) turns a reroute into an allow.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { loadGuard } from '../../src/config/load-guard.js';
import { withRunRewrite } from '../../src/adapters/run-rewrite.js';
import type { FileAccess, FileRead } from '../../src/shell/commands.js';

const HOME = '/home/koder';
const ROOT = `${HOME}/dev/koder`;
const KODA = `${ROOT}/engines/lang/koda`;
const guard = loadGuard({ cwd: ROOT, env: { HOME, PATH: '/usr/bin:/bin', XDG_CONFIG_HOME: '/nonexistent' }, role: 'laptop' });

const corpus: string[] = [];
for (const g of ['true-positives', 'false-positives', 'bypasses', 'edge-cases']) {
  for (const e of parseYaml(readFileSync(`fixtures/corpus/${g}.yaml`, 'utf8')) as { line: string }[]) {
    if (e.line.length < 400) corpus.push(e.line);
  }
}

const shellish = fc.constantFrom(
  ' ', ';', '&&', '||', '|', '&', '(', ')', '{', '}', '$(', '`', '"', "'", '\\', '\n', '<<EOF\n', '\nEOF\n', '$x', '${x:-y}',
  'make', 'build-safe', 'cd ', 'sudo ', 'bash -c ', 'eval ', 'env ', 'xargs ', '#', '~', '*', '=', 'if ', 'then ', 'fi', 'for ', 'do ', 'done',
);

function wellFormed(line: string, cwd: string) {
  // As the doors answer it: the guard's decision and route, with the rewrite a door adds.
  const v = withRunRewrite(guard.classify(line, { cwd }), line);
  expect(['allow', 'deny', 'reroute']).toContain(v.decision);
  expect(typeof v.reason).toBe('string');
  expect(v.rule).not.toBe('internal-error');
  if (v.decision === 'reroute') {
    expect(v.route).not.toBeNull();
    expect(v.rewrite).toContain(' run -- ');
  } else {
    expect(v.route).toBeNull();
    expect(v.rewrite).toBeNull();
  }
  return v;
}

describe('guard fuzz', () => {
  it('answers every random shell-ish line with a well-formed verdict', () => {
    fc.assert(
      fc.property(fc.array(shellish, { maxLength: 40 }), fc.constantFrom(ROOT, KODA), (tokens, cwd) => {
        wellFormed(tokens.join(''), cwd);
      }),
      { numRuns: 3000, seed: 20261129 },
    );
  });

  it('answers every mutation of a corpus line (insert, delete, duplicate a character)', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...corpus),
        fc.nat(),
        fc.constantFrom('insert', 'delete', 'duplicate'),
        fc.constantFrom(...' ;&|()${}`"\'\\\n#~*=<>!'.split('')),
        (line, at, op, ch) => {
          const i = line.length ? at % line.length : 0;
          const mutated =
            op === 'insert' ? line.slice(0, i) + ch + line.slice(i) : op === 'delete' ? line.slice(0, i) + line.slice(i + 1) : line.slice(0, i) + line[i] + line.slice(i);
          wellFormed(mutated, KODA);
        },
      ),
      { numRuns: 3000, seed: 7 },
    );
  });

  it('data added around a heavy command never turns its reroute into an allow', () => {
    const heavy = ['make build-safe', 'emulator -avd Pixel_7', 'npx playwright test', 'lb build'];
    fc.assert(
      fc.property(
        fc.constantFrom(...heavy),
        fc.constantFrom('echo "make build-safe"', 'git commit -m "emulator -avd x"', "grep -rn 'qemu-system' .", '# a comment', 'true', 'ls -la'),
        fc.constantFrom('; ', ' && ', ' || ', '\n'),
        fc.boolean(),
        (cmd, data, sep, before) => {
          // A comment runs to the end of its line: put a newline after it.
          const s = data.startsWith('#') && before ? '\n' : sep;
          const line = before ? `${data}${s}${cmd}` : `${cmd}${s}${data}`;
          const v = wellFormed(line, KODA);
          expect(v.decision, line).not.toBe('allow');
        },
      ),
      { numRuns: 500, seed: 11 },
    );
  });

  it('with file access: random scripts, package.json files and Makefiles behind the line never break it', () => {
    // Every file the walker asks for is a random text (or missing, binary, a FIFO); directories list random names.
    const content = fc.oneof(
      fc.array(shellish, { maxLength: 30 }).map((t) => ({ kind: 'text' as const, text: t.join('') })),
      fc.array(shellish, { maxLength: 20 }).map((t) => ({ kind: 'text' as const, text: `{"scripts":{"e2e":${JSON.stringify(t.join(''))},"test":"npm run e2e"},"workspaces":["*"]}` })),
      fc.array(shellish, { maxLength: 20 }).map((t) => ({ kind: 'text' as const, text: `all: e2e\ne2e: all\n\t${t.join('').replace(/\n/g, ' ')}\n` })),
      fc.constantFrom<FileRead>({ kind: 'missing' }, { kind: 'binary' }, { kind: 'unreadable', why: 'not a regular file' }),
    );
    const runners = fc.constantFrom('bash run.sh', './run.sh', '. ./env.sh', 'python3 t.py', 'npm run e2e', 'pnpm -r e2e', 'make', 'make e2e -C sub', 'yarn e2e', 'npm test -ws');
    fc.assert(
      fc.property(runners, fc.array(content, { minLength: 1, maxLength: 6 }), fc.array(shellish, { maxLength: 10 }), (runner, texts, extra) => {
        let n = 0;
        const files: FileAccess = { read: () => texts[n++ % texts.length]!, list: () => ['a', 'b'] };
        const line = `${runner}${extra.length ? ` ; ${extra.join('')}` : ''}`;
        const v = guard.classify(line, { cwd: KODA, files });
        expect(['allow', 'deny', 'reroute']).toContain(v.decision);
        expect(v.rule).not.toBe('internal-error');
      }),
      { numRuns: 1500, seed: 29 },
    );
  });
});
