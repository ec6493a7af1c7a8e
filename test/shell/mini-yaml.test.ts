// src/shell/mini-yaml.ts against the real YAML parser (the `yaml` package): what it reads, it reads the
// same; what it cannot read exactly, it refuses (undefined), never reads otherwise.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { parse, stringify } from 'yaml';
import { readMiniYaml } from '../../src/shell/mini-yaml.js';

const TASKFILE = `version: '3'

vars:
  GOAL: build-safe

includes:
  web: ./apps/web
  docs: { taskfile: ./docs/Taskfile.yml, dir: ./docs }

tasks:
  default:
    deps: [lint]
  lint: shellcheck scripts/*.sh   # the short form
  koda:
    dir: engines/lang/koda
    cmds:
      - make {{.GOAL}}
      - cmd: 'echo "built: ok"'
      - task: notes
      - defer: echo cleanup
  notes:
    cmds:
      - |
        echo one
        echo two
      - >
        echo folded
        line
  quoted: "make -C engines/lang/koda build-safe"
  list: ['echo a', "echo b"]
`;

describe('mini-yaml', () => {
  it('reads a Taskfile as the yaml package does', () => {
    expect(readMiniYaml(TASKFILE)).toEqual(parse(TASKFILE));
  });

  it.each([
    ['an anchor and an alias', 'a: &x 1\nb: *x\n'],
    ['a tag', 'a: !!str 1\n'],
    ['two documents', 'a: 1\n---\nb: 2\n'],
    ['tabs', 'a:\n\tb: 1\n'],
    ['a merge key', 'a: {x: 1}\nb:\n  <<: {y: 2}\n'],
    ['bad indentation', 'a:\n    b: 1\n  c: 2\n'],
    ['an unclosed quote', 'a: "b\n'],
    ['an unclosed flow sequence', 'a: [b, c\n'],
  ])('refuses %s', (_what, text) => {
    expect(readMiniYaml(text)).toBeUndefined();
  });

  // Values a task file holds: mappings and sequences of command-like strings.
  const word = fc.stringMatching(/^[a-z][a-z0-9_-]{0,8}$/);
  const command = fc.oneof(
    fc.array(fc.oneof(word, fc.constantFrom('make', 'build-safe', '-C', 'a:b', "it's", '"q"', '#x', 'a #b', '{{.X}}', '--x=1', 'x: y', '- z', '[a]', '{b}', '&&', '|', '>')), { minLength: 1, maxLength: 6 }).map((ws) => ws.join(' ')),
    fc.constantFrom('echo one\necho two', 'yes', 'no', 'true', '123', '1.5', 'null', '~', ''),
  );
  const value: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
    v: fc.oneof({ depthSize: 'small' }, command, fc.array(tie('v'), { minLength: 1, maxLength: 4 }), fc.dictionary(word, tie('v'), { minKeys: 1, maxKeys: 4 })),
  })).v;

  it('reads every document the yaml package writes either as it does, or not at all', () => {
    let read = 0;
    fc.assert(
      fc.property(fc.dictionary(word, value, { minKeys: 1, maxKeys: 5 }), fc.constantFrom('BLOCK', 'FLOW', 'PLAIN', 'QUOTE_DOUBLE', 'QUOTE_SINGLE') as fc.Arbitrary<'BLOCK' | 'FLOW' | 'PLAIN' | 'QUOTE_DOUBLE' | 'QUOTE_SINGLE'>, (doc, style) => {
        const text = stringify(doc, style === 'FLOW' ? { collectionStyle: 'flow' } : style === 'BLOCK' ? {} : { defaultStringType: style });
        const mine = readMiniYaml(text);
        if (mine === undefined) return;
        read++;
        expect(mine, text).toEqual(parse(text));
      }),
      { numRuns: Number(process.env.MINI_YAML_RUNS ?? 1500) },
    );
    // The subset is the common case, not a corner: most documents are read.
    expect(read).toBeGreaterThan(750);
  });
});

describe('mini-yaml on any text', () => {
  it('never throws: a document is read or refused', () => {
    const piece = fc.constantFrom('tasks:', '  a:', '    cmds:', '      - make', '- ', '-', ': ', '"', "'", '|', '>-', '[', ']', '{', '}', ',', '#', '&a', '*a', '!t', '---', '\t', '  ', '\n', 'x: y', 'k: "v\\u00e9"', "k: 'it''s'", '? ', 'a: b: c', '- - x', '[a, [b]]', '{a: {b: c}}', '"a\\"b"', "'a'b'", '...', '  - x', '\r\n', 'k: |\n  l1\n  l2', 'k: >\n  f1\n  f2', '- cmd: x', '0x1F', '1e3', '.inf', 'True', '@x', '%YAML 1.2');
    fc.assert(
      fc.property(fc.array(fc.oneof(piece, fc.string({ maxLength: 6 })), { maxLength: 40 }), (parts) => {
        const text = parts.join('');
        const r = readMiniYaml(text);
        if (r === undefined) return;
        // What it reads, the yaml package reads the same (or refuses too, which only mini-yaml may not do).
        let real: unknown;
        try {
          real = parse(text);
        } catch {
          throw new Error(`read what yaml refuses: ${JSON.stringify(text)}`);
        }
        expect(r, JSON.stringify(text)).toEqual(real);
      }),
      { numRuns: Number(process.env.MINI_YAML_RUNS ?? 3000) },
    );
  });
});

describe('mini-yaml limits', () => {
  it('refuses nesting deeper than a task file has, block or flow, instead of running out of stack', () => {
    const block = `tasks:\n${Array.from({ length: 3000 }, (_, i) => `${'  '.repeat(i + 1)}a${i}:\n`).join('')}`;
    expect(readMiniYaml(block)).toBeUndefined();
    expect(readMiniYaml(`tasks: ${'['.repeat(20_000)}${']'.repeat(20_000)}\n`)).toBeUndefined();
    // Ordinary depth still reads.
    expect(readMiniYaml('a:\n  b:\n    c: [1, [2, [3]]]\n')).toEqual({ a: { b: { c: [1, [2, [3]]] } } });
  });
});
