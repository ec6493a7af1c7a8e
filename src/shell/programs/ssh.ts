// ssh, scp, sftp: a command given to ssh runs on the remote host (what POLICY R1 allows), unless the host
// is this machine under any of its names (localhost, 127.0.0.1, 127.1, 0, ::1, ssh://localhost,
// "$(hostname)", `-o HostName=127.0.0.1`): then it is judged as run here, in HOME. Options whose value is
// a command run locally (ProxyCommand, LocalCommand, KnownHostsCommand) are judged as local commands.
import type { Field } from '../expand.js';
import { NO_STDIN, clone, envField, joinFields, resolveDir, withVia, type Call, type Walker } from '../walk-state.js';
import { lineMayWrite, writtenText } from '../script-files.js';
import { scan, type Spec } from './grammar.js';
import type { ProgramModule } from './types.js';

const SSH: Spec = { value: ['-B', '-b', '-c', '-D', '-E', '-e', '-F', '-I', '-i', '-J', '-L', '-l', '-m', '-O', '-o', '-P', '-p', '-Q', '-R', '-S', '-W', '-w'], info: ['-V'] };

/** Host names of this machine. Numeric forms as inet_aton reads them (`127.1`, `0`, `0x7f000001`, `2130706433`). */
const LOCAL_HOST = /^(localhost|localhost\.localdomain|localhost\.|localhost[46]|localhost[46]\.localdomain[46]|ip6-localhost|ip6-loopback|::1|\[::1\]|0:0:0:0:0:0:0:1|0|0\.0\.0\.0|0x7f[0-9a-f]{6}|2130706433|017700000001)$/i;

function isLocal(host: string): boolean {
  if (LOCAL_HOST.test(host)) return true;
  // 127.x, 127.x.y, 127.x.y.z (inet_aton's short forms), and ::ffff:127.0.0.1.
  return /^(::ffff:)?127(\.\d{1,8}){0,3}$/i.test(host);
}

/** `[user@]host`, `ssh://[user@]host[:port]`, `user@host:path` (scp): the host part. */
function hostOf(dest: string): string {
  const url = /^ssh:\/\/(?:[^@/]*@)?(\[[^\]]*\]|[^:/]*)/i.exec(dest);
  if (url) return url[1]!;
  const at = dest.lastIndexOf('@');
  return dest.slice(at + 1);
}

/** The host of scp's or sftp's first remote operand (`user@host:path`, `host`), else `localhost`. */
function hostOfOperands(operands: Field[]): string {
  for (const f of operands) {
    if (!f.known) continue;
    const m = /^(?:[^@/:]+@)?(\[[^\]]+\]|[^/:]+):/.exec(f.value) ?? /^sftp:\/\/(?:[^@/]*@)?(\[[^\]]*\]|[^:/]+)/.exec(f.value);
    if (m) return m[1]!;
  }
  return operands.find((f) => f.known && !f.value.startsWith('-'))?.value ?? 'localhost';
}

/**
 * The text of the config file `-F` names: what the line wrote there, else what is on disk; unknown when
 * the line may change it, or it cannot be read as text (a FIFO); null when there is nothing to read (a
 * missing file, which ssh refuses, `/dev/null`, a directory).
 */
function configText(v: Field, call: Call): Field | null {
  if (!v.known) return v;
  const path = resolveDir(call.cwd, v);
  if (path === null || path === '/dev/null') return null;
  const written = writtenText(path, call.ctx);
  if (written) return written;
  if (lineMayWrite(path, call.ctx)) return { value: '', known: false };
  const r = call.ctx.files!.read(path);
  if (r.kind === 'text') return { value: r.text, known: true };
  return r.kind === 'unreadable' ? { value: '', known: false } : null;
}

/** The commands an ssh_config file runs here: ProxyCommand, LocalCommand, KnownHostsCommand, `Match exec`. */
export function configCommands(text: string): { key: string; command: string }[] {
  const out: { key: string; command: string }[] = [];
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const m = /^([A-Za-z]+)\s*(?:=\s*|\s+)(.*)$/.exec(line);
    if (!m) continue;
    const key = m[1]!.toLowerCase();
    const value = m[2]!.trim();
    if (key === 'proxycommand' || key === 'localcommand' || key === 'knownhostscommand') {
      if (value.toLowerCase() !== 'none') out.push({ key, command: value });
    } else if (key === 'match') {
      // `Match host x exec "cmd"`: the command, in double quotes or as one word.
      for (const e of value.matchAll(/(?:^|\s)exec\s+(?:"((?:[^"\\]|\\.)*)"|(\S+))/gi)) out.push({ key: 'match exec', command: e[1] ?? e[2]! });
    }
  }
  return out;
}

