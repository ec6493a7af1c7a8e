// Heavy commands written into the repository: extract the shell text of scripts, package.json scripts,
// Makefile recipes, CI steps, Dockerfile RUN and Markdown shell blocks, classify it with the guard as if
// it ran on the laptop, and report each command that would run heavy work there without a VM route.
//
// Working directory of extracted text (the guard's cwd-based rules, e.g. the Koda engine, depend on it):
// the repository is taken to live at `laptopRoot` on a laptop (config `root`, the monorepo root of
// POLICY R6, default `~/dev/koder` with HOME from the environment), and
//   - shell scripts from the repository root (where `offhost check 'bash scripts/x.sh'` judges them) and
//     from their own directory (scripts next to their code assume it); `cd "$(dirname "$0")/.."` and the
//     other idioms by which a script finds itself are resolved (scan/script-dir.ts), so a script that
//     changes directory is judged where it goes,
//   - package.json scripts in the package's directory (npm does exactly that),
//   - Makefile recipes in the Makefile's directory (make does exactly that),
//   - GitHub Actions steps in `working-directory:` (step, then job/workflow `defaults.run`), else the root,
//   - GitLab CI scripts in the repository root ($CI_PROJECT_DIR),
//   - Markdown blocks in the Markdown file's directory,
//   - Dockerfile RUN in the WORKDIR inside the image (a container path).
// When a directory cannot be known statically (`${{ … }}` in working-directory) the root is used.
import picomatch from 'picomatch';
import { posix } from 'node:path';
import type { Finding, SimpleCommand, Verdict } from '../types.js';
import { detectKind, extract, mayScan, type FileKind, type Snippet } from './scan/index.js';

export type Classify = (line: string, at: { cwd?: string; env?: NodeJS.ProcessEnv }) => Verdict;

export interface ScanSettings {
  /** Files meant to run on a VM or in CI: never flagged (unless a job runs on a laptop runner). */
  vmGlobs: string[];
  /** Files never scanned at all. */
  ignore: string[];
  /** Markdown files that are instructions (case-insensitive globs). */
  markdownGlobs: string[];
  /** Dockerfile RUN counts as the laptop (`docker build` runs it there). */
  dockerfileIsLaptop: boolean;
  /** CI runner labels (GitHub `runs-on`, GitLab `tags`) that mean a developer's machine. */
  laptopRunners: string[];
  /** Where the repository lives on a laptop (absolute). */
  laptopRoot: string;
}

export const DEFAULT_VM_GLOBS = [
  '.github/workflows/**',
  '.github/actions/**',
  '**/action.yml',
  '**/action.yaml',
  '.gitlab-ci.yml',
  '**/*.gitlab-ci.yml',
  '.gitlab/**',
  '.circleci/**',
  '.buildkite/**',
  'ci/**',
  '.ci/**',
  '**/vm/**',
  '**/*.vm.sh',
];

export const DEFAULT_IGNORE = [
  '**/node_modules/**',
  '**/vendor/**',
  '**/third_party/**',
  '**/fixtures/**',
  '**/__fixtures__/**',
  '**/testdata/**',
  '**/CHANGELOG.md',
  'meta/context/notices/**',
];

export const DEFAULT_MARKDOWN_GLOBS = [
  '**/README.md',
  '**/README.*.md',
  '**/CLAUDE.md',
  '**/AGENTS.md',
  '**/GEMINI.md',
  '**/CONTRIBUTING.md',
  '**/docs/**/*.md',
  '**/doc/**/*.md',
  '**/runbooks/**/*.md',
  '**/runbook*.md',
  '.claude/**/*.md',
  '.codex/**/*.md',
  '.gemini/**/*.md',
];

/** Expands a leading `~` with HOME. */
export function expandHome(p: string, env: NodeJS.ProcessEnv): string {
  const home = env.HOME ?? '/home/koder';
  if (p === '~') return home;
  if (p.startsWith('~/')) return posix.join(home, p.slice(2));
  return p;
}

function strings(v: unknown): string[] | undefined {
  return Array.isArray(v) && v.every((x) => typeof x === 'string') ? (v as string[]) : undefined;
}

/**
 * Scan settings from a resolved config, read defensively: the config may spell keys in snake_case
 * (the file) or camelCase (resolved), and any of them may be missing.
 */
