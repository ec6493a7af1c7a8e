// Layering (src/config/resolve.ts): the built-in pack, then the user file, then the project file. Later
// layers override scalars, add or replace VMs and routes by id, append rules or replace them by id, and
// turn rules off; every dangling reference is a ConfigError naming the file.
import { describe, expect, it } from 'vitest';
import { parseConfigText } from '../../src/config/load.js';
import { layerFromConfig } from '../../src/config/pack.js';
import { resolveLayers, substitute, trimSlashes, type Layer, type ResolvedConfig } from '../../src/config/resolve.js';
import fc from 'fast-check';
import { ConfigError } from '../../src/errors.js';

const HOME = { HOME: '/home/u' } as NodeJS.ProcessEnv;
const layer = (file: string, text: string): Layer => layerFromConfig(parseConfigText(text, file), file, text);
const rule = (id: string, extra = '', decision = 'deny') =>
  `  - id: ${id}\n    description: d\n    policy: R1\n    decision: ${decision}\n    message: ${id} says no\n    match: { program: ${id} }\n    examples: { match: [${id}] }\n${extra}`;

const BASE = layer(
  'base.yaml',
  `root: ~/mono\nvms:\n  - { id: s.h1.dev-a, backend: incus, host: h1 }\n  - { id: s.h1.dev-b, backend: incus, host: h1 }\nroutes:\n  ra: { vms: [s.h1.dev-a] }\nrules:\n${rule('one')}${rule('two')}`,
);

function configError(layers: Layer[], env = HOME): ConfigError {
  try {
    resolveLayers(layers, env);
  } catch (e) {
    if (e instanceof ConfigError) return e;
    throw e;
  }
  throw new Error('expected a ConfigError');
}

describe('root', () => {
  it('relative to the folder of the file that sets it (`root: .` is the checkout); absolute and ~ as written', () => {
    const at = (file: string, text: string) => resolveLayers([BASE, layer(file, text)], HOME);
    expect(at('/srv/clone/offhost.config.yaml', 'root: .\n')).toMatchObject({ root: '/srv/clone', vars: { root: '/srv/clone' } });
    expect(at('/srv/clone/offhost.config.yaml', 'root: mono/\n').root).toBe('/srv/clone/mono');
    expect(at('/srv/clone/offhost.config.yaml', 'root: ../other\n').root).toBe('/srv/other');
    expect(at('/srv/clone/offhost.config.yaml', 'root: /abs/mono\n').root).toBe('/abs/mono');
    expect(at('/srv/clone/offhost.config.yaml', 'root: ~/mono2\n').root).toBe('/home/u/mono2');
    // Paths built on it follow.
    expect(at('/srv/clone/offhost.config.yaml', 'root: .\npaths: { koda: "{root}/engines/lang/koda" }\n').vars.koda).toBe('/srv/clone/engines/lang/koda');
  });
});

describe('what a later layer does to an earlier one', () => {
  it.each([
    ['overrides a scalar', 'role: vm\nroot: /srv/mono/\n', (c: ResolvedConfig) => ({ role: c.role, root: c.root }), { role: 'vm', root: '/srv/mono' }],
    ['adds a VM and replaces one by id', 'vms:\n  - { id: s.h1.dev-b, backend: ssh, host: other }\n  - { id: s.h2.dev-c, backend: lima }\n', (c: ResolvedConfig) => [...c.vms.values()].map((v) => `${v.id}:${v.backend}`), ['s.h1.dev-a:incus', 's.h1.dev-b:ssh', 's.h2.dev-c:lima']],
    ['replaces a route by name, keeps the others', 'routes:\n  ra: { vms: [s.h1.dev-b] }\n  rb: { vms: [s.h1.dev-a, s.h1.dev-b] }\n', (c: ResolvedConfig) => [...c.routes.values()].map((r) => `${r.name}=${r.vms.join('+')}`), ['ra=s.h1.dev-b', 'rb=s.h1.dev-a+s.h1.dev-b']],
    ['appends rules, replaces one by id in place', `rules:\n${rule('three')}${rule('one', '', 'allow')}`, (c: ResolvedConfig) => c.rules.map((r) => `${r.id}:${r.decision}`), ['one:allow', 'two:deny', 'three:deny']],
    ['turns a rule off by id', 'disable: [one]\n', (c: ResolvedConfig) => c.rules.map((r) => r.id), ['two']],
    ['sets lock and hook settings over the defaults', 'locks: { push: true, poll_seconds: 5 }\nhook: { mode: suggest }\n', (c: ResolvedConfig) => ({ locks: c.locks, hook: c.hook }), { locks: { noticesDir: 'meta/context/notices', push: true, skewSeconds: 120, pollSeconds: 5 }, hook: { mode: 'suggest' } }],
  ] as const)('%s', (_what, text, view, expected) => {
    const resolved = resolveLayers([BASE, layer('project.yaml', text)], HOME);
    expect(view(resolved)).toEqual(expected);
    expect(resolved.sources).toEqual(['base.yaml', 'project.yaml']);
  });

  it('without a second layer: defaults for everything not set', () => {
    const c = resolveLayers([BASE], HOME);
    expect(c).toMatchObject({ home: '/home/u', root: '/home/u/mono', vars: { home: '/home/u', root: '/home/u/mono' }, hook: {}, scan: {}, audit: {} });
    expect(c.locks).toEqual({ noticesDir: 'meta/context/notices', push: false, skewSeconds: 120, pollSeconds: 30 });
    expect(c.role).toBeUndefined();
  });
});

