import { describe, expect, it } from 'vitest';
import { extract, detectKind } from '../../src/adapters/scan/index.js';
import type { Snippet } from '../../src/adapters/scan/snippet.js';

const md = () => true;
/** The file position of the first occurrence of `needle` in the snippet's text. */
function posOf(sn: Snippet, needle: string) {
  const i = sn.text.indexOf(needle);
  expect(i, `${needle} in ${JSON.stringify(sn.text)}`).toBeGreaterThanOrEqual(0);
  return sn.at(i);
}
/** The 1-based line/column of `needle` in the file text (nth occurrence). */
function filePos(text: string, needle: string, nth = 0) {
  let i = -1;
  for (let k = 0; k <= nth; k++) i = text.indexOf(needle, i + 1);
  const before = text.slice(0, i);
  return { line: before.split('\n').length, column: i - before.lastIndexOf('\n') };
}

describe('detectKind', () => {
  it.each([
    ['scripts/build.sh', undefined, 'shell'],
    ['tools/x.bash', undefined, 'shell'],
    ['bin/tool', '#!/usr/bin/env bash\nmake build\n', 'shell'],
    ['bin/tool2', '#!/bin/sh\n', 'shell'],
    ['bin/tool3', '#!/usr/bin/env python3\n', null],
    ['package.json', undefined, 'package-json'],
    ['web/package.json', undefined, 'package-json'],
    ['Makefile', undefined, 'makefile'],
    ['engines/lang/koda/GNUmakefile', undefined, 'makefile'],
    ['rules.mk', undefined, 'makefile'],
    ['.github/workflows/ci.yml', undefined, 'github-actions'],
    ['.github/actions/x/action.yml', undefined, 'github-actions'],
    ['.gitlab-ci.yml', undefined, 'gitlab-ci'],
    ['Dockerfile', undefined, 'dockerfile'],
    ['images/Dockerfile.dev', undefined, 'dockerfile'],
    ['images/app.Dockerfile', undefined, 'dockerfile'],
    ['Containerfile', undefined, 'dockerfile'],
    ['README.md', undefined, 'markdown'],
    ['src/main.ts', undefined, null],
  ])('%s', (path, text, kind) => {
    expect(detectKind(path, text, md)).toBe(kind);
  });
});

describe('shell scripts', () => {
  it('is one snippet, mapped 1:1, run from the repository root and from its own directory', () => {
    const text = '#!/bin/bash\nset -e\ncd engines/lang/koda && make build\n';
    const [sn] = extract('shell', 'scripts/build.sh', text);
    expect(sn!.cwd).toBe('');
    expect(sn!.alsoFrom).toEqual(['scripts']);
    expect(posOf(sn!, 'make build')).toEqual(filePos(text, 'make build'));
    const [top] = extract('shell', 'build.sh', text);
    expect(top!.alsoFrom).toBeUndefined();
  });

  it.each([
    ['cd "$(dirname "$0")/.."', 'cd "/r/scripts/.."'],
    ['cd "$(dirname -- "${BASH_SOURCE[0]}")"', 'cd "/r/scripts"'],
    ['cd `dirname $0`/..', 'cd /r/scripts/..'],
    ['D="$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" &> /dev/null && pwd)"', 'D="/r/scripts"'],
    ['D=$(cd "$(dirname "$0")/.." && pwd -P)', 'D=/r'],
    ['D="$(dirname "$(readlink -f "$0")")"', 'D="/r/scripts"'],
    ['D="$(realpath "$(dirname "$0")/..")"', 'D="/r"'],
    ['source "${BASH_SOURCE[0]%/*}/lib.sh"', 'source "/r/scripts/lib.sh"'],
    ['cd "${0%/*}"', 'cd "/r/scripts"'],
    ['echo "usage: $0 [-v]"', 'echo "usage: /r/scripts/b.sh [-v]"'],
    ["echo '$0 stays in single quotes'", "echo '$0 stays in single quotes'"],
    ['echo $10 $0x', 'echo $10 /r/scripts/b.shx'],
    ['cd "$(dirname "$SOMETHING")"', 'cd "$(dirname "$SOMETHING")"'],
  ])('resolves where the script is: %s', (line, want) => {
    const text = `#!/bin/bash\n${line}\nmake build\n`;
    const [sn] = extract('shell', 'scripts/b.sh', text, { root: '/r' });
    expect(sn!.text).toBe(`#!/bin/bash\n${want}\nmake build\n`);
    // positions after a rewritten piece still point into the file
    expect(posOf(sn!, 'make build')).toEqual(filePos(text, 'make build'));
  });
});

