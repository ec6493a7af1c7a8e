// The lock session of a run when the caller names none (issue 11 item 2): unique by default. An agent's
// hook puts the agent's own session id in OFFHOST_SESSION; without one, the session is the process tree
// the command comes from: the parent process (the agent or the terminal's shell that started offhost),
// named by user, pid and start time, so that two agents never share one, and a pid reused later does not
// inherit a lock.
import { readFileSync } from 'node:fs';

function startTicks(pid: number): string | null {
  try {
    // /proc/PID/stat: the command name is in parentheses and may hold spaces; field 22 is the start time.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return fields[19] ?? null;
  } catch {
    return null;
  }
}

/** `<prefix>-<user>-<ppid>[-<start>]`, for the process tree of `ppid`. */
export function processTreeSession(prefix: string, env: NodeJS.ProcessEnv, ppid: number = process.ppid): string {
  const user = (env.USER || env.LOGNAME || 'user').replace(/[^A-Za-z0-9._-]/g, '_');
  const start = startTicks(ppid);
  return `${prefix}-${user}-${ppid}${start ? `-${start}` : ''}`;
}
