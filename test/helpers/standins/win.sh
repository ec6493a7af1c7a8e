#!/bin/sh
# Stand-in (see _win.mjs): node will not run a file named *.sh as a module.
exec node "$(dirname "$0")/_win.mjs" "$@"
