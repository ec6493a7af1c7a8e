#!/usr/bin/env node
// Fault injection for the lock store (issue 10): real git, real offhost processes (dist/offhost.mjs), SIGKILL
// of the whole process group at random points, a human working in the same checkout, clones of a bare
// remote for --push. Seeded: a failure prints the seed and trial that replay it.
//
//   node scripts/fault-inject.mjs [--trials N] [--seed S] [--only crash|human|race|push] [--json]
//
// Checks, for every trial: zero double ownership (two sessions told "you hold it" at once), zero lock paths
// in the user's commits, zero changes to the user's index or working tree by offhost, zero stuck states (after
// a crash the next command completes, and the VM can be taken again), and the same outcome whatever the
// human does to HEAD. Exit 0 when every check held, 1 otherwise.
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const BIN = process.env.OFFHOST_TEST_BIN ?? join(ROOT, 'dist', 'offhost.mjs');
const VM = 's.khost1.dev-linux-koda';
const ND = 'meta/context/notices';
const ACTIVE = `${ND}/vm-active/lock-${VM}.md`;
const REF = 'refs/offhost/locks';

const args = process.argv.slice(2);
const opt = (name, def) => {
  const i = args.findIndex((a) => a === `--${name}` || a.startsWith(`--${name}=`));
  if (i < 0) return def;
  return args[i].includes('=') ? args[i].split('=')[1] : args[i + 1];
};
const TRIALS = Number(opt('trials', '3'));
const SEED = Number(opt('seed', String(Date.now() % 1_000_000)));
const ONLY = opt('only', '');
const JSON_OUT = args.includes('--json');

function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WORK = mkdtempSync(join(tmpdir(), 'offhost-fault-'));
const HOME = join(WORK, 'home');
mkdirSync(HOME);
const ENV = {};
for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('GIT_') && !k.startsWith('OFFHOST_') && k !== 'CI') ENV[k] = v;
Object.assign(ENV, { HOME, GIT_CONFIG_NOSYSTEM: '1', OFFHOST_ROLE: 'laptop' });

