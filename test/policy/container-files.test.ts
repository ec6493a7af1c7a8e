// Containers on the laptop, judged by the files they read: a Dockerfile's RUN steps (`docker build`) and
// a compose file's services (`docker compose up`/`run`), in a temp tree through the guard with its real
// disk access; four groups as in the corpus. No container runtime exists on the test machine, so what
// docker would do follows its documented behaviour (RUN steps run at build time on this machine; a
// service without a command runs its image's). dockerfileRuns is also checked on its own.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Guard } from '../../src/policy/guard.js';
import { loadGuard } from '../../src/config/load-guard.js';
import { dockerfileRuns, imageName } from '../../src/shell/programs/container-files.js';

let home: string;
let root: string;
let guard: Guard;

function file(path: string, text: string): void {
  mkdirSync(join(path, '..'), { recursive: true });
  writeFileSync(path, text);
}

beforeAll(() => {
  home = mkdtempSync(join(tmpdir(), 'offhost-containers-'));
  root = join(home, 'dev', 'koder');
  mkdirSync(join(root, 'engines/lang/koda'), { recursive: true });
  file(join(root, 'scripts/build-koda.sh'), '#!/bin/sh\nmake -C engines/lang/koda build\n');
  file(join(root, 'docker/koda/Dockerfile'), 'FROM debian:13\nWORKDIR /src\nCOPY . .\nRUN apt-get update && \\\n    apt-get install -y make gcc\n# RUN true\nRUN make build-safe\n');
  file(join(root, 'docker/web/Dockerfile'), 'FROM node:20\nWORKDIR /app\nCOPY package.json .\nRUN --mount=type=cache,target=/root/.npm npm ci\nRUN ["npm", "run", "lint"]\nCMD ["npm", "start"]\n');
  file(join(root, 'docker/e2e/Containerfile'), 'FROM mcr.microsoft.com/playwright:v1.48.0\nRUN <<EOF\nnpm ci\nnpx playwright test\nEOF\n');
  file(join(root, 'docker/exec/Dockerfile'), 'FROM node:20\nRUN ["flutter", "test", "--device-id", "chrome"]\n');
  file(join(root, 'docker/bad/Dockerfile'), 'FROM node:20\nRUN ["npm", "ci"\n');
  file(join(root, 'apps/e2e/compose.yaml'), 'services:\n  web:\n    image: node:20\n    command: npm start\n  e2e:\n    image: cypress/included:13.6.0\n    depends_on: [web]\n    volumes:\n      - ./:/e2e\n    working_dir: /e2e\n  db:\n    image: postgres:16\n');
  file(join(root, 'apps/built/docker-compose.yml'), 'services:\n  koda:\n    build:\n      context: ../../docker/koda\n  lint:\n    image: koalaman/shellcheck\n    command: ["scripts/build.sh"]\n');
  file(join(root, 'apps/mounted/compose.yaml'), 'services:\n  dev:\n    image: gcc:14\n    volumes:\n      - ../../engines/lang/koda:/src\n    working_dir: /src\n    command: make build\n');
  file(join(root, 'apps/anchors/compose.yaml'), 'x-base: &base\n  image: node:20\nservices:\n  web:\n    <<: *base\n');
  file(join(root, 'apps/anchors-heavy/compose.yaml'), 'x-base: &base\n  restart: "no"\nservices:\n  e2e:\n    <<: *base\n    image: "cypress/included:13.6.0"  # e2e\n');
  file(join(root, 'apps/anchors-build/compose.yaml'), 'x-base: &base\n  restart: "no"\nservices:\n  koda:\n    <<: *base\n    build: ../../docker/koda\n');
  guard = loadGuard({ cwd: root, env: { HOME: home, PATH: process.env.PATH, XDG_CONFIG_HOME: join(home, 'xdg') }, role: 'laptop' });
});

afterAll(() => {
  rmSync(home, { recursive: true, force: true });
});

