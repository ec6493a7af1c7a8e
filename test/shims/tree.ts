// A laptop in a temp folder for the physical-path and shim tests: a HOME with the monorepo at
// ~/dev/koder (a real directory, or a symlink to /data/koder as when ~/dev is on another disk), a symlink
// to the Koda engine (~/koda-link), a git repository at the monorepo root (offhost run keeps VM locks
// there), and stand-in heavy programs that record where they ran.
//
// A stand-in heavy program appends `prog<TAB>laptop<TAB>physical cwd<TAB>args` to $OFFHOST_STANDIN_HEAVY_LOG.
// `laptop` is 1 when it saw LAPTOP_MARKER=1, which only the laptop side has: the VM stand-ins (ssh, incus)
// give the "VM" a fresh environment that keeps OFFHOST_STANDIN_* variables only.
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { standinPath } from '../helpers/standins.js';

export const ROOT = resolve(import.meta.dirname ?? new URL('.', import.meta.url).pathname, '..', '..');
export const BIN = join(ROOT, 'dist', 'offhost.cjs');
export const SHELL = join(ROOT, 'hooks', 'offhost-shell');

export const HEAVY = ['make', 'qemu-system-x86_64', 'emulator', 'flutter', 'xvfb-run', 'chromium', 'lb', 'playwright', 'heavy-build'];

export type Layout = 'plain' | 'symlinked';

export interface Tree {
  layout: Layout;
  base: string;
  home: string;
  /** ~/dev/koder as the configuration spells it. */
  root: string;
  koda: string;
  /** The same directories, physically. */
  physicalRoot: string;
  physicalKoda: string;
  /** ~/koda-link -> the engine. */
  kodaLink: string;
  /** A directory outside the monorepo. */
  elsewhere: string;
  localBin: string;
  heavyLog: string;
  standinLog: string;
  shims: string;
  audit: string;
  cleanup(): void;
}

export interface HeavyRun {
  prog: string;
  laptop: boolean;
  cwd: string;
  args: string;
}

export function makeTree(layout: Layout, opts: { heavy?: string[]; makeIsStandin?: boolean } = {}): Tree {
  const base = realpathSync(mkdtempSync(join(tmpdir(), `offhost-tree-${layout}-`)));
  const home = join(base, 'home');
  mkdirSync(join(home, 'dev'), { recursive: true });
  const root = join(home, 'dev', 'koder');
  const physicalRoot = layout === 'plain' ? root : join(base, 'data', 'koder');
  mkdirSync(join(physicalRoot, 'engines', 'lang', 'koda'), { recursive: true });
  if (layout === 'symlinked') symlinkSync(physicalRoot, root);
  const koda = join(root, 'engines', 'lang', 'koda');
  const physicalKoda = join(physicalRoot, 'engines', 'lang', 'koda');
  const kodaLink = join(home, 'koda-link');
  symlinkSync(physicalKoda, kodaLink);
  const elsewhere = join(base, 'elsewhere');
  mkdirSync(elsewhere);
  writeFileSync(join(home, '.gitconfig'), '[user]\n\tname = Offhost Test\n\temail = test@offhost.invalid\n[init]\n\tdefaultBranch = main\n[commit]\n\tgpgsign = false\n');
  writeFileSync(join(physicalKoda, 'Makefile'), 'build-safe:\n\theavy-build build-safe\nclean:\n\t@echo cleaned\n');
  const localBin = join(base, 'local-bin');
  mkdirSync(localBin);
  const heavy = opts.heavy ?? HEAVY.filter((p) => p !== 'make' || opts.makeIsStandin !== false);
  for (const p of heavy) {
    writeFileSync(
      join(localBin, p),
      `#!/bin/sh\nprintf '%s\\t%s\\t%s\\t%s\\n' "\${0##*/}" "\${LAPTOP_MARKER:-0}" "$(pwd -P)" "$*" >> "$OFFHOST_STANDIN_HEAVY_LOG"\n`,
    );
    chmodSync(join(localBin, p), 0o755);
  }
  const git = (...args: string[]) => {
    const r = spawnSync('git', args, { cwd: physicalRoot, encoding: 'utf8', env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home } });
    if (r.status !== 0) throw new Error(`git ${args.join(' ')}: ${r.stderr}`);
  };
  git('init', '-q', '-b', 'main');
  git('add', '-A');
  git('commit', '-q', '-m', 'init');
  return {
    layout,
    base,
    home,
    root,
    koda,
    physicalRoot,
    physicalKoda,
    kodaLink,
    elsewhere,
    localBin,
    heavyLog: join(base, 'heavy.log'),
    standinLog: join(base, 'standin.log'),
    shims: join(home, '.local', 'share', 'offhost', 'shims'),
    audit: join(base, 'audit.jsonl'),
    cleanup: () => rmSync(base, { recursive: true, force: true }),
  };
}

/** The laptop's environment: stand-in VM tools, then the stand-in heavy programs, then the system. */
export function laptopEnv(t: Pick<Tree, 'localBin' | 'home' | 'heavyLog' | 'standinLog' | 'audit'>, extra: Record<string, string> = {}): Record<string, string> {
  return {
    PATH: [standinPath(), t.localBin, '/usr/local/bin', '/usr/bin', '/bin'].join(':'),
    HOME: t.home,
    LANG: 'C.UTF-8',
    USER: 'tester',
    OFFHOST_ROLE: 'laptop',
    LAPTOP_MARKER: '1',
    OFFHOST_STANDIN_HEAVY_LOG: t.heavyLog,
    OFFHOST_STANDIN_LOG: t.standinLog,
    OFFHOST_STANDIN_HOME: t.home,
    // The built-in catalogue's android and iso VMs are virtual machines (offhost run's preflight checks it).
    OFFHOST_STANDIN_VM_INSTANCES: 'dev-android-emulator,dev-linux-iso',
    OFFHOST_AUDIT_LOG: t.audit,
    OFFHOST_BIN: BIN,
    OFFHOST_NODE: process.execPath,
    OFFHOST_SHIM_BIN: BIN,
    ...extra,
  };
}

export function heavyRuns(t: Tree): HeavyRun[] {
  let text = '';
  try {
    text = readFileSync(t.heavyLog, 'utf8');
  } catch {
    return [];
  }
  return text
    .split('\n')
    .filter(Boolean)
    .map((l) => {
      const [prog, laptop, cwd, ...rest] = l.split('\t');
      return { prog: prog!, laptop: laptop === '1', cwd: cwd!, args: rest.join('\t') };
    });
}

export function clearHeavy(t: Tree): void {
  writeFileSync(t.heavyLog, '');
}
