// Protecting the catalogue (POLICY R3/R4, issue 13 item 4, issue 11 item 2): a command that stops,
// deletes, resets or wipes a catalogue VM (`incus stop|restart|delete|restore|rebuild`, `incus snapshot
// restore`, `limactl stop|delete|factory-reset`, `tart stop|delete`, a template driver's `down|rm|reset`)
// is refused while another session holds that VM, and needs that VM's lock otherwise; any other command
// typed straight at a held catalogue VM (`ssh khost1 -- incus exec dev-linux-koda -- make build-safe`)
// is refused with the holder. Kept cheap: the lock file is read only when a command names a catalogue
// instance, and "this session" is $OFFHOST_SESSION.
import { parse } from '../shell/parser.js';
import { commandsOf } from '../shell/commands.js';
import type { VmSpec } from '../routes/types.js';
import type { SimpleCommand } from '../types.js';
import { templateProgram } from '../routes/backends/template.js';
import { describeLock, lookAtLock, worktreeOf } from './lock-view.js';

export interface Protection {
  rule: 'vm-held' | 'vm-lock-needed' | 'vm-lock-unreadable';
  reason: string;
  vm: string;
}

/** What protection reads of a configuration (the guard's config; `locks` when it is a full ResolvedConfig). */
export interface CatalogueView {
  vms: Map<string, VmSpec>;
  root: string | null;
  locks?: { noticesDir: string };
}

type Tool = 'incus' | 'limactl' | 'tart' | 'template';
interface Index {
  /** tool -> instance name -> VM ids. */
  byTool: Map<Tool, Map<string, string[]>>;
  /** template program basename -> VM ids. */
  templates: Map<string, VmSpec[]>;
  programs: Set<string>;
}

const DESTRUCTIVE: Record<Exclude<Tool, 'template'>, Set<string>> = {
  incus: new Set(['stop', 'restart', 'delete', 'rm', 'restore', 'rebuild']),
  limactl: new Set(['stop', 'delete', 'rm', 'remove', 'factory-reset']),
  tart: new Set(['stop', 'delete']),
};
const TEMPLATE_DESTRUCTIVE = new Set(['down', 'rm', 'reset', 'delete', 'stop', 'destroy', 'wipe']);
/** incus/lxc options that take a value (the instance is the first other word). */
const INCUS_VALUE = new Set(['--cwd', '--env', '--user', '--group', '--mode', '--project', '--target', '-c', '--config', '-p', '--profile', '-s', '--storage', '-t', '--type', '--format', '-f', '--timeout', '--reason']);
const SSH_WITH_ARG = new Set('BbcDEeFIiJLlmOoPpQRSWw');

const cache = new WeakMap<CatalogueView, Index>();
const base = (p: string) => p.slice(p.lastIndexOf('/') + 1);

function indexOf(config: CatalogueView): Index {
  let ix = cache.get(config);
  if (ix) return ix;
  ix = { byTool: new Map(), templates: new Map(), programs: new Set(['ssh', 'incus', 'lxc', 'limactl', 'tart']) };
  const add = (tool: Tool, name: string, id: string) => {
    const m = ix!.byTool.get(tool) ?? new Map<string, string[]>();
    ix!.byTool.set(tool, m);
    m.set(name, [...(m.get(name) ?? []), id]);
  };
  for (const vm of config.vms.values()) {
    const name = vm.instance ?? vm.id.replace(/^s\.[^.]+\./, '');
    if (vm.backend === 'incus') add('incus', name, vm.id);
    else if (vm.backend === 'lima') add('limactl', name, vm.id);
    else if (vm.backend === 'tart') add('tart', name, vm.id);
    const progs = [vm.template, ...Object.values(vm.lifecycle ?? {})].map((t) => templateProgram(t)).filter((p): p is string => !!p);
    for (const p of new Set(progs.map(base))) {
      ix.templates.set(p, [...(ix.templates.get(p) ?? []), vm]);
      ix.programs.add(p);
    }
  }
  cache.set(config, ix);
  return ix;
}

interface Hit {
  vm: string;
  destructive: boolean;
  what: string;
}

function positionals(argv: string[], from: number, valueOpts: Set<string>): string[] {
  const out: string[] = [];
  for (let i = from; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--') break;
    if (a.startsWith('-') && a !== '-') {
      if (!a.includes('=') && valueOpts.has(a)) i++;
      continue;
    }
    out.push(a);
  }
  return out;
}

