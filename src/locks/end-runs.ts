// The step every offhost command on this host takes when it opens the lock store (issue 24): runs whose
// laptop process is gone are ended. Their remote job is made sure gone first (the reaper, which knows how
// to reach the VM), then their claims are dropped and each lock only they held is archived with the
// reason, so the VM is free at once. Costs one read of the lock ref when nothing has ended.
import { hostname } from 'node:os';
import { endedRuns, endRuns } from './lifecycle.js';
import { reapEndedRuns, type JobReaper } from './holder-process.js';
import type { LockStore } from './store.js';

export async function freeEndedRuns(store: LockStore, session: string, reaper: () => Promise<JobReaper>, say: (line: string) => void): Promise<void> {
  const found = await endedRuns(store);
  if (found.length === 0) return;
  for (const line of await reapEndedRuns(found, reaper)) say(line);
  const r = await endRuns(store, { session });
  for (const a of r.archived) say(`freed ${a.file.replace(/^.*\/lock-(.+)\.md$/, '$1')} (held by session ${a.session}): ${a.why}; archived as ${a.archive} by ${hostname()}`);
}
