// A real case-insensitive volume, as a Mac's APFS is: a vfat image mounted through FUSE (fusefat; this
// machine's kernel has neither vfat nor ext4 casefold, CONFIG_UNICODE being off). The monorepo lives on
// it; the engine reached as `DEV/Koder/Engines/Lang/Koda` is the engine: `offhost check` reroutes there
// with the configured path for the VM, a line that writes `RUN.SH` and runs `run.sh` is not judged by the
// old file, and the make shim's fast path does not start a real make there (the stand-in judge is asked;
// a Makefile that records its runs says make never ran). The same lines on the case-sensitive temp disk
// get the case-sensitive answers. Skips, saying why, where the volume cannot be made.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BIN } from '../shims/tree.js';

const which = (p: string) => spawnSync('sh', ['-c', `command -v ${p}`], { encoding: 'utf8' }).stdout.trim();
const why = (() => {
  if (process.getuid?.() !== 0) return 'mounting an image needs root';
  if (!existsSync('/dev/fuse')) return 'no /dev/fuse';
  for (const p of ['fusefat', 'mkfs.vfat', 'fusermount']) {
    // .ci/run installs them: there (OFFHOST_TEST_TOOLS=required) a missing one is a broken install, not a skip.
    if (!which(p) && process.env.OFFHOST_TEST_TOOLS === 'required') throw new Error(`OFFHOST_TEST_TOOLS=required: ${p} is not installed`);
    if (!which(p)) return `${p} is not installed (.ci/run installs fusefat, dosfstools)`;
  }
  return null;
})();

let base = '';
let mnt = '';
let mounted = false;
let mountError = '';

beforeAll(() => {
  if (why) return;
  base = realpathSync(mkdtempSync(join(tmpdir(), 'offhost-case-')));
  mnt = join(base, 'mnt');
  mkdirSync(mnt);
  const img = join(base, 'fat.img');
  writeFileSync(img, '');
  spawnSync('truncate', ['-s', '16M', img]);
  const mk = spawnSync('mkfs.vfat', ['-n', 'OFFHOST', img], { encoding: 'utf8' });
  const mo = mk.status === 0 ? spawnSync('fusefat', ['-o', 'rw+', img, mnt], { encoding: 'utf8', timeout: 20_000 }) : mk;
  mounted = mo.status === 0 && spawnSync('mountpoint', ['-q', mnt]).status === 0;
  if (!mounted) mountError = `${mo.stderr ?? ''}${mo.stdout ?? ''}`.trim().split('\n').slice(-1)[0] ?? 'mount failed';
});

afterAll(() => {
  if (mounted) spawnSync('fusermount', ['-u', mnt]);
  if (base) rmSync(base, { recursive: true, force: true });
});

/** A laptop under `top`: HOME at top/Users/koder, the monorepo at ~/dev/koder, a Makefile recording its runs. */
function laptop(top: string) {
  const home = join(top, 'Users', 'koder');
  const koda = join(home, 'dev', 'koder', 'engines', 'lang', 'koda');
  const other = join(home, 'dev', 'koder', 'apps', 'web');
  const ran = join(base, `make-ran-${top === mnt ? 'fat' : 'ext'}.log`);
  for (const d of [koda, other]) {
    mkdirSync(d, { recursive: true });
    writeFileSync(join(d, 'Makefile'), `all:\n\techo "$(CURDIR)" >> ${ran}\nbuild-safe: all\n`);
  }
  writeFileSync(join(koda, 'run.sh'), 'echo light\n');
  const env = { HOME: home, PATH: '/usr/bin:/bin', OFFHOST_ROLE: 'laptop', XDG_CONFIG_HOME: join(base, 'xdg'), XDG_CACHE_HOME: join(base, 'cache'), LANG: 'C' };
  return { home, koda, other, ran, env };
}

function check(l: ReturnType<typeof laptop>, line: string, cwd: string) {
  const r = spawnSync(process.execPath, [BIN, 'check', '--json', line], { cwd, env: { ...l.env, PWD: cwd }, encoding: 'utf8', timeout: 60_000 });
  return JSON.parse(r.stdout || `{"error": ${JSON.stringify(r.stderr)}}`) as { decision: string; rule: string | null; route: { cwd: string } | null };
}