export function scanSettings(config: unknown, env: NodeJS.ProcessEnv, noticesDir?: string): ScanSettings {
  const c = (config && typeof config === 'object' ? config : {}) as Record<string, unknown>;
  const s = (c.scan && typeof c.scan === 'object' ? c.scan : {}) as Record<string, unknown>;
  const pick = (...keys: string[]) => keys.map((k) => s[k]).find((v) => v !== undefined);
  const vars = (c.vars && typeof c.vars === 'object' ? c.vars : {}) as Record<string, unknown>;
  const root = [c.root, vars.root, c.monorepoRoot].find((v): v is string => typeof v === 'string' && v !== '') ?? '~/dev/koder';
  const dockerfile = pick('dockerfile_is_laptop', 'dockerfileIsLaptop', 'dockerfile');
  const laptopRoot = pick('laptop_root', 'laptopRoot');
  const ignore = [...(strings(pick('ignore')) ?? DEFAULT_IGNORE)];
  if (noticesDir && !ignore.includes(`${noticesDir}/**`)) ignore.push(`${noticesDir.replace(/\/+$/, '')}/**`);
  return {
    vmGlobs: strings(pick('vm_globs', 'vmGlobs')) ?? DEFAULT_VM_GLOBS,
    ignore,
    markdownGlobs: strings(pick('markdown_globs', 'markdownGlobs', 'markdown')) ?? DEFAULT_MARKDOWN_GLOBS,
    dockerfileIsLaptop: typeof dockerfile === 'boolean' ? dockerfile : dockerfile === 'skip' ? false : true,
    laptopRunners: strings(pick('laptop_runners', 'laptopRunners')) ?? [],
    laptopRoot: expandHome(typeof laptopRoot === 'string' ? laptopRoot : root, env),
  };
}

export interface ScanInput {
  /** Repository-relative, forward slashes. */
  path: string;
  text: string;
  /** Only report commands on these lines (ci: the lines the pull request adds). */
  lines?: Set<number>;
}

export interface ScanContext {
  classify: Classify;
  settings: ScanSettings;
  env: NodeJS.ProcessEnv;
}

export class Scanner {
  private readonly isVm: (p: string) => boolean;
  private readonly isIgnored: (p: string) => boolean;
  private readonly isMd: (p: string) => boolean;
  private readonly env: NodeJS.ProcessEnv;
  /** Files scanned and snippets classified, for figures. */
  stats = { files: 0, snippets: 0 };

  constructor(private readonly ctx: ScanContext) {
    const s = ctx.settings;
    this.isVm = s.vmGlobs.length ? picomatch(s.vmGlobs, { dot: true }) : () => false;
    this.isIgnored = s.ignore.length ? picomatch(s.ignore, { dot: true }) : () => false;
    this.isMd = s.markdownGlobs.length ? picomatch(s.markdownGlobs, { dot: true, nocase: true }) : () => false;
    this.env = ctx.env;
  }

  /** Cheap test before reading a file: can it hold scanned text at all? */
  wants(path: string): boolean {
    if (this.isIgnored(path)) return false;
    if (this.isVm(path) && !this.ctx.settings.laptopRunners.length) return false;
    return mayScan(path, this.isMd);
  }

  kindOf(path: string, text: string): FileKind | null {
    if (this.isIgnored(path)) return null;
    return detectKind(path, text, this.isMd);
  }

  scan(input: ScanInput): Finding[] {
    const kind = this.kindOf(input.path, input.text);
    if (!kind) return [];
    if (kind === 'dockerfile' && !this.ctx.settings.dockerfileIsLaptop) return [];
    if (input.text.length > 1024 * 1024 || input.text.includes('\u0000')) return [];
    const vmFile = this.isVm(input.path);
    const runners = this.ctx.settings.laptopRunners;
    if (vmFile && !runners.length) return [];
    this.stats.files++;
    let snippets: Snippet[];
    try {
      snippets = extract(kind, input.path, input.text, { root: this.ctx.settings.laptopRoot });
    } catch {
      return [];
    }
    const out: Finding[] = [];
    for (const sn of snippets) {
      if (vmFile && !(sn.runner ?? []).some((r) => runners.includes(r))) continue;
      if (input.lines && !this.touches(sn, input.lines)) continue;
      this.stats.snippets++;
      out.push(...this.scanSnippet(input, kind, sn));
    }
    return out;
  }

