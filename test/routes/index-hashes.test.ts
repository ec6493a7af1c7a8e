// The manifest's hashes of clean tracked files come from git's index and a cache of blob hashes
// (src/routes/index-hashes.ts), not from a stat of each file. In every state below the manifest is the
// one read from the files themselves (manifestOf without caches: the ground truth), on the run that
// fills the caches and on the runs after it; and where git's index cannot stand for the file (a bit that
// makes status skip it, an attribute or setting that converts content, a mode git does not track) the
// file is read. The cases built to fool an index-only reading fail without those checks.
import { afterAll, describe, expect, it } from 'vitest';
import { execFileSync, spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, unlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { manifestOf, readSourceState } from '../../src/routes/source.js';
import { convertingFile, parseConfigZ, parseStagedIndex } from '../../src/routes/index-hashes.js';

const made: string[] = [];
afterAll(() => {
  for (const d of made) rmSync(d, { recursive: true, force: true });
});
const home = mkdtempSync(join(tmpdir(), 'offhost-index-hashes-home-'));
made.push(home);
const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: home, GIT_CONFIG_NOSYSTEM: '1', GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@t', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@t' };
const git = (cwd: string, ...a: string[]) => execFileSync('git', ['-c', 'commit.gpgsign=false', '-c', 'init.defaultBranch=main', ...a], { cwd, env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });

function repo(opts: string[] = []): string {
  const root = mkdtempSync(join(tmpdir(), 'offhost-index-hashes-'));
  made.push(root);
  git(root, 'init', '-q', ...opts);
  for (let i = 0; i < 30; i++) {
    mkdirSync(join(root, 'src', `d${i % 3}`), { recursive: true });
    writeFileSync(join(root, 'src', `d${i % 3}`, `f${i}.c`), `int f${i};\n`);
  }
  writeFileSync(join(root, 'run.sh'), '#!/bin/sh\necho run\n');
  chmodSync(join(root, 'run.sh'), 0o755);
  git(root, 'add', '.');
  git(root, 'commit', '-qm', 'base');
  return root;
}

/** The files' times put past the caches' racy margin (3 s), as a run a little later meets them. */
function age(root: string, ...paths: string[]) {
  const t = Date.now() / 1000 - 60;
  for (const p of paths) utimesSync(join(root, p), t, t);
}

/** readSourceState's manifest, with HOME (the user's attributes file) pointed at the test's own. */
async function read(root: string) {
  const saved = { HOME: process.env.HOME, XDG: process.env.XDG_CONFIG_HOME, NOSYS: process.env.GIT_CONFIG_NOSYSTEM };
  process.env.HOME = home;
  delete process.env.XDG_CONFIG_HOME;
  process.env.GIT_CONFIG_NOSYSTEM = '1';
  try {
    return await readSourceState({ root, gitDir: join(root, '.git') }, ['.git']);
  } finally {
    process.env.HOME = saved.HOME;
    if (saved.XDG !== undefined) process.env.XDG_CONFIG_HOME = saved.XDG;
    if (saved.NOSYS === undefined) delete process.env.GIT_CONFIG_NOSYSTEM;
    else process.env.GIT_CONFIG_NOSYSTEM = saved.NOSYS;
  }
}

/** Three reads (the first fills the caches) each give the manifest the files themselves give. */
async function truthful(root: string, what: string) {
  for (let i = 0; i < 3; i++) {
    const st = await read(root);
    expect(st.manifest, `${what} (read ${i + 1})`).toBe(manifestOf(root, st.files).manifest);
  }
  return read(root);
}

const blobCache = (root: string) => join(root, '.git', 'offhost', 'blob-hashes');
const blobLines = (root: string) => (existsSync(blobCache(root)) ? readFileSync(blobCache(root), 'utf8').split('\n').filter((l) => /^([0-9a-f]{40}|[0-9a-f]{64}) [0-9a-f]{64}$/.test(l)).length : 0);
const statCache = (root: string) => join(root, '.git', 'offhost', 'hash-cache');
const statCached = (root: string) => (existsSync(statCache(root)) ? readFileSync(statCache(root), 'utf8').split('\n').filter((l) => l.includes('\t')).map((l) => l.split('\t').slice(2).join('\t')) : []);

