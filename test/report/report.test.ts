import { describe, expect, it } from 'vitest';
import { format, stepSummary, defaultFormat } from '../../src/report/index.js';
import { escapeData, escapeProperty } from '../../src/report/github.js';
import { encodeUri } from '../../src/report/sarif.js';
import type { Finding } from '../../src/types.js';
import { validateSarif } from './sarif-validator.js';

const findings: Finding[] = [
  {
    file: 'scripts/build.sh',
    line: 3,
    column: 5,
    ruleId: 'koda-make',
    severity: 'error',
    message: 'Koda build on the laptop',
    suggestion: "offhost run -- make build-safe",
  },
  { file: 'meta/context/notices/vm-active/lock-s.khost1.dev-linux-koda.md', line: 4, ruleId: 'lock-heartbeat-backwards', severity: 'warning', message: 'heartbeat moved backwards' },
  { file: 'README.md', ruleId: 'lock-deleted', severity: 'error', message: 'commit 0123456789ab: lock deleted without archive' },
];

const hostile: Finding = {
  file: 'we,ird:na%me\nwith::colons\r.sh',
  line: 7,
  column: 2,
  ruleId: 'koda-make',
  severity: 'error',
  message: 'bad, very: bad %25 100%\nsecond line\r\n::error file=x::injected',
  suggestion: 'offhost run -- make build # 50%, ok: yes',
};

/** Parses one workflow command the way the Actions runner does (ActionCommand.TryParseV2). */
function parseCommand(line: string): { command: string; props: Record<string, string>; data: string } {
  expect(line.startsWith('::')).toBe(true);
  const end = line.indexOf('::', 2);
  const head = line.slice(2, end);
  const data = line.slice(end + 2);
  const sp = head.indexOf(' ');
  const command = sp < 0 ? head : head.slice(0, sp);
  const props: Record<string, string> = {};
  if (sp >= 0) {
    for (const pair of head.slice(sp + 1).split(',')) {
      const eq = pair.indexOf('=');
      props[pair.slice(0, eq)] = unescapeProperty(pair.slice(eq + 1));
    }
  }
  return { command, props, data: unescapeData(data) };
}
const unescapeData = (s: string) => s.replace(/%0D/g, '\r').replace(/%0A/g, '\n').replace(/%25/g, '%');
const unescapeProperty = (s: string) =>
  s.replace(/%0D/g, '\r').replace(/%0A/g, '\n').replace(/%3A/g, ':').replace(/%2C/g, ',').replace(/%25/g, '%');

describe('github annotations', () => {
  it('escapes data and properties like @actions/core', () => {
    expect(escapeData('a%b\r\nc')).toBe('a%25b%0D%0Ac');
    expect(escapeProperty('a%b\r\nc:d,e')).toBe('a%25b%0D%0Ac%3Ad%2Ce');
    // % is escaped first, so an existing escape sequence is not decoded by the runner.
    expect(escapeData('%0A')).toBe('%250A');
  });

  it('survives hostile file names and messages', () => {
    const out = format([hostile], 'github');
    const lines = out.trimEnd().split('\n');
    expect(lines).toHaveLength(1);
    expect(out).not.toMatch(/\r/);
    const cmd = parseCommand(lines[0]!);
    expect(cmd.command).toBe('error');
    expect(cmd.props.file).toBe(hostile.file);
    expect(cmd.props.line).toBe('7');
    expect(cmd.props.col).toBe('2');
    expect(cmd.props.title).toBe('offhost koda-make');
    expect(cmd.data).toBe(`${hostile.message}\nUse instead: ${hostile.suggestion}`);
  });

  it('uses warning for warnings and relativises absolute paths', () => {
    const out = format([{ ...findings[1]!, file: '/repo/x/a.md' }], 'github', { root: '/repo' });
    expect(out).toBe('::warning file=x/a.md,line=4,title=offhost lock-heartbeat-backwards::heartbeat moved backwards\n');
  });

  it('is the default inside GitHub Actions only', () => {
    expect(defaultFormat({ GITHUB_ACTIONS: 'true' })).toBe('github');
    expect(defaultFormat({})).toBe('stylish');
  });
});

describe('json', () => {
  it('has a stable shape with every key present', () => {
    const out = JSON.parse(format(findings, 'json')) as Record<string, unknown>[];
    expect(out.map((f) => f.file)).toEqual(['README.md', 'meta/context/notices/vm-active/lock-s.khost1.dev-linux-koda.md', 'scripts/build.sh']);
    for (const f of out) expect(Object.keys(f)).toEqual(['file', 'line', 'column', 'endLine', 'endColumn', 'ruleId', 'severity', 'message', 'suggestion']);
    expect(out[2]).toMatchObject({ line: 3, column: 5, ruleId: 'koda-make', severity: 'error', suggestion: 'offhost run -- make build-safe' });
    expect(out[0]).toMatchObject({ line: null, column: null, suggestion: null });
    expect(format([], 'json')).toBe('[]\n');
  });
});

