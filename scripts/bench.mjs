// `npm run bench`: runs every benchmark under bench/ in name order, each in its own process so one
// area's warm caches do not flatter another's. Figures go to stdout; docs/PERFORMANCE.md keeps the latest ones, with the method.
import { readdirSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const only = process.argv.slice(2);
const files = readdirSync(join(root, 'bench'))
  .filter((f) => f.endsWith('.bench.mjs'))
  .filter((f) => only.length === 0 || only.some((o) => f.includes(o)))
  .sort();
console.log(`offhost bench, ${new Date().toISOString()}, node ${process.version}`);
let failed = 0;
for (const f of files) {
  console.log(`\n== ${f}`);
  const r = spawnSync(process.execPath, [join(root, 'bench', f)], { stdio: 'inherit', cwd: root });
  if (r.status !== 0) failed++;
}
process.exitCode = failed ? 1 : 0;
