// One extractor per file kind; `detectKind` picks it from the path (and, for scripts without an
// extension, the shebang).
import { extractDockerfile, isDockerfile } from './dockerfile.js';
import { extractGithubActions, isGithubActions } from './github-actions.js';
import { extractGitlabCi, isGitlabCi } from './gitlab-ci.js';
import { extractMakefile, isMakefile } from './makefile.js';
import { extractMarkdown } from './markdown.js';
import { extractPackageJson } from './package-json.js';
import { extractShell, isShellScript, mayHaveShebang, type ExtractContext } from './shell.js';
import type { FileKind, Snippet } from './snippet.js';

export type { FileKind, Snippet };

export type { ExtractContext };

export const EXTRACTORS: Record<FileKind, (path: string, text: string, ctx?: ExtractContext) => Snippet[]> = {
  shell: extractShell,
  'package-json': extractPackageJson,
  makefile: extractMakefile,
  'github-actions': extractGithubActions,
  'gitlab-ci': extractGitlabCi,
  dockerfile: extractDockerfile,
  markdown: extractMarkdown,
};

/**
 * The kind of a repository-relative path, or null when it is not scanned. `isMarkdown` says whether a
 * `.md` path is an instruction file (config globs); `text` is needed only for the shebang test.
 */
export function detectKind(path: string, text: string | undefined, isMarkdown: (p: string) => boolean): FileKind | null {
  const base = path.slice(path.lastIndexOf('/') + 1);
  if (base === 'package.json') return 'package-json';
  if (isMakefile(path)) return 'makefile';
  if (isGithubActions(path)) return 'github-actions';
  if (isGitlabCi(path)) return 'gitlab-ci';
  if (isDockerfile(path)) return 'dockerfile';
  if (/\.(md|markdown)$/i.test(base)) return isMarkdown(path) ? 'markdown' : null;
  if (isShellScript(path, text)) return 'shell';
  return null;
}

/** Whether the path may be scanned, before reading it (scripts without an extension need their content). */
export function mayScan(path: string, isMarkdown: (p: string) => boolean): boolean {
  return detectKind(path, undefined, isMarkdown) !== null || mayHaveShebang(path);
}

export function extract(kind: FileKind, path: string, text: string, ctx: ExtractContext = {}): Snippet[] {
  return EXTRACTORS[kind](path, text, ctx);
}
