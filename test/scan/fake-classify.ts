// A tiny hand-written classifier for unit tests of the scanner (the real guard is tested elsewhere and
// wired in the ci tests): a heavy command at the start of a command position is rerouted.
import type { Classify } from '../../src/adapters/scan.js';
import type { Verdict } from '../../src/types.js';

const HEAVY: [RegExp, string][] = [
  [/make (?:build-safe|build|kasm)\b/y, 'koda-make'],
  [/emulator -avd \S+/y, 'android-emulator'],
  [/lb build\b/y, 'live-build'],
  [/qemu-system-\S+(?: \S+)*/y, 'qemu-windows'],
];

export const calls: { line: string; cwd?: string }[] = [];

export const fakeClassify: Classify = (line, at) => {
  calls.push({ line, cwd: at.cwd });
  const verdict: Verdict = { decision: 'allow', rule: null, reason: 'allowed', route: null, rewrite: null, commands: [] };
  if ((line.match(/'/g) ?? []).length % 2 === 1 || /<[a-z-]+>/.test(line)) {
    return { ...verdict, decision: 'deny', rule: 'parse-error', reason: 'unterminated quote at line 1, column 1' };
  }
  // Command positions: start of text/line, after ; && || | ( then do.
  const starts = [0, ...[...line.matchAll(/(?:\n|;|&&|\|\||\||\(|\bthen\b|\bdo\b)[ \t]*/g)].map((m) => m.index + m[0].length)];
  for (const s of starts) {
    let p = s;
    while (line[p] === ' ' || line[p] === '\t') p++;
    for (const [re, rule] of HEAVY) {
      re.lastIndex = p;
      const m = re.exec(line);
      if (!m) continue;
      const deny = rule === 'qemu-windows';
      verdict.commands.push({
        command: { program: m[0].split(' ')[0]!, argv: m[0].split(' '), unknown: [], env: {}, cwd: at.cwd ?? null, via: [], span: { start: p, end: p + m[0].length } },
        rule,
        decision: deny ? 'deny' : 'reroute',
      });
      if (verdict.decision !== 'deny') {
        verdict.decision = deny ? 'deny' : 'reroute';
        verdict.rule = rule;
        verdict.reason = deny ? 'migrate the VM to s.khost1.dev-win10' : `${rule}: heavy work runs on the VM`;
        verdict.rewrite = deny ? null : `offhost run -- ${line.trim()}`;
        verdict.route = deny ? null : { name: 'koda', vm: 's.khost1.dev-linux-koda', cwd: at.cwd ?? '/', command: `ssh khost1 -- ${line.trim()}` };
      }
    }
  }
  return verdict;
};
