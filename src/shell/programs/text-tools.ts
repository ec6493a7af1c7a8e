// Text and file tools that can run commands: awk (`system(…)`, `print | "cmd"`, `"cmd" | getline`), sed
// (the `e` command and the `s///e` flag), vim/ex (`-c '!cmd'`, `:r !cmd`, `system()`), tar
// (`--checkpoint-action=exec=`, `--to-command`, `-I`/`--use-compress-program`, `--info-script`), zip
// (`-TT cmd`), rsync (`-e CMD`: the remote shell is started here), expect (`spawn`, `exec`, `system`),
// ed (`!cmd` on its input), m4 (`syscmd`, `esyscmd`), dc (`!cmd`), emacs (`--eval '(shell-command …)'`), rg
// (`--pre PROGRAM`: run on each file searched).
// What they run is judged as a shell line run here; a command built at run time is unknown.
import type { Field } from '../expand.js';
import { NO_STDIN, envField, joinFields, withVia, type Call, type Walker } from '../walk-state.js';
import { parseOptions, type Grammar } from './grammar.js';
import type { ProgramModule } from './types.js';

const UNKNOWN: Field = { value: '', known: false };

/** String literals of a program text (`"…"` with escapes), from `at`. */
function literalAt(text: string, at: number): string | null {
  const m = /^\s*\(?\s*"((?:[^"\\]|\\.)*)"\s*\)?/.exec(text.slice(at));
  return m ? m[1]!.replace(/\\(.)/g, '$1') : null;
}

