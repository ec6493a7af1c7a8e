// GitHub Actions: `run:` steps of workflows (`jobs.<id>.steps[]`) and of composite actions
// (`action.yml`: `runs.steps[]`). Each step is one snippet, run by its shell (`shell:`, else
// `defaults.run.shell` of the job, then of the workflow, else bash -- pwsh on Windows runners) in its
// `working-directory:` (same defaulting), relative to the repository root. Steps whose shell is not a
// POSIX shell (pwsh, python, cmd) are not scanned.
import { isMap, isSeq, LineCounter, parseDocument, type Document, type Node, type YAMLMap } from 'yaml';
import { addScalar } from './yaml-util.js';
import { joinRel, lineStarts, SnippetBuilder, type Snippet } from './snippet.js';

export function isGithubActions(path: string): boolean {
  return /(^|\/)\.github\/workflows\/[^/]+\.ya?ml$/.test(path) || /(^|\/)action\.ya?ml$/.test(path);
}

const POSIX = /^(bash|sh|dash)\b/;

export function extractGithubActions(path: string, text: string): Snippet[] {
  let doc: Document;
  try {
    doc = parseDocument(text, { lineCounter: new LineCounter(), keepSourceTokens: false, uniqueKeys: false });
  } catch {
    return [];
  }
  if (doc.errors.length || !isMap(doc.contents)) return [];
  const starts = lineStarts(text);
  const root = doc.contents as YAMLMap;
  const out: Snippet[] = [];
  const wfDefaults = runDefaults(root);

  const scanSteps = (steps: Node | null, job: string, jobDefaults: { shell?: string; wd?: string }, runner: string[]) => {
    if (!isSeq(steps)) return;
    steps.items.forEach((item, i) => {
      if (!isMap(item)) return;
      const run = item.get('run', true) as Node | undefined;
      if (!run || !('value' in run) || typeof (run as { value: unknown }).value !== 'string') return;
      const shell = str(item.get('shell')) ?? jobDefaults.shell ?? wfDefaults.shell ?? (runner.some((r) => /windows/i.test(r)) ? 'pwsh' : 'bash');
      if (!POSIX.test(shell.trim())) return;
      const wd = str(item.get('working-directory')) ?? jobDefaults.wd ?? wfDefaults.wd ?? '';
      const cwd = wd.includes('${{') ? null : joinRel('', wd);
      const b = new SnippetBuilder(starts);
      addScalar(b, run as never, text, true);
      const name = str(item.get('name'));
      out.push(b.build({ cwd, cwdKind: 'repo', where: `job ${job}, step ${name ? `"${name}"` : i + 1}`, runner }));
    });
  };

  const jobs = root.get('jobs', true);
  if (isMap(jobs)) {
    for (const pair of jobs.items) {
      const job = String((pair.key as { value?: unknown })?.value ?? pair.key);
      const j = pair.value;
      if (!isMap(j)) continue;
      scanSteps(j.get('steps', true) as Node, job, runDefaults(j), runsOn(j.toJSON()?.['runs-on']));
    }
  }
  const runs = root.get('runs', true);
  if (isMap(runs)) scanSteps(runs.get('steps', true) as Node, 'composite action', {}, []);
  return out;
}

function str(v: unknown): string | undefined {
  return typeof v === 'string' ? v : typeof v === 'number' ? String(v) : undefined;
}

function runDefaults(m: YAMLMap): { shell?: string; wd?: string } {
  const d = m.toJSON()?.defaults?.run as Record<string, unknown> | undefined;
  return { shell: str(d?.shell), wd: str(d?.['working-directory']) };
}

function runsOn(v: unknown): string[] {
  if (typeof v === 'string') return [v];
  if (Array.isArray(v)) return v.filter((x): x is string => typeof x === 'string');
  if (v && typeof v === 'object') {
    const labels = (v as { labels?: unknown }).labels;
    return runsOn(labels);
  }
  return [];
}
