// GitLab CI: `script:`, `before_script:` and `after_script:` of every job (and the top-level and
// `default:` ones). GitLab runs the items of one section as one shell script, so one section is one
// snippet (a `cd` in one item applies to the next), run in the repository root ($CI_PROJECT_DIR).
import { isMap, LineCounter, parseDocument, type Document, type Node, type YAMLMap } from 'yaml';
import { addScalar, scalarsOf } from './yaml-util.js';
import { lineStarts, SnippetBuilder, type Snippet } from './snippet.js';

export function isGitlabCi(path: string): boolean {
  return /(^|\/)\.gitlab-ci\.ya?ml$/.test(path) || /\.gitlab-ci\.ya?ml$/.test(path) || /(^|\/)\.gitlab\/ci\/.+\.ya?ml$/.test(path);
}

const RESERVED = new Set(['image', 'services', 'stages', 'types', 'variables', 'cache', 'include', 'workflow', 'spec']);
const SECTIONS = ['before_script', 'script', 'after_script'];

export function extractGitlabCi(path: string, text: string): Snippet[] {
  let doc: Document;
  try {
    doc = parseDocument(text, {
      lineCounter: new LineCounter(),
      uniqueKeys: false,
      customTags: [{ tag: '!reference', collection: 'seq', resolve: (v: unknown) => v } as never],
    });
  } catch {
    return [];
  }
  if (doc.errors.length || !isMap(doc.contents)) return [];
  const starts = lineStarts(text);
  const out: Snippet[] = [];
  const root = doc.contents as YAMLMap;
  const addSections = (m: YAMLMap, job: string, runner: string[]) => {
    for (const sec of SECTIONS) {
      const scalars = scalarsOf(m.get(sec, true) as Node);
      if (!scalars.length) continue;
      const b = new SnippetBuilder(starts);
      scalars.forEach((s, k) => {
        if (k) b.add('\n', s.range?.[0] ?? 0, false);
        addScalar(b, s, text);
      });
      out.push(b.build({ cwd: '', cwdKind: 'repo', where: `job ${job}, ${sec}`, runner }));
    }
  };
  for (const pair of root.items) {
    const key = String((pair.key as { value?: unknown })?.value ?? pair.key);
    if (SECTIONS.includes(key)) continue;
    if (RESERVED.has(key) || !isMap(pair.value)) continue;
    const tags = (pair.value.toJSON() as { tags?: unknown })?.tags;
    addSections(pair.value, key, Array.isArray(tags) ? tags.filter((t): t is string => typeof t === 'string') : []);
  }
  // Top-level (deprecated) before/after_script.
  addSections(root, '(global)', []);
  return out;
}
