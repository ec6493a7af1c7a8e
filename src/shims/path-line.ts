// The line a POSIX shell's rc file needs to put the shims first on PATH (init --shims prints it).

/**
 * The PATH line for a POSIX shell: the shim directory first, once, moved to the front when it is there
 * behind others (on a Mac, path_helper and `brew shellenv` put /usr/bin and /opt/homebrew/bin first).
 */
export function pathLine(dir: string): string {
  const q = `'${dir.replace(/'/g, `'\\''`)}'`;
  return `case "$PATH:" in ${q}:*) ;; *) __oh_p= __oh_ifs=$IFS; IFS=:; for __oh_d in $PATH; do [ "$__oh_d" = ${q} ] || __oh_p=\${__oh_p:+$__oh_p:}$__oh_d; done; IFS=$__oh_ifs; export PATH=${q}\${__oh_p:+:$__oh_p}; unset __oh_p __oh_d __oh_ifs ;; esac\n`;
}
