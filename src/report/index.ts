// `format(findings, kind)`: the one entry point every command (lint, scan, ci) uses to print findings.
import type { Finding } from '../types.js';
import type { FormatOptions } from './common.js';
import { formatGithub } from './github.js';
import { formatJson } from './json.js';
import { formatSarif } from './sarif.js';
import { formatStylish } from './stylish.js';

export type FormatKind = 'stylish' | 'json' | 'sarif' | 'github';
export const FORMAT_KINDS: readonly FormatKind[] = ['stylish', 'json', 'sarif', 'github'];
export type { FormatOptions };
export { stepSummary } from './summary.js';
export { counts, sortFindings } from './common.js';

export function format(findings: Finding[], kind: FormatKind, opts: FormatOptions = {}): string {
  switch (kind) {
    case 'stylish':
      return formatStylish(findings, opts);
    case 'json':
      return formatJson(findings);
    case 'sarif':
      return formatSarif(findings, opts);
    case 'github':
      return formatGithub(findings, opts);
    default:
      throw new Error(`unknown format ${String(kind)}`);
  }
}

export function isFormatKind(s: string): s is FormatKind {
  return (FORMAT_KINDS as readonly string[]).includes(s);
}

/** The format to use when none is given: `github` inside GitHub Actions, else `stylish`. */
export function defaultFormat(env: NodeJS.ProcessEnv): FormatKind {
  return env.GITHUB_ACTIONS === 'true' ? 'github' : 'stylish';
}
