// `--debug` for check, explain, hook and run: a trace on stderr of what offhost read and decided (the line and
// where it came from, the directory, the config files in force, the role and why, the checkout's root and
// path variables, each command and the rule that decided it, the verdict). Off unless asked: the hot path
// pays one flag test.
import type { Io } from '../io.js';
import type { Guard } from '../policy/guard.js';
import type { LineDecision } from '../policy/engine.js';
import type { ResolvedConfig } from '../config/resolve.js';
import type { Role } from '../types.js';
import { roleSource } from '../config/role.js';

export type Trace = (text: string) => void;

/** A writer of `offhost debug: …` lines on stderr. */
export function debugTrace(io: Io): Trace {
  return (text) => io.stderr(text.replace(/\n+$/, '').split('\n').map((l) => `offhost debug: ${l}\n`).join(''));
}

/**
 * A trace whose lines say when, in milliseconds since the process started (Node's own start-up included):
 * `run --debug`, where where the time goes is the question.
 */
export function timedTrace(io: Io): Trace {
  const t = debugTrace(io);
  return (text) => t(`${String(Math.round(performance.now())).padStart(6)} ms  ${text}`);
}

const short = (s: string, n = 160) => (s.length > n ? `${s.slice(0, n - 3)}...` : s);

/** The line judged and where it came from. */
export function traceLine(trace: Trace, line: string, from: string): void {
  trace(`line (from ${from}, ${line.length} characters): ${short(line)}`);
}

/** The configuration and role a guard was loaded with. */
export function traceGuard(trace: Trace, guard: Guard<ResolvedConfig>, o: { cwd: string; env: NodeJS.ProcessEnv; role?: Role | string }): void {
  const c = guard.config;
  trace(`cwd: ${o.cwd}`);
  trace(`config files (lowest first): ${c.sources.join(' < ')}`);
  trace(`role: ${guard.role} (from ${roleSource(o.role, o.env, c.role)})`);
  const vars = Object.entries(c.vars).filter(([k]) => k !== 'home' && k !== 'root');
  trace(`checkout: root ${c.root ?? '(none)'}${vars.length ? `; path variables: ${vars.map(([k, v]) => `{${k}}=${v}`).join(', ')}` : ''}`);
}

/** Each command the line runs and what decided it, then the verdict. */
export function traceDecision(trace: Trace, decision: LineDecision | null, verdict: { decision: string; rule: string | null; reason: string }): void {
  if (!decision) trace('the line was not parsed');
  (decision?.commands ?? []).forEach((c, i) => {
    const cmd = c.command;
    trace(
      `command ${i + 1}: ${short(cmd.argv.join(' '))} (cwd ${cmd.cwd ?? '<unknown>'}${cmd.via.length ? `, inside ${cmd.via.join(' > ')}` : ''}): ${c.decision}${c.rule ? ` by ${c.rule.id}` : ' (no rule matched)'}${c.unknown ? ', depends on something unknown' : ''}`,
    );
  });
  trace(`verdict: ${verdict.decision}${verdict.rule ? ` (${verdict.rule})` : ''}: ${short(verdict.reason)}`);
}
