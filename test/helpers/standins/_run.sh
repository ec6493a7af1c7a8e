# Sourced by the POSIX sh stand-ins once awk has set `dir`, `prog` and "$@" (the environment words, then
# the command): runs the command in `dir` with only that environment and exits with its status (128+N
# when signal N ended it, 127 when it is not found, as ./_lib.mjs's execAndExit).
tool=${0##*/}
if ! cd "$dir" 2>/dev/null; then
  printf '%s: exec: cannot change directory to %s\n' "$tool" "$dir" >&2
  exit 127
fi
case $prog in
  */*) [ -e "$prog" ] || { printf '%s: exec: %s: not found\n' "$tool" "$prog" >&2; exit 127; } ;;
  *) command -v -- "$prog" >/dev/null 2>&1 || { printf '%s: exec: %s: not found\n' "$tool" "$prog" >&2; exit 127; } ;;
esac
# dash says so on its stderr when a signal ends a command ("Terminated"), which the real tools do not: an
# inner sh gives the command the stderr (fd 3), the outer one's being /dev/null.
{ /bin/sh -c 'exec "$@" 2>&3 3>&-' sh env -i "$@"; } 3>&2 2>/dev/null
exit $?