describe.skipIf(why !== null)(`on a case-insensitive volume (vfat through FUSE)${why ? `: skipped, ${why}` : ''}`, () => {
  const need = () => {
    if (!mounted) throw new Error(`the vfat image could not be mounted: ${mountError}`);
  };

  it('the volume folds case (the premise of this file)', () => {
    need();
    mkdirSync(join(mnt, 'Probe'));
    expect(existsSync(join(mnt, 'PROBE'))).toBe(true);
  });

  it('the engine reached in another case is rerouted, with the configured spelling as the VM path', () => {
    need();
    const l = laptop(mnt);
    const variant = join(l.home, 'DEV', 'Koder', 'Engines', 'Lang', 'Koda');
    const v = check(l, 'make build-safe', variant);
    expect(v.decision).toBe('reroute');
    expect(v.rule).toBe('koda-make');
    expect(v.route!.cwd).toBe(l.koda);
    expect(check(l, 'cd Engines/LANG/koda && make', join(l.home, 'dev', 'KODER')).decision).toBe('reroute');
  });

  it('a line writing RUN.SH and running run.sh is not judged by the file on disk now', () => {
    need();
    const l = laptop(mnt);
    expect(check(l, "echo 'make build-safe' > RUN.SH; bash run.sh", l.koda).decision).not.toBe('allow');
  });

  it("make's shim asks the judge in the engine spelled in another case, and takes its fast path elsewhere", () => {
    need();
    const l = laptop(mnt);
    const shims = join(base, 'shims');
    const asked = join(base, 'judge.log');
    const judge = join(base, 'judge.cjs');
    // A stand-in judge: records what it was asked, refuses (126), so a judged make never starts.
    writeFileSync(judge, "require('fs').appendFileSync(process.env.FAKE_JUDGE_LOG, process.cwd() + '\\n'); process.exit(126);\n");
    chmodSync(judge, 0o755);
    const env = { ...l.env, OFFHOST_SHIM_BIN: judge, FAKE_JUDGE_LOG: asked };
    const inst = spawnSync(process.execPath, [BIN, 'shim', 'install', '--dir', shims], { cwd: l.home, env, encoding: 'utf8' });
    expect(inst.status, inst.stderr).toBe(0);
    const shimText = readFileSync(join(shims, 'make'), 'utf8');
    expect(shimText, 'make keeps a fast path whose condition is the engine directory').toContain(l.koda);
    const runMake = (cwd: string) => spawnSync('bash', ['-c', `cd ${JSON.stringify(cwd)} && make -s`], { env: { ...env, PATH: `${shims}:/usr/bin:/bin` }, encoding: 'utf8' });
    const inEngine = runMake(join(l.home, 'Dev', 'KODER', 'Engines', 'Lang', 'Koda'));
    expect(inEngine.status).toBe(126);
    expect(existsSync(asked) ? readFileSync(asked, 'utf8') : '').not.toBe('');
    expect(existsSync(l.ran) ? readFileSync(l.ran, 'utf8') : '').toBe('');
    rmSync(asked, { force: true });
    const elsewhere = runMake(join(l.home, 'Dev', 'KODER', 'Apps', 'Web'));
    expect(elsewhere.status, elsewhere.stderr).toBe(0);
    expect(existsSync(asked)).toBe(false);
    expect(readFileSync(l.ran, 'utf8')).toMatch(/apps\/web|Apps\/Web/i);
  });
});

describe.skipIf(why !== null)(`the same lines on the case-sensitive temp disk${why ? `: skipped, ${why}` : ''}`, () => {
  it('another spelling is another directory; RUN.SH is another file', () => {
    const ext = join(base, 'ext');
    const l = laptop(ext);
    mkdirSync(join(l.home, 'DEV', 'Koder', 'Engines', 'Lang', 'Koda'), { recursive: true });
    expect(check(l, 'make build-safe', join(l.home, 'DEV', 'Koder', 'Engines', 'Lang', 'Koda')).decision).toBe('allow');
    expect(check(l, "echo 'make build-safe' > RUN.SH; bash run.sh", l.koda).decision).toBe('allow');
    expect(check(l, 'make build-safe', l.koda).decision).toBe('reroute');
  });
});
