// What `offhost run` adds to a command on loopback: a real sshd on 127.0.0.1 (keys made here), the
// "VM" a directory on this machine. Whole-process wall times, median of ITER runs, against plain
// `ssh HOST -- bash -c CMD` measured in the same run:
//   - sync shared (verify only: the VM hashes the tree), rsync (copy what changed + verify), git (push a
//     snapshot + checkout + verify);
//   - a small tree and a 10,000-file tree; each with no change since the last run and with a one-file edit;
//     the 10,000-file tree also dirty (the edit row's last edit), unchanged, a minute after the last run (the
//     kept answer about the remote and the kept reading of the VM's disk are past their minute: the run
//     probes the VM on the open ssh connection, uses the answer and asks the remote again while its command
//     runs) and more than ten minutes after it (no open connection: the run opens one, as plain ssh does,
//     and asks the remote before its lock).
// offhost's own part includes node start-up, the classification, the VM lock (two git commits) and the
// record; the rows below say what each adds over plain ssh. OFFHOST_BENCH_BIN measures another build;
// OFFHOST_BENCH_BEFORE=<offhost.cjs> measures that build too, interleaved with this one in every row, each
// build on a tree and VM copy of its own.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const bin = process.env.OFFHOST_BENCH_BIN ?? join(root, 'dist', 'offhost.cjs');
// OFFHOST_BENCH_BEFORE=another build's offhost.cjs: each row runs both builds in the same rounds, alternating
// with plain ssh (ssh, before, ssh, this build, ...), on identical trees of their own; a row's ratios are then both against
// the plain ssh measured beside them, which a second bench run an hour later (another load) would not be.
const before = process.env.OFFHOST_BENCH_BEFORE;
const ITER = Number(process.env.OFFHOST_BENCH_ITER ?? 5);
const SSHD = '/usr/sbin/sshd';