function hitsOf(c: SimpleCommand, ix: Index, depth: number): Hit[] {
  const prog = c.program;
  if (!prog || !ix.programs.has(prog)) return [];
  const argv = c.argv;
  const hits: Hit[] = [];
  if (prog === 'ssh') {
    if (depth > 2) return [];
    let i = 1;
    for (; i < argv.length; i++) {
      const a = argv[i]!;
      if (a === '--') continue;
      if (!a.startsWith('-')) break;
      const letter = a[a.length - 1]!;
      if (a.length === 2 && SSH_WITH_ARG.has(letter)) i++;
    }
    let rest = argv.slice(i + 1);
    if (rest[0] === '--') rest = rest.slice(1);
    if (rest.length === 0) return [];
    const line = rest.join(' ');
    try {
      for (const inner of commandsOf(parse(line), line, { cwd: '/', env: {} })) hits.push(...hitsOf(inner, ix, depth + 1));
    } catch {
      /* a remote line that cannot be parsed runs remotely; the guard's own rules judge the laptop side */
    }
    return hits;
  }
  const tool: Tool | null = prog === 'incus' || prog === 'lxc' ? 'incus' : prog === 'limactl' ? 'limactl' : prog === 'tart' ? 'tart' : null;
  if (tool) {
    const names = ix.byTool.get(tool);
    if (!names) return [];
    const words = positionals(argv, 1, INCUS_VALUE);
    let verb = words[0] ?? '';
    let targets = words.slice(1);
    if (tool === 'incus' && (verb === 'snapshot' || verb === 'config' || verb === 'file')) {
      // `snapshot <op> NAME …`, `config set|show NAME …`, `config device <op> NAME …`, `file push SRC NAME/PATH`.
      verb = `${verb} ${words[1] ?? ''}`;
      targets = verb === 'config device' ? words.slice(3, 4) : words.slice(2, 3);
      if (verb === 'config device') verb = `config device ${words[2] ?? ''}`;
      if (verb.startsWith('file ')) targets = words.slice(2).filter((w) => w.includes('/')).map((w) => w.split('/')[0]!);
    }
    const destructive = tool === 'incus' ? DESTRUCTIVE.incus.has(verb) || verb === 'snapshot restore' || verb === 'snapshot delete' : DESTRUCTIVE[tool].has(verb);
    // Only the first target of commands that take one instance; every target of delete/stop/...
    const named = destructive || verb.startsWith('file ') ? targets : targets.slice(0, 1);
    if (verb === 'list' || verb === 'ls' || verb === 'info' || verb === '') return [];
    for (const t of named) {
      const inst = t.includes(':') ? t.slice(t.indexOf(':') + 1) : t;
      for (const vm of names.get(inst) ?? []) hits.push({ vm, destructive, what: `${prog} ${verb} ${t}` });
    }
    return hits;
  }
  // A template driver (win.sh, vm, tests/vm/tart-vm.sh): its verb is argv[1], the instance any later word.
  for (const vm of ix.templates.get(prog) ?? []) {
    const verb = argv[1] ?? '';
    const name = vm.instance;
    const names = argv.slice(2);
    const mentions = name ? names.includes(name) : false;
    const single = !name && (vm.template ?? '').includes(argv[0]!); // a driver for one VM (win.sh sh "...")
    if (!mentions && !single) continue;
    hits.push({ vm: vm.id, destructive: TEMPLATE_DESTRUCTIVE.has(verb), what: `${prog} ${verb}${name ? ` ${name}` : ''}` });
  }
  return hits;
}

/** A refusal for the first command that touches a catalogue VM it may not, or null. */
export function protectCatalogue(
  commands: readonly SimpleCommand[],
  config: CatalogueView,
  at: { cwd: string; env: NodeJS.ProcessEnv; now?: Date },
): Protection | null {
  if (config.vms.size === 0) return null;
  const ix = indexOf(config);
  let hits: Hit[] | null = null;
  for (const c of commands) {
    if (!c.program || !ix.programs.has(c.program)) continue;
    const h = hitsOf(c, ix, 0);
    if (h.length) (hits ??= []).push(...h);
  }
  if (!hits) return null;
  const repo = worktreeOf(at.cwd) ?? config.root;
  const me = at.env.OFFHOST_SESSION || null;
  const now = at.now ?? new Date();
  for (const h of hits) {
    if (!repo) {
      if (h.destructive) return { rule: 'vm-lock-needed', vm: h.vm, reason: `\`${h.what}\` stops, deletes or resets the catalogue VM ${h.vm}, and its lock cannot be checked here (no repository holds ${at.cwd}); run it from the monorepo holding ${h.vm}'s lock (POLICY R3, R4).` };
      continue;
    }
    const look = lookAtLock(repo, config.locks?.noticesDir ?? 'meta/context/notices', h.vm, now);
    if (look.state === 'unreadable') {
      return { rule: 'vm-lock-unreadable', vm: h.vm, reason: `\`${h.what}\` touches the catalogue VM ${h.vm}, whose lock file ${look.file} cannot be read (${look.why}); it may be held. Check it with \`offhost lint ${look.file}\` (POLICY R3).` };
    }
    const mine = look.state === 'live' && me !== null && look.lock.session === me;
    if (look.state === 'live' && !mine) {
      return {
        rule: 'vm-held',
        vm: h.vm,
        reason: `${h.vm} is ${describeLock(look.lock)}. \`${h.what}\` would intrude on that session's work: wait (\`offhost lock acquire ${h.vm} --wait\`), use another VM, or ask the holder (POLICY R4).`,
      };
    }
    if (h.destructive && !mine) {
      return {
        rule: 'vm-lock-needed',
        vm: h.vm,
        reason: `\`${h.what}\` stops, deletes or resets the catalogue VM ${h.vm}: take its lock first (\`offhost lock acquire ${h.vm}\`, with OFFHOST_SESSION set to that session here), then run it${look.state === 'expired' ? ` (the lock ${look.file} is expired; acquiring archives it)` : ''} (POLICY R3, R4).`,
      };
    }
  }
  return null;
}
