// The text of one shim: a bash script named like the program it stands in front of.
//
// Why bash (`#!/bin/bash -p`, the absolute bash found when the shims were made) and not POSIX sh:
//  - `exec -a NAME` keeps argv[0] as the caller wrote it (`make`, not /usr/bin/make): GNU make sets
//    $(MAKE) from argv[0], so a recursive `$(MAKE) -C engine build` goes through PATH, through the shim,
//    and is judged like the outer one; POSIX sh cannot set argv[0].
//  - `-p` (privileged mode): BASH_ENV, SHELLOPTS, BASHOPTS and exported functions are ignored, so nothing
//    in the environment runs code in the shim or redefines `exec`, `cd` or `[[`.
// What it does, in order:
//  1. refuses if it was exec'd by itself (the program found after the shims is a shim again, or execs the
//     same name through PATH: same pid, same program);
//  2. finds the real program: the first executable of that name on PATH in a directory without the
//     `.offhost-shims` marker (never a shim directory, so never itself);
//  3. fast path (when the plan allows it for this program): no deny/reroute rule can match here -> exec the
//     real program, node never starts (src/shims/plan.ts says when);
//  4. otherwise asks `offhost shim judge PROG -- ARGS` (the rules, the physical directory, nothing unknown):
//     0 -> exec the real program; 3 -> exec `offhost run` with the judged line (its VM, under the VM lock);
//     anything else -> exit with that status (126 refused, the reason already on stderr; 2 offhost could
//     not judge): the program does not start.
import type { FastPath, ShimProgram } from './plan.js';
import { quote } from '../routes/quote.js';

export const MARKER = '.offhost-shims';
/** Exit status of a shim that refused to start its program (same as `offhost shell`'s refusal). */
export const SHIM_REFUSED = 126;

export interface ShimRuntime {
  bash: string;
  node: string;
  bin: string;
  /** The marker file of the shim directory (its mtime is the stamp configs are compared with). */
  marker: string;
  /** Config files in force when the shims were made (physical). */
  configs: string[];
}

export function shimScript(p: ShimProgram, rt: ShimRuntime): string {
  const q = quote;
  const fast = p.fast ? fastBlock(p, p.fast, rt) : '';
  return `#!${rt.bash} -p
# offhost exec-time shim for \`${p.name}\` (written by \`offhost shim install\`, which rewrites it: do not edit).
# Judges ${p.name}'s real arguments in the physical working directory with the offhost rules, then runs
# the real ${p.name} (the next one on PATH after the shim directories), runs it on its VM through
# \`offhost run\`, or refuses (exit ${SHIM_REFUSED}). See docs/SHIMS.md.
__oh_prog=${q(p.name)}
__oh_node=${q(rt.node)}
__oh_bin=${q(rt.bin)}
__oh_marker=${q(rt.marker)}
if [[ \${OFFHOST_SHIM_PID-} == "$$:$__oh_prog" ]]; then
  printf 'offhost shim: %s: the %s found after the shims on PATH is a shim again (%s); refusing rather than looping\\n' "$__oh_prog" "$__oh_prog" "$0" >&2
  exit ${SHIM_REFUSED}
fi
__oh_real=
IFS=:
set -f
for __oh_d in $PATH; do
  [[ -n $__oh_d ]] || __oh_d=.
  [[ -e $__oh_d/${MARKER} ]] && continue
  if [[ -f $__oh_d/$__oh_prog && -x $__oh_d/$__oh_prog ]]; then __oh_real=$__oh_d/$__oh_prog; break; fi
done
set +f
unset IFS
if [[ -z $__oh_real ]]; then
  printf '%s: command not found (offhost shim: no %s on PATH after the shim directories)\\n' "$__oh_prog" "$__oh_prog" >&2
  exit 127
fi
export OFFHOST_SHIM_PID=$$:$__oh_prog
${fast}${p.stdinProgram ? stdinBlock() : ''}
__oh_line=$(${p.stdinProgram ? 'OFFHOST_SHIM_STDIN=$__oh_in ' : ''}"$__oh_node" "$__oh_bin" shim judge "$__oh_prog" -- "$@")
__oh_status=$?
case $__oh_status in
  0) ${p.stdinProgram ? `if [[ -n $__oh_in ]]; then { rm -f -- "$__oh_in"; builtin exec -a "$__oh_prog" "$__oh_real" "$@"; } 0<"$__oh_in"; exit ${SHIM_REFUSED}; fi; ` : ''}builtin exec -a "$__oh_prog" "$__oh_real" "$@" ;;
  3)
    ${p.stdinProgram ? '[[ -n $__oh_in ]] && rm -f -- "$__oh_in"\n    ' : ''}export OFFHOST_SHIM_HANDOFF=$__oh_prog
    __oh_user=\${USER:-\${LOGNAME:-user}}
    builtin exec "$__oh_node" "$__oh_bin" run --session "\${OFFHOST_SESSION:-shell-\${__oh_user//[!A-Za-z0-9._-]/_}}" -- "$__oh_line"
    ;;
  *) ${p.stdinProgram ? '[[ -n $__oh_in ]] && rm -f -- "$__oh_in"; ' : ''}exit "$__oh_status" ;;
esac
`;
}

