// SARIF 2.1.0 for GitHub code scanning (and any other SARIF consumer).
//
// - One run, tool `offhost`, `tool.driver.rules` listing every rule id that occurs (sorted, so rule ids
//   and `ruleIndex` are stable for one set of findings), each with short/full description and help text.
// - Locations are repository-relative URIs with `uriBaseId: "%SRCROOT%"` (percent-encoded per RFC 3986,
//   so names with spaces, `%`, `#` or `?` survive), regions 1-based, columns in UTF-16 code units.
// - `partialFingerprints["offhost/v1"]`: a hash of rule id, file and message (without the commit prefix
//   ci adds) plus an occurrence counter, so an alert survives unrelated edits that move its line.
import { createHash } from 'node:crypto';
import type { Finding } from '../types.js';
import { relPath, sortFindings, stableMessage, type FormatOptions } from './common.js';
import { ruleHelp } from './rules.js';

export const SARIF_SCHEMA = 'https://json.schemastore.org/sarif-2.1.0.json';
export const INFORMATION_URI = 'https://github.com/koder/offhost';

export function toSarif(findings: readonly Finding[], opts: FormatOptions = {}): object {
  const sorted = sortFindings(findings);
  const ids = [...new Set(sorted.map((f) => f.ruleId))].sort();
  const index = new Map(ids.map((id, i) => [id, i]));
  const rules = ids.map((id) => {
    const h = ruleHelp(id, opts.rules);
    const level = sorted.some((f) => f.ruleId === id && f.severity === 'error') ? 'error' : 'warning';
    return {
      id,
      name: ruleName(id),
      shortDescription: { text: h.short },
      fullDescription: { text: h.help },
      help: { text: h.help, markdown: h.help },
      defaultConfiguration: { level },
      properties: { tags: ['offhost', ...(h.policy ? h.policy.split(/,\s*/).map((p) => `policy-${p}`) : [])] },
    };
  });
  const seen = new Map<string, number>();
  const results = sorted.map((f) => {
    const uri = encodeUri(relPath(f.file, opts.root));
    const key = `${f.ruleId}\u0000${relPath(f.file, opts.root)}\u0000${stableMessage(f.message)}`;
    const n = (seen.get(key) ?? 0) + 1;
    seen.set(key, n);
    const fingerprint = createHash('sha256').update(key).digest('hex').slice(0, 32) + `:${n}`;
    const region: Record<string, number> = {};
    if (f.line && f.line > 0) {
      region.startLine = f.line;
      if (f.column && f.column > 0) region.startColumn = f.column;
      if (f.endLine && f.endLine >= f.line) region.endLine = f.endLine;
      if (f.endColumn && f.endColumn > 0) region.endColumn = f.endColumn;
    }
    const text = f.suggestion ? `${f.message}\nUse instead: ${f.suggestion}` : f.message;
    return {
      ruleId: f.ruleId,
      ruleIndex: index.get(f.ruleId) ?? -1,
      level: f.severity === 'error' ? 'error' : 'warning',
      message: { text },
      locations: [
        {
          physicalLocation: {
            artifactLocation: { uri, uriBaseId: '%SRCROOT%' },
            ...(Object.keys(region).length ? { region } : {}),
          },
        },
      ],
      partialFingerprints: { 'offhost/v1': fingerprint },
    };
  });
  return {
    $schema: SARIF_SCHEMA,
    version: '2.1.0',
    runs: [
      {
        tool: {
          driver: {
            name: 'offhost',
            ...(opts.toolVersion ? { version: opts.toolVersion, semanticVersion: opts.toolVersion } : {}),
            informationUri: INFORMATION_URI,
            rules,
          },
        },
        columnKind: 'utf16CodeUnits',
        ...(opts.root ? { originalUriBaseIds: { '%SRCROOT%': { uri: dirUri(opts.root) } } } : {}),
        results,
      },
    ],
  };
}

export function formatSarif(findings: readonly Finding[], opts: FormatOptions = {}): string {
  return JSON.stringify(toSarif(findings, opts), null, 2) + '\n';
}

/** `koda-make` -> `KodaMake` (SARIF `name` is an identifier-like, human-readable name). */
function ruleName(id: string): string {
  return id
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((w) => w[0]!.toUpperCase() + w.slice(1))
    .join('');
}

/** A relative URI reference for a repository path: each segment percent-encoded. */
export function encodeUri(path: string): string {
  return path
    .split('/')
    .map((seg) => encodeURIComponent(seg).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`))
    .join('/');
}

/** `file:///abs/root/` (SARIF: a uriBaseId's uri ends with a slash). */
function dirUri(root: string): string {
  const p = root.replace(/\\/g, '/').replace(/\/+$/, '');
  return 'file://' + (p.startsWith('/') ? '' : '/') + encodeUri(p) + '/';
}
