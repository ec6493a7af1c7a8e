// Process checks the tests share.
import { readFileSync } from 'node:fs';

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
