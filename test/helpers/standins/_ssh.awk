# ssh's options, destination and command, for ./ssh.
BEGIN {
  libInit();
  WITH_ARG = "BbcDEeFIiJLlmOoPpQRSWw"; NO_ARG = "46AaCfGgKkMNnqsTtVvXxYy";
  n = ARGC - 1; for (i = 1; i <= n; i++) args[i] = ARGV[i];
  i = 1; nopt = 0; user = ""; hasUser = 0;
  ended = parseOptions();
  if (i > n) fail("ssh", "usage: ssh [options] destination [command [argument ...]]", 255);
  host = args[i++];
  if (!ended) parseOptions();
  command = "";
  for (j = i; j <= n; j++) command = command (j > i ? " " : "") args[j];
  at = 0; for (j = length(host); j >= 1; j--) if (substr(host, j, 1) == "@") { at = j; break }
  hostName = at ? substr(host, at + 1) : host;
  # $OFFHOST_STANDIN_STATE/unreachable-<host>: the host does not answer (as ssh reports a dead route).
  if (ENVIRON["OFFHOST_STANDIN_STATE"] != "" && (getline junk < (ENVIRON["OFFHOST_STANDIN_STATE"] "/unreachable-" hostName)) >= 0)
    fail("ssh", "connect to host " hostName " port 22: No route to host", 255);
  if (command == "") fail("ssh", "stand-in: no remote command for " host " (interactive sessions are not supported)", 255);
  shell = ENVIRON["OFFHOST_STANDIN_REMOTE_SHELL"] != "" ? ENVIRON["OFFHOST_STANDIN_REMOTE_SHELL"] : "/bin/sh";
  home = vmHome();
  userJson = at ? js(substr(host, 1, at - 1)) : (hasUser ? js(user) : "null");
  argv[1] = shell; argv[2] = "-c"; argv[3] = command;
  logEntry("{\"tool\":\"ssh\",\"host\":" js(host) ",\"instance\":" js(hostName) ",\"user\":" userJson ",\"options\":" jsArr(options, 1, nopt) ",\"argv\":" jsArr(argv, 1, 3) ",\"cwd\":" js(home), 0);
  runCode(home, has(command, "offhost-probe") ? " 'OFFHOST_STANDIN_PROBE=1'" : "", argv, 1, 3);
  exit 0
}

# Options up to the first word that is not one; 1 when `--` ended them.
function parseOptions(   a, j, c, v) {
  while (i <= n) {
    a = args[i];
    if (a == "--") { i++; return 1 }
    if (!startsWith(a, "-") || a == "-") return 0;
    for (j = 2; j <= length(a); j++) {
      c = substr(a, j, 1);
      if (index(NO_ARG, c)) { options[++nopt] = "-" c; continue }
      if (index(WITH_ARG, c)) {
        v = substr(a, j + 1);
        if (v == "") { i++; if (i > n) fail("ssh", "option requires an argument -- " c, 255); v = args[i] }
        options[++nopt] = "-" c; options[++nopt] = v;
        if (c == "l") { user = v; hasUser = 1 }
        break
      }
      fail("ssh", "unknown option -- " c, 255)
    }
    i++
  }
  return 0
}
