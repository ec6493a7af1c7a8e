// The red-team corpus (fixtures/corpus/redteam/*.yaml, all four groups) through the $SHELL wrapper
// (`hooks/offhost-shell -c LINE`) with real bash and the exec-time shims first on PATH: the static guard
// and the shims together. Each line runs in a fresh copy of the ground truth's tree
// (test/corpus/redteam-tree.ts) with recording stand-ins for the heavy programs; a reroute goes through
// `offhost run` to the stand-in VM (ssh khost1 -> incus exec), where the recorders see no LAPTOP_MARKER.
//
// - true positives and bypasses: no heavy program starts on the laptop, and offhost stopped the line
//   (the wrapper or a shim refused or rerouted something: the audit log says so) unless nothing heavy
//   started at all;
// - false positives: nothing is refused or rerouted, by the wrapper or by a shim;
// - edge cases: as their expected verdict says (allow: as a false positive; deny/reroute: as a true one).
// A recorded start is heavy when the rules judge its real argv and directory heavy (as the ground truth).
// Lines whose tools cannot exist here are skipped with the ground truth's reason (`bash:`).
//
// Each line costs a few node starts (the wrapper, each shim, `offhost run`): the default run (`npm test`)
// takes a fixed sample, every SAMPLE_STRIDE-th line of each group from SAMPLE_OFFSET (other lines than
// test/corpus/ground-truth.test.ts samples; test/helpers/sample.ts). `npm run test:redteam`
// (OFFHOST_REDTEAM=full; .ci/run runs it) runs every line, here and in the ground truth.
//
// OFFHOST_REDTEAM_LAYOUT=symlinked runs them in a checkout reached through a symbolic link (~/dev/koder ->
// /data/koder of the tree). With OFFHOST_REDTEAM_LAYER=shims the lines run under plain bash with only the shims on PATH (no static
// guard): a measurement of what the exec-time layer catches by itself, which still asserts that the shims
// stop no light line. OFFHOST_REDTEAM_REPORT=FILE writes what each layer did, line by line, as JSON; the
// summary is printed either way (docs/GUARD.md quotes it).
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadGuard } from '../../src/config/load-guard.js';
import { standinPath } from '../helpers/standins.js';
import { BIN, SHELL, laptopEnv } from '../shims/tree.js';
import { missing, toolsIn } from '../helpers/tools.js';
import { sampling } from '../helpers/sample.js';
import { GIT_IDENTITY, GROUPS, type Entry, type Laptop, isHeavy, loadGroup, makeLaptop, makeRun, records } from '../corpus/redteam-tree.js';

/** OFFHOST_REDTEAM=full: every line; otherwise every SAMPLE_STRIDE-th line of each group. */
const sample = sampling('redteam');
const SAMPLE_STRIDE = 32;
/** The ground truth's sample takes the lines at multiples of its stride (4): these are others. */
const SAMPLE_OFFSET = 2;

/** Lines run at once: each is a few node starts (wrapper, shims, offhost run) on a 2-core machine. */
const POOL = 3;
let running = 0;
const waiting: (() => void)[] = [];
async function inPool<T>(f: () => Promise<T>): Promise<T> {
  if (running >= POOL) await new Promise<void>((r) => waiting.push(r));
  running++;
  try {
    return await f();
  } finally {
    running--;
    waiting.shift()?.();
  }
}

interface Outcome {
  status: number | null;
  signal: string | null;
  stdout: string;
  stderr: string;
}

const LAYER = process.env.OFFHOST_REDTEAM_LAYER === 'shims' ? 'shims' : 'wrapper';
/** OFFHOST_REDTEAM_LAYOUT=symlinked: ~/dev/koder a symbolic link to another directory (the default is plain). */
const LAYOUT = process.env.OFFHOST_REDTEAM_LAYOUT === 'symlinked' ? 'symlinked' : 'plain';