describe('trimSlashes', () => {
  it('gives what the regular expression it replaces gives, on any string of slashes, letters and line terminators', () => {
    const old = (p: string) => p.replace(/(.)\/+$/, '$1');
    for (const p of ['', '/', '//', '///', '/a', '/a/', '/a///', 'a/', '\n/', '\n//', 'a\n//', '/home/u/', '\u2028//']) expect(trimSlashes(p), JSON.stringify(p)).toBe(old(p));
    fc.assert(fc.property(fc.array(fc.constantFrom('/', 'a', '\n', '\r', '\u2028', '\u2029', '.'), { maxLength: 12 }).map((cs) => cs.join('')), (p) => trimSlashes(p) === old(p)), { numRuns: 20_000 });
  });
});

describe('substitute', () => {
  it('gives what the regular expression it replaces gives, unknown variables included', () => {
    const vars: Record<string, string> = { a: '/A', b_1: 'B', root: '/r' };
    const old = (p: string): string | 'unknown' => {
      try {
        return p.replace(/\{([a-z][a-z0-9_]*)\}/g, (_m, name: string) => {
          const v = vars[name];
          if (v === undefined) throw new Error('unknown');
          return v;
        });
      } catch {
        return 'unknown';
      }
    };
    const ours = (p: string): string | 'unknown' => {
      try {
        return substitute(p, vars, 'f');
      } catch (err) {
        expect(err).toBeInstanceOf(ConfigError);
        return 'unknown';
      }
    };
    for (const p of ['', '{a}', '{root}/x', '{{a}}', '{a', 'a}', '{A}', '{1a}', '{b_1}{a}', '{zz}', '{a}{', 'x{a}y{b_1}z']) expect(ours(p), p).toBe(old(p));
    fc.assert(fc.property(fc.array(fc.constantFrom('{', '}', 'a', 'b', '_', '1', 'root', 'z', '/', 'A'), { maxLength: 14 }).map((cs) => cs.join('')), (p) => ours(p) === old(p)), { numRuns: 20_000 });
  });
});

describe('paths and variables', () => {
  it('{root}, {home} and paths defined from each other, in order; trailing slashes dropped', () => {
    const c = resolveLayers([BASE, layer('p.yaml', 'paths:\n  engines: "{root}/engines/"\n  koda: "{engines}/lang/koda"\n  cache: ~/.cache\npath_map:\n  - { from: "{koda}", to: /vm/koda }\n')], HOME);
    expect(c.vars).toEqual({ home: '/home/u', root: '/home/u/mono', engines: '/home/u/mono/engines', koda: '/home/u/mono/engines/lang/koda', cache: '/home/u/.cache' });
    expect(c.pathMap).toEqual([{ from: '/home/u/mono/engines/lang/koda', to: '/vm/koda' }]);
  });
  it('HOME unset or relative: no {home}, and no home for ~', () => {
    expect(resolveLayers([layer('a.yaml', 'role: ci\n')], { HOME: 'relative' }).home).toBeNull();
    expect(configError([BASE], {}).message).toBe("base.yaml: '~/mono' needs HOME to be set");
  });
});

describe('dangling references are errors naming the file', () => {
  it.each([
    ['a path variable nobody defines', 'paths:\n  x: "{nowhere}/x"\n', "p.yaml: unknown path variable {nowhere} in '{nowhere}/x'"],
    // Object.prototype's own names are no variables: {constructor} was taken for one, as its source text.
    ['a path variable named like an object property', 'paths:\n  x: "{constructor}/x"\n', "p.yaml: unknown path variable {constructor} in '{constructor}/x'"],
    ['a route naming a VM no layer defines', 'routes:\n  rc: { vms: [s.h9.dev-z] }\n', "p.yaml: route 'rc' names VM 's.h9.dev-z', which no 'vms' entry defines"],
    ['turning off a rule that does not exist', 'disable: [nine]\n', "p.yaml: disable: there is no rule 'nine' to turn off"],
  ] as const)('%s', (_what, text, message) => {
    expect(configError([BASE, layer('p.yaml', text)]).message).toBe(message);
  });
  it('a rule rerouting to a route no layer defines: at the rule line', () => {
    const e = configError([BASE, layer('p.yaml', `rules:\n${rule('heavy', '    route: nowhere\n', 'reroute')}`)]);
    expect(e.message).toBe("p.yaml:2: rule 'heavy' reroutes to 'nowhere', which no 'routes' entry defines");
  });
  it('a rule whose cwd glob uses an undefined variable: at the rule line', () => {
    const text = `rules:\n${rule('heavy').replace('match: { program: heavy }', 'match: { program: heavy, cwd: "{engines}/**" }')}`;
    const e = configError([BASE, layer('p.yaml', text)]);
    expect(e.message).toBe("p.yaml:2: rule 'heavy' uses the path variable {engines}, which is not defined (set it under 'paths')");
  });
  it('a rule whose cwd glob uses {constructor}, which no layer defines: at the rule line', () => {
    const text = `rules:\n${rule('heavy').replace('match: { program: heavy }', 'match: { program: heavy, cwd: "{constructor}/**" }')}`;
    const e = configError([BASE, layer('p.yaml', text)]);
    expect(e.message).toBe("p.yaml:2: rule 'heavy' uses the path variable {constructor}, which is not defined (set it under 'paths')");
  });
  it('a path variable that is named constructor is a variable like any other', () => {
    const c = resolveLayers([BASE, layer('p.yaml', 'paths:\n  constructor: "{root}/c"\n  x: "{constructor}/x"\n')], HOME);
    expect(c.vars.x).toBe('/home/u/mono/c/x');
  });
  it('the same rule id twice in one file: at its line', () => {
    let err: unknown;
    try {
      layer('p.yaml', `rules:\n${rule('heavy')}${rule('heavy')}`);
    } catch (e) {
      err = e;
    }
    expect((err as ConfigError).message).toBe("p.yaml:2: rule id 'heavy' is defined twice");
  });
});
