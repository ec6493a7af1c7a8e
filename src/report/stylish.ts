// The human format, eslint's "stylish" shape: findings grouped by file, then a count.
import type { Finding } from '../types.js';
import { counts, sortFindings, type FormatOptions } from './common.js';
import { palette } from './color.js';

export function formatStylish(findings: readonly Finding[], opts: FormatOptions = {}): string {
  if (findings.length === 0) return '';
  const c = palette(opts.color === true);
  const sorted = sortFindings(findings);
  const out: string[] = [];
  let current: string | null = null;
  for (const f of sorted) {
    if (f.file !== current) {
      if (current !== null) out.push('');
      out.push(c.underline(oneLine(f.file)));
      current = f.file;
    }
    const pos = f.line ? `${f.line}:${f.column ?? 1}` : '-';
    const sev = f.severity === 'error' ? c.red('error') : c.yellow('warning');
    const msg = f.message.split(/\r?\n/);
    out.push(`  ${pos.padEnd(8)} ${sev.padEnd(opts.color ? 7 + 9 : 7)}  ${msg[0]}  ${c.dim(f.ruleId)}`);
    for (const more of msg.slice(1)) out.push(`  ${' '.repeat(8)} ${' '.repeat(7)}  ${more}`);
    if (f.suggestion) {
      const s = f.suggestion.split(/\r?\n/);
      out.push(`  ${' '.repeat(8)} ${' '.repeat(7)}  ${c.dim('use:')} ${s[0]}`);
      for (const more of s.slice(1)) out.push(`  ${' '.repeat(8)} ${' '.repeat(7)}       ${more}`);
    }
  }
  const { errors, warnings } = counts(findings);
  const total = errors + warnings;
  const line = `${total} problem${total === 1 ? '' : 's'} (${errors} error${errors === 1 ? '' : 's'}, ${warnings} warning${warnings === 1 ? '' : 's'})`;
  out.push('', errors ? c.red(c.bold(`✖ ${line}`)) : c.yellow(c.bold(`⚠ ${line}`)), '');
  return out.join('\n');
}

/** A file name printed on one line, whatever it contains. */
function oneLine(s: string): string {
  return /[\r\n\t\u0000-\u001f]/.test(s) ? JSON.stringify(s) : s;
}