function runProc(cmd: string, args: string[], cwd: string, env: Record<string, string>): Promise<Outcome> {
  return new Promise((resolve) => {
    const p = spawn(cmd, args, { cwd, env, stdio: ['pipe', 'pipe', 'pipe'], detached: true });
    let stdout = '';
    let stderr = '';
    p.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    p.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    p.stdin.end();
    // A generous bound for real processes on a shared machine (never a timing assertion): the whole
    // process group goes, so nothing a line started outlives its test.
    const timer = setTimeout(() => {
      try {
        process.kill(-p.pid!, 'SIGKILL');
      } catch {
        /* gone */
      }
    }, 60_000);
    p.on('close', (status, signal) => {
      clearTimeout(timer);
      resolve({ status, signal, stdout, stderr });
    });
  });
}

interface AuditLine {
  agent: string;
  command: string;
  decision: string;
  rule?: string | null;
}

function auditLines(file: string): AuditLine[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as AuditLine);
}

let laptop: Laptop;
let counter = 0;

interface Seen {
  group: string;
  line: string;
  heavyLine: boolean;
  /** The wrapper's own (static) verdict (it audits what it refuses or reroutes); 'none' in the shims-only layer. */
  statically: string;
  /** A shim refused or rerouted a program. */
  shim: boolean;
  /** Something heavy started on the laptop. */
  onLaptop: boolean;
  /** Something heavy started anywhere (laptop or VM). */
  heavyRan: boolean;
}
const seen: Seen[] = [];

function summary(): string {
  const heavy = seen.filter((x) => x.heavyLine);
  const out = [`red-team corpus through ${LAYER === 'shims' ? 'plain bash with the shims only' : 'the $SHELL wrapper with the shims'}, ${LAYOUT} checkout: ${seen.length} lines run, ${heavy.length} that must be stopped`];
  if (LAYER === 'wrapper') {
    const late = heavy.filter((x) => x.statically === 'allow' && x.shim);
    out.push(`  stopped by the static guard: ${heavy.filter((x) => x.statically !== 'allow').length}`);
    out.push(`  let through by the static guard, stopped by a shim: ${late.length}${late.map((x) => `\n    ${x.group}: ${x.line}`).join('')}`);
    out.push(`  let through by both, nothing heavy started: ${heavy.filter((x) => x.statically === 'allow' && !x.shim).length}`);
  } else {
    const missed = heavy.filter((x) => x.onLaptop);
    const none = heavy.filter((x) => !x.onLaptop && !x.shim);
    out.push(`  stopped by a shim: ${heavy.filter((x) => x.shim && !x.onLaptop).length}`);
    out.push(`  no shim acted and nothing heavy started: ${none.length}${none.map((x) => `\n    ${x.group}: ${x.line}`).join('')}`);
    out.push(`  a heavy program started on the laptop (only the static guard stops these): ${missed.length}${missed.map((x) => `\n    ${x.group}: ${x.line}`).join('')}`);
  }
  return out.join('\n');
}

beforeAll(() => {
  laptop = makeLaptop('offhost-rtw-', LAYOUT);
  mkdirSync(join(laptop.base, 'runs'));
});

afterAll(() => {
  if (laptop) rmSync(laptop.base, { recursive: true, force: true });
  if (seen.length === 0) return;
  console.log(summary());
  if (process.env.OFFHOST_REDTEAM_REPORT) writeFileSync(process.env.OFFHOST_REDTEAM_REPORT, JSON.stringify({ layer: LAYER, lines: seen }, null, 1));
});

/** What the line must do through the wrapper: stop every heavy start, or leave a light line alone. */
function mustStop(group: string, e: Entry): boolean {
  if (group === 'false-positives') return false;
  if (group === 'edge-cases') return e.expect !== 'allow';
  return true;
}