const git = (cwd, ...a) => execFileSync('git', a, { cwd, env: ENV, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
const gitOk = (cwd, ...a) => {
  try {
    return git(cwd, ...a);
  } catch {
    return null;
  }
};

let repoSeq = 0;
function repo(parent = WORK) {
  const dir = join(parent, `r${repoSeq++}`);
  mkdirSync(dir, { recursive: true });
  git(dir, 'init', '-q', '-b', 'main');
  configure(dir);
  writeFileSync(join(dir, 'a.txt'), 'a\n');
  // Each trial is a repository of its own: the lock store is per repository identity (its root commit),
  // so two trials' first commits must differ even when made in the same second.
  writeFileSync(join(dir, 'id.txt'), `${dir}\n`);
  git(dir, 'add', 'a.txt', 'id.txt');
  git(dir, 'commit', '-q', '-m', 'c1');
  writeFileSync(join(dir, 'a.txt'), 'a\nb\n');
  git(dir, 'commit', '-q', '-am', 'c2');
  git(dir, 'branch', 'older', 'HEAD~1');
  writeFileSync(join(dir, 'a.txt'), 'a\nb\nc\n');
  git(dir, 'commit', '-q', '-am', 'c3');
  return dir;
}
function configure(dir) {
  git(dir, 'config', 'user.email', 'dev@example.test');
  git(dir, 'config', 'user.name', 'Dev');
  git(dir, 'config', 'commit.gpgsign', 'false');
}

/** Staged, unstaged and untracked work of the user's; returns a function that says whether it is intact. */
function userWork(dir) {
  writeFileSync(join(dir, 'a.txt'), 'a\nb\nc\nstaged\n');
  git(dir, 'add', 'a.txt');
  writeFileSync(join(dir, 'a.txt'), 'a\nb\nc\nstaged\nunstaged\n');
  writeFileSync(join(dir, 'new.txt'), 'untracked\n');
  const snap = () => [git(dir, 'ls-files', '-s'), git(dir, 'diff'), git(dir, 'diff', '--cached'), readFileSync(join(dir, 'a.txt'), 'utf8'), readFileSync(join(dir, 'new.txt'), 'utf8'), git(dir, 'rev-parse', 'HEAD'), git(dir, 'symbolic-ref', '-q', 'HEAD')].join('\n--\n');
  const before = snap();
  return () => snap() === before;
}

function offhost(cwd, argv, session, { killAfterMs } = {}) {
  return new Promise((res) => {
    const child = spawn(process.execPath, [BIN, ...argv], { cwd, env: { ...ENV, OFFHOST_SESSION: session, OFFHOST_AI: 'claude' }, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    let timer = null;
    if (killAfterMs !== undefined) {
      timer = setTimeout(() => {
        try {
          process.kill(-child.pid, 'SIGKILL'); // the whole group: node and the git it started
        } catch {
          /* gone */
        }
      }, killAfterMs);
    }
    const guard = setTimeout(() => {
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        /* gone */
      }
      err += '\n[fault-inject: no answer within 90 s: STUCK]';
    }, 90_000);
    child.on('close', (code, signal) => {
      if (timer) clearTimeout(timer);
      clearTimeout(guard);
      res({ code, signal, out, err });
    });
  });
}

/** The session the lock ref (of `dir`, or of a bare remote) says holds the VM, or null. */
function refHolder(dir) {
  const t = gitOk(dir, 'show', `${REF}:${ACTIVE}`);
  return t ? (/^session: (.+)$/m.exec(t)?.[1] ?? '?') : null;
}

function lockPathsInUserCommits(dir) {
  const names = git(dir, 'log', '--exclude=refs/offhost/*', '--all', '--format=', '--name-only', '--', ND).trim();
  return names ? names.split('\n').length : 0;
}

function strayFiles(dir) {
  const tmp = join(dir, '.git', 'offhost', 'tmp');
  const left = existsSync(tmp) ? readdirSync(tmp) : [];
  if (existsSync(join(dir, '.git', `${REF}.lock`))) left.push(`${REF}.lock`);
  // The user stores every clone's lock commands go through (docs/LOCKS.md): the same two leftovers there.
  const stores = join(HOME, '.local', 'state', 'offhost', 'lock-stores');
  for (const s of existsSync(stores) ? readdirSync(stores) : []) {
    const st = join(stores, s, 'offhost', 'tmp');
    if (existsSync(st)) left.push(...readdirSync(st).map((n) => `${s}/offhost/tmp/${n}`));
    if (existsSync(join(stores, s, `${REF}.lock`))) left.push(`${s}/${REF}.lock`);
  }
  return left;
}

const results = {};
const failures = [];
function tally(scenario, key, bad, detail) {
  const r = (results[scenario] ??= { trials: 0, killedMidway: 0, doubleOwnership: 0, lockPathsInUserCommits: 0, userWorkChanged: 0, stuck: 0, outcomeDiffers: 0, strayAfterRecovery: 0 });
  if (key === 'trial') return void r.trials++;
  if (key === 'killed') return void (bad && r.killedMidway++); // how many kills landed before the command ended
  if (bad) {
    r[key]++;
    failures.push(`${scenario}: ${key}: ${detail}`);
  }
}

const HUMAN = {
  'switch older': (d) => (git(d, 'switch', '-q', 'older'), git(d, 'switch', '-q', 'main')),
  'checkout from detached': (d) => (git(d, 'checkout', '-q', '--detach', 'HEAD~1'), git(d, 'checkout', '-q', 'main')),
  'rebase --abort': (d) => {
    git(d, 'switch', '-q', '-c', 'topic', 'older');
    writeFileSync(join(d, 'a.txt'), 'conflict\n');
    git(d, 'commit', '-q', '-am', 'topic');
    gitOk(d, 'rebase', 'main');
    git(d, 'rebase', '--abort');
    git(d, 'switch', '-q', 'main');
    git(d, 'branch', '-q', '-D', 'topic');
  },
  'bisect step': (d) => (git(d, 'bisect', 'start', 'HEAD', 'HEAD~2'), git(d, 'bisect', 'good'), git(d, 'bisect', 'reset')),
  'reset --hard': (d) => (writeFileSync(join(d, 'a.txt'), 'tmp\n'), git(d, 'commit', '-q', '-am', 'tmp'), git(d, 'reset', '-q', '--hard', 'HEAD~1')),
  'commit -a': (d) => (writeFileSync(join(d, 'a.txt'), `edit ${Math.random()}\n`), git(d, 'commit', '-q', '-am', 'human commit -a')),
  'add -A && commit': (d) => (writeFileSync(join(d, 'h.txt'), `h ${Math.random()}\n`), git(d, 'add', '-A'), git(d, 'commit', '-q', '-m', 'human add -A')),
};

// ---------------------------------------------------------------------------------------------------
// 1. SIGKILL at a random point of each operation, then recovery.

const CRASH_OPS = {
  acquire: { setup: async () => {}, argv: ['lock', 'acquire', VM, '--reason', 'fault'], after: 'held-or-free' },
  heartbeat: { setup: async (d, s) => ok(await offhost(d, ['lock', 'acquire', VM, '--reason', 'fault'], s)), argv: ['lock', 'heartbeat', VM], after: 'held' },
  release: { setup: async (d, s) => ok(await offhost(d, ['lock', 'acquire', VM, '--reason', 'fault'], s)), argv: ['lock', 'release', VM], after: 'held-or-free' },
  gc: {
    setup: async (d, s) => ok(await offhost(d, ['lock', 'acquire', VM, '--reason', 'fault', '--ttl', '1', '--now', '2026-01-01T00:00:00Z'], s)),
    argv: ['lock', 'gc'],
    after: 'free',
  },
};
function ok(r) {
  if (r.code !== 0) throw new Error(`setup failed: ${r.code} ${r.err}`);
  return r;
}

async function crashTrials(rand) {
  // How long one operation takes here: kills land uniformly in [0, 1.3 x that].
  const probe = repo();
  const t0 = Date.now();
  await offhost(probe, ['lock', 'acquire', VM, '--reason', 'probe'], 'probe');
  const mean = Math.max(50, Date.now() - t0);
  rmSync(probe, { recursive: true, force: true });
  for (const [name, op] of Object.entries(CRASH_OPS)) {
    for (let t = 0; t < TRIALS; t++) {
      const scenario = `crash:${name}`;
      tally(scenario, 'trial');
      const dir = repo();
      const s = `holder-${t}`;
      await op.setup(dir, s);
      // The human moves HEAD between the agent's steps (the lock must not care).
      const acts = Object.keys(HUMAN);
      const act = acts[Math.floor(rand() * acts.length)];
      HUMAN[act](dir);
      const intact = userWork(dir);
      const killAt = Math.floor(rand() * mean * 1.3);
      const r = await offhost(dir, op.argv, s, { killAfterMs: killAt });
      tally(scenario, 'killed', r.signal === 'SIGKILL');
      const where = `seed ${SEED} trial ${t} (human: ${act}) kill at ${killAt} ms of ~${mean}`;
      // Recovery: status answers, says what it found, and leaves no stray file behind.
      const st = await offhost(dir, ['lock', 'status'], s);
      tally(scenario, 'stuck', st.code !== 0, `${where}: status exit ${st.code} ${st.err}`);
      tally(scenario, 'strayAfterRecovery', strayFiles(dir).length > 0, `${where}: ${strayFiles(dir).join(', ')}`);
      // The holder's view after the crash is consistent with the ref; then the protocol goes on: the holder
      // (or, when free, another session) can take it, and release it.
      const holder = refHolder(dir);
      if (op.after === 'held') tally(scenario, 'stuck', holder !== s, `${where}: holder after ${name} is ${holder}`);
      if (op.after === 'free') tally(scenario, 'stuck', holder !== null && r.signal === null, `${where}: gc left ${holder}`);
      const retry = await offhost(dir, holder === null || holder === s ? ['lock', 'acquire', VM, '--reason', 'retry'] : ['lock', 'status'], holder ?? s);
      tally(scenario, 'stuck', retry.code !== 0, `${where}: retry exit ${retry.code} ${retry.err}`);
      const other = await offhost(dir, ['lock', 'acquire', VM, '--reason', 'intruder'], 'intruder');
      tally(scenario, 'doubleOwnership', other.code === 0, `${where}: intruder acquired a held VM`);
      const rel = await offhost(dir, ['lock', 'release', VM], refHolder(dir) ?? s);
      tally(scenario, 'stuck', rel.code !== 0 || refHolder(dir) !== null, `${where}: release after recovery ${rel.code} ${rel.err}`);
      tally(scenario, 'userWorkChanged', !intact(), `${where}: the user's index/working tree/HEAD changed`);
      tally(scenario, 'lockPathsInUserCommits', lockPathsInUserCommits(dir) > 0, `${where}`);
      rmSync(dir, { recursive: true, force: true });
    }
  }
}

// ---------------------------------------------------------------------------------------------------
// 2. The human works on HEAD while an agent holds the VM.

async function humanTrials() {
  const outcomes = new Map();
  for (let t = 0; t < Math.max(1, Math.ceil(TRIALS / 3)); t++) {
    for (const [name, act] of Object.entries(HUMAN)) {
      const scenario = 'human';
      tally(scenario, 'trial');
      const dir = repo();
      const a = await offhost(dir, ['lock', 'acquire', VM, '--reason', 'agent x'], 'agent-x');
      act(dir);
      const z = await offhost(dir, ['lock', 'acquire', VM, '--reason', 'agent z'], 'agent-z');
      const hb = await offhost(dir, ['lock', 'heartbeat', VM], 'agent-x');
      act(dir);
      const rel = await offhost(dir, ['lock', 'release', VM], 'agent-x');
      const z2 = await offhost(dir, ['lock', 'acquire', VM, '--reason', 'agent z'], 'agent-z');
      const outcome = [a.code, z.code, hb.code, rel.code, z2.code].join(',');
      outcomes.set(name, outcome);
      tally(scenario, 'doubleOwnership', z.code === 0, `seed ${SEED} ${name}: Z acquired while X held`);
      tally(scenario, 'stuck', a.code !== 0 || hb.code !== 0 || rel.code !== 0 || z2.code !== 0, `${name}: ${outcome} ${hb.err}${rel.err}`);
      tally(scenario, 'lockPathsInUserCommits', lockPathsInUserCommits(dir) > 0, `${name}`);
      tally(scenario, 'lockPathsInUserCommits', git(dir, 'ls-files', '--', ND).trim() !== '', `${name}: a lock path is in the index`);
      rmSync(dir, { recursive: true, force: true });
    }
  }
  const distinct = new Set(outcomes.values());
  tally('human', 'outcomeDiffers', distinct.size !== 1, `outcomes by action: ${JSON.stringify(Object.fromEntries(outcomes))}`);
}

// ---------------------------------------------------------------------------------------------------
// 3. N sessions race for one VM in one checkout while the human commits everything.

async function raceTrials() {
  for (let t = 0; t < TRIALS; t++) {
    const scenario = 'race';
    tally(scenario, 'trial');
    const dir = repo();
    const n = 4 + (t % 3);
    let humanDone = false;
    const human = (async () => {
      for (let i = 0; i < 4 && !humanDone; i++) {
        writeFileSync(join(dir, `w${i}.txt`), `${i}\n`);
        gitOk(dir, 'add', '-A');
        gitOk(dir, 'commit', '-q', '-m', `human ${i}`);
        await new Promise((r) => setTimeout(r, 30));
      }
    })();
    const rs = await Promise.all(Array.from({ length: n }, (_, i) => offhost(dir, ['lock', 'acquire', VM, '--reason', `racer ${i}`], `racer-${i}`)));
    humanDone = true;
    await human;
    const winners = rs.flatMap((r, i) => (r.code === 0 ? [`racer-${i}`] : []));
    tally(scenario, 'doubleOwnership', winners.length !== 1 || winners[0] !== refHolder(dir), `seed ${SEED} trial ${t}: winners ${winners} ref ${refHolder(dir)}`);
    tally(scenario, 'stuck', rs.some((r) => r.code !== 0 && r.code !== 1), `trial ${t}: ${rs.map((r) => r.code)} ${rs.map((r) => r.err).join('|')}`);
    tally(scenario, 'lockPathsInUserCommits', lockPathsInUserCommits(dir) > 0, `trial ${t}`);
    rmSync(dir, { recursive: true, force: true });
  }
}

// ---------------------------------------------------------------------------------------------------
// 4. Clones of one bare remote with --push: races, and SIGKILL during acquire/release --push.

function clones(n) {
  const base = join(WORK, `remote${repoSeq++}`);
  mkdirSync(base);
  const seed = repo(base);
  const bare = join(base, 'remote.git');
  git(base, 'clone', '-q', '--bare', seed, bare);
  return {
    bare,
    clones: Array.from({ length: n }, (_, i) => {
      const c = join(base, `c${i}`);
      git(base, 'clone', '-q', bare, c);
      configure(c);
      return c;
    }),
  };
}

async function pushTrials(rand) {
  for (let t = 0; t < TRIALS; t++) {
    const n = 3 + (t % 3);
    const { bare, clones: cs } = clones(n);
    // A race between n clones.
    tally('push:race', 'trial');
    const raceStart = Date.now();
    const rs = await Promise.all(cs.map((c, i) => offhost(c, ['lock', 'acquire', VM, '--reason', `clone ${i}`, '--push'], `clone-${i}`)));
    const window = Math.max(100, Date.now() - raceStart); // kills land in [0, the time n concurrent pushes took]
    const winners = rs.flatMap((r, i) => (r.code === 0 ? [`clone-${i}`] : []));
    tally('push:race', 'doubleOwnership', winners.length !== 1 || winners[0] !== refHolder(bare), `seed ${SEED} trial ${t}: winners ${winners} remote ${refHolder(bare)} ${rs.map((r) => r.err).join('|')}`);
    const w = winners.length === 1 ? Number(winners[0].split('-')[1]) : 0;
    tally('push:race', 'stuck', gitOk(cs[w], 'rev-parse', REF) !== gitOk(bare, 'rev-parse', REF), `trial ${t}: the winner's ref is not the pushed commit`);
    // SIGKILL during release --push, then during acquire --push by another clone.
    tally('push:crash', 'trial');
    const intact = cs.map((c) => userWork(c));
    const killRel = Math.floor(rand() * window);
    tally('push:crash', 'killed', (await offhost(cs[w], ['lock', 'release', VM, '--push'], `clone-${w}`, { killAfterMs: killRel })).signal === 'SIGKILL');
    const rel2 = await offhost(cs[w], ['lock', 'release', VM, '--push'], `clone-${w}`);
    tally('push:crash', 'stuck', rel2.code !== 0 || refHolder(bare) !== null, `seed ${SEED} trial ${t} kill release at ${killRel}: ${rel2.code} ${rel2.err} remote ${refHolder(bare)}`);
    const o = (w + 1) % n;
    const killAcq = Math.floor(rand() * window);
    tally('push:crash', 'killed', (await offhost(cs[o], ['lock', 'acquire', VM, '--reason', 'crashy', '--push'], `clone-${o}`, { killAfterMs: killAcq })).signal === 'SIGKILL');
    const after = refHolder(bare);
    const contenders = await Promise.all(cs.map((c, i) => offhost(c, ['lock', 'acquire', VM, '--reason', `after ${i}`, '--push'], `clone-${i}`)));
    const told = contenders.flatMap((r, i) => (r.code === 0 ? [`clone-${i}`] : []));
    const now = refHolder(bare);
    const okSet = after === null ? told.length === 1 && told[0] === now : told.length === 1 && told[0] === after && now === after;
    tally('push:crash', 'doubleOwnership', !okSet, `seed ${SEED} trial ${t} kill acquire at ${killAcq}: after crash ${after}, told ${told}, remote ${now}`);
    cs.forEach((c, i) => tally('push:crash', 'userWorkChanged', !intact[i](), `trial ${t} clone ${i}`));
    cs.forEach((c) => tally('push:crash', 'lockPathsInUserCommits', lockPathsInUserCommits(c) > 0, `trial ${t}`));
    tally('push:crash', 'lockPathsInUserCommits', (git(bare, 'log', '--format=', '--name-only', 'main', '--', ND).trim() !== ''), `trial ${t}: the remote branch`);
    rmSync(dirname(bare), { recursive: true, force: true });
  }
}

const rand = rng(SEED);
const started = Date.now();
try {
  if (!ONLY || ONLY === 'crash') await crashTrials(rand);
  if (!ONLY || ONLY === 'human') await humanTrials();
  if (!ONLY || ONLY === 'race') await raceTrials();
  if (!ONLY || ONLY === 'push') await pushTrials(rand);
} finally {
  rmSync(WORK, { recursive: true, force: true });
}
const summary = { seed: SEED, trialsPerOperation: TRIALS, seconds: Math.round((Date.now() - started) / 100) / 10, results, failures };
if (JSON_OUT) process.stdout.write(`${JSON.stringify(summary, null, 2)}\n`);
else {
  process.stdout.write(`fault injection, seed ${SEED}, ${TRIALS} trials per operation, ${summary.seconds} s\n`);
  for (const [k, v] of Object.entries(results)) process.stdout.write(`  ${k.padEnd(16)} ${JSON.stringify(v)}\n`);
  for (const f of failures) process.stdout.write(`FAIL ${f}\n`);
  if (failures.length) process.stdout.write(`replay: node scripts/fault-inject.mjs --seed ${SEED} --trials ${TRIALS}\n`);
}
process.exit(failures.length ? 1 : 0);