describe('clean tracked files from the index', () => {
  it('a clean tree: every tracked file is hashed from its blob once, then taken from the index (no stat-keyed record for it)', async () => {
    const root = repo();
    age(root, 'run.sh', ...Array.from({ length: 30 }, (_, i) => `src/d${i % 3}/f${i}.c`));
    const st = await truthful(root, 'clean');
    expect(blobLines(root)).toBe(31);
    expect(st.manifest).toMatch(/--exec--\n\.\/run\.sh\n$/);
    // What came from the index was never recorded by stat.
    expect(statCached(root)).toEqual([]);
  });

  it('every kind of change status sees, made after the caches were filled, is read from the file', async () => {
    const root = repo();
    await truthful(root, 'before');
    // Same size, same second as the first read: only content (and ctime) differ.
    writeFileSync(join(root, 'src/d0/f0.c'), 'int g0;\n');
    chmodSync(join(root, 'src/d1/f1.c'), 0o755); // the execute bit, unstaged
    chmodSync(join(root, 'run.sh'), 0o644);
    unlinkSync(join(root, 'src/d2/f2.c'));
    unlinkSync(join(root, 'src/d0/f3.c'));
    symlinkSync('f6.c', join(root, 'src/d0/f3.c')); // a file turned into a symlink (type change)
    writeFileSync(join(root, 'src/d1/f4.c'), 'staged\n');
    git(root, 'add', 'src/d1/f4.c'); // staged: the index's blob is the new content
    writeFileSync(join(root, 'new.c'), 'untracked\n');
    git(root, 'mv', 'src/d2/f5.c', 'moved.c');
    writeFileSync(join(root, 'moved.c'), 'moved and changed\n');
    const st = await truthful(root, 'changed');
    expect(st.files).not.toContain('./src/d2/f2.c');
    expect(st.manifest).toMatch(/\.\/src\/d1\/f1\.c\n/); // now executable: in the --exec-- part
    expect(st.manifest.split('--exec--\n')[1]).not.toMatch(/run\.sh/);
  });

  it('a file changed before its new blob was known: the hash recorded is the blob\'s, not the file\'s', async () => {
    const root = repo();
    await truthful(root, 'before');
    writeFileSync(join(root, 'src/d0/f0.c'), 'committed\n');
    git(root, 'commit', '-qam', 'new blob');
    writeFileSync(join(root, 'src/d0/f0.c'), 'edited after the commit\n');
    await truthful(root, 'edited');
    // Back to the committed content: git calls it clean, and the index's blob stands for it.
    git(root, 'checkout', '--', 'src/d0/f0.c');
    await truthful(root, 'restored');
  });

  it('an assume-unchanged or skip-worktree file changed on disk is read (status does not look at it)', async () => {
    const root = repo();
    await truthful(root, 'before');
    git(root, 'update-index', '--assume-unchanged', 'src/d0/f0.c');
    git(root, 'update-index', '--skip-worktree', 'src/d1/f1.c');
    writeFileSync(join(root, 'src/d0/f0.c'), 'changed behind git\n');
    writeFileSync(join(root, 'src/d1/f1.c'), 'changed behind git too\n');
    expect(git(root, 'status', '--porcelain')).toBe('');
    await truthful(root, 'hidden from status');
  });

  it('a symlink to a file is hashed by what it points at, not by its blob (the target name)', async () => {
    const root = repo();
    symlinkSync('src/d0/f0.c', join(root, 'link.c'));
    // A regular file whose content is the link's blob: its hash, once known, is not the link's.
    writeFileSync(join(root, 'a-name.txt'), 'src/d0/f0.c');
    git(root, 'add', 'link.c', 'a-name.txt');
    git(root, 'commit', '-qm', 'link');
    const st = await truthful(root, 'symlink');
    expect(st.manifest).toContain(`${st.manifest.match(/^(\w{64}) {2}\.\/src\/d0\/f0\.c$/m)![1]}  ./link.c\n`);
  });

  const crlfCase = async (setup: (root: string) => void, what: string, file = 'dos.txt') => {
    const root = repo();
    setup(root);
    mkdirSync(join(root, 'sub'), { recursive: true });
    // A file committed with LF whose working copy has CRLF: git status calls it clean, its blob is not its content.
    writeFileSync(join(root, file), 'a\nb\n');
    git(root, 'add', file);
    git(root, 'commit', '-qm', 'dos');
    writeFileSync(join(root, file), 'a\r\nb\r\n');
    git(root, 'add', file);
    // Nothing changed in the working tree as git sees it (the second column).
    expect(git(root, 'status', '--porcelain', '--', file), what).not.toMatch(/^.[^ ]/m);
    expect(readFileSync(join(root, file), 'utf8')).toBe('a\r\nb\r\n');
    await truthful(root, what);
    // No record maps the blob to content it does not have.
    const blob = git(root, 'ls-files', '-s', file).split(' ')[1]!;
    expect(existsSync(blobCache(root)) ? readFileSync(blobCache(root), 'utf8') : '', what).not.toContain(blob);
  };

  it('an attribute that converts content, in any file git reads attributes from, makes every file read', async () => {
    await crlfCase((r) => {
      writeFileSync(join(r, '.gitattributes'), '# line endings\n*.txt text\n');
      git(r, 'add', '.gitattributes');
      git(r, 'commit', '-qm', 'attrs');
    }, 'tracked .gitattributes');
    await crlfCase((r) => {
      mkdirSync(join(r, 'sub'));
      writeFileSync(join(r, '.gitattributes'), '[attr]dos text eol=crlf\n');
      writeFileSync(join(r, 'sub', '.gitattributes'), '*.txt dos\n');
    }, 'untracked .gitattributes files (a macro)', 'sub/dos.txt');
    await crlfCase((r) => writeFileSync(join(r, '.git', 'info', 'attributes'), '* text=auto\n'), '.git/info/attributes');
    await crlfCase((r) => git(r, 'config', 'core.autocrlf', 'input'), 'core.autocrlf');
    await crlfCase((r) => {
      const f = join(home, 'attributes-of-this-test');
      writeFileSync(f, '*.txt text\n');
      git(r, 'config', 'core.attributesFile', f);
    }, 'core.attributesFile');
  });

  it('a blob hashed before an attribute came in is not taken for a file checked out converted since', async () => {
    for (const [what, add] of [
      ['an untracked .gitattributes', (r: string) => writeFileSync(join(r, '.gitattributes'), '*.c text eol=crlf\n')],
      ['.git/info/attributes', (r: string) => writeFileSync(join(r, '.git', 'info', 'attributes'), '*.c text eol=crlf\n')],
      ['a .gitattributes git ignores, in a directory above the file', (r: string) => {
        writeFileSync(join(r, '.gitignore'), '.gitattributes\n');
        writeFileSync(join(r, 'src', '.gitattributes'), '*.c text eol=crlf\n');
      }],
    ] as const) {
      const root = repo();
      await truthful(root, `${what}: before`);
      add(root);
      unlinkSync(join(root, 'src/d0/f0.c'));
      git(root, 'checkout', '--', 'src/d0/f0.c');
      expect(readFileSync(join(root, 'src/d0/f0.c'), 'utf8'), what).toBe('int f0;\r\n');
      expect(git(root, 'status', '--porcelain', '--', 'src'), what).toBe('');
      await truthful(root, what);
    }
  });

  it('attributes that convert nothing (unset, unspecified, binary, diff) keep the index in use', async () => {
    const root = repo();
    writeFileSync(join(root, '.gitattributes'), '*.png -text binary\n*.c diff=cpp linguist-language=C\n*.bin !eol\n# text eol=crlf in a comment\n');
    git(root, 'add', '.gitattributes');
    git(root, 'commit', '-qm', 'attrs');
    age(root, '.gitattributes', 'run.sh', ...Array.from({ length: 30 }, (_, i) => `src/d${i % 3}/f${i}.c`));
    await truthful(root, 'harmless attributes');
    expect(statCached(root)).toEqual([]);
  });

  it('core.fileMode=false: the execute bit is read from the file, not the index', async () => {
    const root = repo();
    git(root, 'config', 'core.fileMode', 'false');
    await truthful(root, 'before');
    chmodSync(join(root, 'run.sh'), 0o644);
    chmodSync(join(root, 'src/d0/f0.c'), 0o755);
    expect(git(root, 'status', '--porcelain')).toBe('');
    const st = await truthful(root, 'modes changed, git not looking');
    expect(st.manifest.split('--exec--\n')[1]).toBe('./src/d0/f0.c\n');
  });

  it('an edit that keeps the size and puts the mtime back: git sees it by its ctime; with core.trustCtime=false or core.checkStat=minimal the file is read', async () => {
    const settings = [null, ['core.trustCtime', 'false'], ['core.checkStat', 'minimal']] as const;
    const roots: string[] = [];
    for (const setting of settings) {
      const root = repo();
      if (setting) git(root, 'config', setting[0], setting[1]);
      // The index written well after the files (not "racily clean": git would compare the content).
      age(root, 'run.sh', ...Array.from({ length: 30 }, (_, i) => `src/d${i % 3}/f${i}.c`));
      git(root, 'update-index', '--refresh');
      await truthful(root, `${setting?.join('=') ?? 'default'}: before`);
      roots.push(root);
    }
    // git compares whole seconds of ctime (unless built with USE_NSEC): the edit comes in a later second
    // than the one git recorded (within the same second git does not see it either: docs/RUN.md).
    await new Promise((r) => setTimeout(r, 1100));
    for (const [i, setting] of settings.entries()) {
      const root = roots[i]!;
      const file = join(root, 'src/d0/f0.c');
      const ref = join(root, '.git', 'mtime-ref');
      execFileSync('touch', ['-r', file, ref]);
      writeFileSync(file, 'int g0;\n'); // the same size
      execFileSync('touch', ['-r', ref, file]);
      if (setting) expect(git(root, 'status', '--porcelain'), 'git itself does not see it').toBe('');
      else expect(git(root, 'status', '--porcelain')).toBe(' M src/d0/f0.c\n');
      await truthful(root, setting?.join('=') ?? 'default');
    }
  });

  it('a tracked file replaced by a FIFO, and a FIFO or a device as .gitattributes: nothing waits for a writer, the FIFO is left out', async () => {
    const root = repo();
    // An index written well after the files: git status compares their stat, not their content (a racy
    // entry would have git itself open the FIFO and wait: docs/RUN.md).
    age(root, 'run.sh', ...Array.from({ length: 30 }, (_, i) => `src/d${i % 3}/f${i}.c`));
    git(root, 'update-index', '--refresh');
    await truthful(root, 'before');
    unlinkSync(join(root, 'src/d0/f0.c'));
    execFileSync('mkfifo', [join(root, 'src/d0/f0.c')]);
    execFileSync('mkfifo', [join(root, 'src', '.gitattributes')]);
    symlinkSync('/dev/zero', join(root, '.gitattributes'));
    // A writer that opens both FIFOs only after 10 s: a read that waited for it would return after that.
    const opened = join(root, '.git', 'writer-opened');
    const writer = spawn('sh', ['-c', 'sleep 10; : > "$1"; exec 3>"$2" 4>"$3"; sleep 1', 'sh', opened, join(root, 'src/d0/f0.c'), join(root, 'src', '.gitattributes')], { stdio: 'ignore' });
    try {
      const st = await read(root);
      expect(existsSync(opened), 'the read waited for a writer').toBe(false);
      expect(st.files).not.toContain('./src/d0/f0.c');
      expect(st.manifest).toBe(manifestOf(root, st.files).manifest);
    } finally {
      writer.kill('SIGKILL');
    }
  });

  it('a repository in the sha256 object format', async () => {
    const root = repo(['--object-format=sha256']);
    age(root, 'run.sh', ...Array.from({ length: 30 }, (_, i) => `src/d${i % 3}/f${i}.c`));
    await truthful(root, 'sha256');
    expect(blobLines(root)).toBe(31);
  });

  it('a garbled blob-hash cache is ignored, and filled again', async () => {
    const root = repo();
    await truthful(root, 'before');
    rmSync(join(root, '.git', 'offhost', 'index-snapshot'));
    const text = readFileSync(blobCache(root), 'utf8');
    writeFileSync(blobCache(root), `${text.split('\n')[0]}\nnot a record\n${'a'.repeat(40)} short\n`);
    await truthful(root, 'garbled');
    expect(blobLines(root)).toBe(31);
  });
});