describe('package.json', () => {
  it('finds each script value with its line and column, escapes decoded', () => {
    const text = '{\n  "name": "x",\n  "scripts": {\n    "test": "vitest run",\n    "vm": "echo \\"hi\\" && make build-safe",\n    "nested": {"not": "a script"}\n  },\n  "other": {"scripts": {"x": "make build"}}\n}\n';
    const sns = extract('package-json', 'web/package.json', text);
    expect(sns.map((s) => s.text)).toEqual(['vitest run', 'echo "hi" && make build-safe']);
    expect(sns[1]!.where).toBe('script "vm"');
    expect(sns[1]!.cwd).toBe('web');
    expect(posOf(sns[1]!, 'make build-safe')).toEqual(filePos(text, 'make build-safe'));
  });
  it('ignores invalid JSON', () => {
    expect(extract('package-json', 'package.json', '{ "scripts": { "a": ')).toEqual([]);
  });
});

describe('Makefile', () => {
  const text = [
    'KODA := engines/lang/koda',
    'FLAGS = -j4',
    '.PHONY: all build',
    'all: build',
    'build:',
    '\t@echo building',
    '\t-$(MAKE) -C $(KODA) build $(FLAGS)',
    '\t+cd $(CURDIR)/x && \\',
    '\t  make build-safe',
    '\t@for f in *.c; do echo $$f; done',
    '\t$(CC) -o $@ $<',
    'quick: ; make kasm',
    'define HELP',
    '\tmake build',
    'endef',
    '',
  ].join('\n');
  const sns = extract('makefile', 'engines/Makefile', text);
  it('one snippet per logical recipe line, prefixes removed, variables expanded', () => {
    expect(sns.map((s) => s.text)).toEqual([
      'echo building',
      'make -C engines/lang/koda build -j4',
      'cd ./x && \\\n  make build-safe',
      'for f in *.c; do echo $f; done',
      'cc -o ${MAKE_AUTO} ${MAKE_AUTO}',
      'make kasm',
    ]);
    expect(sns.every((s) => s.cwd === 'engines')).toBe(true);
    expect(sns[1]!.where).toBe('recipe of build');
  });
  it('maps positions back to the file', () => {
    expect(posOf(sns[1]!, 'make')).toEqual(filePos(text, '$(MAKE)'));
    expect(posOf(sns[1]!, ' build')).toEqual(filePos(text, ' build $(FLAGS)'));
    expect(posOf(sns[2]!, 'make build-safe')).toEqual(filePos(text, 'make build-safe'));
    expect(posOf(sns[5]!, 'make kasm')).toEqual(filePos(text, 'make kasm'));
  });
});

describe('GitHub Actions', () => {
  const text = [
    'name: ci',
    'defaults:',
    '  run:',
    '    working-directory: web',
    'jobs:',
    '  build:',
    '    runs-on: [self-hosted, laptop]',
    '    steps:',
    '      - uses: actions/checkout@v4',
    '      - name: Build',
    '        run: |',
    '          echo "${{ matrix.x }}"',
    '          make build',
    '      - run: "make kasm"',
    '        working-directory: engines/lang/koda',
    '      - run: Write-Host hi',
    '        shell: pwsh',
    '      - run: >-',
    '          lb build',
    '          --verbose',
    '  win:',
    '    runs-on: windows-latest',
    '    steps:',
    '      - run: make build',
    '',
  ].join('\n');
  const sns = extract('github-actions', '.github/workflows/ci.yml', text);
  it('extracts POSIX run steps with cwd and runner labels', () => {
    expect(sns.map((s) => s.text)).toEqual(['echo "${GITHUB_EXPR}"\nmake build', 'make kasm', 'lb build --verbose']);
    expect(sns.map((s) => s.cwd)).toEqual(['web', 'engines/lang/koda', 'web']);
    expect(sns[0]!.runner).toEqual(['self-hosted', 'laptop']);
    expect(sns[0]!.where).toBe('job build, step "Build"');
  });
  it('maps block literals line by line', () => {
    expect(posOf(sns[0]!, 'make build')).toEqual(filePos(text, 'make build'));
    expect(posOf(sns[1]!, 'make kasm')).toEqual(filePos(text, 'make kasm'));
    expect(posOf(sns[2]!, 'lb').line).toBe(filePos(text, 'run: >-').line);
  });
  it('reads composite actions', () => {
    const a = 'name: x\nruns:\n  using: composite\n  steps:\n    - run: make build\n      shell: bash\n';
    const s = extract('github-actions', 'action.yml', a);
    expect(s.map((x) => x.text)).toEqual(['make build']);
    expect(posOf(s[0]!, 'make')).toEqual(filePos(a, 'make build'));
  });
  it('ignores broken YAML', () => {
    expect(extract('github-actions', '.github/workflows/x.yml', 'jobs: [\n')).toEqual([]);
  });
});

