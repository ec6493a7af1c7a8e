// The inline-code readers by interpreter name (python3.12 is python, nodejs is node). Used by the
// interpreters family only (src/shell/programs/interpreters.ts), so the readers load with it, not with
// every start (docs/BUILD.md).
import type { InlineLanguage } from './types.js';
import { PYTHON_NAMES } from './names.js';
import { ipython, python } from './python.js';
import { node } from './node.js';
import { perl } from './perl.js';
import { ruby } from './ruby.js';

export type { InlineLanguage, Piece, Spawned } from './types.js';

export { PYTHON_NAMES } from './names.js';

export function languageOf(interpreter: string): InlineLanguage | null {
  if (/^ipython[0-9.]*$/.test(interpreter)) return ipython;
  if (PYTHON_NAMES.test(interpreter)) return python;
  if (interpreter === 'node' || interpreter === 'nodejs') return node;
  if (interpreter === 'perl') return perl;
  if (interpreter === 'ruby') return ruby;
  return null;
}
