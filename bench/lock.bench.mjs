// `offhost lock acquire` + `offhost lock release` as whole processes (node start-up, git commits), in each
// of the stores (docs/LOCKS.md "Which clones share a lock"): a clone's own ref (a repository with no commit
// yet), the per-user store every clone of the machine shares (the default), and a local bare remote
// (--push), and the user store again after 5,000 releases (the archive folder they leave). Prints the median and spread, each as a ratio to the clone's own ref measured in the same run
// (the cost of sharing), the CPU time of each command with the git it ran (less moved by load than wall
// time), and the number of git processes each command starts (a PATH wrapper for git that appends to a
// log: a count, not a timing). With OFFHOST_BENCH_BEFORE=<another build's offhost.cjs> (e.g.
// main's HEAD: `git worktree add /tmp/before main && cd /tmp/before && npm run build`), that build is
// measured too, alternately with this one in the same rounds, each in repositories of its own, and every
// row gets its ratio to it. In a temp HOME (the user store lives there).
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const bin = process.env.OFFHOST_BENCH_BIN ?? join(root, 'dist', 'offhost.cjs');
const before = process.env.OFFHOST_BENCH_BEFORE || null;
const ITER = Number(process.env.OFFHOST_BENCH_ITER ?? 12);
const VM = 's.khost1.dev-linux-koda';

const base = mkdtempSync(join(tmpdir(), 'offhost-lock-bench-'));
const env = { ...process.env, HOME: base, OFFHOST_SESSION: 'bench', OFFHOST_AI: 'human', OFFHOST_ROLE: 'laptop' };
delete env.OFFHOST_STATE_DIR;
delete env.XDG_STATE_HOME;
delete env.CI;
for (const k of Object.keys(env)) if (k.startsWith('GIT_')) delete env[k];

// The counting git: first on PATH, one line per process, then the real git.
const realGit = execFileSync('sh', ['-c', 'command -v git'], { encoding: 'utf8' }).trim();
const wrapDir = join(base, 'counting-git');
mkdirSync(wrapDir);
writeFileSync(join(wrapDir, 'git'), `#!/bin/sh\nprintf '%s\\n' "$*" >> "$OFFHOST_BENCH_GIT_LOG"\nexec ${realGit} "$@"\n`);
chmodSync(join(wrapDir, 'git'), 0o755);

const git = (cwd, ...args) => execFileSync('git', args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] }).toString();

function repo(dir, withCommit) {
  git(base, 'init', '-q', '-b', 'main', dir);
  git(dir, 'config', 'user.email', 'bench@example.test');
  git(dir, 'config', 'user.name', 'bench');
  git(dir, 'config', 'commit.gpgsign', 'false');
  if (withCommit) {
    // A root commit of its own: each repository gets a user store of its own.
    writeFileSync(join(dir, 'README.md'), `bench ${dir}\n`);
    git(dir, 'add', 'README.md');
    git(dir, 'commit', '-q', '-m', 'init');
  }
  return dir;
}

/**
 * Runs one command; its wall time, and its CPU time with every process it waited for (git included), which
 * load moves far less than wall time: bash's `times` after it (the children's user + system time).
 */
function offhost(which, cwd, args, extraEnv = {}) {
  const t = process.hrtime.bigint();
  const r = spawnSync('bash', ['-c', '"$@"; s=$?; times >&2; exit $s', 'bash', process.execPath, which, ...args], { cwd, env: { ...env, ...extraEnv }, encoding: 'utf8' });
  const ms = Number(process.hrtime.bigint() - t) / 1e6;
  if (r.status !== 0) throw new Error(`offhost ${args.join(' ')} exited ${r.status}: ${r.stderr}`);
  const m = /(\d+)m([\d.]+)s (\d+)m([\d.]+)s\s*$/.exec(r.stderr);
  const cpu = m ? (Number(m[1]) * 60 + Number(m[2]) + Number(m[3]) * 60 + Number(m[4])) * 1000 : NaN;
  return { ms, cpu };
}

