// The machine format: a JSON array of findings, every key always present (null when unknown), in a stable
// order. This shape is a public interface: add keys at the end, never rename or remove one.
import type { Finding } from '../types.js';
import { sortFindings } from './common.js';

export interface JsonFinding {
  file: string;
  line: number | null;
  column: number | null;
  endLine: number | null;
  endColumn: number | null;
  ruleId: string;
  severity: 'error' | 'warning';
  message: string;
  suggestion: string | null;
}

export function toJsonFindings(findings: readonly Finding[]): JsonFinding[] {
  return sortFindings(findings).map((f) => ({
    file: f.file,
    line: f.line ?? null,
    column: f.column ?? (f.line ? 1 : null),
    endLine: f.endLine ?? null,
    endColumn: f.endColumn ?? null,
    ruleId: f.ruleId,
    severity: f.severity,
    message: f.message,
    suggestion: f.suggestion ?? null,
  }));
}

export function formatJson(findings: readonly Finding[]): string {
  return JSON.stringify(toJsonFindings(findings), null, 2) + '\n';
}