function have(p) {
  try {
    execFileSync('sh', ['-c', `command -v ${p}`], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}
if (!have(SSHD) || !have('rsync')) {
  console.log('run.bench: sshd or rsync not installed (apt-get install openssh-server rsync); skipped');
  process.exit(0);
}

const base = mkdtempSync(join(tmpdir(), 'offhost-bench-run-'));
const port = await new Promise((res) => {
  const s = createServer();
  s.listen(0, '127.0.0.1', () => {
    const p = s.address().port;
    s.close(() => res(p));
  });
});
const user = userInfo().username;
const k = (f) => execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', join(base, f)]);
k('host');
k('id');
writeFileSync(join(base, 'authorized_keys'), readFileSync(join(base, 'id.pub')));
if (process.getuid?.() === 0) mkdirSync('/run/sshd', { recursive: true });
// The VM user's home is its own folder, as on a VM (and as in test/helpers/sshd.ts), not the laptop user's:
// bash run by sshd reads ~/.bashrc, and a loopback "VM" would otherwise run this machine's own rc files.
// Its ~/.bashrc is the distribution's default for new users (/etc/skel/.bashrc, which returns at once when
// not interactive), or OFFHOST_BENCH_VM_RC=<file>. OFFHOST_BENCH_VM_HOME=<folder> makes that folder the VM
// user's HOME as it is (=/root on the development machine: root's rc runs `pyenv init`, 0.6-1.5 s a read).
const vmHome = process.env.OFFHOST_BENCH_VM_HOME ?? join(base, 'vmhome');
const vmRc = process.env.OFFHOST_BENCH_VM_HOME ? join(vmHome, '.bashrc') : (process.env.OFFHOST_BENCH_VM_RC ?? (existsSync('/etc/skel/.bashrc') ? '/etc/skel/.bashrc' : null));
if (!process.env.OFFHOST_BENCH_VM_HOME) {
  mkdirSync(vmHome);
  writeFileSync(join(vmHome, '.bashrc'), vmRc ? readFileSync(vmRc) : '# not interactive: nothing to do\ncase $- in *i*) ;; *) return;; esac\n');
}
writeFileSync(
  join(base, 'sshd_config'),
  `Port ${port}\nListenAddress 127.0.0.1\nHostKey ${join(base, 'host')}\nPidFile ${join(base, 'pid')}\nAuthorizedKeysFile ${join(base, 'authorized_keys')}\nStrictModes no\nPasswordAuthentication no\nKbdInteractiveAuthentication no\nUsePAM no\nPermitRootLogin prohibit-password\nAllowUsers ${user}\nMaxStartups 64:30:128\nSetEnv HOME=${vmHome}\n`,
);
writeFileSync(join(base, 'known_hosts'), `[127.0.0.1]:${port} ${readFileSync(join(base, 'host.pub'), 'utf8').split(' ').slice(0, 2).join(' ')}\n`);
writeFileSync(
  join(base, 'ssh_config'),
  `Host benchvm\n  HostName 127.0.0.1\n  Port ${port}\n  User ${user}\n  IdentityFile ${join(base, 'id')}\n  IdentitiesOnly yes\n  UserKnownHostsFile ${join(base, 'known_hosts')}\n  GlobalKnownHostsFile /dev/null\n  StrictHostKeyChecking yes\n  BatchMode yes\n  LogLevel ERROR\n`,
);
mkdirSync(join(base, 'bin'));
writeFileSync(join(base, 'bin', 'ssh'), `#!/bin/sh\nexec /usr/bin/ssh -F '${join(base, 'ssh_config')}' "$@"\n`);
chmodSync(join(base, 'bin', 'ssh'), 0o755);
// sshd logs to a file: the runs below are spawnSync, and a pipe nobody reads would block sshd.
const sshdLog = join(base, 'sshd.log');
const sshd = spawn(SSHD, ['-D', '-E', sshdLog, '-f', join(base, 'sshd_config')], { stdio: 'ignore' });
for (let i = 0; ; i++) {
  let log = '';
  try {
    log = readFileSync(sshdLog, 'utf8');
  } catch {}
  if (log.includes('Server listening')) break;
  if (i > 200 || sshd.exitCode !== null) throw new Error(`sshd did not start: ${log}`);
  await new Promise((r) => setTimeout(r, 50));
}

// offhost's shared ssh connections (src/routes/multiplex.ts) in a folder of the bench's own, so that the rows
// after a pause can close them as the pause would (ControlPersist) without touching anybody else's. Short:
// a socket's path is limited to about 104 bytes, and ssh adds 17 to it while it opens the connection.
const controlBase = mkdtempSync(join(tmpdir(), 'ohb-'));
const env = { ...process.env, PATH: `${join(base, 'bin')}:${process.env.PATH}`, HOME: join(base, 'home'), OFFHOST_SESSION: 'bench', OFFHOST_AI: 'human', OFFHOST_ROLE: 'laptop', OFFHOST_SSH_CONTROL_DIR: controlBase };
delete env.CI;
for (const key of Object.keys(env)) if (key.startsWith('GIT_')) delete env[key];
const git = (cwd, ...args) => execFileSync('git', args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] }).toString();
// A developer's git has an identity: without one, the lock store's first commit of each run is made twice
// (git refuses, then offhost's fallback identity), which no user pays.
mkdirSync(env.HOME, { recursive: true });
writeFileSync(join(env.HOME, '.gitconfig'), '[user]\n\tname = bench\n\temail = bench@example.test\n');

