// Process checks the tests share.
import { readdirSync, readFileSync } from 'node:fs';

/** Whether a process has ended (gone, or a zombie no one has reaped yet). */
export function ended(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return true;
  }
  try {
    return /^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return true;
  }
}

/**
 * The pids of live processes (zombies left out) whose argv `is` accepts, and, when `tag` is given, whose
 * environment holds `tag` (NAME=VALUE) as one entry. Processes gone meanwhile, or not ours to read, are skipped.
 */
export function processesWhere(is: (argv: string[]) => boolean, tag?: string): number[] {
  const out: number[] = [];
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const st = readFileSync(`/proc/${d}/stat`, 'utf8');
      if (st.slice(st.lastIndexOf(')') + 2)[0] === 'Z') continue;
      if (!is(readFileSync(`/proc/${d}/cmdline`, 'utf8').split('\0').slice(0, -1))) continue;
      if (tag !== undefined && !readFileSync(`/proc/${d}/environ`, 'utf8').split('\0').includes(tag)) continue;
      out.push(Number(d));
    } catch {
      /* gone meanwhile, or not ours to read */
    }
  }
  return out;
}

/** Whether two argvs are the same words. */
export const sameArgv = (want: readonly string[]) => (argv: string[]) => argv.length === want.length && argv.every((w, i) => w === want[i]);
