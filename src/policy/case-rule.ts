// The file system's own case rule, for every path comparison the guard, the shims and the locks make.
//
// APFS (a Mac's default) and HFS+ are case-insensitive: `cd Engines/Lang/Koda` is the engine directory
// that the configuration spells `{root}/engines/lang/koda`, and `echo … > RUN.sh` overwrites `run.sh`.
// Linux file systems are case-sensitive, except vfat/exFAT, CIFS mounts and ext4/f2fs casefold
// directories. So the rule is probed, per volume (st_dev), once per process, from the path itself:
//
//   flip the case of the path's last name that has letters and look it up in the same parent: missing ->
//   case-sensitive (one failed stat, the whole cost on Linux); the same file (device and inode) ->
//   case-insensitive; another inode (FUSE file systems number each lookup anew) -> the parent's listing
//   decides: the flipped name listed as its own entry -> sensitive, otherwise -> insensitive.
//
// Where no name has a letter to flip, or nothing of the path exists, the answer is `insensitive`: folding
// only ever makes more paths equal, so more commands meet the rules' directories (never fewer).
// A volume that mixes both (ext4 with casefold on some directories) gets the answer of the first
// directory probed on it; Macs, the case this serves, decide per volume.
import { readdirSync, statSync } from 'node:fs';

export type CaseRule = 'sensitive' | 'insensitive';

/** What the probe reads of a file system (the disk by default; tests pass a case-folding one). */
export interface CaseFs {
  /** Device and inode of a path (following symlinks), or null when there is nothing there. */
  stat(path: string): { dev: number; ino: number } | null;
  /** The names in a directory as stored, or null when it cannot be listed. */
  names(dir: string): string[] | null;
}

export const diskCaseFs: CaseFs = {
  stat(path) {
    try {
      const st = statSync(path, { throwIfNoEntry: false });
      return st ? { dev: st.dev, ino: st.ino } : null;
    } catch {
      return null;
    }
  },
  names(dir) {
    try {
      return readdirSync(dir);
    } catch {
      return null;
    }
  },
};

/**
 * A name folded for comparison on a case-insensitive volume: each character lower-cased where that keeps
 * its length, so positions in a folded text are positions in the original. (APFS also ignores Unicode
 * normalization; names that differ only by it are not folded together here.)
 */
export function foldCase(s: string): string {
  // eslint-disable-next-line no-control-regex
  if (/^[\x00-\x7f]*$/.test(s)) return s.toLowerCase();
  return s.replace(/[^\x00-\x7f]|[A-Z]/g, (c) => {
    const l = c.toLowerCase();
    return l.length === c.length ? l : c;
  });
}

const hasCase = (name: string) => name.toLowerCase() !== name.toUpperCase();

function flip(name: string): string {
  let out = '';
  for (const c of name) {
    const u = c.toUpperCase();
    out += u === c ? c.toLowerCase() : u;
  }
  return out;
}

/** The case rule of the volume `dir` is on; `probe` keeps one answer per volume for its lifetime. */
export function makeCaseProbe(fs: CaseFs = diskCaseFs): (dir: string) => CaseRule {
  const byDev = new Map<number, CaseRule>();
  const byDir = new Map<string, CaseRule>();
  return (dir) => {
    const hit = byDir.get(dir);
    if (hit) return hit;
    const r = probe(dir, fs, byDev);
    if (byDir.size > 1000) byDir.clear();
    byDir.set(dir, r);
    return r;
  };
}

function probe(dir: string, fs: CaseFs, byDev: Map<number, CaseRule>): CaseRule {
  // The deepest part of the path that exists: the volume a missing tail would be created on.
  let at = dir.replace(/\/+$/, '') || '/';
  let st = fs.stat(at);
  while (!st && at !== '/') {
    at = at.slice(0, at.lastIndexOf('/')) || '/';
    st = fs.stat(at);
  }
  if (!st) return 'insensitive';
  const known = byDev.get(st.dev);
  if (known) return known;
  const names = at.split('/');
  let i = names.length - 1;
  while (i > 0 && !hasCase(names[i]!)) i--;
  if (i <= 0) return 'insensitive'; // nothing to flip: do not remember a guess for the volume
  const parent = names.slice(0, i).join('/') || '/';
  const name = names[i]!;
  const flipped = flip(name);
  const other = fs.stat(`${parent === '/' ? '' : parent}/${flipped}`);
  let rule: CaseRule;
  if (!other) rule = 'sensitive';
  else {
    const self = i === names.length - 1 ? st : fs.stat(`${parent === '/' ? '' : parent}/${name}`);
    if (self && self.dev === other.dev && self.ino === other.ino) rule = 'insensitive';
    else {
      // Each lookup reports its own inode (FUSE without use_ino): two stored entries, one per spelling, is a
      // case-sensitive volume. One entry is not, even when it is the flipped spelling (the path was written
      // in a case other than the stored one: `KODER` for a stored `koder`).
      const names = fs.names(parent) ?? [];
      rule = names.includes(flipped) && names.includes(name) ? 'sensitive' : 'insensitive';
    }
  }
  byDev.set(st.dev, rule);
  return rule;
}

/** The process's probe of the disk (one answer per volume for the life of the process). */
let diskProbe: ((dir: string) => CaseRule) | null = null;
export function diskCaseRule(dir: string): CaseRule {
  return (diskProbe ??= makeCaseProbe())(dir);
}

/** `p` is `dir` or below it, under the given rule. */
export function isUnder(p: string, dir: string, rule: CaseRule): boolean {
  const a = rule === 'insensitive' ? foldCase(p) : p;
  const b = rule === 'insensitive' ? foldCase(dir) : dir;
  return a === b || a.startsWith(b === '/' ? '/' : `${b}/`);
}

/** Two paths name one file under the given rule. */
export function samePath(a: string, b: string, rule: CaseRule): boolean {
  return rule === 'insensitive' ? foldCase(a) === foldCase(b) : a === b;
}

/**
 * The path with each name after the first `keep` characters in the spelling stored on disk (a
 * case-insensitive volume finds `Engines` as `engines`; the VM's copy, on a case-sensitive disk, has
 * only the stored one). Names that are missing, or match several entries, are kept as written.
 */
export function storedSpelling(path: string, keep: number, fs: CaseFs = diskCaseFs): string {
  let out = path.slice(0, keep).replace(/\/+$/, '');
  const rest = path.slice(keep).split('/').filter((n) => n !== '');
  for (let k = 0; k < rest.length; k++) {
    const name = rest[k]!;
    const entries = name === '.' || name === '..' ? null : fs.names(out || '/');
    if (!entries) return `${out}/${rest.slice(k).join('/')}`;
    let spelled = name;
    if (!entries.includes(name)) {
      const f = foldCase(name);
      const matches = entries.filter((e) => foldCase(e) === f);
      if (matches.length === 1) spelled = matches[0]!;
      else if (matches.length === 0) return `${out}/${rest.slice(k).join('/')}`;
    }
    out = `${out}/${spelled}`;
  }
  return out || '/';
}
