// `offhost shim judge PROG -- ARGS...`: the exec-time verdict for one program about to start.
//
// The shim hands over the real argv (after every expansion the shell did: nothing in it is unknown) and
// runs this in the program's own working directory (getcwd(): physical). The argv is written back as a
// line of quoted words, prefixed by the environment variables the rules look at (`WLR_BACKENDS=headless
// labwc`), and judged by the same guard as every other door, so the shim and `offhost check` cannot
// disagree. Exit: 0 allow (nothing printed), 3 reroute (stdout: the line for `offhost run`), 126 refused
// (the reason on stderr), 2 offhost could not judge (config error...: the shim does not start the program).
import type { Io } from '../io.js';
import { EXIT, UsageError } from '../errors.js';
import { loadGuard } from '../config/load-guard.js';
import type { Matcher, Rule } from '../policy/match.js';
import { namedByRules } from '../policy/engine.js';
import { quote } from '../routes/quote.js';
import { MARKER, SHIM_REFUSED, STDIN_LIMIT } from './script.js';
import { existsSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { tryAppendAudit } from '../adapters/audit-log.js';
import type { GuardVerdict } from '../policy/guard.js';
import { programFor } from '../shell/programs/index.js';

/** Refusals and reroutes at exec time go to the audit log like the other doors' (allows do not: hot path). */
function audit(io: Io, cwd: string, line: string, v: GuardVerdict, config: { audit: { path?: string; maxBytes?: number } }): void {
  tryAppendAudit(
    { agent: 'shim', session: io.env.OFFHOST_SESSION ?? null, cwd, command: line, decision: v.decision, rule: v.rule, reason: v.reason },
    io.env,
    io.stderr,
    io.clock.now(),
    config.audit,
  );
}

function envNames(m: Matcher, out: Set<string>): void {
  for (const [k] of m.env ?? []) out.add(k);
  for (const a of m.anyOf ?? []) envNames(a, out);
}

/** The environment variables any rule reads, in a stable order. */
export function ruleEnvNames(rules: Rule[]): string[] {
  const out = new Set<string>();
  for (const r of rules) if (r.decision !== 'allow') envNames(r.matcher, out);
  return [...out].sort();
}

/**
 * The environment variables the judge writes into the line for `prog`: those any rule reads, and those
 * the program's own module reads (make's MAKEFLAGS, docker's DOCKER_HOST), which the walker judges only
 * when they are on the line.
 */
export function judgedEnvNames(prog: string, rules: Rule[]): string[] {
  return [...new Set([...(programFor(prog)?.env ?? []), ...ruleEnvNames(rules)])];
}

/** The command line the shim's program amounts to: env assignments the rules read, then the argv. */
export function judgedLine(prog: string, args: string[], env: NodeJS.ProcessEnv, names: string[]): string {
  const words: string[] = [];
  for (const n of names) {
    const v = env[n];
    // Empty is unset for every variable read (a sub-make's `MAKEFLAGS=`, `MOZ_HEADLESS=`).
    if (v !== undefined && v !== '') words.push(`${n}=${quote(v)}`);
  }
  words.push(quote(prog), ...args.map(quote));
  return words.join(' ');
}

/**
 * The heredoc that gives the judged line the standard input the shim copied (OFFHOST_SHIM_STDIN, make's
 * `-f -`): `make -f - x <<'OFFHOST_STDIN'`, so the guard reads the Makefile as it reads a literal one, and
 * a reroute hands the same input to the VM. '' when there is none, or it is not text the line can carry
 * (a NUL byte, not UTF-8, too long): the program then reads input nobody judged, which the guard calls
 * unknown.
 */
export function stdinHeredoc(path: string | undefined): string {
  if (!path) return '';
  let buf: Buffer;
  try {
    buf = readFileSync(path);
  } catch {
    return '';
  }
  if (buf.length > STDIN_LIMIT || buf.includes(0)) return '';
  const text = buf.toString('utf8');
  if (Buffer.byteLength(text) !== buf.length || text.includes('\uFFFD')) return '';
  const lines = new Set(text.split('\n'));
  let tag = 'OFFHOST_STDIN';
  for (let i = 0; lines.has(tag); i++) tag = `OFFHOST_STDIN_${i}`;
  return ` <<'${tag}'\n${text}${text === '' || text.endsWith('\n') ? '' : '\n'}${tag}`;
}

const RANK = { allow: 0, reroute: 1, deny: 2 } as const;

/**
 * The name of the program the shim will start, through symbolic links, when it is not the shim's own:
 * the first `prog` on PATH outside the shim directories (as the shim finds it), resolved (`~/bin/flutter
 * -> /usr/bin/make` is make). Null when it is the same name, or there is none.
 */
export function linkedName(prog: string, env: NodeJS.ProcessEnv, cwd: string): string | null {
  for (const d of (env.PATH ?? '').split(':')) {
    const dir = d === '' ? cwd : d;
    if (existsSync(`${dir}/${MARKER}`)) continue;
    const path = `${dir}/${prog}`;
    try {
      if (!statSync(path).isFile()) continue;
      const real = realpathSync.native(path);
      const name = real.slice(real.lastIndexOf('/') + 1);
      return name !== prog && /^[A-Za-z0-9_.+-]+$/.test(name) ? name : null;
    } catch {
      continue;
    }
  }
  return null;
}

export async function judge(args: string[], io: Io): Promise<number> {
  const prog = args[0];
  if (prog === undefined || args[1] !== '--' || !/^[A-Za-z0-9_.+-]+$/.test(prog)) {
    throw new UsageError('usage: offhost shim judge PROGRAM -- ARGS... (run by the shims themselves)');
  }
  const argv = args.slice(2);
  const guard = loadGuard({ cwd: io.cwd, env: io.env });
  const input = stdinHeredoc(io.env.OFFHOST_SHIM_STDIN);
  let line = judgedLine(prog, argv, io.env, judgedEnvNames(prog, guard.config.rules)) + input;
  let v = guard.classify(line, { cwd: io.cwd, env: io.env });
  // A program reached through a symbolic link under another name is judged as what it is too; the
  // stricter verdict stands (a link can make a start heavier, never lighter).
  // Only a target the registry or a rule knows: an unknown one would only have its arguments guessed at.
  const real = linkedName(prog, io.env, io.cwd);
  if (real !== null && (programFor(real) !== null || namedByRules(guard.config.rules, real))) {
    const realLine = judgedLine(real, argv, io.env, judgedEnvNames(real, guard.config.rules)) + input;
    const rv = guard.classify(realLine, { cwd: io.cwd, env: io.env });
    if (RANK[rv.decision] > RANK[v.decision]) {
      v = rv;
      line = realLine;
    }
  }
  if (v.decision === 'allow') return EXIT.ok;
  audit(io, io.cwd, line, v, guard.config);
  const shown = line.length > 200 ? `${line.slice(0, 197)}...` : line;
  if (v.decision === 'reroute') {
    if (io.env.OFFHOST_SHIM_HANDOFF) {
      // The shim handed this program to `offhost run`, and it came back here: run judged it runnable
      // locally while this judge reroutes it. Refuse rather than loop.
      io.stderr(`offhost shim: refused: \`${shown}\` was handed to \`offhost run\` for its VM and came back to this laptop (OFFHOST_SHIM_HANDOFF=${io.env.OFFHOST_SHIM_HANDOFF}); not starting it here\n`);
      return SHIM_REFUSED;
    }
    io.stderr(`offhost shim: ${prog} must run on a VM (${v.rule}): ${v.reason}\noffhost shim: handing \`${shown}\` to offhost run\n`);
    io.stdout(line);
    return EXIT.reroute;
  }
  io.stderr(`offhost shim: refused${v.rule ? ` (rule ${v.rule})` : ''}: \`${shown}\`: ${v.reason}\n`);
  return SHIM_REFUSED;
}