  private touches(sn: Snippet, lines: Set<number>): boolean {
    const a = sn.at(0).line;
    const b = sn.at(Math.max(0, sn.text.length - 1)).line;
    for (let l = Math.min(a, b); l <= Math.max(a, b); l++) if (lines.has(l)) return true;
    // Mapped positions may not be monotonic (inserted text): check every line start.
    return false;
  }

  private absDir(sn: Snippet, dir: string | null): string {
    if (sn.cwdKind === 'container') return dir ?? '/';
    return dir ? posix.join(this.ctx.settings.laptopRoot, dir) : this.ctx.settings.laptopRoot;
  }

  private classify(line: string, cwd: string): Verdict {
    return this.ctx.classify(line, { cwd, env: this.env });
  }

  /**
   * The findings of one snippet, judged in each directory it may run in; a finding that only one of them
   * gives says where (`run from scripts/`).
   */
  private scanSnippet(input: ScanInput, kind: FileKind, sn: Snippet): Finding[] {
    const dirs = [...new Set([sn.cwd, ...(sn.alsoFrom ?? [])])];
    if (dirs.length === 1) return this.scanIn(input, kind, sn, dirs[0]!, '');
    const per = dirs.map((d) => this.scanIn(input, kind, sn, d, d ? ` (run from ${d}/)` : ' (run from the repository root)'));
    const key = (f: Finding) => `${f.line}:${f.column}:${f.ruleId}`;
    const out: Finding[] = [];
    const seen = new Set<string>();
    for (const list of per) {
      for (const f of list) {
        const k = key(f);
        if (seen.has(k)) continue;
        seen.add(k);
        // Found from every directory: no need to say which.
        if (per.every((l) => l.some((g) => key(g) === k))) f.message = f.message.replace(/ \(run from [^)]*\)(?=: `)/, '');
        out.push(f);
      }
    }
    return out;
  }

  private scanIn(input: ScanInput, kind: FileKind, sn: Snippet, dir: string | null, from: string): Finding[] {
    const cwd = this.absDir(sn, dir);
    const hits: { start: number; end: number; command: SimpleCommand; rule: string | null; decision: Verdict['decision']; verdict: Verdict; base: number; text: string }[] = [];
    const collect = (text: string, base: number) => {
      const v = this.classify(text, cwd);
      if (v.decision === 'allow') return true;
      if (isParseError(v)) return false;
      const bad = v.commands.filter((c) => c.decision !== 'allow');
      if (bad.length === 0) {
        // A deny/reroute that names no command: report it at the start of the text.
        hits.push({ start: base, end: base + text.length, command: { program: null, argv: [], unknown: [], env: {}, cwd, via: [], span: { start: 0, end: text.length } }, rule: v.rule, decision: v.decision, verdict: v, base, text });
      }
      for (const c of bad) hits.push({ start: base + c.command.span.start, end: base + c.command.span.end, command: c.command, rule: c.rule ?? v.rule, decision: c.decision, verdict: v, base, text });
      return true;
    };
    if (!collect(sn.text, 0)) {
      // Text the parser rejects as a whole (a placeholder in a doc, an unbalanced line): one logical line
      // at a time, so one bad line does not hide the others. Lines that still fail are not reported.
      for (const l of logicalLines(sn.text)) if (l.text.trim()) collect(l.text, l.start);
    }
    const out: Finding[] = [];
    const seen = new Set<string>();
    for (const h of hits) {
      const pos = sn.at(h.start);
      const endPos = sn.at(Math.max(h.start, h.end - 1));
      if (input.lines) {
        let hit = false;
        for (let l = pos.line; l <= Math.max(pos.line, endPos.line); l++) if (input.lines.has(l)) hit = true;
        if (!hit) continue;
      }
      const key = `${pos.line}:${pos.column}:${h.rule}`;
      if (seen.has(key)) continue;
      seen.add(key);
      const shown = oneLine(sn.text.slice(h.start, h.end));
      const suggestion = this.suggest(sn.text, h, cwd);
      // The guard refuses what it cannot read statically (a program or directory from a variable) where
      // it could be heavy. Written into a file that is a doubt, not a fact: a warning (exit 0), so that
      // `$(CC)` in a recipe or `"$@"` in a wrapper script does not fail a pull request.
      const uncertain = h.rule === 'unknown-program' || (h.decision === 'deny' && (h.command.program === null || h.command.cwd === null));
      const reason = firstLine(h.verdict.reason);
      const what = uncertain
        ? `may run heavy work on the laptop${/cannot tell statically/.test(reason) ? '' : ' (offhost cannot tell statically)'}`
        : h.decision === 'reroute'
          ? 'runs heavy work on the laptop instead of its VM'
          : 'is refused on a laptop';
      const f: Finding = {
        file: input.path,
        line: pos.line,
        column: pos.column,
        ruleId: h.rule ?? 'heavy-command',
        severity: uncertain ? 'warning' : 'error',
        message: `${describe(kind, sn)}${from}: \`${shown}\` ${what}: ${reason}`,
      };
      if (endPos.line !== pos.line || endPos.column !== pos.column) {
        f.endLine = endPos.line;
        f.endColumn = endPos.column + 1;
      }
      // A suggestion that only repeats the reason says nothing more.
      if (suggestion && suggestion !== reason) f.suggestion = suggestion;
      out.push(f);
    }
    return out;
  }

  /** The rewrite to use: of the command alone, else of its logical line, else of the whole text. */
  private suggest(text: string, h: { start: number; end: number; command: SimpleCommand; verdict: Verdict }, cwd: string): string | undefined {
    const tries: [string, string][] = [];
    if (h.command.via.length === 0 && h.end > h.start) tries.push([text.slice(h.start, h.end), h.command.cwd ?? cwd]);
    const line = logicalLines(text).find((l) => l.start <= h.start && h.start < l.start + l.text.length + 1);
    if (line) tries.push([line.text.trim(), cwd]);
    for (const [t, c] of tries) {
      const v = this.classify(t, c);
      if (v.decision === 'reroute' && (v.rewrite || v.route?.command)) return portable((v.rewrite ?? v.route!.command)!);
      if (v.decision === 'deny' && !isParseError(v)) return firstLine(v.reason);
    }
    const whole = h.verdict.rewrite ?? h.verdict.route?.command;
    if (h.verdict.decision === 'reroute' && whole && !text.trim().includes('\n')) return portable(whole);
    return undefined;
  }
}

/**
 * The guard writes `offhost run` with the path of the running bundle (in CI, a path on the runner):
 * a suggestion for a person says `offhost run -- …`.
 */
export function portable(rewrite: string): string {
  return rewrite.replace(/^(?:'[^']*\/offhost(?:\.[cm]js)?'|\S*\/offhost(?:\.[cm]js)?) run -- /, 'offhost run -- ');
}

function isParseError(v: Verdict): boolean {
  return v.rule === 'parse-error';
}

function describe(kind: FileKind, sn: Snippet): string {
  switch (kind) {
    case 'shell':
      return 'shell script';
    case 'package-json':
      return `package.json ${sn.where}`;
    case 'makefile':
      return `Makefile ${sn.where}`;
    case 'github-actions':
      return `workflow ${sn.where}`;
    case 'gitlab-ci':
      return `GitLab CI ${sn.where}`;
    case 'dockerfile':
      return 'Dockerfile RUN (docker build runs it on the laptop)';
    case 'markdown':
      return `instructions, ${sn.where}`;
  }
}

function oneLine(s: string): string {
  const t = s.replace(/\\\n\s*/g, ' ').replace(/\s+/g, ' ').trim();
  return t.length > 120 ? `${t.slice(0, 117)}...` : t;
}

function firstLine(s: string): string {
  return s.split('\n')[0]!.trim();
}

/** Lines with their `\`-continuations joined, with their start offsets. */
export function logicalLines(text: string): { text: string; start: number }[] {
  const out: { text: string; start: number }[] = [];
  let start = 0;
  let i = 0;
  while (i <= text.length) {
    const nl = text.indexOf('\n', i);
    const end = nl < 0 ? text.length : nl;
    const seg = text.slice(start, end);
    const m = /\\+$/.exec(seg);
    if (nl >= 0 && m && m[0].length % 2 === 1) {
      i = nl + 1;
      continue;
    }
    out.push({ text: seg, start });
    if (nl < 0) break;
    start = i = nl + 1;
  }
  return out;
}