const cases: Record<string, [line: string, cwd: string, decision: string, rule?: string][]> = {
  'true positives': [
    ['docker build docker/koda', '', 'deny', 'koda-make'],
    ['docker build -t koda -f docker/koda/Dockerfile .', '', 'deny', 'koda-make'],
    ['docker buildx build --load docker/koda', '', 'deny', 'koda-make'],
    ['podman build docker/e2e', '', 'reroute', 'playwright-test'],
    ['docker compose up', 'apps/e2e', 'reroute', 'headless-browser'],
    ['docker compose up e2e', 'apps/e2e', 'reroute', 'headless-browser'],
    ['docker compose run e2e', 'apps/e2e', 'reroute', 'headless-browser'],
    ['docker compose up --build koda', 'apps/built', 'deny', 'koda-make'],
    ['docker compose up dev', 'apps/mounted', 'reroute', 'koda-make'],
    // The same script run by an image that has no known entrypoint: it runs, and builds (the control of the shellcheck line below).
    ['docker run --rm -v "$PWD:/mnt" -w /mnt debian:13 scripts/build-koda.sh', '', 'reroute', 'koda-make'],
  ],
  'false positives': [
    ['docker build docker/web', '', 'allow'],
    ['docker compose up db', 'apps/e2e', 'allow'],
    ['docker compose up web', 'apps/e2e', 'allow'],
    ['docker compose up lint', 'apps/built', 'allow'],
    ['docker compose up --dry-run', 'apps/e2e', 'allow'],
    ['docker compose ps', 'apps/e2e', 'allow'],
    ['docker build --help', '', 'allow'],
    // shellcheck's image checks the script (its entrypoint is shellcheck); the script is not run, though
    // the workdir maps to this directory where it builds the engine.
    ['docker run --rm -v "$PWD:/mnt" -w /mnt koalaman/shellcheck scripts/build-koda.sh', '', 'allow'],
  ],
  bypasses: [
    ['docker compose -f apps/e2e/compose.yaml up e2e', '', 'reroute', 'headless-browser'],
    ['cd apps/e2e && docker-compose up -d', '', 'reroute', 'headless-browser'],
    ['docker image build docker/koda', '', 'deny', 'koda-make'],
    ['docker build docker/exec', '', 'reroute', 'flutter-test-browser'],
    ['docker compose up', 'apps/e2e/node_modules/../', 'reroute', 'headless-browser'],
  ],
  'edge cases': [
    ['docker build docker/bad', '', 'deny', 'unreadable-script'],
    ['docker build https://github.com/acme/koda.git', '', 'deny', 'unreadable-script'],
    ['docker build "$CTX"', '', 'deny', 'unreadable-script'],
    ['docker compose up', 'apps/anchors', 'allow'],
    ['docker compose up', 'apps/anchors-heavy', 'reroute', 'headless-browser'],
    ['docker compose up', 'apps/anchors-build', 'deny', 'unreadable-script'],
    ['docker build docker/missing', '', 'allow'],
    ['docker compose up --no-start e2e', 'apps/e2e', 'allow'],
  ],
};

for (const [group, list] of Object.entries(cases)) {
  describe(`containers over real files: ${group}`, () => {
    for (const [line, cwd, decision, rule] of list) {
      it(`${line} (in ${cwd || '.'})`, () => {
        const v = guard.classify(line, { cwd: join(root, cwd) });
        expect(v.decision, v.reason).toBe(decision);
        if (rule) expect(v.rule).toBe(rule);
      });
    }
  });
}

describe('dockerfileRuns', () => {
  it('continuations, comments inside them, flags, exec form and heredocs', () => {
    expect(dockerfileRuns('RUN a && \\\n# note\n  b\nRUN --network=none c\nRUN ["x", "y z"]\nRUN <<-EOT\n\tone\n\ttwo\n\tEOT\nRUN <<EOF bash\necho hi\nEOF\n')).toEqual([
      { line: 1, script: 'a &&    b' },
      { line: 4, script: 'c' },
      { line: 5, argv: ['x', 'y z'] },
      { line: 6, script: '\tone\n\ttwo' },
      { line: 10, script: "bash <<'EOF'\necho hi\nEOF" },
    ]);
  });
  it('the escape directive', () => {
    expect(dockerfileRuns('# escape=`\nRUN a `\n  b\n')).toEqual([{ line: 2, script: 'a    b' }]);
  });
  it('an exec form that is not JSON cannot be read', () => expect(dockerfileRuns('RUN ["a"\n')).toBeNull());
});

describe('imageName', () => {
  it.each([
    ['cypress/included:13.6.0', 'cypress/included'],
    ['docker.io/library/node:20', 'node'],
    ['ghcr.io/browserless/chromium@sha256:abc', 'ghcr.io/browserless/chromium'],
    ['localhost:5000/koda:dev', 'localhost:5000/koda'],
  ])('%s -> %s', (ref, name) => expect(imageName(ref)).toBe(name));
});