/** The git processes one command starts. */
function gitCount(which, cwd, args) {
  const log = join(wrapDir, 'log');
  writeFileSync(log, '');
  offhost(which, cwd, args, { PATH: `${wrapDir}:${env.PATH}`, OFFHOST_BENCH_GIT_LOG: log });
  return readFileSync(log, 'utf8').split('\n').filter(Boolean).length;
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const fmt = (xs) => `median ${median(xs).toFixed(0)} ms (min ${Math.min(...xs).toFixed(0)}, max ${Math.max(...xs).toFixed(0)})`;

const builds = [{ name: 'this build', bin }, ...(before ? [{ name: 'before', bin: before }] : [])];
const modes = [
  { name: "clone's own ref", make: (d) => repo(d, false), extra: [] },
  { name: 'user store', make: (d) => repo(d, true), extra: [] },
  {
    name: 'with --push',
    make: (d) => {
      const seed = repo(`${d}-seed`, true);
      git(base, 'clone', '-q', '--bare', seed, `${d}.git`);
      git(base, 'clone', '-q', `${d}.git`, d);
      git(d, 'config', 'user.email', 'bench@example.test');
      git(d, 'config', 'user.name', 'bench');
      return d;
    },
    extra: ['--push'],
  },
  // A laptop after months of runs: one archived lock per release, in the policy's flat archive folder.
  { name: 'user store, 5,000 archived locks', make: (d) => repo(d, true), extra: [], archived: 5000 },
];

/**
 * Puts `n` archived locks into the archive folder of the user store of `dir` (one commit on its ref, made
 * with git's own plumbing in a private index), as thousands of releases would have left it.
 */
function fillArchive(dir, n) {
  const store = join(base, '.local', 'state', 'offhost', 'lock-stores', `${readFileSync(join(dir, '.git', 'offhost', 'store-id'), 'utf8').trim()}.git`);
  const e = { ...env, GIT_INDEX_FILE: join(base, 'fill-index'), GIT_AUTHOR_NAME: 'bench', GIT_AUTHOR_EMAIL: 'bench@example.test', GIT_COMMITTER_NAME: 'bench', GIT_COMMITTER_EMAIL: 'bench@example.test' };
  const g = (args, input) => execFileSync(realGit, args, { cwd: store, env: e, input, encoding: 'utf8' }).trim();
  const tip = g(['rev-parse', 'refs/offhost/locks']);
  g(['read-tree', tip]);
  const blob = g(['hash-object', '-w', '--stdin'], '# an archived lock\n');
  const lines = [];
  for (let i = 0; i < n; i++) lines.push(`100644 ${blob}\tmeta/context/notices/vm-active-archive/lock-${VM}-2025-${String(1 + (i % 12)).padStart(2, '0')}-${String(1 + (i % 28)).padStart(2, '0')}-${String(2 + i).padStart(4, '0')}.md`);
  g(['update-index', '--index-info'], `${lines.join('\n')}\n`);
  const commit = g(['commit-tree', g(['write-tree']), '-p', tip, '-m', `bench: ${n} archived locks`]);
  g(['update-ref', 'refs/offhost/locks', commit, tip]);
  rmSync(join(base, 'fill-index'), { force: true });
}

try {
  // Per mode and build: its repository (warm: one acquire+release first), the git processes per command.
  const cells = [];
  for (const m of modes) {
    for (const b of builds) {
      const dir = m.make(join(base, `${m.name.replace(/\W+/g, '-')}-${b.name.replace(/\W+/g, '-')}`));
      offhost(b.bin, dir, ['lock', 'acquire', VM, '--reason', 'warm-up', ...m.extra]);
      offhost(b.bin, dir, ['lock', 'release', VM, ...m.extra]);
      if (m.archived) {
        fillArchive(dir, m.archived);
        offhost(b.bin, dir, ['lock', 'status']); // this clone's copy follows the store once, as after any other change
      }
      const counts = {
        acquire: gitCount(b.bin, dir, ['lock', 'acquire', VM, '--reason', 'counted', ...m.extra]),
        status: gitCount(b.bin, dir, ['lock', 'status', ...m.extra]),
        release: gitCount(b.bin, dir, ['lock', 'release', VM, ...m.extra]),
      };
      cells.push({ mode: m, build: b, dir, counts, acq: [], rel: [], both: [], cpu: [] });
    }
  }
  // Rounds: every cell once per round, the builds alternating, so that load drifts hit them alike.
  for (let i = 0; i < ITER; i++) {
    for (const c of i % 2 ? [...cells].reverse() : cells) {
      const a = offhost(c.build.bin, c.dir, ['lock', 'acquire', VM, '--reason', `bench ${i}`, ...c.mode.extra]);
      const r = offhost(c.build.bin, c.dir, ['lock', 'release', VM, ...c.mode.extra]);
      c.acq.push(a.ms);
      c.rel.push(r.ms);
      c.both.push(a.ms + r.ms);
      c.cpu.push(a.cpu + r.cpu);
    }
  }
  const own = cells.find((c) => c.mode === modes[0] && c.build === builds[0]);
  console.log(`lock acquire + release, whole processes, ${ITER} rounds (node ${process.version}, ${execFileSync(realGit, ['--version'], { encoding: 'utf8' }).trim()})`);
  for (const c of cells) {
    const mine = c.build === builds[0];
    const other = cells.find((x) => x.mode === c.mode && x.build !== c.build);
    const vsBefore = mine && other ? `; ${(median(c.both) / median(other.both)).toFixed(2)} x before, CPU ${(median(c.cpu) / median(other.cpu)).toFixed(2)} x before` : '';
    // The archived-locks row against the same build's user store with its few archived locks.
    const few = c.mode.archived ? cells.find((x) => x.mode === modes[1] && x.build === c.build) : null;
    const vsFew = few ? `; release ${(median(c.rel) / median(few.rel)).toFixed(2)} x the user store's with a few archived` : '';
    console.log(
      `  ${c.mode.name}, ${c.build.name}: git processes acquire ${c.counts.acquire}, status ${c.counts.status}, release ${c.counts.release}; ` +
        `acquire ${fmt(c.acq)}; release ${fmt(c.rel)}; acquire+release ${fmt(c.both)}, CPU ${fmt(c.cpu)} (${(median(c.both) / median(own.both)).toFixed(2)} x this build's clone's own ref${vsBefore}${vsFew})`,
    );
  }
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
