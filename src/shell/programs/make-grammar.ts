// GNU make's options, declared once: the make module, the Makefile reader and the koda-make rule
// (`grammar: make`) read this.
import type { Grammar } from './grammar.js';

export const MAKE_GRAMMAR: Grammar = {
  value: ['-C', '--directory', '-f', '--file', '--makefile', '-I', '--include-dir', '-o', '--old-file', '--assume-old', '-W', '--what-if', '--new-file', '--assume-new', '--eval', '-E', '--jobserver-style'],
  optional: ['-j', '--jobs', '-l', '--load-average', '--max-load', '-O', '--output-sync', '--debug', '--shuffle'],
  flags: [
    '-B', '--always-make', '-d', '-e', '--environment-overrides', '-i', '--ignore-errors', '-k', '--keep-going', '-L', '--check-symlink-times',
    '-n', '--just-print', '--dry-run', '--recon', '-p', '--print-data-base', '-q', '--question', '-r', '--no-builtin-rules', '-R', '--no-builtin-variables',
    '-s', '--silent', '--quiet', '--no-silent', '-S', '--no-keep-going', '--stop', '-t', '--touch', '--trace', '-w', '--print-directory', '--no-print-directory',
    '--warn-undefined-variables',
  ],
  info: ['--help', '-h', '--version', '-v'],
};