/** Bytes of standard input a shim copies for its judge (a Makefile is far smaller; more is refused). */
export const STDIN_LIMIT = 1024 * 1024;

/**
 * For a program that reads its program from standard input (make's `-f -`, `--file=/dev/stdin`) when
 * standard input is not a terminal: copy that input to a private file, which the judge reads
 * (OFFHOST_SHIM_STDIN: it judges the Makefile's recipes, as `offhost check` does for a literal one) and
 * which the program then reads as its standard input, so it reads what was judged. The command that
 * writes the input has to finish first; more than STDIN_LIMIT bytes is refused. Only the judge path does
 * this: the fast path starts the program with its input untouched.
 */
function stdinBlock(): string {
  return `
# Standard input as the Makefile (\`-f -\`): judged from a copy, which make then reads instead.
__oh_in=
__oh_isin() { [[ $1 == - || $1 == /dev/stdin || $1 == /dev/fd/0 || $1 == /proc/self/fd/0 ]]; }
if [[ ! -t 0 ]]; then
  __oh_want=
  for __oh_a in "$@"; do
    if [[ -n $__oh_want ]]; then __oh_want=; __oh_isin "$__oh_a" && { __oh_in=1; break; }; continue; fi
    case $__oh_a in
      --fi*=*|--mak*=*) __oh_isin "\${__oh_a#*=}" && { __oh_in=1; break; } ;;
      --fi*|--mak*) __oh_want=1 ;;
      --*) ;;
      -*f) __oh_want=1 ;;
      -*f*) __oh_isin "\${__oh_a#*f}" && { __oh_in=1; break; } ;;
    esac
  done
fi
if [[ -n $__oh_in ]]; then
  __oh_in=$(umask 077 && mktemp "\${TMPDIR:-/tmp}/offhost-stdin.XXXXXX") || { printf 'offhost shim: %s: cannot make a file for its standard input; not starting it\\n' "$__oh_prog" >&2; exit ${SHIM_REFUSED}; }
  head -c ${STDIN_LIMIT + 1} > "$__oh_in"
  if [[ $(wc -c < "$__oh_in") -gt ${STDIN_LIMIT} ]]; then
    rm -f -- "$__oh_in"
    printf 'offhost shim: refused: %s reads its Makefile from standard input, which is over %s bytes: offhost cannot judge it\\n' "$__oh_prog" ${STDIN_LIMIT} >&2
    exit ${SHIM_REFUSED}
  fi
fi`;
}

/**
 * The fast path's bash: when no condition of the plan's FastPath holds (no argument or variable that a
 * deny/reroute rule for this program needs, the working directory outside the rules' directories) and the
 * configuration in force is the one the shims were made from, exec the real program without node.
 */
