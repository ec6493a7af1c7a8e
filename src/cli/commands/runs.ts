// `offhost runs` lists the runs `offhost run` recorded (newest last); `offhost runs show ID` shows one
// (`--json`: the record itself; `--log`: its output log).
import { readFileSync } from 'node:fs';
import { EXIT } from '../../errors.js';
import type { Io } from '../../io.js';
import { formatHelp } from '../help.js';
import { outputFormat } from '../common.js';
import { listRecords, readRecord, recordText, runsDir } from '../../run/record.js';

const USAGE = formatHelp({
  usage: ['offhost runs [--format json] [--limit N]', 'offhost runs show ID [--format json | --log]'],
  description: `Lists the runs recorded by \`offhost run\` (in ${'$'}OFFHOST_STATE_DIR/runs, else ~/.local/state/offhost/runs), newest last, or shows one: where it ran, the commit, the outcome and the status.`,
  subcommands: [['show ID', 'one run: its record (--json: as recorded; --log: the output it wrote)']],
  options: [
    ['-f, --format <kind>', 'stylish (the default) or json'],
    ['--json', 'the records as JSON (the same as --format json)'],
    ['--limit N', 'the last N runs (default 20)'],
    ['--log', 'show: the output log of the run'],
  ],
  exit: '0; 2 no such run, or a usage error.',
  examples: ['offhost runs --limit 5', 'offhost runs show 20260519T223000.123Z-ab12cd --log'],
});

export async function run(args: string[], io: Io): Promise<number> {
  if (args.includes('--help') || args.includes('-h')) {
    io.stdout(USAGE);
    return EXIT.ok;
  }
  // `--format json` (`-f json`, `--format=json`) as in every reporting command; `--json` is the same.
  const fi = args.findIndex((a) => a === '--format' || a === '-f');
  const formatValue = fi !== -1 ? args[fi + 1] : args.find((a) => a.startsWith('--format='))?.slice('--format='.length);
  const json = outputFormat({ format: formatValue, json: args.includes('--json') }) === 'json';
  if (fi !== -1) args = [...args.slice(0, fi), ...args.slice(fi + 2)];
  args = args.filter((a) => !a.startsWith('--format='));
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