describe('stylish', () => {
  it('groups by file and counts', () => {
    const out = format(findings, 'stylish');
    expect(out).toContain('scripts/build.sh\n  3:5      error    Koda build on the laptop  koda-make');
    expect(out).toContain('use: offhost run -- make build-safe');
    expect(out).toContain('✖ 3 problems (2 errors, 1 warning)');
    expect(format([], 'stylish')).toBe('');
  });
  it('keeps a hostile file name on one line', () => {
    const out = format([hostile], 'stylish');
    expect(out.split('\n')[0]).toBe(JSON.stringify(hostile.file));
  });
});

describe('sarif', () => {
  it('validates structurally against SARIF 2.1.0', () => {
    const doc = JSON.parse(format([...findings, hostile, { ...hostile, file: 'dir with space/#x?.sh' }], 'sarif', { root: '/repo', toolVersion: '0.1.0' }));
    expect(validateSarif(doc)).toEqual([]);
    expect(doc.version).toBe('2.1.0');
    const run = doc.runs[0];
    expect(run.tool.driver.rules.map((r: { id: string }) => r.id)).toEqual(['koda-make', 'lock-deleted', 'lock-heartbeat-backwards']);
    for (const r of run.tool.driver.rules) expect(r.help.text.length).toBeGreaterThan(10);
    const res = run.results.find((r: { ruleId: string; locations: { physicalLocation: { artifactLocation: { uri: string } } }[] }) =>
      r.locations[0]!.physicalLocation.artifactLocation.uri === 'scripts/build.sh');
    expect(res.locations[0].physicalLocation).toEqual({
      artifactLocation: { uri: 'scripts/build.sh', uriBaseId: '%SRCROOT%' },
      region: { startLine: 3, startColumn: 5 },
    });
    expect(res.level).toBe('error');
    expect(res.message.text).toContain('offhost run -- make build-safe');
    expect(Object.keys(res.partialFingerprints)).toEqual(['offhost/v1']);
    expect(run.originalUriBaseIds['%SRCROOT%'].uri).toBe('file:///repo/');
  });

  it('catches what the validator is meant to catch', () => {
    expect(validateSarif({ version: '2.0.0', runs: [{ tool: { driver: {} }, results: [{ level: 'fatal' }] }] })).toEqual(
      expect.arrayContaining([
        expect.stringContaining("$.version: '2.0.0'"),
        expect.stringContaining("missing required property 'name'"),
        expect.stringContaining("missing required property 'message'"),
        expect.stringContaining("'fatal' not one of"),
      ]),
    );
    expect(validateSarif({ version: '2.1.0', runs: [], extra: 1 })).toEqual(["$: unknown property 'extra'"]);
  });

  it('keeps fingerprints stable when the line moves or the commit changes', () => {
    const a = JSON.parse(format([{ ...findings[2]!, message: 'commit aaaaaaa: lock deleted' }], 'sarif'));
    const b = JSON.parse(format([{ ...findings[2]!, line: 40, message: 'commit bbbbbbb: lock deleted' }], 'sarif'));
    expect(a.runs[0].results[0].partialFingerprints).toEqual(b.runs[0].results[0].partialFingerprints);
  });

  it('percent-encodes URIs', () => {
    expect(encodeUri('a b/c%d#e?f')).toBe('a%20b/c%25d%23e%3Ff');
  });

  it('is valid with no findings', () => {
    const doc = JSON.parse(format([], 'sarif'));
    expect(validateSarif(doc)).toEqual([]);
    expect(doc.runs[0].results).toEqual([]);
  });
});

describe('step summary', () => {
  it('lists every finding in a table, cells escaped', () => {
    const many = Array.from({ length: 25 }, (_, i) => ({ ...findings[0]!, line: i + 1 }));
    const md = stepSummary([...many, hostile]);
    const rows = md.split('\n').filter((l) => l.startsWith('| error') || l.startsWith('| warning'));
    expect(rows).toHaveLength(26);
    const last = rows.find((r) => r.includes('we,ird'))!;
    expect(last).not.toContain('\n');
    expect(last.split(/(?<!\\)\|/).length).toBe(8); // 6 cells, no stray pipes
    expect(stepSummary([])).toContain('No findings');
    const cut = stepSummary(many, { maxBytes: 2000 });
    expect(cut).toMatch(/… and \d+ more findings: the summary is cut/);
    expect(Buffer.byteLength(cut)).toBeLessThan(2400);
  });
});