describe('the parsers', () => {
  it('ls-files -s -v, git config -z, attribute words', () => {
    const m = parseStagedIndex(Buffer.from(`H 100644 ${'a'.repeat(40)} 0\tsp ace\ttab\0h 100755 ${'b'.repeat(40)} 0\tx\0`));
    expect(m.get('sp ace\ttab')).toEqual({ tag: 'H', mode: '100644', blob: 'a'.repeat(40), stage: '0' });
    expect(m.get('x')?.tag).toBe('h');
    expect(parseConfigZ(Buffer.from('core.fileMode\nfalse\0core.autocrlf\0'))).toEqual(new Map([['core.filemode', 'false'], ['core.autocrlf', 'true']]));
    const dir = mkdtempSync(join(tmpdir(), 'offhost-attrs-'));
    made.push(dir);
    const verdict = (text: string) => {
      writeFileSync(join(dir, 'a'), text);
      return convertingFile([join(dir, 'a')]) !== null;
    };
    for (const yes of ['* text', '*.c eol=lf', '* crlf', '*.psd filter=lfs diff=lfs', '* ident', '* working-tree-encoding=UTF-16', '[attr]x text', '*\ttext=auto']) expect(verdict(yes), yes).toBe(true);
    for (const no of ['*.png -text', '* !eol', '* binary', '*.c diff=cpp', '# * text', '*.text -diff', 'docs/text/* -diff', '']) expect(verdict(no), no).toBe(false);
  });
});