/** `-o Name=value` / `-oName value` options of the call: lowercased name -> value. */
function sshOptions(opts: [string, Field | null][]): Map<string, Field> {
  const out = new Map<string, Field>();
  for (const [n, v] of opts) {
    if (n !== '-o' || !v) continue;
    const m = /^([A-Za-z]+)\s*(?:=|\s)\s*(.*)$/s.exec(v.value);
    if (m) out.set(m[1]!.toLowerCase(), { value: m[2]!, known: v.known });
  }
  return out;
}

/** The line says the host is this machine's own name (`ssh "$(hostname)" …`, `ssh $HOSTNAME …`). */
function namedAfterThisMachine(host: Field, call: Call): boolean {
  if (host.known) return false;
  return /\$\(\s*(hostname|uname\s+-n)\b[^)]*\)|`\s*(hostname|uname\s+-n)\b|\$\{?HOSTNAME\b/.test(call.ctx.text);
}

/** mosh [options] [--] host [--] [command...]: `--ssh=COMMAND` runs here; the command runs on the host. */
const MOSH: Spec = { value: ['-p', '--port', '--ssh', '--client', '--server', '--predict', '--family', '--bind-server', '--experimental-remote-ip', '--local'], flags: ['-a', '-n', '--no-init', '--no-ssh-pty', '--predict-overwrite', '-4', '-6'], info: ['--help', '--version'] };

function walk(call: Call, w: Walker): void {
  w.emitSelf(call);
  const mosh = call.name === 'mosh';
  const s = scan(call.fields, mosh ? MOSH : SSH);
  if (!s) return;
  if (mosh) {
    const sshOpt = s.opts.find(([n]) => n === '--ssh');
    if (sshOpt?.[1]) w.runScript(sshOpt[1], 'mosh --ssh', call.cwd, call.env, call.st, call.ctx, call.span);
  }
  // OpenSSH reads options after the destination too (`ssh host -p 22 cmd`, `ssh host -- cmd`).
  const dest0 = call.fields[s.index];
  const after = dest0 && (call.name === 'ssh' || mosh) ? scan([dest0, ...call.fields.slice(s.index + 1)], mosh ? MOSH : SSH) : null;
  const options = sshOptions([...s.opts, ...(after?.opts ?? [])]);
  for (const key of ['proxycommand', 'localcommand', 'knownhostscommand']) {
    const v = options.get(key);
    // Run here, through the user's shell, before or after connecting.
    if (v) w.runScript(v, `${call.name} -o ${key}`, call.cwd, call.env, call.st, call.ctx, call.span);
  }
  // `-F FILE`: a configuration the line names. Its commands run here like the options' (whichever Host or
  // Match block they are in: judged all, failing closed), and so does `Match exec`.
  for (const [n, v] of [...s.opts, ...(after?.opts ?? [])]) {
    if (n !== '-F' || !v || !call.ctx.files) continue;
    // A file made at run time is not judged (`-F "$CFG"`: a limit, docs/GUARD.md).
    const text = configText(v, call);
    if (text === null || !text.known) continue;
    for (const { key, command } of configCommands(text.value)) w.runScript({ value: command, known: true }, `${call.name} -F ${v.value} (${key})`, call.cwd, call.env, call.st, call.ctx, call.span);
  }
  // SSH_ASKPASS_REQUIRE=force (OpenSSH 8.4+): the askpass program runs here for every passphrase or password.
  const askpass = envField(call, 'SSH_ASKPASS');
  const askMode = envField(call, 'SSH_ASKPASS_REQUIRE');
  if (askpass && askpass.value.trim() !== '' && askMode && (!askMode.known || askMode.value === 'force')) {
    withVia(call.ctx, `${call.name} $SSH_ASKPASS`, () => w.runFields([askpass], call.env, call.cwd, clone(call.st), call.ctx, call.span, NO_STDIN, call.wrapDepth + 1));
  }
  if (call.name === 'scp' || call.name === 'sftp') {
    // `-S PROG`: the program scp and sftp start here in place of ssh, with ssh's options and the host (no
    // shell: PROG is one word). `-D`: a local server started here, no ssh at all (sftp splits its value into
    // words; scp takes a program path). Each is judged as the command it is, a script by what it holds.
    const host = hostOfOperands(call.fields.slice(s.index));
    for (const [n, v] of s.opts) {
      if (!v || (n !== '-S' && n !== '-D')) continue;
      // sftp splits -D's value into words as a shell would (quotes kept together; no shell runs it).
      if (n === '-D' && call.name === 'sftp') {
        w.runScript(v, 'sftp -D', call.cwd, call.env, call.st, call.ctx, call.span);
        continue;
      }
      const argv = n === '-S' ? [v, ...['-x', '-oForwardAgent=no', '-oPermitLocalCommand=no', '-oClearAllForwardings=yes', '--', host, call.name].map((value) => ({ value, known: true }))] : [v];
      withVia(call.ctx, `${call.name} ${n}`, () => w.runFields(argv, call.env, call.cwd, clone(call.st), call.ctx, call.span, NO_STDIN, call.wrapDepth + 1));
    }
    return;
  }
  if (call.name !== 'ssh' && !mosh) return;
  const dest = dest0;
  if (!dest) return;
  const hostName = options.get('hostname');
  const local = hostName ? hostName.known && isLocal(hostName.value) : dest.known ? isLocal(hostOf(dest.value)) : namedAfterThisMachine(dest, call);
  if (!local) return;
  const remote = call.fields.slice(s.index + (after ? after.index : 1));
  const command = remote.length ? joinFields(remote) : options.get('remotecommand');
  if (!command) return;
  // sshd starts the command in the login directory (HOME), through the user's shell.
  w.runScript(command, `ssh ${dest.value}`, call.st.vars.get('HOME') ?? null, call.env, call.st, call.ctx, call.span);
}

export const ssh: ProgramModule = {
  family: 'ssh',
  names: ['ssh', 'scp', 'sftp', 'mosh'],
  grammar: SSH,
  walk,
  examples: {
    match: [
      { line: "ssh localhost 'make build'", runs: 'make build', in: '/home/koder' },
      { line: "ssh 127.1 'make build'", runs: 'make build' },
      { line: 'ssh koder@localhost6 make build', runs: 'make build' },
      { line: 'ssh localhost -- make build', runs: 'make build' },
      { line: 'ssh localhost -p 2222 make build', runs: 'make build' },
      { line: 'mosh localhost -- make build', runs: 'make build' },
      { line: "mosh --ssh='make build' khost1", runs: 'make build' },
      { line: "ssh 0 'make build'", runs: 'make build' },
      { line: "ssh ssh://me@localhost:22 'make build'", runs: 'make build' },
      { line: 'ssh "$(hostname)" make build', runs: 'make build' },
      { line: "ssh -o HostName=127.0.0.1 devbox 'make build'", runs: 'make build' },
      { line: "ssh -o RemoteCommand='make build' localhost", runs: 'make build' },
      { line: "ssh -o ProxyCommand='make build' khost1", runs: 'make build' },
      { line: 'SSH_ASKPASS=./askpass.sh SSH_ASKPASS_REQUIRE=force ssh khost1 true', runs: './askpass.sh' },
      { line: 'scp -S ./fake-ssh.sh a.txt khost1:/tmp/', runs: './fake-ssh.sh -x -oForwardAgent=no -oPermitLocalCommand=no -oClearAllForwardings=yes -- khost1 scp' },
      { line: 'sftp -S make khost1', runs: 'make -x -oForwardAgent=no -oPermitLocalCommand=no -oClearAllForwardings=yes -- khost1 sftp' },
      { line: "sftp -D 'make build'", runs: 'make build' },
      { line: 'scp -D ./server.sh a.txt khost1:/tmp/', runs: './server.sh' },
    ],
    not_match: [
      { line: "ssh khost1 'make build'", runs: 'make build' },
      { line: "ssh -o HostName=khost1 localhost 'make build'", runs: 'make build' },
      { line: "ssh 10.0.0.5 'make build'", runs: 'make build' },
      { line: 'scp make.txt khost1:/tmp/', runs: 'make.txt' },
      { line: 'sftp -b batch.txt khost1', runs: 'batch.txt' },
    ],
  },
};