/** Shell commands an awk program runs; null entries are commands built at run time. */
function awkCommands(prog: string): (string | null)[] {
  const out: (string | null)[] = [];
  for (const m of prog.matchAll(/\bsystem\s*\(/g)) out.push(literalAt(prog, m.index + m[0].length - 1));
  // print … | "cmd", printf … |& "cmd"
  for (const m of prog.matchAll(/\|&?\s*(?=["A-Za-z_(])/g)) {
    if (prog[m.index - 1] === '|' || prog[m.index + 1] === '|') continue;
    const before = prog.slice(0, m.index);
    if (!/\b(print|printf)\b[^;{}]*$/.test(before)) continue;
    out.push(literalAt(prog, m.index + m[0].length));
  }
  // "cmd" | getline
  for (const m of prog.matchAll(/"((?:[^"\\]|\\.)*)"\s*\|&?\s*getline/g)) out.push(m[1]!.replace(/\\(.)/g, '$1'));
  for (const m of prog.matchAll(/([A-Za-z_][A-Za-z0-9_]*)\s*\|&?\s*getline/g)) if (!/^(getline)$/.test(m[1]!)) out.push(null);
  return out;
}

const AWK: Grammar = { value: ['-f', '--file', '-v', '--assign', '-F', '--field-separator', '-e', '--source', '-i', '--include', '-l', '--load', '-E', '--exec'], flags: ['--posix', '--traditional', '--sandbox', '-S', '--lint', '--characters-as-bytes'], info: ['--version', '-V', '--help', '-h'] };
const SED: Grammar = { value: ['-e', '--expression', '-f', '--file', '-l', '--line-length', '-s'], flags: ['-n', '--quiet', '--silent', '-i', '--in-place', '-E', '-r', '--regexp-extended', '--posix', '--sandbox', '-z', '--null-data', '-u', '--unbuffered', '--debug', '--follow-symlinks'], info: ['--version', '--help'] };
const TAR: Grammar = { value: ['-f', '--file', '-C', '--directory', '-I', '--use-compress-program', '--to-command', '--checkpoint-action', '-F', '--info-script', '--new-volume-script', '--rsh-command', '-T', '--files-from', '-X', '--exclude-from', '--exclude', '-b', '--blocking-factor', '-H', '--format', '-V', '--label', '-g', '--listed-incremental', '-N', '--newer', '--owner', '--group', '--mode', '--transform', '--xform', '--strip-components', '--checkpoint'], info: ['--help', '--version', '--usage'] };
const RSYNC: Grammar = { value: ['-e', '--rsh', '--rsync-path', '-f', '--filter', '--exclude', '--include', '--exclude-from', '--include-from', '--files-from', '-T', '--temp-dir', '--partial-dir', '--backup-dir', '--suffix', '--chmod', '--chown', '--log-file', '--port', '--password-file', '--compare-dest', '--copy-dest', '--link-dest', '-B', '--block-size', '--timeout', '--contimeout', '--bwlimit', '-M', '--remote-option', '--out-format', '--info', '--debug', '--max-size', '--min-size', '--modify-window', '--iconv'], info: ['--help', '--version'] };
const ZIP: Grammar = { value: ['-TT', '--unzip-command', '-b', '-n', '-P', '--password', '-i', '-x', '-t', '-tt', '-O', '--output-file'], info: ['-h', '--help', '-v', '--version'], singleDash: true };

/** Commands a sed script runs: `e CMD` lines and the replacement of `s///e`. */
function sedCommands(script: string): (string | null)[] {
  const out: (string | null)[] = [];
  for (const line of script.split(/\n|;(?![^/]*\/)/)) {
    const t = line.trim().replace(/^(\d+|\$|\/(?:[^/\\]|\\.)*\/)(,(\d+|\$|\/(?:[^/\\]|\\.)*\/))?!?\s*/, '');
    const e = /^e(?:\s+(.*))?$/s.exec(t);
    if (e) out.push(e[1] ?? null); // bare `e` runs the pattern space: unknown
    const s = /^s(.)((?:(?!\1)[^\\]|\\.)*)\1((?:(?!\1)[^\\]|\\.)*)\1([gpIiMm0-9w]*e[gpIiMm0-9e]*)/s.exec(t);
    if (s) out.push(s[3]!.includes('\\') || s[3]!.includes('&') ? null : s[3]!);
  }
  return out;
}

/** Shell commands of ex/vim commands (`!make`, `silent !make`, `r !make`, `call system('make')`). */
function exCommands(cmd: string): (string | null)[] {
  const out: (string | null)[] = [];
  for (const part of cmd.split(/\s*\|\s*(?!\|)/)) {
    const t = part.trim().replace(/^:+\s*/, '').replace(/^(silent!?|exe(cute)?|noautocmd|keepalt)\s+/, '');
    const bang = /^(?:[.$%0-9,]*\s*)?(?:r(?:ead)?\s*|w(?:rite)?\s*|[.%]?)?!(.*)$/s.exec(t);
    if (bang) out.push(bang[1]!.trim() || null);
    for (const m of t.matchAll(/\b(?:system|systemlist|job_start|jobstart|termopen)\s*\(\s*(['"])((?:(?!\1).)*)\1/g)) out.push(m[2]!);
    if (/^(ter(minal)?)\b/.test(t)) out.push(t.replace(/^ter(minal)?\s*(\+\+\S+\s*)*/, '') || null);
  }
  return out;
}

function runAll(call: Call, w: Walker, via: string, commands: (string | null)[], known: boolean): void {
  for (const c of commands) w.runScript(c === null ? UNKNOWN : { value: c, known }, via, call.cwd, call.env, call.st, call.ctx, call.span);
}

function walk(call: Call, w: Walker): void {
  w.emitSelf(call);
  const { name, fields } = call;
  if (/awk$/.test(name)) {
    const p = parseOptions(AWK, fields);
    if (p.opts.some(([n]) => n === '--sandbox' || n === '-S')) return;
    const sources = p.opts.filter(([n]) => n === '-e' || n === '--source').map(([, v]) => v ?? UNKNOWN);
    const hasFile = p.opts.some(([n]) => n === '-f' || n === '--file');
    if (!sources.length && !hasFile && p.positionals[0]) sources.push(p.positionals[0]);
    for (const src of sources) runAll(call, w, `${name} program`, awkCommands(src.value), src.known);
    return;
  }
  if (name === 'sed' || name === 'gsed') {
    const p = parseOptions(SED, fields);
    if (p.opts.some(([n]) => n === '--sandbox')) return;
    const scripts = p.opts.filter(([n]) => n === '-e' || n === '--expression').map(([, v]) => v ?? UNKNOWN);
    if (!scripts.length && !p.opts.some(([n]) => n === '-f' || n === '--file') && p.positionals[0]) scripts.push(p.positionals[0]);
    for (const s of scripts) runAll(call, w, 'sed e', sedCommands(s.value), s.known);
    return;
  }
  if (/^(n?vim?|ex|view|gvim|vimdiff|rvim)$/.test(name)) {
    const cmds: Field[] = [];
    for (let i = 1; i < fields.length; i++) {
      const f = fields[i]!;
      // `-c CMD`, `--cmd CMD`, and a cluster ending in c (`ex -sc CMD`).
      if (f.known && (/^-[a-zA-Z]*c$/.test(f.value) || f.value === '--cmd')) cmds.push(fields[++i] ?? UNKNOWN);
      else if (f.known && f.value.startsWith('+') && f.value.length > 1) cmds.push({ value: f.value.slice(1), known: true });
    }
    // `vim -es < cmds.vim`, `ex <<'EOF' … EOF`: ex commands from standard input.
    if (fields.some((f) => f.known && /^-[a-zA-Z]*[es]/.test(f.value)) || name === 'ex') {
      const stdin = call.stdin();
      if (stdin) for (const line of stdin.value.split('\n')) cmds.push({ value: line, known: stdin.known });
    }
    for (const c of cmds) runAll(call, w, `${name} -c`, exCommands(c.value), c.known);
    return;
  }
  if (name === 'rg') {
    // `rg --pre PROGRAM pattern`: PROGRAM runs for each file searched, with the file's path.
    for (let i = 1; i < fields.length; i++) {
      const f = fields[i]!;
      if (!f.known) continue;
      const pre = f.value === '--pre' ? fields[i + 1] : f.value.startsWith('--pre=') ? { value: f.value.slice(6), known: true } : undefined;
      if (pre) withVia(call.ctx, 'rg --pre', () => w.runFields([pre, { value: '<file>', known: false }], call.env, call.cwd, call.st, call.ctx, call.span, NO_STDIN, call.wrapDepth + 1));
      if (f.value === '--') break;
    }
    return;
  }
  if (name === 'tar' || name === 'gtar' || name === 'bsdtar') {
    for (const [n, v] of parseOptions(TAR, fields).opts) {
      if (!v) continue;
      if (n === '--checkpoint-action') {
        const m = /^(?:exec|execute)=(.*)$/s.exec(v.value);
        if (m) runAll(call, w, 'tar --checkpoint-action', [m[1]!], v.known);
      } else if (/^(--to-command|-I|--use-compress-program|-F|--info-script|--new-volume-script|--rsh-command)$/.test(n)) {
        runAll(call, w, `tar ${n}`, [v.value], v.known);
      }
    }
    return;
  }
  if (name === 'zip') {
    for (const [n, v] of parseOptions(ZIP, fields).opts) if ((n === '-TT' || n === '--unzip-command') && v) runAll(call, w, 'zip -TT', [v.value], v.known);
    return;
  }
  if (name === 'rsync') {
    const p = parseOptions(RSYNC, fields);
    // -e/--rsh, else RSYNC_RSH set by the line (rsync's own default when no option is given).
    const rsh = p.opts.filter(([n]) => n === '-e' || n === '--rsh').pop() ?? (envField(call, 'RSYNC_RSH') ? ['RSYNC_RSH', envField(call, 'RSYNC_RSH')!] : undefined);
    if (!rsh?.[1]) return;
    // rsync starts the remote shell here: `CMD HOST rsync --server …`.
    const remote = [...p.positionals, ...p.afterDashDash].find((a) => a.known && /^([^/:]+@)?[^/:]+:/.test(a.value));
    const host = remote ? remote.value.slice(0, remote.value.indexOf(':')) : 'localhost';
    w.runScript(joinFields([rsh[1], { value: host, known: true }, { value: 'rsync --server .', known: true }]), 'rsync -e', call.cwd, call.env, call.st, call.ctx, call.span);
    return;
  }
  if (name === 'ed' || name === 'red') {
    // ed reads its commands from standard input: `!cmd`, `r !cmd`, `w !cmd`, `e !cmd` run a shell command.
    const stdin = call.stdin();
    if (!stdin) return;
    const cmds = stdin.value.split('\n').map((l) => /^\s*(?:[.$0-9,;']*\s*[rwe]\s*)?!(.*)$/s.exec(l)?.[1]).filter((c): c is string => c !== undefined);
    runAll(call, w, 'ed !', cmds.map((c) => c.trim() || null), stdin.known);
    return;
  }
  if (name === 'm4') {
    // syscmd(CMD) and esyscmd(CMD) in the input (standard input here; files are not read).
    const stdin = call.stdin();
    for (const t of stdin ? [stdin] : []) for (const m of t.value.matchAll(/\be?syscmd\(([^)]*)\)/g)) runAll(call, w, 'm4 syscmd', [m[1]!], t.known);
    return;
  }
  if (name === 'dc') {
    // `!` runs the rest of the line as a shell command (GNU dc), in -e expressions and on standard input.
    const texts: Field[] = [];
    for (let i = 1; i < fields.length; i++) {
      const f = fields[i]!;
      if (f.known && (f.value === '-e' || f.value === '--expression')) texts.push(fields[++i] ?? UNKNOWN);
      else if (f.known && f.value.startsWith('--expression=')) texts.push({ value: f.value.slice(13), known: true });
    }
    if (!texts.length) {
      const stdin = call.stdin();
      if (stdin) texts.push(stdin);
    }
    for (const t of texts) for (const m of t.value.matchAll(/!([^\n]*)/g)) runAll(call, w, 'dc !', [m[1]!.trim() || null], t.known);
    return;
  }
  if (/^(emacs|emacs-nox|emacsclient|xemacs)$/.test(name)) {
    // --eval '(shell-command "make build")' and its friends.
    for (let i = 1; i < fields.length; i++) {
      const f = fields[i]!;
      const v = f.known && (f.value === '--eval' || f.value === '-eval' || f.value === '-e') ? fields[++i] : f.known && f.value.startsWith('--eval=') ? { value: f.value.slice(7), known: true } : null;
      if (!v) continue;
      for (const m of v.value.matchAll(/\((?:shell-command|shell-command-to-string|async-shell-command|call-process-shell-command|start-process-shell-command|compile)\b((?:[^"()]|\([^()]*\))*)"((?:[^"\\]|\\.)*)"/g)) {
        runAll(call, w, `${name} --eval`, [m[2]!.replace(/\\(.)/g, '$1')], v.known);
      }
    }
    return;
  }
  if (name === 'expect') {
    const scripts: Field[] = [];
    for (let i = 1; i < fields.length; i++) if (fields[i]!.known && fields[i]!.value === '-c') scripts.push(fields[++i] ?? UNKNOWN);
    if (!scripts.length && fields.length === 1) {
      const stdin = call.stdin();
      if (stdin) scripts.push(stdin);
    }
    for (const s of scripts) {
      for (const cmd of s.value.split(/[\n;]/)) {
        const m = /^\s*(spawn|exec|system)\s+(?:-\S+\s+)*(.*)$/s.exec(cmd);
        if (!m) continue;
        // Tcl words: braces and quotes group like the shell's quotes here.
        const text = m[2]!.replace(/[{}]/g, "'").replace(/\[[^\]]*\]/g, '"$__OFFHOST_TCL"');
        w.runScript({ value: text, known: s.known }, `expect ${m[1]}`, call.cwd, call.env, call.st, call.ctx, call.span);
      }
    }
  }
}

export const textTools: ProgramModule = {
  family: 'text tools that execute',
  names: ['awk', 'gawk', 'mawk', 'nawk', 'sed', 'gsed', 'vim', 'vi', 'nvim', 'ex', 'view', 'gvim', 'vimdiff', 'rvim', 'tar', 'gtar', 'bsdtar', 'zip', 'rsync', 'expect', 'ed', 'red', 'm4', 'dc', 'emacs', 'emacs-nox', 'emacsclient', 'xemacs', 'rg'],
  walk,
  examples: {
    match: [
      { line: "awk 'BEGIN{system(\"make build-safe\")}'", runs: 'make build-safe' },
      { line: 'rg --pre ./run-emulator.sh avd', runs: './run-emulator.sh <file>' },
      { line: "printf '!make build-safe\\nq\\n' | ed", runs: 'make build-safe' },
      { line: "m4 <<< 'esyscmd(make build-safe)'", runs: 'make build-safe' },
      { line: "dc -e '!make build-safe'", runs: 'make build-safe' },
      { line: "emacs --batch --eval '(shell-command \"make build-safe\")'", runs: 'make build-safe' },
      { line: "awk 'BEGIN{print \"x\" | \"make build-safe\"}'", runs: 'make build-safe' },
      { line: "sed 'e make build-safe' /dev/null", runs: 'make build-safe' },
      { line: "echo x | sed 's/.*/make build-safe/e'", runs: 'make build-safe' },
      { line: "vim -es -c '!make build-safe' -c q", runs: 'make build-safe' },
      { line: "vim -es -c 'silent !make build-safe' -c qa", runs: 'make build-safe' },
      { line: 'tar -cf /dev/null --checkpoint=1 --checkpoint-action=exec="make build-safe" .', runs: 'make build-safe' },
      { line: "zip -T -TT 'make build-safe' a.zip f", runs: 'make build-safe' },
      { line: "rsync -e 'sh -c \"make build-safe\"' a b:c", runs: 'make build-safe' },
      { line: "RSYNC_RSH='make build-safe' rsync a b:c", runs: 'make build-safe b rsync --server .' },
      { line: "expect -c 'spawn make build-safe; expect eof'", runs: 'make build-safe' },
    ],
    not_match: [
      { line: "awk '{print $1}' f", runs: 'make build-safe' },
      { line: "sed -i 's/make build-safe/make -C x build-safe/' docs.md", runs: 'make build-safe' },
      { line: "vim -c 'set ft=make' Makefile", runs: 'make' },
      { line: 'tar -xzf a.tgz -C /tmp', runs: 'make' },
      { line: "rg -n 'make build-safe' docs", runs: 'make build-safe' },
    ],
  },
};
