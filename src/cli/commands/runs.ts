// `offhost runs` lists the runs `offhost run` recorded (newest last); `offhost runs show ID` shows one
// (`--json`: the record itself; `--log`: its output log).
import { readFileSync } from 'node:fs';
import { EXIT } from '../../errors.js';
import type { Io } from '../../io.js';
import { formatHelp } from '../help.js';
import { listRecords, readRecord, recordText, runsDir } from '../../run/record.js';

const USAGE = formatHelp({
  usage: ['offhost runs [--json] [--limit N]', 'offhost runs show ID [--json | --log]'],
  description: `Lists the runs recorded by \`offhost run\` (in ${'$'}OFFHOST_STATE_DIR/runs, else ~/.local/state/offhost/runs), newest last, or shows one: where it ran, the commit, the outcome and the status.`,
  subcommands: [['show ID', 'one run: its record (--json: as recorded; --log: the output it wrote)']],
  options: [
    ['--json', 'the records as JSON'],
    ['--limit N', 'the last N runs (default 20)'],
    ['--log', 'show: the output log of the run'],
  ],
  exit: '0; 2 no such run, or a usage error.',
  examples: ['offhost runs --limit 5', 'offhost runs show 20260519T223000Z-ab12cd --log'],
});

export async function run(args: string[], io: Io): Promise<number> {
  if (args.includes('--help') || args.includes('-h')) {
    io.stdout(USAGE);
    return EXIT.ok;
  }
  const json = args.includes('--json');
  if (args[0] === 'show') {
    const id = args[1];
    if (!id || id.startsWith('-')) {
      io.stderr(`offhost runs: show needs a run id\n${USAGE}`);
      return EXIT.error;
    }
    const rec = readRecord(io.env, id);
    if (!rec) {
      io.stderr(`offhost runs: no run ${id} in ${runsDir(io.env)}\n`);
      return EXIT.error;
    }
    if (args.includes('--log')) {
      try {
        io.stdout(readFileSync(rec.log, 'utf8'));
      } catch (err) {
        io.stderr(`offhost runs: ${rec.log}: ${(err as Error).message}\n`);
        return EXIT.error;
      }
      return EXIT.ok;
    }
    io.stdout(json ? `${JSON.stringify(rec, null, 2)}\n` : recordText(rec));
    return EXIT.ok;
  }
  const rest = args.filter((a) => a !== '--json');
  let limit = 20;
  const li = rest.indexOf('--limit');
  if (li !== -1) {
    limit = Number(rest[li + 1]);
    if (!Number.isInteger(limit) || limit <= 0) {
      io.stderr('offhost runs: --limit takes a positive whole number\n');
      return EXIT.error;
    }
    rest.splice(li, 2);
  }
  if (rest.length) {
    io.stderr(`offhost runs: unexpected ${rest.join(' ')}\n${USAGE}`);
    return EXIT.error;
  }
  const recs = listRecords(io.env).slice(-limit);
  if (json) {
    io.stdout(`${JSON.stringify(recs)}\n`);
    return EXIT.ok;
  }
  if (!recs.length) {
    io.stdout(`no runs recorded in ${runsDir(io.env)}\n`);
    return EXIT.ok;
  }
  for (const r of recs) {
    const src = r.source ? `${(r.source.ranCommit ?? r.source.commit ?? '-').slice(0, 10)} ${r.source.dirty}` : '-';
    const st = r.status !== null ? String(r.status) : '-';
    io.stdout(`${r.id}  ${r.outcome.padEnd(16)} status ${st.padEnd(3)} ${(r.vm?.id ?? '-').padEnd(26)} ${src}  ${r.command.line.length > 60 ? `${r.command.line.slice(0, 57)}...` : r.command.line}\n`);
  }
  return EXIT.ok;
}
