// template: a user-supplied bash command line (run on the laptop) with placeholders, for VM drivers
// that have no backend of their own: a vmbox-style `vm run {instance} {script}`, a Windows
// `win.sh sh {script}`, a Tart helper `tests/vm/tart-vm.sh exec {instance} -- sh -c {script}`.
//
// Placeholders (anything else in braces is a ConfigError; write `{{` and `}}` for literal braces):
//   {vm}        the canonical VM id (s.khost1.dev-linux-koda)
//   {instance}  vm.instance            {host}  vm.host            {user}  vm.user
//   {cwd}       the job's working directory on the VM
//   {script}    a POSIX sh script `cd -- DIR && exec [env -- K=V …] argv…`, itself quoted for one
//               shell: for tools that hand their argument to one shell (`ssh host CMD`, `vm run NAME
//               CMD`, `win.sh sh CMD`, `sh -c CMD`)
//   {argv}      the job's argv, each word quoted, joined with spaces (only outside quotes); cwd and
//               env are NOT applied: for tools that take a command and set the directory themselves
//   {NAME_raw}  any of the above inserted verbatim, unquoted (e.g. inside a quoted heredoc); you own
//               the quoting then
// Each quoted placeholder becomes exactly one shell word of the template, whatever the value holds:
// written bare it is quoted as a whole word; written inside "…" or '…' of the template it is escaped
// for that context, so `win.sh sh "{script}"` works too. Placeholders inside $'…', backticks or $(…)
// are refused (the quoting needed there cannot be told from the outside).
import { ConfigError } from '../../errors.js';
import { escapeDoubleQuoted, escapeSingleQuoted, quote, quoteArgv } from '../quote.js';
import { shScript } from '../script.js';
import type { Backend, Job, VmSpec } from '../types.js';

export const TEMPLATE_PLACEHOLDERS = ['vm', 'instance', 'host', 'user', 'cwd', 'script', 'argv'] as const;
type Name = (typeof TEMPLATE_PLACEHOLDERS)[number];
type Context = 'bare' | 'double' | 'single';

type Piece = { text: string } | { name: Name; raw: boolean; context: Context };

/** Parses a template, throwing ConfigError on unknown or misplaced placeholders. */
export function parseTemplate(template: string, where = 'template'): Piece[] {
  if (template.trim() === '') throw new ConfigError(`${where}: the template is empty`);
  const pieces: Piece[] = [];
  let text = '';
  let state: 'bare' | 'double' | 'single' | 'ansi' = 'bare';
  let substitution = false; // saw ` or $( outside single quotes
  for (let i = 0; i < template.length; i++) {
    const c = template[i]!;
    if (c === '{' && template[i + 1] === '{') {
      text += '{';
      i++;
      continue;
    }
    if (c === '}' && template[i + 1] === '}') {
      text += '}';
      i++;
      continue;
    }
    if (c === '{') {
      const m = /^\{([A-Za-z_][A-Za-z0-9_]*)\}/.exec(template.slice(i));
      if (!m) throw new ConfigError(`${where}: unescaped '{' at offset ${i} (write {{ for a literal brace)`);
      let key = m[1]!;
      const raw = key.endsWith('_raw');
      if (raw) key = key.slice(0, -4);
      if (!(TEMPLATE_PLACEHOLDERS as readonly string[]).includes(key)) {
        throw new ConfigError(
          `${where}: unknown placeholder {${m[1]}}; known: ${TEMPLATE_PLACEHOLDERS.map((p) => `{${p}}`).join(' ')} and {NAME_raw}`,
        );
      }
      if (!raw) {
        if (state === 'ansi') throw new ConfigError(`${where}: placeholder {${key}} inside $'…' is not supported`);
        if (substitution) {
          throw new ConfigError(`${where}: placeholder {${key}} after a backtick or $( is not supported; use {${key}_raw}`);
        }
        if (key === 'argv' && state !== 'bare') {
          throw new ConfigError(`${where}: {argv} is several words and cannot stand inside quotes`);
        }
      }
      if (text) pieces.push({ text });
      text = '';
      pieces.push({ name: key as Name, raw, context: state === 'ansi' ? 'bare' : state });
      i += m[0].length - 1;
      continue;
    }
    if (c === '}') throw new ConfigError(`${where}: unescaped '}' at offset ${i} (write }} for a literal brace)`);
    text += c;
    switch (state) {
      case 'bare':
        if (c === '\\') {
          if (i + 1 < template.length) text += template[++i];
        } else if (c === "'") state = 'single';
        else if (c === '"') state = 'double';
        else if (c === '$' && template[i + 1] === "'") {
          state = 'ansi';
          text += template[++i];
        } else if (c === '`' || (c === '$' && template[i + 1] === '(')) substitution = true;
        break;
      case 'double':
        if (c === '\\') {
          if (i + 1 < template.length) text += template[++i];
        } else if (c === '"') state = 'bare';
        else if (c === '`' || (c === '$' && template[i + 1] === '(')) substitution = true;
        break;
      case 'single':
        if (c === "'") state = 'bare';
        break;
      case 'ansi':
        if (c === '\\') {
          if (i + 1 < template.length) text += template[++i];
        } else if (c === "'") state = 'bare';
        break;
    }
  }
  if (text) pieces.push({ text });
  if (state !== 'bare') throw new ConfigError(`${where}: unterminated quote`);
  return pieces;
}

function value(vm: VmSpec, job: Job, name: Name): string {
  switch (name) {
    case 'vm':
      return vm.id;
    case 'cwd':
      return job.cwd;
    case 'script':
      return shScript(job);
    case 'argv':
      return quoteArgv(job.argv);
    case 'instance':
    case 'host':
    case 'user': {
      const v = vm[name];
      if (v === undefined || v === '') throw new ConfigError(`route ${vm.id}: the template uses {${name}} but the VM has no \`${name}\``);
      return v;
    }
  }
}

export function expandTemplate(vm: VmSpec, job: Job): string {
  if (!vm.template) throw new ConfigError(`route ${vm.id}: backend template needs \`template\``);
  const pieces = parseTemplate(vm.template, `route ${vm.id} template`);
  return pieces
    .map((p) => {
      if ('text' in p) return p.text;
      const v = value(vm, job, p.name);
      if (p.raw || p.name === 'argv') return v;
      if (p.context === 'double') return escapeDoubleQuoted(v);
      if (p.context === 'single') return escapeSingleQuoted(v);
      return quote(v);
    })
    .join('');
}

/** The template's program, when it is a plain first word (for probeBackend). */
export function templateProgram(template: string | undefined): string | null {
  if (!template) return null;
  const m = /^\s*([A-Za-z0-9_@%+:,./-]+)(?=\s|$)/.exec(template);
  if (!m || m[1]!.includes('=')) return null;
  return m[1]!;
}

export const template: Backend = {
  name: 'template',
  layers: 1,
  layersFor: () => 1,
  renderCommand: (vm, job) => expandTemplate(vm, job),
  render: (vm, job) => ['bash', '-c', expandTemplate(vm, job)],
  tools(vm) {
    const p = templateProgram(vm.template);
    return p ? [p] : [];
  },
};