for (const group of GROUPS) {
  const entries = loadGroup(group);
  const chosen = sample.pick(entries, SAMPLE_STRIDE, { offset: SAMPLE_OFFSET });
  describe(`${LAYER === 'shims' ? 'plain bash with the shims only' : 'through the $SHELL wrapper'}: ${group}, ${sample.scope(chosen.length, entries.length)} lines`, () => {
    for (const e of chosen) {
      const title = `${group}: ${e.line.replace(/\n/g, '\\n').slice(0, 110)}`;
      if (e.bash) {
        it.skip(`${title} (not run: ${e.bash})`, () => {});
        continue;
      }
      const lacking = missing(...toolsIn(e.line));
      if (lacking) {
        it.skip(`${title} (skipped: ${lacking})`, () => {});
        continue;
      }
      it.concurrent(title, () =>
        inPool(async () => {
          const run = makeRun(laptop, join(laptop.base, 'runs', String(++counter)), e);
          const heavyLog = join(run.dir, 'heavy.log');
          const audit = join(run.dir, 'audit.jsonl');
          const standinLog = join(run.dir, 'standin.log');
          const PATH = [laptop.bin, standinPath(), '/usr/bin', '/bin'].join(':');
          const env = {
            ...laptopEnv({ localBin: laptop.bin, home: run.home, heavyLog, standinLog, audit }),
            PATH,
            PWD: run.cwd,
            SHELL,
            TMPDIR: join(run.dir, 'tmp'),
            TERM: 'dumb',
            OFFHOST_SESSION: 'redteam',
            OFFHOST_STANDIN_GT_LOG: heavyLog,
            OFFHOST_GT_REMOTE_SSH: join(standinPath(), 'ssh'),
            ...GIT_IDENTITY,
            ...run.env,
          };
          let r: Outcome;
          if (LAYER === 'shims') {
            const shims = join(run.home, '.local', 'share', 'offhost', 'shims');
            const inst = await runProc(process.execPath, [BIN, 'shim', 'install', '--dir', shims], run.cwd, env);
            expect(inst.status, inst.stderr).toBe(0);
            // A user's own bash: SHELL is bash too (vim's `!`, gdb's `run` and script(1) start $SHELL).
            r = await runProc('/bin/bash', ['-c', run.line], run.cwd, { ...env, SHELL: '/bin/bash', PATH: `${shims}:${PATH}` });
          } else r = await runProc(SHELL, ['-c', run.line], run.cwd, env);
          const ran = records(heavyLog);
          const guard = loadGuard({ cwd: run.cwd, env: { HOME: run.home, PATH }, role: 'laptop' });
          const laptopHeavy = ran.filter((rec) => rec.laptop && isHeavy(rec, guard));
          const audited = auditLines(audit);
          const stopped = audited.filter((a) => a.decision !== 'allow');
          seen.push({
            group,
            line: e.line,
            heavyLine: mustStop(group, e),
            statically: LAYER === 'shims' ? 'none' : (audited.find((a) => a.agent === 'shell')?.decision ?? 'allow'),
            shim: stopped.some((a) => a.agent === 'shim'),
            onLaptop: laptopHeavy.length > 0,
            heavyRan: ran.some((rec) => isHeavy(rec, guard)),
          });
          const show = (x: { name: string; argv: string[]; cwd: string; laptop: boolean }) => `${x.name} ${x.argv.join(' ')} @${x.cwd.replace(run.dir, '')}${x.laptop ? ' (LAPTOP)' : ' (vm)'}`;
          const context = [
            `why: ${e.why} (expect ${e.expect}${e.fail_closed ? ', fail closed' : ''})`,
            `status ${r.status}${r.signal ? ` ${r.signal}` : ''}; started: ${ran.map(show).join('; ') || 'nothing recorded'}`,
            `offhost stopped: ${stopped.map((a) => `${a.agent} ${a.decision} (${a.rule ?? '-'}): ${a.command.slice(0, 120)}`).join(' | ') || 'nothing'}`,
            `stderr: ${r.stderr.slice(0, 600)}`,
            `stdout: ${r.stdout.slice(0, 300)}`,
            `line as run: ${run.line.slice(0, 300)}`,
          ].join('\n');
          rmSync(run.dir, { recursive: true, force: true });
          if (LAYER === 'shims' && mustStop(group, e)) return; // measured, not asserted: the static guard is off
          if (mustStop(group, e)) {
            expect(laptopHeavy.map(show), context).toEqual([]);
            // Stopped by the wrapper or a shim; or bash itself started nothing heavy in this run (a fail-closed
            // line: `BASH_ENV=… bash -c true` as the last command, whose exec'd bash does not read BASH_ENV).
            if (stopped.length === 0) expect(ran.filter((rec) => isHeavy(rec, guard)).map(show), `offhost never stopped this line\n${context}`).toEqual([]);
          } else {
            expect(stopped, `a light line was refused or rerouted\n${context}`).toEqual([]);
            expect(laptopHeavy.map(show), context).toEqual([]);
          }
        }));
    }
  });
}