function fastBlock(p: ShimProgram, f: FastPath, rt: ShimRuntime): string {
  const q = quote;
  const known = rt.configs.length === 0 ? 'return 1' : `[[ $1 -nt $__oh_marker ]] && return 1; [[ ${rt.configs.map((c) => `$1 -ef ${q(c)}`).join(' || ')} ]]`;
  // Argument patterns that send the start to the judge. `@FILE`: a response file could hold anything.
  const pats: string[] = ['@*'];
  // An argument that could name another directory or file (make -C, --directory, a path).
  if (f.dirs.length) pats.push('*/*', '-[CD]*', '-[!-]*[CD]*', '--[cCdD]*');
  for (const w of f.words) pats.push(q(w));
  for (const n of f.longFlags) pats.push(`--${q(n.slice(2))}`, `--${q(n.slice(2))}=*`);
  for (const c of f.shortFlags) pats.push(`-${q(c)}*`, `-[!-]*${q(c)}*`);
  for (const d of f.dashWords) pats.push(`-${q(d.slice(1))}`, `-${q(d.slice(1))}=*`);
  for (const t of f.contains) pats.push(`*${q(t)}*`);
  const abbrev = f.longFlags.length
    ? `
  # An abbreviated long option (GNU getopt_long: \`--headl\` is \`--headless\`).
  if [[ $__oh_a == --?* ]]; then
    __oh_x=\${__oh_a%%=*}
    for __oh_n in ${f.longFlags.map(q).join(' ')}; do
      if [[ $__oh_n == "$__oh_x"* ]]; then __oh_fast=; break 2; fi
    done
  fi`
    : '';
  const env = f.env.map((v) => `[[ -n \${${v}-} ]] && __oh_fast=\n`).join('');
  // The physical directory (the judge's): the rules' directories and the project config are found from it.
  const dirs = `  __oh_pwd=$PWD __oh_oldpwd=\${OLDPWD-}
  builtin cd -P . 2>/dev/null || __oh_fast=
  __oh_cwd=$PWD
  PWD=$__oh_pwd OLDPWD=$__oh_oldpwd
`;
  return `
# Fast path: no deny/reroute rule for ${p.name} can match without one of these arguments${f.env.length ? ' or variables' : ''}${f.dirs.length ? ', or in these directories' : ''},
# as long as the configuration is the one the shims were made from (src/shims/plan.ts says why).
__oh_fast=1
shopt -s nocasematch
for __oh_a in "$@"; do
  case $__oh_a in
    ${pats.join('|')}) __oh_fast=; break ;;
  esac${abbrev}
done
shopt -u nocasematch
${env}if [[ -n $__oh_fast ]]; then
${dirs}  __oh_known() { ${known}; }
  __oh_cfg=\${XDG_CONFIG_HOME:-\${HOME-}/.config}/offhost/config.yaml
  if [[ -e $__oh_cfg ]]; then __oh_known "$__oh_cfg" || __oh_fast=; fi
  __oh_d=$__oh_cwd
  while [[ -n $__oh_fast ]]; do
    if [[ -e $__oh_d/offhost.config.yaml ]]; then __oh_known "$__oh_d/offhost.config.yaml" || __oh_fast=; break; fi
    [[ -z $__oh_d ]] && break
    __oh_d=\${__oh_d%/*}
  done
${f.dirs.length ? '  # Without case: on a case-insensitive volume (a Mac) `Engines/Lang/Koda` is the engine directory.\n  shopt -s nocasematch\n' : ''}${f.dirs
  .map((d) =>
    [
      d.existed ? `  [[ ${q(d.spelled)} -ef ${q(d.physical)} ]] || __oh_fast=` : `  [[ -e ${q(d.spelled)} ]] && __oh_fast=`,
      `  case $__oh_cwd in ${q(d.physical)}*|${q(d.spelled)}*${d.inCheckout ? `|*/${q(d.inCheckout)}*` : ''}) __oh_fast= ;; esac`,
    ].join('\n'),
  )
  .join('\n')}${f.dirs.length ? '\n  shopt -u nocasematch' : ''}
  if [[ -n $__oh_fast ]]; then builtin exec -a "$__oh_prog" "$__oh_real" "$@"; fi
fi
`;
}

/**
 * Shells a package runner starts through PATH *after* prepending its own directories: npm, npx, pnpm and
 * yarn 1 run a package.json script as `sh -c SCRIPT` with `node_modules/.bin` (and npm's node-gyp-bin)
 * ahead of the PATH they were given; bun runs it with the first of bash, sh, zsh on PATH. There, a
 * script's `playwright test` found `node_modules/.bin/playwright` before the playwright shim. A keeper of
 * that name in the shim directory (found by the runner's own PATH search, since no `.bin` has a shell)
 * puts the shim directory first again and execs the real shell: the script's programs then meet their
 * shims, and each shim still execs the real program it finds after the shim directories
 * (`node_modules/.bin/playwright`). Not a judge: nothing is refused here, and node never starts.
 */
export const PATH_KEEPERS = ['sh', 'bash'] as const;

export function keeperScript(name: string, dir: string, rt: Pick<ShimRuntime, 'bash'>): string {
  const q = quote;
  return `#!${rt.bash} -p
# offhost PATH keeper for \`${name}\` (written by \`offhost shim install\`: do not edit). A package runner
# (npm, pnpm, yarn, bun) starts its script's shell through PATH after putting node_modules/.bin first;
# this puts the shim directory first again and execs the real ${name}, so the script's programs meet their
# shims (docs/SHIMS.md).
__oh_prog=${q(name)}
__oh_dir=${q(dir)}
__oh_rest=
__oh_real=
IFS=:
set -f
for __oh_d in $PATH; do
  [[ $__oh_d == "$__oh_dir" ]] && continue
  __oh_rest=\${__oh_rest:+$__oh_rest:}\${__oh_d:-.}
  if [[ -z $__oh_real && ! -e \${__oh_d:-.}/${MARKER} && -f \${__oh_d:-.}/$__oh_prog && -x \${__oh_d:-.}/$__oh_prog ]]; then __oh_real=\${__oh_d:-.}/$__oh_prog; fi
done
set +f
unset IFS
if [[ -z $__oh_real ]]; then
  printf '%s: command not found (offhost: no %s on PATH after the shim directories)\\n' "$__oh_prog" "$__oh_prog" >&2
  exit 127
fi
export PATH=$__oh_dir\${__oh_rest:+:$__oh_rest}
builtin exec -a "$__oh_prog" "$__oh_real" "$@"
`;
}
