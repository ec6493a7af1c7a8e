// `offhost lock acquire` + `offhost lock release` as whole processes (node start-up, git commits), in each
// of the stores (docs/LOCKS.md "Which clones share a lock"): a clone's own ref (a repository with no commit
// yet), the per-user store every clone of the machine shares (the default), and a local bare remote
// (--push). Prints the median and spread, and each as a ratio to the clone's own ref measured in the same
// run (the cost of sharing), in a temp HOME (the user store lives there).
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const bin = process.env.OFFHOST_BENCH_BIN ?? join(root, 'dist', 'offhost.cjs');
const ITER = Number(process.env.OFFHOST_BENCH_ITER ?? 12);
const VM = 's.khost1.dev-linux-koda';

const base = mkdtempSync(join(tmpdir(), 'offhost-lock-bench-'));
const env = { ...process.env, HOME: base, OFFHOST_SESSION: 'bench', OFFHOST_AI: 'human', OFFHOST_ROLE: 'laptop' };
delete env.OFFHOST_STATE_DIR;
delete env.XDG_STATE_HOME;
delete env.CI;
for (const k of Object.keys(env)) if (k.startsWith('GIT_')) delete env[k];

const git = (cwd, ...args) => execFileSync('git', args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] }).toString();

function repo(base, name) {
  const dir = join(base, name);
  git(base, 'init', '-q', '-b', 'main', dir);
  git(dir, 'config', 'user.email', 'bench@example.test');
  git(dir, 'config', 'user.name', 'bench');
  git(dir, 'config', 'commit.gpgsign', 'false');
  return dir;
}

function offhost(cwd, ...args) {
  const t = process.hrtime.bigint();
  const r = spawnSync(process.execPath, [bin, ...args], { cwd, env, encoding: 'utf8' });
  const ms = Number(process.hrtime.bigint() - t) / 1e6;
  if (r.status !== 0) throw new Error(`offhost ${args.join(' ')} exited ${r.status}: ${r.stderr}`);
  return ms;
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const fmt = (xs) => `median ${median(xs).toFixed(0)} ms (min ${Math.min(...xs).toFixed(0)}, max ${Math.max(...xs).toFixed(0)})`;

function measure(cwd, extra) {
  const acq = [];
  const rel = [];
  // One warm-up round (file-system caches, git's first run).
  offhost(cwd, 'lock', 'acquire', VM, '--reason', 'bench', ...extra);
  offhost(cwd, 'lock', 'release', VM, ...extra);
  for (let i = 0; i < ITER; i++) {
    acq.push(offhost(cwd, 'lock', 'acquire', VM, '--reason', `bench ${i}`, ...extra));
    rel.push(offhost(cwd, 'lock', 'release', VM, ...extra));
  }
  const both = acq.map((a, i) => a + rel[i]);
  return { acq, rel, both };
}

try {
  // A clone's own ref: a repository with no commit yet has no identity to share a store by.
  const own = repo(base, 'own');
  const o = measure(own, []);

  // The user store (the default): a repository with a commit.
  const local = repo(base, 'local');
  writeFileSync(join(local, 'README.md'), 'bench\n');
  git(local, 'add', 'README.md');
  git(local, 'commit', '-q', '-m', 'init');
  const a = measure(local, []);

  // With --push to a local bare remote.
  const bare = join(base, 'remote.git');
  git(base, 'clone', '-q', '--bare', local, bare);
  const clone = join(base, 'clone');
  git(base, 'clone', '-q', bare, clone);
  git(clone, 'config', 'user.email', 'bench@example.test');
  git(clone, 'config', 'user.name', 'bench');
  const b = measure(clone, ['--push']);

  const ratio = (xs) => (median(xs) / median(o.both)).toFixed(2);
  console.log(`lock acquire + release, whole processes, ${ITER} iterations each (node ${process.version})`);
  console.log(`  clone's own ref: acquire ${fmt(o.acq)}; release ${fmt(o.rel)}; acquire+release ${fmt(o.both)} (1.00)`);
  console.log(`  user store:      acquire ${fmt(a.acq)}; release ${fmt(a.rel)}; acquire+release ${fmt(a.both)} (${ratio(a.both)} x the clone's own ref)`);
  console.log(`  with --push:     acquire ${fmt(b.acq)}; release ${fmt(b.rel)}; acquire+release ${fmt(b.both)} (${ratio(b.both)} x the clone's own ref)`);
  const baseline = [];
  for (let i = 0; i < ITER; i++) {
    const t = process.hrtime.bigint();
    spawnSync(process.execPath, [bin, '--version'], { env });
    baseline.push(Number(process.hrtime.bigint() - t) / 1e6);
  }
  console.log(`  (offhost --version alone: ${fmt(baseline)})`);
} finally {
  rmSync(base, { recursive: true, force: true });
}