function tree(name, files, mode) {
  const repo = join(base, 'home', name, 'koder');
  mkdirSync(repo, { recursive: true });
  git(repo, 'init', '-q', '-b', 'main');
  git(repo, 'config', 'user.email', 'bench@example.test');
  git(repo, 'config', 'user.name', 'bench');
  git(repo, 'config', 'commit.gpgsign', 'false');
  for (let i = 0; i < files; i++) {
    const d = join(repo, 'src', `d${Math.floor(i / 100)}`);
    mkdirSync(d, { recursive: true });
    writeFileSync(join(d, `f${i}.txt`), FILE_BYTES > 0 ? `file ${i}\n`.padEnd(FILE_BYTES, '.').slice(0, FILE_BYTES - 1) + '\n' : `file ${i}\n`);
  }
  const vm = { id: 's.khost1.dev-linux-bench', backend: 'ssh', host: 'benchvm', sync: mode, guest_dir: join(base, 'vm', name) };
  writeFileSync(
    join(repo, 'offhost.config.yaml'),
    `vms:\n  - ${JSON.stringify(vm)}\nroutes:\n  koda:\n    vms: [s.khost1.dev-linux-bench]\nrules:\n  - { id: bench-bash, description: bench, policy: R1, decision: reroute, route: koda, message: bench, match: { program: [bash] }, examples: { match: ["bash -c true"] } }\n`,
  );
  git(repo, 'add', '.');
  git(repo, 'commit', '-q', '-m', 'tree');
  // A developer's checkout has a remote, here a bare repository behind the same sshd: a run asks it (at most
  // once a minute) whether the repository's locks are shared there (docs/LOCKS.md).
  const origin = join(base, 'origin', `${name}.git`);
  mkdirSync(dirname(origin), { recursive: true });
  git(base, 'init', '-q', '--bare', origin);
  git(repo, 'remote', 'add', 'origin', `benchvm:${origin}`);
  return repo;
}

/** Sets the kept remote-probe answer for the bare repository named `originName` `ms` back. */
function ageProbeAnswer(originName, ms) {
  const roots = [join(env.XDG_STATE_HOME ?? join(env.HOME, '.local', 'state'), 'offhost', 'lock-stores')];
  let aged = 0;
  for (const root of roots) {
    let stores = [];
    try {
      stores = readdirSync(root);
    } catch {
      continue;
    }
    for (const s of stores) {
      const f = join(root, s, 'offhost-remote-probe.json');
      let k;
      try {
        k = JSON.parse(readFileSync(f, 'utf8'));
      } catch {
        continue;
      }
      if (typeof k.url !== 'string' || !k.url.endsWith(`/${originName}`)) continue;
      writeFileSync(f, JSON.stringify({ ...k, at: Date.now() - ms }));
      aged++;
    }
  }
  if (aged === 0) throw new Error(`no kept remote-probe answer for ${originName}: the row would not measure what it says`);
}

/**
 * What a pause of `ms` between runs leaves: the kept answer about the remote (for the bare repository named
 * `originName`) and the kept reading of the VM's disk (src/vms/probe-reuse.ts) that much older, and past
 * ten minutes (src/routes/multiplex.ts PERSIST_SECONDS) no shared ssh connection.
 */
function pause(originName, ms) {
  ageProbeAnswer(originName, ms);
  const dir = join(env.HOME, '.local', 'state', 'offhost', 'probe');
  let aged = 0;
  for (const f of existsSync(dir) ? readdirSync(dir) : []) {
    const r = JSON.parse(readFileSync(join(dir, f), 'utf8'));
    writeFileSync(join(dir, f), JSON.stringify({ ...r, at: Date.now() - ms }));
    aged++;
  }
  if (aged === 0) throw new Error('no kept reading of the VM: the row would not measure what it says');
  if (ms >= 600_000 && closeMasters() === 0) throw new Error('no shared connection to close: the row would not measure what it says');
}

/** Closes offhost's shared ssh connections, as a pause longer than their ControlPersist does. */
function closeMasters() {
  const dir = join(controlBase, `offhost-ssh-${process.getuid()}`);
  let n = 0;
  for (const f of existsSync(dir) ? readdirSync(dir) : []) {
    if (spawnSync('ssh', ['-o', `ControlPath=${join(dir, f)}`, '-O', 'exit', 'benchvm'], { env, stdio: 'ignore' }).status === 0) n++;
  }
  return n;
}

