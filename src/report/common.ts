// Shared by the formatters: ordering, counting and path normalisation.
import type { Finding } from '../types.js';

export interface FormatOptions {
  /** Absolute repository root: absolute finding paths under it are made relative (SARIF, github). */
  root?: string;
  /** offhost's version, for SARIF `tool.driver.version`. */
  toolVersion?: string;
  /** Extra rule help (custom rules from a config), by id. */
  rules?: Record<string, import('./rules.js').RuleHelp>;
  /** stylish: ANSI colours. */
  color?: boolean;
}

/** Stable order: file, line, column, rule id, message. Does not mutate its input. */
export function sortFindings(findings: readonly Finding[]): Finding[] {
  return findings
    .map((f, i) => ({ f, i }))
    .sort((a, b) => {
      const fa = a.f;
      const fb = b.f;
      return (
        cmp(fa.file, fb.file) ||
        (fa.line ?? 0) - (fb.line ?? 0) ||
        (fa.column ?? 0) - (fb.column ?? 0) ||
        cmp(fa.ruleId, fb.ruleId) ||
        a.i - b.i
      );
    })
    .map((x) => x.f);
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

export function counts(findings: readonly Finding[]): { errors: number; warnings: number } {
  let errors = 0;
  let warnings = 0;
  for (const f of findings) {
    if (f.severity === 'error') errors++;
    else warnings++;
  }
  return { errors, warnings };
}

/** A repository-relative, forward-slash path (absolute paths under `root` are relativised). */
export function relPath(file: string, root?: string): string {
  let p = file.replace(/\\/g, '/');
  if (root) {
    const r = root.replace(/\\/g, '/').replace(/\/+$/, '');
    if (p === r) return '.';
    if (p.startsWith(r + '/')) p = p.slice(r.length + 1);
  }
  return p.replace(/^\.\//, '');
}

/** The message without a leading `commit <sha>: ` (ci prefixes transition findings with their commit). */
export function stableMessage(message: string): string {
  return message.replace(/^commit [0-9a-f]{7,64}(?: \([^)]*\))?: /, '');
}