describe('excluded path segments', () => {
  it('is the split-by-segment answer for any path (property, against the obvious implementation)', async () => {
    const fc = (await import('fast-check')).default;
    const { excluded } = await import('../../src/routes/source.js');
    const seg = fc.constantFrom('node_modules', 'target', '.git', 'xtarget', 'targetx', 'a', 'node_modules.bak', '');
    fc.assert(
      fc.property(fc.array(seg, { minLength: 1, maxLength: 5 }), fc.subarray(['node_modules', 'target', '.git']), (segs, ex) => {
        const p = segs.join('/');
        expect(excluded(p, ex)).toBe(p.split('/').some((s) => ex.includes(s)));
      }),
      { numRuns: 2000 },
    );
  });
});

describe('the index snapshot (the tracked manifest kept with the listing it came from)', () => {
  const snapFile = (root: string) => join(root, '.git', 'offhost', 'index-snapshot');
  /** The snapshot with one manifest line made to lie (so a run that takes it whole shows it). */
  const lie = (root: string) => {
    const buf = readFileSync(snapFile(root));
    const text = buf.toString('latin1');
    const at = text.indexOf('  ./src/d0/f0.c\n');
    expect(at).toBeGreaterThan(64);
    writeFileSync(snapFile(root), Buffer.from(`${text.slice(0, at - 64)}${'0'.repeat(64)}${text.slice(at)}`, 'latin1'));
  };
  const lied = (m: string) => m.includes(`${'0'.repeat(64)}  ./src/d0/f0.c\n`);
  /** A repository whose snapshot was filled, then made to lie; `change` made; what the next read gives. */
  const liedThenChanged = async (what: string, change: (root: string) => void) => {
    const root = repo();
    await truthful(root, `${what}: filling`);
    lie(root);
    change(root);
    return { root, st: await read(root) };
  };

  it('is kept once every tracked file came from the index, and taken whole while nothing changed (a lie put in it shows)', async () => {
    const root = repo();
    await truthful(root, 'filling');
    expect(existsSync(snapFile(root))).toBe(true);
    lie(root);
    const st = await read(root);
    expect(lied(st.manifest)).toBe(true);
    expect(st.files.length).toBe(31);
    expect(st.list.toString()).toBe(st.files.map((f) => `${f}\0`).join(''));
  });

  it('is not taken when the index listing, the exclusions or the trust differ (a staged change, an attribute, core.fileMode)', async () => {
    const cases: [string, (root: string) => void][] = [
      ['a staged change', (r) => {
        writeFileSync(join(r, 'src/d1/f1.c'), 'staged\n');
        git(r, 'add', 'src/d1/f1.c');
      }],
      ['an attribute', (r) => writeFileSync(join(r, 'src', '.gitattributes'), '*.c text\n')],
      ['core.fileMode', (r) => git(r, 'config', 'core.fileMode', 'false')],
    ];
    for (const [what, change] of cases) {
      const { root, st } = await liedThenChanged(what, change);
      expect(lied(st.manifest), what).toBe(false);
      expect(st.manifest, what).toBe(manifestOf(root, st.files).manifest);
    }
    // Other exclusions: another key.
    const root = repo();
    await truthful(root, 'exclusions: filling');
    lie(root);
    const other = await readSourceState({ root, gitDir: join(root, '.git') }, ['.git', 'vendor']);
    expect(lied(other.manifest)).toBe(false);
  });

  it('with files changed, deleted or untracked in the working tree, it stands for the rest and those are read', async () => {
    const cases: [string, (root: string) => void, string][] = [
      ['an edit', (r) => writeFileSync(join(r, 'src/d1/f1.c'), 'edited\n'), './src/d1/f1.c'],
      ['an exec bit', (r) => chmodSync(join(r, 'src/d1/f1.c'), 0o755), './src/d1/f1.c'],
      ['an untracked file', (r) => writeFileSync(join(r, 'new.c'), 'new\n'), './new.c'],
      ['a deleted file', (r) => unlinkSync(join(r, 'src/d1/f1.c')), './src/d1/f1.c'],
    ];
    for (const [what, change, path] of cases) {
      const { root, st } = await liedThenChanged(what, change);
      // Taken (the lie shows), and everything else is the truth.
      expect(lied(st.manifest), what).toBe(true);
      const truth = manifestOf(root, st.files).manifest;
      expect(st.manifest.replace(`${'0'.repeat(64)}  ./src/d0/f0.c\n`, ''), what).toBe(truth.replace(/^\w{64} {2}\.\/src\/d0\/f0\.c\n/m, ''));
      expect(st.files.includes(path), what).toBe(what !== 'a deleted file');
      // Without the lie, the whole manifest is the truth.
      rmSync(join(root, '.git', 'offhost', 'index-snapshot'));
      expect((await read(root)).manifest, what).toBe(truth);
    }
  });

  it('is kept from a tree that was dirty all along (what the index says, not what the changed file holds)', async () => {
    const root = repo();
    writeFileSync(join(root, 'src/d1/f1.c'), 'dirty from the start\n');
    await truthful(root, 'dirty');
    expect(existsSync(snapFile(root))).toBe(true);
    lie(root);
    expect(lied((await read(root)).manifest)).toBe(true);
    // Reverted: the index's line for it, from the snapshot, is its content again.
    rmSync(snapFile(root));
    await truthful(root, 'refill');
    git(root, 'checkout', '--', 'src/d1/f1.c');
    await truthful(root, 'reverted');
  });

  it('an untracked or changed file outside the source set (excluded, or a lock file) does not stop it being taken', async () => {
    const root = repo();
    const readIt = () => readSourceState({ root, gitDir: join(root, '.git') }, ['.git', 'node_modules'], ['locks/']);
    for (let i = 0; i < 2; i++) await readIt();
    lie(root);
    mkdirSync(join(root, 'node_modules'));
    writeFileSync(join(root, 'node_modules', 'x.js'), 'x\n');
    mkdirSync(join(root, 'locks'));
    writeFileSync(join(root, 'locks', 'lock-vm.md'), 'held\n');
    const st = await readIt();
    expect(lied(st.manifest)).toBe(true);
  });

  it('a snapshot cut short or of another format is not used', async () => {
    const root = repo();
    await truthful(root, 'filling');
    const whole = readFileSync(snapFile(root));
    for (const bad of [whole.subarray(0, whole.length - 3), Buffer.from(`x${whole.toString('latin1')}`, 'latin1'), Buffer.alloc(0)]) {
      writeFileSync(snapFile(root), bad);
      const st = await read(root);
      expect(st.manifest).toBe(manifestOf(root, st.files).manifest);
    }
  });
});
