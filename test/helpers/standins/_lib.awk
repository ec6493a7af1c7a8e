# Shared by the POSIX sh stand-ins (ssh, incus): awk does their parsing, writes their JSON log line and
# prints sh code the stand-in evaluates (every word single-quoted), so a call costs a sh and an awk
# instead of a node start. Run with LC_ALL=C: strings are bytes, UTF-8 passes through untouched.
# The same log as ./_lib.mjs: one JSON object per line in $OFFHOST_STANDIN_LOG, or in
# $OFFHOST_STANDIN_PROBE_LOG for offhost's own probes (marked `offhost-probe`).

function libInit(   i, k) {
  # The environment as it came (reading ENVIRON["X"] makes an empty X in it).
  for (k in ENVIRON) GIVEN[k] = 1;
  for (i = 1; i < 32; i++) JESC[sprintf("%c", i)] = sprintf("\\u%04x", i);
  JESC["\b"] = "\\b"; JESC["\f"] = "\\f"; JESC["\n"] = "\\n"; JESC["\r"] = "\\r"; JESC["\t"] = "\\t";
  JESC["\""] = "\\\""; JESC["\\"] = "\\\\";
}

# A JSON string, escaped as JSON.stringify escapes it.
function js(s,   out, i, c, n) {
  out = ""; n = length(s);
  for (i = 1; i <= n; i++) { c = substr(s, i, 1); out = out ((c in JESC) ? JESC[c] : c) }
  return "\"" out "\""
}

# A JSON array of the strings a[from..to].
function jsArr(a, from, to,   out, i) {
  out = "";
  for (i = from; i <= to; i++) out = out (i > from ? "," : "") js(a[i]);
  return "[" out "]"
}

# One word for sh: single-quoted, each ' as '\''.
function q(s) { gsub(/'/, "'\\''", s); return "'" s "'" }

function has(s, part) { return index(s, part) > 0 }

function startsWith(s, p) { return substr(s, 1, length(p)) == p }

# Prints sh code that makes the stand-in exit with `status`, saying `tool: message` on stderr.
function fail(tool, message, status) {
  printf "printf '%%s\\n' %s >&2; exit %d\n", q(tool ": " message), status;
  exit 0
}

# The VM user's home: where a remote command starts when nothing sets a directory.
function vmHome() {
  if (ENVIRON["OFFHOST_STANDIN_HOME"] != "") return ENVIRON["OFFHOST_STANDIN_HOME"];
  if (ENVIRON["HOME"] != "") return ENVIRON["HOME"];
  return "/"
}

# The log file an entry goes to ("" for none); `probe`: the call carried an offhost probe.
function logFile(line, probe) {
  if (ENVIRON["OFFHOST_STANDIN_PROBE"] == "1" || probe || has(line, "offhost-probe")) return ENVIRON["OFFHOST_STANDIN_PROBE_LOG"];
  return ENVIRON["OFFHOST_STANDIN_LOG"]
}

# Prints sh code that appends the entry (a JSON object without its closing brace) to its log.
function logEntry(entry, probe,   line, file) {
  line = entry ",\"pid\":" ENVIRON["STANDIN_PID"] "}";
  file = logFile(line, probe);
  if (file != "") printf "printf '%%s\\n' %s >> %s\n", q(line), q(file);
}

# The words of a fresh VM-side environment, for `env -i`: the stand-ins' own OFFHOST_STANDIN_* settings,
# PATH, HOME and the locale (as cleanEnv in ./_lib.mjs); `extra` (sh words) last, so it wins.
function cleanEnvWords(extra,   out, k) {
  out = "";
  for (k in GIVEN) if (startsWith(k, "OFFHOST_STANDIN_") && k ~ /^[A-Za-z0-9_]+$/) out = out " " q(k "=" ENVIRON[k]);
  out = out " " q("PATH=" (("PATH" in GIVEN) ? ENVIRON["PATH"] : "/usr/bin:/bin")) " " q("HOME=" vmHome()) " 'LANG=C.UTF-8'";
  return out extra
}

# Prints the sh code ./_run.sh expects: `dir`, `prog` and "$@" (the environment words, then the command
# a[from..to]). A program whose name has a `=` would be an assignment to env(1): sh runs it then.
function runCode(dir, extraEnv, a, from, to,   out, i) {
  out = "";
  for (i = from; i <= to; i++) out = out " " q(a[i]);
  if (has(a[from], "=")) out = " '/bin/sh' '-c' 'exec \"$@\"' 'sh'" out;
  printf "dir=%s\nprog=%s\nset --%s%s\n", q(dir), q(a[from]), cleanEnvWords(extraEnv), out;
}
