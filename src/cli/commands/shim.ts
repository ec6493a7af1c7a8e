// `offhost shim <verb>`: the exec-time layer (docs/SHIMS.md).
//   offhost shim judge PROG -- ARGS...      the verdict for one program about to start (run by the shims)
//   offhost shim install [--dir D]          write the shims for the rules in force (idempotent)
//   offhost shim remove [--dir D]           delete exactly the shims offhost wrote there
//   offhost shim list [--dir D]             the programs shimmed, and which have a fast path
//   offhost shim path                       the shim directory
//   offhost shim env [--browsers] [--claude-env-file]
//                                           the PATH line that puts the shims first (or append it to
//                                           $CLAUDE_ENV_FILE: a Claude Code SessionStart hook); --browsers
//                                           also points CHROME_BIN, CHROME_PATH, PUPPETEER_EXECUTABLE_PATH
//                                           at the browser's shim (tools that start a browser by path)
import { appendFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { MARKER } from '../../shims/script.js';
import type { Io } from '../../io.js';
import { EXIT, UsageError } from '../../errors.js';
import { judge } from '../../shims/judge.js';
import { shimBin } from '../../shims/ensure.js';
import { pathLine } from '../../shims/path-line.js';

// In the layout of every command's help (src/cli/help.ts), as a plain string: shim is hot.
const USAGE = `Usage: offhost shim judge PROG -- ARGS...
       offhost shim install|remove|list [--dir DIR]
       offhost shim path
       offhost shim env [--browsers] [--claude-env-file]

The exec-time layer (docs/SHIMS.md): a folder of small scripts named like the heavy programs, first on PATH,
that ask offhost before the real program starts, whatever started it (a script, make, an IDE).
\`offhost init --shims\` installs them and puts them on an agent's PATH.

Subcommands:
  judge    the verdict for one program about to start (run by the shims, in the program's own folder)
  install  write the shims for the rules in force (idempotent)
  remove   delete exactly the shims offhost wrote there
  list     the programs shimmed, and which have a fast path
  path     the shim folder
  env      the PATH line that puts the shims first (--claude-env-file: appended to $CLAUDE_ENV_FILE, as a
           Claude Code SessionStart hook; --browsers: CHROME_BIN & co. pointed at the browser's shim)

Options:
  --dir DIR         install, remove, list: this folder (absolute) instead of the default
  --browsers        env: also point CHROME_BIN, CHROME_PATH, PUPPETEER_EXECUTABLE_PATH at the shim
  --claude-env-file env: append to $CLAUDE_ENV_FILE instead of printing
  -h, --help        show this help

Exit status: 0 done; judge: 0 allow, 3 reroute, 126 refused, 2 could not judge; 2 usage error.
Examples:
  offhost shim install
  eval "$(offhost shim env)"
  offhost shim list
`;

function dirOption(args: string[], io: Io, defaultDir: (env: NodeJS.ProcessEnv) => string): string {
  const i = args.indexOf('--dir');
  if (i === -1) return defaultDir(io.env);
  const d = args[i + 1];
  if (d === undefined || !d.startsWith('/')) throw new UsageError('--dir needs an absolute directory');
  return d;
}

const BROWSERS = ['chromium', 'chromium-browser', 'google-chrome', 'google-chrome-stable', 'microsoft-edge', 'msedge'];

/**
 * `export CHROME_BIN=… CHROME_PATH=… PUPPETEER_EXECUTABLE_PATH=…` naming the shim of the first browser
 * installed on PATH after the shim directories (karma-chrome-launcher reads CHROME_BIN, chrome-launcher and
 * Lighthouse CHROME_PATH, Puppeteer PUPPETEER_EXECUTABLE_PATH): their browser start is then judged too.
 */
export function browserLines(dir: string, path: string | undefined): string {
  const dirs = (path ?? '').split(':').filter((d) => d.startsWith('/') && !existsSync(join(d, MARKER)));
  const name = BROWSERS.find((b) => existsSync(join(dir, b)) && dirs.some((d) => existsSync(join(d, b)))) ?? 'chromium';
  const q = `'${join(dir, name).replace(/'/g, `'\\''`)}'`;
  return `export CHROME_BIN=${q} CHROME_PATH=${q} PUPPETEER_EXECUTABLE_PATH=${q}\n`;
}

export async function run(args: string[], io: Io): Promise<number> {
  const [verb, ...rest] = args;
  if (verb === 'judge') return judge(rest, io);
  if (verb === undefined || verb === '--help' || verb === '-h') {
    (verb === undefined ? io.stderr : io.stdout)(USAGE);
    return verb === undefined ? EXIT.error : EXIT.ok;
  }
  const inst = await import('../../shims/install.js');
  switch (verb) {
    case 'install': {
      const dir = dirOption(rest, io, inst.defaultShimsDir);
      const r = inst.installShims({ dir, cwd: io.cwd, env: io.env, node: process.execPath, bin: shimBin(io.env) });
      const fast = r.plan.programs.filter((p) => p.fast).map((p) => p.name);
      io.stdout(
        `offhost: ${r.written.length} shims in ${dir}${r.removed.length ? ` (removed: ${r.removed.join(', ')})` : ''}\n` +
          `  ${r.written.join(' ')}\n` +
          (fast.length ? `  fast path (no node start outside the rules' directories): ${fast.join(' ')}\n` : '') +
          `Put them first on PATH:\n  ${pathLine(dir)}`,
      );
      return EXIT.ok;
    }
    case 'remove': {
      const dir = dirOption(rest, io, inst.defaultShimsDir);
      const removed = inst.removeShims(dir);
      io.stdout(removed.length ? `offhost: removed ${removed.length} shims from ${dir}\n` : `offhost: no offhost shims in ${dir}\n`);
      return EXIT.ok;
    }
    case 'list': {
      const { planShims } = await import('../../shims/plan.js');
      const dir = dirOption(rest, io, inst.defaultShimsDir);
      const installed = inst.readMarker(dir);
      const plan = planShims({ cwd: io.cwd, env: io.env });
      for (const p of plan.programs) io.stdout(`${p.name}\t${p.fast ? 'fast path' : 'judged at every start'}${installed?.programs.includes(p.name) ? '' : '\t(not installed)'}\n`);
      return EXIT.ok;
    }
    case 'path':
      io.stdout(`${inst.defaultShimsDir(io.env)}\n`);
      return EXIT.ok;
    case 'env': {
      const dir = inst.defaultShimsDir(io.env);
      if (!inst.readMarker(dir)) inst.installShims({ dir, cwd: io.cwd, env: io.env, node: process.execPath, bin: shimBin(io.env) });
      if (rest.includes('--claude-env-file')) {
        // Claude Code runs SessionStart hooks with CLAUDE_ENV_FILE set and sources that file before every
        // Bash tool command: the shims are then first on PATH for everything the agent runs.
        const file = io.env.CLAUDE_ENV_FILE;
        if (!file) throw new UsageError('CLAUDE_ENV_FILE is not set (this runs as a Claude Code SessionStart hook)');
        appendFileSync(file, pathLine(dir) + (rest.includes('--browsers') ? browserLines(dir, io.env.PATH) : ''));
        return EXIT.ok;
      }
      io.stdout(pathLine(dir) + (rest.includes('--browsers') ? browserLines(dir, io.env.PATH) : ''));
      return EXIT.ok;
    }
    default:
      throw new UsageError(`unknown verb '${verb}'\n${USAGE}`);
  }
}
