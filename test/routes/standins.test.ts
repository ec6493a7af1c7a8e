// The stand-ins behave like the real tools as far as argv, cwd, env and exit status go.
import { spawnSync } from 'node:child_process';
import { mkdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STANDIN_TOOLS, readStandinLog, standinPath } from '../helpers/standins.js';
import { HOSTILE_PIECES, makeWorld, runOnLaptop, type World } from './harness.js';

let world: World;
beforeAll(() => {
  world = makeWorld();
});
afterAll(() => world.cleanup());
const run = (line: string, env: Record<string, string> = {}) => runOnLaptop(world, line, env);

describe('stand-ins', () => {
  it('are executable files (mode 755) in standinPath()', () => {
    for (const t of STANDIN_TOOLS) expect(statSync(join(standinPath(), t)).mode & 0o777, t).toBe(0o755);
  });

  describe('ssh', () => {
    it('skips options before and after the host, joins the rest with spaces and runs it with sh -c', () => {
      const r = run(`ssh -o BatchMode=yes -p 2222 -tt -q -l koder -i/key khost1 -T -- echo 'a  b' '$HOME' "'c d'"`);
      expect(r.stdout.toString()).toBe(`a b ${world.home} c d\n`);
      expect(r.status).toBe(0);
      expect(r.log).toHaveLength(1);
      expect(r.log[0]).toMatchObject({ tool: 'ssh', host: 'khost1', instance: 'khost1', user: 'koder', cwd: world.home });
      expect(r.log[0]!.argv).toEqual(['/bin/sh', '-c', "echo a  b $HOME 'c d'"]);
    });
    it('runs in the remote home with a fresh environment and passes the exit status', () => {
      const r = run(`LEAK=laptop ssh user@khost1 'pwd; echo "[$LEAK]"; exit 9'`);
      expect(r.stdout.toString()).toBe(`${world.home}\n[]\n`);
      expect(r.status).toBe(9);
      expect(r.log[0]).toMatchObject({ instance: 'khost1', user: 'user' });
    });
    it('refuses with 255 and a message when there is no command', () => {
      const r = run('ssh -t khost1');
      expect(r.status).toBe(255);
      expect(r.stderr).toContain('no remote command');
      expect(run('ssh').status).toBe(255);
    });
    it('uses OFFHOST_STANDIN_REMOTE_SHELL as the remote shell', () => {
      expect(run(`ssh h 'echo \${BASH_VERSION:+bash}'`, { OFFHOST_STANDIN_REMOTE_SHELL: '/bin/bash' }).stdout.toString()).toBe('bash\n');
      expect(run(`ssh h 'echo \${BASH_VERSION:+bash}'`).stdout.toString()).toBe('\n');
    });
  });

  describe('incus', () => {
    it('exec: --cwd, --env (also with =), flags around the name, -- then argv run without a shell', () => {
      const r = run(`incus exec --env=A='x y' dev-linux-koda --cwd /tmp --env B=2 -T -- printf '%s|' '$A' "$(printf 'a\\nb')"; echo; incus exec dev-linux-koda --cwd / -- sh -c 'pwd; echo "$A"; exit 4'`);
      expect(r.stdout.toString()).toBe('$A|a\nb|\n/\n\n');
      expect(r.status).toBe(4);
      expect(r.log[0]).toMatchObject({ tool: 'incus', instance: 'dev-linux-koda', cwd: '/tmp', env: { A: 'x y', B: '2' } });
    });
    it('list prints a table of the instances', () => {
      const r = run('incus list', { OFFHOST_STANDIN_INSTANCES: 'dev-linux-koda,dev-linux-gui' });
      expect(r.stdout.toString()).toMatch(/\| NAME +\| +STATE +\|/);
      expect(r.stdout.toString()).toContain('| dev-linux-gui  | RUNNING |');
      expect(r.status).toBe(0);
    });
    it('fails like incus on a missing instance, directory or command', () => {
      expect(run('incus exec nope -- true', { OFFHOST_STANDIN_INSTANCES: 'dev-linux-koda' }).status).toBe(1);
      expect(run('incus exec i --cwd /no/such/dir -- true').status).toBe(1);
      expect(run('incus exec i -- no-such-program-xyz').status).toBe(127);
      expect(run('incus exec i --bogus -- true').status).toBe(1);
    });
  });

  describe('docker', () => {
    it('exec: -w, -e (also -eK=V and -e K from the caller), options stop at the container', () => {
      const r = run(`K=from-caller docker exec -it -w /tmp -e A=1 -eB='2 3' -e K ctr sh -c 'pwd; echo "$A|$B|$K"' -w`);
      expect(r.stdout.toString()).toBe('/tmp\n1|2 3|from-caller\n');
      expect(r.log[0]).toMatchObject({ tool: 'docker', instance: 'ctr', argv: ['sh', '-c', 'pwd; echo "$A|$B|$K"', '-w'] });
    });
  });

  describe('limactl', () => {
    it('shell: flags before the instance, drops the -- after it, quotes like limactl (env-looking leading args)', () => {
      const r = run(`limactl shell --workdir /tmp vm1 -- A='x y' sh -c 'pwd; echo "$A"; exit 3'`);
      expect(r.stdout.toString()).toBe('/tmp\nx y\n');
      expect(r.status).toBe(3);
      expect(r.log[0]).toMatchObject({ tool: 'limactl', instance: 'vm1', cwd: '/tmp' });
      expect(r.log[0]!.script).toBe(`cd /tmp || exit 1 ; exec "$SHELL" --login -c 'A='"'"'x y'"'"' sh -c '"'"'pwd; echo "$A"; exit 3'"'"''`);
    });
    it('exits 1 when the workdir does not exist', () => {
      expect(run('limactl shell --workdir /no/such vm1 true').status).toBe(1);
    });
  });

  describe('multipass', () => {
    it('exec: --working-directory, escapes like multipass, runs with bash', () => {
      const r = run(`multipass exec primary --working-directory /tmp -- printf '%s|' 'a b' "it's" 'é' '$x'; echo; multipass exec primary -- sh -c 'exit 6'`);
      expect(r.stdout.toString()).toBe("a b|it's|é|$x|\n");
      expect(r.status).toBe(6);
      expect(r.log[0]).toMatchObject({ tool: 'multipass', instance: 'primary', cwd: '/tmp' });
    });
    it('refuses options before -- as multipass does', () => {
      const r = run('multipass exec primary ls -la');
      expect(r.status).toBe(2);
      expect(r.stderr).toContain('should come after "--"');
    });
  });

  describe('tart and the seed helpers', () => {
    it('tart exec runs argv directly in the guest home', () => {
      const r = run(`tart exec -i sonoma sh -c 'pwd; exit 5' x`);
      expect(r.stdout.toString()).toBe(`${world.home}\n`);
      expect(r.status).toBe(5);
      expect(r.log[0]).toMatchObject({ tool: 'tart', instance: 'sonoma', argv: ['sh', '-c', 'pwd; exit 5', 'x'] });
    });
    it('vm run joins the command (vmbox), win.sh sh runs one string with bash, tart-vm.sh exec runs argv', () => {
      expect(run(`vm run box echo 'a  b'`).stdout.toString()).toBe('a b\n');
      expect(run(`win.sh sh 'echo "$BASH_VERSION" | cut -c1; exit 3'`).status).toBe(3);
      expect(run(`tart-vm.sh exec box -- printf '%s|' 'a  b'`).stdout.toString()).toBe('a  b|');
      expect(run(`tart-vm.sh exec box printf x`).status).toBe(2);
    });
  });

  it('write no log when OFFHOST_STANDIN_LOG is unset', () => {
    const r = spawnSync('ssh', ['h', 'true'], { env: { PATH: `${standinPath()}:/usr/bin:/bin`, HOME: world.home }, encoding: 'utf8' });
    expect(r.status).toBe(0);
    expect(r.stderr).toBe('');
  });

  // ssh and incus are POSIX sh with awk writing the JSON log line and the sh words: strings built to break
  // that escaping (quotes, backslashes, control characters, multibyte text), through argv as a program
  // gets it.
  describe('the sh stand-ins (ssh, incus) on hostile strings', () => {
    const hostile = [...HOSTILE_PIECES, '', '\u0001\u001f\u007f', 'a"b\\c', "it's", '\\u0041', '\b\f', 'line1\nline2\n'];
    const direct = (tool: string, args: string[], env: Record<string, string> = {}) => {
      rmSync(world.log, { force: true });
      const r = spawnSync(tool, args, { cwd: world.home, env: world.env(env), encoding: 'utf8', input: '' });
      return { ...r, log: readStandinLog(world.log) };
    };

    it('incus exec: the program gets every argument and --env value as given, and the log says the same', () => {
      const env = Object.fromEntries(hostile.map((v, i) => [`V${i}`, v]));
      const r = direct('incus', ['exec', 'i', ...Object.entries(env).flatMap(([k, v]) => ['--env', `${k}=${v}`]), '--', 'node', '-e', 'process.stdout.write(JSON.stringify({ argv: process.argv.slice(1), env: Object.fromEntries(Object.entries(process.env).filter(([k]) => /^V[0-9]+$/.test(k))) }))', ...hostile]);
      expect(r.status, r.stderr).toBe(0);
      expect(JSON.parse(r.stdout)).toEqual({ argv: hostile, env });
      expect(r.log).toHaveLength(1);
      expect(r.log[0]).toMatchObject({ tool: 'incus', instance: 'i', user: null, argv: ['node', '-e', expect.any(String), ...hostile], cwd: world.home, env });
    });

    it('ssh: the joined command, the host and the options are logged as given', () => {
      const r = direct('ssh', ['-o', hostile.join(''), '-l', 'a"b', 'k\\h', '--', 'printf', '%s', ...hostile.map((h) => `'${h.replaceAll("'", "'\\''")}'`)]);
      expect(r.status, r.stderr).toBe(0);
      expect(r.stdout).toBe(hostile.join(''));
      expect(r.log[0]).toMatchObject({ tool: 'ssh', host: 'k\\h', instance: 'k\\h', user: 'a"b', options: ['-o', hostile.join(''), '-l', 'a"b'] });
      expect(r.log[0]!.argv.slice(0, 2)).toEqual(['/bin/sh', '-c']);
    });

    it('give the command only the VM-side environment, and the probe marker when it carries one', () => {
      const r = direct('incus', ['exec', 'i', '--', 'env'], { LEAK: 'laptop', OFFHOST_STANDIN_X: 'kept' });
      expect(r.stdout.split('\n').filter(Boolean).sort()).toEqual([`HOME=${world.home}`, 'LANG=C.UTF-8', `OFFHOST_STANDIN_HOME=${world.home}`, `OFFHOST_STANDIN_LOG=${world.log}`, 'OFFHOST_STANDIN_X=kept', `PATH=${world.env().PATH}`].sort());
      const probe = direct('ssh', ['h', ': offhost-probe; echo "$OFFHOST_STANDIN_PROBE"'], { OFFHOST_STANDIN_PROBE_LOG: `${world.log}.probe` });
      expect(probe.stdout).toBe('1\n');
      expect(probe.log).toEqual([]);
      expect(readStandinLog(`${world.log}.probe`)).toHaveLength(1);
    });

    it('pass a signal death on as 128+N with only the command\'s own stderr, and run a program whose name has a =', () => {
      for (const tool of ['ssh', 'incus']) {
        const args = tool === 'ssh' ? ['h', 'echo mine >&2; kill -TERM $$'] : ['exec', 'i', '--', 'sh', '-c', 'echo mine >&2; kill -TERM $$'];
        const r = direct(tool, args);
        expect([tool, r.status, r.signal, r.stderr]).toEqual([tool, 143, null, 'mine\n']);
      }
      const bin = join(world.home, 'eq-bin');
      mkdirSync(bin, { recursive: true });
      writeFileSync(join(bin, 'A=1'), '#!/bin/sh\necho "ran $*"\n', { mode: 0o755 });
      const r = direct('incus', ['exec', 'i', '--', 'A=1', 'x'], { PATH: `${standinPath()}:${bin}:/usr/bin:/bin` });
      expect([r.status, r.stdout]).toEqual([0, 'ran x\n']);
    });
  });
});