function time(cmd, args, cwd) {
  const t = process.hrtime.bigint();
  const r = spawnSync(cmd, args, { cwd, env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  const ms = Number(process.hrtime.bigint() - t) / 1e6;
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} exited ${r.status}: ${r.stderr}`);
  return ms;
}
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

// OFFHOST_BENCH_FILE_BYTES=8192: files of that size (a source file's) instead of one short line each, so that
// what hashing costs is in the rows (10,000 such files are 80 MB).
const FILE_BYTES = Number(process.env.OFFHOST_BENCH_FILE_BYTES ?? 0);
const CMD = 'bash -c true';
const rows = [];
const traces = [];
const sshOnce = () => time('ssh', ['benchvm', '--', "bash -c 'true'"], base);
// Each row alternates plain ssh and the run (ssh, run, ssh, run, ...): on a shared machine the load changes
// within minutes, and a baseline measured once at the start would meet another load than the later rows.
function measure(label, fn) {
  const xs = [];
  const ys = [];
  const bx = [];
  const by = [];
  for (let i = 0; i < ITER; i++) {
    if (before) {
      by.push(sshOnce());
      bx.push(fn(i, before));
    }
    ys.push(sshOnce());
    xs.push(fn(i, bin));
  }
  if (before) rows.push({ label: `${label}, before`, ms: median(bx), min: Math.min(...bx), max: Math.max(...bx), ssh: median(by) });
  rows.push({ label, ms: median(xs), min: Math.min(...xs), max: Math.max(...xs), ssh: median(ys) });
}

try {
  const sshMs = [];
  for (let i = 0; i < ITER; i++) sshMs.push(sshOnce());
  const ssh = median(sshMs);
  rows.push({ label: 'plain ssh benchvm -- bash -c true', ms: ssh, min: Math.min(...sshMs), max: Math.max(...sshMs), ssh });
  // OFFHOST_BENCH_TREES=10 or =10000, OFFHOST_BENCH_MODES=rsync,git: a part of the table, while working on one row.
  const trees = (process.env.OFFHOST_BENCH_TREES ?? '10,10000').split(',').map(Number);
  const modes = (process.env.OFFHOST_BENCH_MODES ?? 'shared,rsync,git').split(',');
  for (const [files, tname] of [
    [10, 'small tree (10 files)'],
    [10_000, '10,000-file tree'],
  ].filter(([n]) => trees.includes(n))) {
    for (const mode of modes) {
      // With a "before" build, each build has its tree and VM copy of its own: the two keep caches in formats
      // of their own (the VM's hash cache changed format), and one run must not meet the other's.
      const repo = tree(`${mode}-${files}`, files, mode);
      const beforeRepo = before ? tree(`${mode}-${files}-before`, files, mode) : null;
      const repoOf = (b) => (b === bin ? repo : beforeRepo);
      // Run as a program, as `offhost run` on PATH (node_modules/.bin/offhost) is: by its #! line.
      const run = (_i, b = bin) => time(b, ['run', '--', CMD], repoOf(b));
      run(); // the first copy
      if (before) run(0, before);
      // A steady state, as a later run meets it: the files the first copy wrote are past the 3 s (the VM's: 4 s
      // on whole seconds) in which the laptop's and the VM's hash caches hash a just-written file again (git's
      // "racy" rule: RUN.md), and written out to disk (the writeback of the bench's own 10,000 new files is no
      // part of a run).
      execFileSync('sync');
      await new Promise((r) => setTimeout(r, 4500));
      measure(`offhost run, sync ${mode}, ${tname}, no change`, run);
      measure(`offhost run, sync ${mode}, ${tname}, one-file edit`, (i, b) => {
        writeFileSync(join(repoOf(b), 'src', 'd0', 'f0.txt'), `edit ${i} ${Date.now()}\n`);
        return run(i, b);
      });
      // What a user whose runs are more than a minute apart meets: the kept answer "the remote holds none of
      // this repository's locks" is past its minute, so the run asks the remote again, while its command
      // runs, and the VM's disk is read again on the open connection; more than ten minutes after, the
      // connection is gone (ControlPersist) and the remote is asked before the lock (docs/LOCKS.md). The
      // records are aged and the connection closed before each run, as the clock would (pause()).
      // The tree is as the edit row left it: its last edit not committed (dirty, as an agent's tree mostly
      // is), unchanged since the last run, and, as a minute later, written more than 3 s before (the
      // snapshot's racy margin: docs/RUN.md) and out to disk.
      if (files === 10_000) {
        execFileSync('sync');
        await new Promise((r) => setTimeout(r, 4500));
        for (const [when, ms] of [['a minute', 61_000], ['ten minutes', 601_000]]) {
          measure(`offhost run, sync ${mode}, ${tname}, dirty, no change, ${when} after the last run`, (i, b) => {
            pause(`${mode}-${files}${b === bin ? '' : '-before'}.git`, ms);
            return run(i, b);
          });
        }
      }
      // OFFHOST_BENCH_TRACE=1: one more run of each kind with --debug, its steps printed after the table.
      if (process.env.OFFHOST_BENCH_TRACE === '1') {
        for (const edit of [false, true]) {
          if (edit) writeFileSync(join(repo, 'src', 'd0', 'f0.txt'), `edit traced ${Date.now()}\n`);
          const r = spawnSync(bin, ['run', '--debug', '--', CMD], { cwd: repo, env, encoding: 'utf8' });
          traces.push(`offhost run --debug, sync ${mode}, ${tname}, ${edit ? 'one-file edit' : 'no change'}:\n${r.stderr.split('\n').filter((l) => l.startsWith('offhost debug:')).join('\n')}`);
        }
        if (files === 10_000) {
          // The run that asks the remote before its lock (ten minutes after the last), traced as well.
          pause(`${mode}-${files}.git`, 601_000);
          const r = spawnSync(bin, ['run', '--debug', '--', CMD], { cwd: repo, env, encoding: 'utf8' });
          traces.push(`offhost run --debug, sync ${mode}, ${tname}, ten minutes after the last run:\n${r.stderr.split('\n').filter((l) => l.startsWith('offhost debug:')).join('\n')}`);
        }
      }
    }
  }
  // Node's own start, which every offhost command pays before its first line: with NODE_EXTRA_CA_CERTS set
  // (a laptop behind a TLS-inspecting proxy; this variable makes Node 20 read every certificate at start),
  // about 40 ms more on a 2-core machine, whatever the command. offhost run as a program (as above) hides it
  // from its own Node (src/cli/launcher.sh.txt); a build before that pays it. Said, so that rows from
  // machines with and without it are not compared as if they were offhost's.
  const nodeStart = (e) => {
    const xs = [];
    for (let i = 0; i < 7; i++) {
      const t = process.hrtime.bigint();
      spawnSync(process.execPath, ['-e', '0'], { env: e, stdio: 'ignore' });
      xs.push(Number(process.hrtime.bigint() - t) / 1e6);
    }
    return median(xs).toFixed(0);
  };
  if (env.NODE_EXTRA_CA_CERTS) {
    const without = { ...env };
    delete without.NODE_EXTRA_CA_CERTS;
    console.log(`node -e 0: ${nodeStart(env)} ms with NODE_EXTRA_CA_CERTS=${env.NODE_EXTRA_CA_CERTS} (as in the environment of every run below), ${nodeStart(without)} ms without it`);
  } else console.log(`node -e 0: ${nodeStart(env)} ms (NODE_EXTRA_CA_CERTS unset)`);
  console.log(`median of ${ITER} whole-process runs (ms)${FILE_BYTES ? `, files of ${FILE_BYTES} bytes` : ''}, loopback sshd, the VM's HOME ${process.env.OFFHOST_BENCH_VM_HOME ?? 'its own folder'}, its ~/.bashrc ${vmRc ?? 'a two-line non-interactive guard'}; each row's plain-ssh baseline is measured alternately with it\n`);
  const w = Math.max(...rows.map((r) => r.label.length));
  for (const r of rows) {
    const over = r === rows[0] ? '' : `  (plain ssh ${r.ssh.toFixed(0)} ms alongside: +${(r.ms - r.ssh).toFixed(0)} ms, ${(r.ms / r.ssh).toFixed(2)}x)`;
    console.log(`${r.label.padEnd(w)}  ${r.ms.toFixed(0).padStart(6)}  [${r.min.toFixed(0)}-${r.max.toFixed(0)}]${over}`);
  }
  for (const t of traces) console.log(`\n${t}`);
} catch (err) {
  console.error(err);
  process.exitCode = 1;
} finally {
  closeMasters();
  sshd.kill('SIGTERM');
  rmSync(base, { recursive: true, force: true });
  rmSync(controlBase, { recursive: true, force: true });
}
