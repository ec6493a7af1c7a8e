// `offhost doctor` is a list of independent checks, one entry each in CHECKS (src/doctor/index.ts). A check
// reads the laptop (files, the hooks run as their agent runs them) and returns what it found; it never
// changes anything and never throws for what it finds (a problem is an item with `ok: false` and a fix).
import type { Io } from '../io.js';

export interface DoctorItem {
  /** The check that found it (its id in CHECKS). */
  check: string;
  /** What the line is about, when a check reports on several things (an agent, a file): never repeated within a check. */
  subject?: string;
  ok: boolean;
  /** Informational: nothing set up there, so nothing to fix. */
  note?: boolean;
  detail: string;
  /** What to run or edit, for a problem. */
  fix?: string;
}

export interface DoctorContext {
  io: Io;
  env: NodeJS.ProcessEnv;
  cwd: string;
  /** The git work tree top of cwd, or null outside git. */
  repo: string | null;
  /** Where the project files are looked for: the repository top, else cwd. */
  project: string;
}

export interface DoctorCheck {
  id: string;
  /** One line: what it looks at (shown by `offhost doctor --help` and in the JSON). */
  summary: string;
  run(ctx: DoctorContext): DoctorItem[] | Promise<DoctorItem[]>;
}
