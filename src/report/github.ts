// GitHub Actions workflow commands: one `::error`/`::warning` line per finding, escaped exactly as
// @actions/core does (packages/core/src/command.ts):
//   data (the message):     % -> %25, \r -> %0D, \n -> %0A
//   property values:        the same, plus : -> %3A and , -> %2C
// GitHub shows at most 10 annotations of each type per step, so ci also writes a step summary
// (summary.ts) with every finding.
import type { Finding } from '../types.js';
import { relPath, sortFindings, type FormatOptions } from './common.js';

export function escapeData(s: string): string {
  return s.replace(/%/g, '%25').replace(/\r/g, '%0D').replace(/\n/g, '%0A');
}

export function escapeProperty(s: string): string {
  return escapeData(s).replace(/:/g, '%3A').replace(/,/g, '%2C');
}

export function annotation(f: Finding, opts: FormatOptions = {}): string {
  const props: [string, string | number | undefined][] = [
    ['file', relPath(f.file, opts.root)],
    ['line', f.line],
    ['endLine', f.endLine],
    ['col', f.line ? f.column : undefined],
    ['endColumn', f.endLine === undefined || f.endLine === f.line ? f.endColumn : undefined],
    ['title', `offhost ${f.ruleId}`],
  ];
  const p = props
    .filter(([, v]) => v !== undefined && v !== '')
    .map(([k, v]) => `${k}=${escapeProperty(String(v))}`)
    .join(',');
  const message = f.suggestion ? `${f.message}\nUse instead: ${f.suggestion}` : f.message;
  return `::${f.severity === 'error' ? 'error' : 'warning'} ${p}::${escapeData(message)}`;
}

export function formatGithub(findings: readonly Finding[], opts: FormatOptions = {}): string {
  const lines = sortFindings(findings).map((f) => annotation(f, opts));
  return lines.length ? lines.join('\n') + '\n' : '';
}
