// The GitHub step summary ($GITHUB_STEP_SUMMARY): a Markdown table of every finding, because the
// annotations themselves are capped at 10 per type per step.
import type { Finding } from '../types.js';
import { counts, relPath, sortFindings, type FormatOptions } from './common.js';

/** Text safe inside a Markdown table cell (no pipes, newlines or raw HTML). */
export function cell(s: string): string {
  return s
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/\|/g, '\\|')
    .replace(/\r?\n|\r/g, '<br>');
}

/** Inline code in a cell: backticks in the text lengthen the fence. */
function code(s: string): string {
  const longest = Math.max(0, ...[...s.matchAll(/`+/g)].map((m) => m[0].length));
  const fence = '`'.repeat(longest + 1);
  const pad = s.startsWith('`') || s.endsWith('`') ? ' ' : '';
  return `${fence}${pad}${cell(s)}${pad}${fence}`;
}

export function stepSummary(findings: readonly Finding[], opts: FormatOptions & { title?: string; maxBytes?: number } = {}): string {
  const { errors, warnings } = counts(findings);
  const title = opts.title ?? 'offhost';
  const out = [`## ${cell(title)}`, ''];
  if (findings.length === 0) {
    out.push('No findings: no lock-hygiene problem and no heavy command written for the laptop.', '');
    return out.join('\n');
  }
  out.push(`${errors} error${errors === 1 ? '' : 's'}, ${warnings} warning${warnings === 1 ? '' : 's'}.`, '');
  out.push('| Severity | File | Line | Rule | Message | Use instead |', '|---|---|---|---|---|---|');
  // GitHub refuses a step summary over 1 MiB: stop well before, and say how many rows were left out.
  const limit = opts.maxBytes ?? 900 * 1024;
  let size = Buffer.byteLength(out.join('\n'));
  const sorted = sortFindings(findings);
  for (const [i, f] of sorted.entries()) {
    const pos = f.line ? `${f.line}${f.column ? `:${f.column}` : ''}` : '';
    const row = `| ${f.severity} | ${code(relPath(f.file, opts.root))} | ${pos} | ${code(f.ruleId)} | ${cell(f.message)} | ${f.suggestion ? code(f.suggestion) : ''} |`;
    size += Buffer.byteLength(row) + 1;
    if (size > limit) {
      out.push('', `… and ${sorted.length - i} more finding${sorted.length - i === 1 ? '' : 's'}: the summary is cut at GitHub's size limit; the json or sarif output has them all.`);
      break;
    }
    out.push(row);
  }
  out.push('');
  return out.join('\n');
}
