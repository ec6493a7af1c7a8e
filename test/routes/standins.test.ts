// The stand-ins behave like the real tools as far as argv, cwd, env and exit status go.
import { spawnSync } from 'node:child_process';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STANDIN_TOOLS, standinPath } from '../helpers/standins.js';
import { makeWorld, runOnLaptop, type World } from './harness.js';

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
});
