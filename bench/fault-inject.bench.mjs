// The lock store's fault-injection suite with a large trial count (scripts/fault-inject.mjs): SIGKILL at
// random points of every lock operation, the human moving HEAD and committing, clones racing with --push.
// OFFHOST_FAULT_TRIALS sets the count (default 10 per operation), OFFHOST_FAULT_SEED the seed.
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const trials = process.env.OFFHOST_FAULT_TRIALS ?? '10';
const seed = process.env.OFFHOST_FAULT_SEED ?? String(Date.now() % 1_000_000);
const r = spawnSync(process.execPath, [join(root, 'scripts', 'fault-inject.mjs'), '--trials', trials, '--seed', seed], { stdio: 'inherit', cwd: root });
process.exitCode = r.status ?? 1;
