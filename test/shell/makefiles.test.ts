// The Makefile reader: which recipe lines `make TARGET` runs (pure; the guard-level tests are in
// test/policy/script-files.test.ts).
import { describe, expect, it } from 'vitest';
import { makeRecipes } from '../../src/shell/makefiles.js';

const MK = [
  'PW ?= npx playwright',
  'FLAGS := --project=chromium',
  'FLAGS += --headed',
  'SUB = $(PW) test',
  '.PHONY: all e2e clean',
  '',
  'all: build test',
  '',
  'build: gen',
  '\t@echo building $@ from $^',
  '\t-$(CC) -o app main.c',
  'gen:',
  '\t+$(MAKE) -C gen',
  'test:',
  '\tvitest run \\',
  '\t  --reporter=dot',
  'e2e: ; $(SUB) $(FLAGS)',
  'clean:',
  '\t$(RM) -r build $${HOME}/cache',
  '%.o: %.c',
  '\t$(CC) -c $<',
  'ifeq ($(CI),1)',
  'ci: e2e',
  'else',
  'ci: test',
  'endif',
  'define LONG',
  '\tnot a recipe',
  'endef',
  'vars: X = 1',
  'undef: $(NOPE)',
  '\techo $(NOPE) $(shell date)',
].join('\n');

const lines = (targets: string[], text = MK) => makeRecipes(text, targets, '/w').lines.map((l) => `${l.target}: ${l.text}`);

describe('makeRecipes', () => {
  it('runs the default goal and its prerequisites, in order, with make syntax removed', () => {
    expect(lines([])).toEqual(['build: echo building build from gen', 'build: cc -o app main.c', 'test: vitest run \\\n  --reporter=dot', 'gen: make -C gen']);
  });
  it('expands simple, appended, conditional and nested variables; $$ is the shell\'s $', () => {
    expect(lines(['e2e'])).toEqual(['e2e: npx playwright test --project=chromium --headed']);
    expect(lines(['clean'])).toEqual(['clean: rm -f -r build ${HOME}/cache']);
  });
  it('counts both sides of a conditional, skips define blocks, target-specific variables and pattern rules', () => {
    expect(lines(['ci'])).toEqual(['e2e: npx playwright test --project=chromium --headed', 'test: vitest run \\\n  --reporter=dot']);
    expect(lines(['vars'])).toEqual([]);
    expect(lines(['x.o'])).toEqual([]);
  });
  it('leaves what it cannot expand unknown to the shell (a variable from the environment, a function)', () => {
    expect(lines(['undef'])).toEqual(['undef: echo ${NOPE} ${__OFFHOST_MAKE_EXPR}']);
  });
  it('a target it does not find: nothing (and `unknown` when the Makefile includes others)', () => {
    expect(makeRecipes(MK, ['nowhere'], '/w')).toMatchObject({ lines: [], unknown: false, reached: [] });
    expect(makeRecipes(`include common.mk\n${MK}`, ['nowhere'], '/w').unknown).toBe(true);
  });
  it('stays bounded on a prerequisite cycle', () => {
    expect(lines(['a'], 'a: b\n\techo a\nb: a\n\techo b\n')).toEqual(['a: echo a', 'b: echo b']);
  });
});

describe('what make runs while it reads a makefile (parseTime)', () => {
  const parseTime = (text: string) => makeRecipes(text, [], '/w').parseTime;
  it.each([
    ['X := $(shell make build)\nall:\n\techo x\n', ['make build']],
    ['Y != make kasm; echo y\nall:\n\techo x\n', ['make kasm; echo y']],
    // A recursive variable's $(shell …) runs only if it is expanded: counted anyway (fail closed).
    ['Z = $(shell make build-safe)\n', ['make build-safe']],
    ['ifeq ($(shell uname -s),Linux)\nOS := linux\nendif\n', ['uname -s']],
    // Nested references are expanded with what the makefile says; parentheses balance.
    ['T := build\nX := $(shell make $(T) && echo "(done)")\n', ['make build && echo "(done)"']],
  ])('%j -> %j', (text, want) => {
    expect(parseTime(text)).toEqual(want);
  });
  it('leaves out recipe lines (they run with their target), $(shellx), and a command made of what it cannot know', () => {
    expect(parseTime('all:\n\techo $(shell make build)\n')).toEqual([]);
    expect(parseTime('X := $(shellx make build)\n')).toEqual([]);
    expect(parseTime('X := $(shell $(call f,make build))\n')).toEqual([]);
  });
});