describe('GitLab CI', () => {
  const text = [
    'stages: [build]',
    'variables:',
    '  X: "1"',
    'default:',
    '  before_script:',
    '    - echo default',
    'build:',
    '  tags: [laptop]',
    '  script:',
    '    - cd engines/lang/koda',
    '    - make build',
    '    - |',
    '      emulator -avd Pixel',
    '  after_script: make kasm',
    '.tpl:',
    '  script:',
    '    - - lb build',
    '    - !reference [build, script]',
    '',
  ].join('\n');
  const sns = extract('gitlab-ci', '.gitlab-ci.yml', text);
  it('one snippet per section, items joined', () => {
    expect(sns.map((s) => [s.where, s.text])).toEqual([
      ['job default, before_script', 'echo default'],
      ['job build, script', 'cd engines/lang/koda\nmake build\nemulator -avd Pixel'],
      ['job build, after_script', 'make kasm'],
      ['job .tpl, script', 'lb build'],
    ]);
    expect(sns[1]!.runner).toEqual(['laptop']);
    expect(posOf(sns[1]!, 'make build')).toEqual(filePos(text, 'make build'));
    expect(posOf(sns[1]!, 'emulator')).toEqual(filePos(text, 'emulator'));
    expect(posOf(sns[3]!, 'lb build')).toEqual(filePos(text, 'lb build'));
  });
});

describe('Dockerfile', () => {
  const text = [
    '# syntax=docker/dockerfile:1',
    'FROM debian:13 AS build',
    'WORKDIR /src',
    'RUN apt-get update && \\',
    '    # a comment inside',
    '    apt-get install -y make',
    'WORKDIR engines/lang/koda',
    'RUN --mount=type=cache,target=/root/.cache make build',
    'RUN ["lb", "build", "--x y"]',
    'run <<EOF',
    'set -e',
    'emulator -avd Pixel',
    'EOF',
    'SHELL ["pwsh", "-c"]',
    'RUN make kasm',
    'FROM scratch',
    'SHELL ["/bin/sh", "-c"]',
    'RUN make build-safe',
    '',
  ].join('\n');
  const sns = extract('dockerfile', 'Dockerfile', text);
  it('extracts shell form, exec form and heredocs with WORKDIR', () => {
    expect(sns.map((s) => [s.cwd, s.text])).toEqual([
      ['/src', 'apt-get update && \\\n\\\n    apt-get install -y make'],
      ['/src/engines/lang/koda', 'make build'],
      ['/src/engines/lang/koda', "lb build '--x y'"],
      ['/src/engines/lang/koda', 'set -e\nemulator -avd Pixel'],
      ['/', 'make build-safe'],
    ]);
    expect(sns[0]!.cwdKind).toBe('container');
    expect(posOf(sns[1]!, 'make build')).toEqual(filePos(text, 'make build'));
    expect(posOf(sns[3]!, 'emulator')).toEqual(filePos(text, 'emulator'));
    expect(posOf(sns[2]!, 'lb').line).toBe(9);
  });
});

describe('Markdown', () => {
  const text = [
    '# Title',
    '',
    '```sh',
    'cd engines/lang/koda',
    'make build-safe',
    '```',
    '',
    '- a list item:',
    '  ```console',
    '  $ make kasm',
    '  building...',
    '  $ emulator \\',
    '  >   -avd Pixel',
    '  ```',
    '',
    '~~~python',
    'make build',
    '~~~',
    '````bash',
    '```',
    '$ lb build',
    'output: make build',
    '````',
    '',
  ].join('\n');
  const sns = extract('markdown', 'docs/runbook.md', text);
  it('extracts shell blocks; console blocks only their prompted lines', () => {
    expect(sns.map((s) => s.text)).toEqual(['cd engines/lang/koda\nmake build-safe', 'make kasm\nemulator \\\n  -avd Pixel', 'lb build']);
    expect(sns[0]!.cwd).toBe('docs');
    expect(posOf(sns[0]!, 'make')).toEqual(filePos(text, 'make build-safe'));
    expect(posOf(sns[1]!, 'make kasm')).toEqual(filePos(text, 'make kasm'));
    expect(posOf(sns[1]!, '-avd')).toEqual(filePos(text, '-avd'));
    expect(posOf(sns[2]!, 'lb build')).toEqual(filePos(text, 'lb build'));
  });
});

describe('resolveScriptLocation', () => {
  it('in a sourced file only BASH_SOURCE names the file ($0 is the sourcing shell\'s)', async () => {
    const { resolveScriptLocation } = await import('../../src/adapters/scan/script-dir.js');
    const text = 'cd "$(dirname "$0")"\n. "$(dirname "${BASH_SOURCE[0]}")/x.sh"\n';
    expect(resolveScriptLocation(text, '/r/lib/env.sh', { sourced: true })!.text).toBe('cd "$(dirname "$0")"\n. "/r/lib/x.sh"\n');
    expect(resolveScriptLocation(text, '/r/lib/env.sh')!.text).toBe('cd "/r/lib"\n. "/r/lib/x.sh"\n');
    // a path that would need quoting: left as written
    expect(resolveScriptLocation(text, '/r/my dir/env.sh')).toBeNull();
  });
});
