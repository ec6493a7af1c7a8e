// The template backend: placeholders, context-aware quoting, refusals (ConfigError).
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/errors.js';
import { parseTemplate, renderJob, type Job, type VmSpec } from '../../src/routes/index.js';

const vm = (template: string, extra: Partial<VmSpec> = {}): VmSpec => ({ id: 'tpl.box', backend: 'template', instance: 'box', host: 'khost1', template, ...extra });
const JOB: Job = { argv: ['make', 'test'], cwd: '/srv/a b', env: {} };

describe('template backend', () => {
  it('expands {vm} {instance} {host} {user} {cwd} {script} {argv}', () => {
    expect(renderJob(vm('vm run {instance} {script}'), JOB)).toBe(`vm run box "cd -- '/srv/a b' && exec make test"`);
    expect(renderJob(vm('run-on {vm} {host} {user} {cwd} -- {argv}', { user: 'koder' }), JOB)).toBe(
      "run-on tpl.box khost1 koder '/srv/a b' -- make test",
    );
  });

  it('quotes for the context a placeholder stands in: bare, "…" or \'…\'', () => {
    const job: Job = { argv: ['printf', '%s|', `it's "$HOME" \`x\` \\ !`], cwd: '/tmp', env: {} };
    for (const t of ['bash -c {script}', 'bash -c "{script}"', "bash -c '{script}'", 'bash -c x{script}y']) {
      const line = renderJob(vm(t), job);
      // x{script}y: the word is x + script + y, so strip the x and the y again before running it
      const run = t.includes('x{script}y') ? line.replace(/^bash -c x/, 'bash -c ').replace(/y$/, '') : line;
      const r = spawnSync('bash', ['-c', run], { encoding: 'utf8' });
      expect(r.stdout, `${t}\n${line}`).toBe(`it's "$HOME" \`x\` \\ !|`);
    }
  });

  it('{NAME_raw} inserts the value verbatim (e.g. into a quoted heredoc)', () => {
    const line = renderJob(vm("sh <<'OFFHOST'\n{script_raw}\nOFFHOST"), { argv: ['printf', '%s', "a 'b' $c"], cwd: '/', env: {} });
    expect(line).toBe("sh <<'OFFHOST'\ncd -- / && exec printf %s 'a '\\''b'\\'' $c'\nOFFHOST");
    expect(spawnSync('bash', ['-c', line], { encoding: 'utf8' }).stdout).toBe("a 'b' $c");
  });

  it('{{ and }} are literal braces', () => {
    expect(renderJob(vm('echo {{}} ${{HOME}} {script}'), JOB)).toBe(`echo {} \${HOME} "cd -- '/srv/a b' && exec make test"`);
  });

  it.each([
    ['vm run {name} {script}', /unknown placeholder \{name\}/],
    ['vm run {instance} {scrip}', /unknown placeholder \{scrip\}/],
    ['echo ${HOME} {script}', /unknown placeholder \{HOME\}/],
    ['echo { {script}', /unescaped '\{'/],
    ['echo } {script}', /unescaped '\}'/],
    ["echo $'{script}'", /inside \$'…'/],
    ['echo `date` {script}', /after a backtick or \$\(/],
    ['echo "$(date)" {script}', /after a backtick or \$\(/],
    ['x "{argv}"', /cannot stand inside quotes/],
    ['x "{script}', /unterminated quote/],
    ['   ', /empty/],
  ])('rejects %j', (t, message) => {
    expect(() => parseTemplate(t)).toThrow(ConfigError);
    expect(() => parseTemplate(t)).toThrow(message);
    expect(() => renderJob(vm(t), JOB)).toThrow(ConfigError);
  });

  it('raw placeholders are allowed where quoted ones are not', () => {
    expect(() => parseTemplate('echo `date` {script_raw}')).not.toThrow();
  });

  it('a placeholder whose value the VM lacks is a ConfigError', () => {
    expect(() => renderJob(vm('ssh {user}@{host} {script}'), JOB)).toThrow(/no `user`/);
    expect(() => renderJob({ id: 't', backend: 'template' }, JOB)).toThrow(/needs `template`/);
  });
});
