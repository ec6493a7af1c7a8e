// An in-memory file system with a case rule, for the case-rule tests: a tree of directories and files,
// looked up with or without case like APFS (insensitive, preserving the stored spelling) or ext4 (with
// case). It is a stand-in for a Mac's disk, which cannot exist here; it keeps the spelling each name was
// created with and refuses what the real one refuses (a second name differing only in case, when folding).
import type { CaseFs } from '../../src/policy/case-rule.js';
import type { FileAccess, FileRead } from '../../src/shell/commands.js';
import { foldCase } from '../../src/policy/case-rule.js';

interface Node {
  name: string;
  ino: number;
  children?: Map<string, Node>;
  text?: string;
}

export class CaseFoldFs {
  private root: Node = { name: '', ino: 1, children: new Map() };
  private next = 2;
  stats = 0;
  constructor(
    readonly rule: 'sensitive' | 'insensitive',
    /** Like FUSE without `use_ino`: every lookup reports a fresh inode number. */
    private readonly freshInodes = false,
    readonly dev = 7,
  ) {}

  private key(name: string) {
    return this.rule === 'insensitive' ? foldCase(name) : name;
  }

  private lookup(path: string): Node | null {
    let n: Node = this.root;
    for (const part of path.split('/').filter((p) => p !== '')) {
      const c = n.children?.get(this.key(part));
      if (!c) return null;
      n = c;
    }
    return n;
  }

  private add(path: string, leaf: (name: string) => Node): void {
    const parts = path.split('/').filter((p) => p !== '');
    let n = this.root;
    parts.forEach((part, i) => {
      const k = this.key(part);
      let c = n.children!.get(k);
      if (!c) {
        c = i === parts.length - 1 ? leaf(part) : { name: part, ino: this.next++, children: new Map() };
        n.children!.set(k, c);
      } else if (i === parts.length - 1 && c.name !== part && this.rule === 'insensitive') {
        throw new Error(`EEXIST: ${part} exists as ${c.name}`);
      }
      n = c;
    });
  }

  mkdir(path: string): this {
    this.add(path, (name) => ({ name, ino: this.next++, children: new Map() }));
    return this;
  }

  write(path: string, text: string): this {
    this.add(path, (name) => ({ name, ino: this.next++, text }));
    return this;
  }

  /** The CaseFs the probe and the canonicalizer read. */
  get caseFs(): CaseFs {
    return {
      stat: (p) => {
        this.stats++;
        const n = this.lookup(p);
        return n ? { dev: this.dev, ino: this.freshInodes ? this.next++ : n.ino } : null;
      },
      names: (d) => {
        const n = this.lookup(d);
        return n?.children ? [...n.children.values()].map((c) => c.name) : null;
      },
    };
  }

  /** The guard's FileAccess over this tree, with its name rule. */
  files(): FileAccess {
    return {
      read: (p): FileRead => {
        const n = this.lookup(p);
        if (!n) return { kind: 'missing' };
        if (n.children) return { kind: 'directory' };
        return { kind: 'text', text: n.text ?? '' };
      },
      list: (d) => {
        const n = this.lookup(d);
        return n?.children ? [...n.children.values()].filter((c) => c.children).map((c) => c.name) : null;
      },
      physical: (d) => d,
      nameKey: () => (this.rule === 'insensitive' ? foldCase : null),
    };
  }
}
