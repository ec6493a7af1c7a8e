// Writes dist/cold.cjs.cache with what a real `offhost run` compiles. The loader writes a bundle's code
// cache when the first process that loads it finds none (src/cli/loader.cjs), and V8 puts in it the
// functions that process compiled: a cache written by `lock --help` held the command table and little
// else, so every `offhost run` compiled its pipeline, the lock store, the YAML reader of lock files and
// the source read again (about 20 ms of a run: docs/BUILD.md). The run here is a whole one: a repository
// in a temporary folder, a VM whose template backend is this machine's `sh` (sync: shared), the lock
// taken and released in a user store under a temporary HOME. Its environment is built from nothing but
// PATH, so that nothing of the developer's (their git config, XDG folders, OFFHOST_* settings) is read
// or written.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Runs the warm-up with dist/offhost.cjs; returns a line for the build's output when the run did not end 0. */
export function warmColdCache(dist) {
  const base = mkdtempSync(join(tmpdir(), 'offhost-warm-'));
  try {
    const home = join(base, 'home');
    const repo = join(base, 'repo');
    mkdirSync(home);
    mkdirSync(repo);
    const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home, LC_ALL: 'C', GIT_CONFIG_NOSYSTEM: '1', OFFHOST_ROLE: 'laptop', OFFHOST_SESSION: 'warm', OFFHOST_AI: 'human' };
    const git = (...args) => spawnSync('git', ['-c', 'user.name=offhost', '-c', 'user.email=warm@offhost.invalid', '-c', 'commit.gpgsign=false', ...args], { cwd: repo, env, encoding: 'utf8' });
    writeFileSync(join(repo, 'a.txt'), 'a\n');
    writeFileSync(
      join(repo, 'offhost.config.yaml'),
      [
        'vms:',
        '  - { id: s.khost1.dev-linux-warm, backend: template, template: "sh -c {script}", where: remote, sync: shared }',
        'routes:',
        '  koda:',
        '    vms: [s.khost1.dev-linux-warm]',
        'rules:',
        '  - { id: warm-bash, description: warm-up, policy: R1, decision: reroute, route: koda, message: warm-up, match: { program: [bash] }, examples: { match: ["bash -c true"] } }',
        '',
      ].join('\n'),
    );
    for (const args of [['init', '-q', '-b', 'main'], ['add', '.'], ['commit', '-q', '-m', 'warm-up']]) {
      const r = git(...args);
      if (r.status !== 0) return `the cold bundle's warm-up could not make its repository (git ${args[0]}: ${(r.stderr || r.error?.message || '').trim()}); its cache holds less`;
    }
    const r = spawnSync(process.execPath, [join(dist, 'offhost.cjs'), 'run', '--', 'bash -c true'], { cwd: repo, env, encoding: 'utf8' });
    if (!existsSync(join(dist, 'cold.cjs.cache'))) return `the cold bundle's warm-up run wrote no cache (${(r.stderr || r.error?.message || '').trim().split('\n').pop()})`;
    if (r.status !== 0) return `the cold bundle's warm-up run ended ${r.status} (${(r.stderr || '').trim().split('\n').pop()}); its cache holds what that run compiled`;
    return null;
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
}
