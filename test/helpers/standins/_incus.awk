# incus without a state file, for ./incus: `incus exec` and `incus list`, as ./_incus.mjs does them.
BEGIN {
  libInit();
  n = ARGC - 1; sub_ = ARGV[1]; for (i = 2; i <= n; i++) args[i - 1] = ARGV[i]; n--;
  instanceList = ENVIRON["OFFHOST_STANDIN_INSTANCES"] != "" ? ENVIRON["OFFHOST_STANDIN_INSTANCES"] : "dev-linux-koda,dev-linux-gui,dev-android-emulator,dev-linux-iso";
  ninst = split(instanceList, instances, ",");
  split(ENVIRON["OFFHOST_STANDIN_VM_INSTANCES"], vmList, ","); for (k in vmList) isVm[vmList[k]] = 1;
  if (sub_ == "list" || sub_ == "ls") list();
  if (sub_ != "exec") fail("incus", "stand-in: unsupported subcommand " js(sub_), 1);
  exec_();
}

function list(   json, hasFilter, filter, names, nn, k, mount, devices, out, w, line, nm) {
  logEntry("{\"tool\":\"incus\",\"sub\":\"list\",\"argv\":" jsArr(args, 1, n), 0);
  json = 0; filter = ""; hasFilter = 0;
  for (k = 1; k <= n; k++) {
    if (args[k] == "--format=json" || (args[k] == "--format" && args[k + 1] == "json")) json = 1;
    if (!startsWith(args[k], "-") && !(k > 1 && args[k - 1] == "--format") && !hasFilter) { filter = args[k]; hasFilter = 1 }
  }
  if (json) {
    # Without state: a host where every instance runs as provisioned, the monorepo mounted read-only at
    # $OFFHOST_STANDIN_MOUNT (default the VM user's ~/dev/koder, the built-in root).
    mount = ENVIRON["OFFHOST_STANDIN_MOUNT"] != "" ? ENVIRON["OFFHOST_STANDIN_MOUNT"] : vmHome() "/dev/koder";
    devices = "{\"koder\":{\"type\":\"disk\",\"source\":" js(mount) ",\"path\":" js(mount) ",\"readonly\":\"true\"}}";
    # A filter word lists the instances whose name starts with it; with no instance list set, any name exists.
    nn = 0;
    if (!hasFilter) for (k = 1; k <= ninst; k++) names[++nn] = instances[k];
    else if (ENVIRON["OFFHOST_STANDIN_INSTANCES"] != "") { for (k = 1; k <= ninst; k++) if (startsWith(instances[k], filter)) names[++nn] = instances[k] }
    else names[++nn] = filter;
    out = "";
    for (k = 1; k <= nn; k++) out = out (k > 1 ? "," : "") "{\"name\":" js(names[k]) ",\"status\":\"Running\",\"type\":\"" ((names[k] in isVm) ? "virtual-machine" : "container") "\",\"architecture\":\"x86_64\",\"devices\":" devices ",\"expanded_devices\":" devices ",\"snapshots\":[]}";
    printf "printf '%%s\\n' %s\nexit 0\n", q("[" out "]");
    exit 0
  }
  w = 4; for (k = 1; k <= ninst; k++) if (length(instances[k]) > w) w = length(instances[k]);
  line = "+-" dashes(w) "-+---------+-----------------+\n";
  out = line sprintf("| %-" w "s |  STATE  |      TYPE       |\n", "NAME") line;
  for (k = 1; k <= ninst; k++) out = out sprintf("| %-" w "s | RUNNING | CONTAINER       |\n", instances[k]);
  printf "printf '%%s' %s\nexit 0\n", q(out line);
  exit 0
}

function dashes(w,   s) { s = ""; while (w-- > 0) s = s "-"; return s }

function exec_(   np, pos, envWords, envJson, cwd, hasCwd, user, hasUser, k, a, eq, name, v, kk, found, dir) {
  np = 0; envWords = ""; envJson = ""; hasCwd = 0; hasUser = 0;
  for (k = 1; k <= n; k++) {
    a = args[k];
    if (a == "--") { for (k++; k <= n; k++) pos[++np] = args[k]; break }
    if (startsWith(a, "--")) {
      eq = index(a, "=");
      name = eq ? substr(a, 1, eq - 1) : a;
      if (name == "--force-interactive" || name == "--force-noninteractive" || name == "--disable-stdin") continue;
      if (name != "--cwd" && name != "--env" && name != "--user" && name != "--group" && name != "--mode") fail("incus", "Error: unknown flag: " name, 1);
      if (eq) v = substr(a, eq + 1);
      else { k++; if (k > n) fail("incus", "Error: flag needs an argument: " name, 1); v = args[k] }
      if (name == "--cwd") { cwd = v; hasCwd = 1 }
      else if (name == "--env") {
        eq = index(v, "=");
        kk = eq ? substr(v, 1, eq - 1) : v;
        # Later --env values of a name win, as in the object ./_incus.mjs builds.
        envVal[kk] = eq ? substr(v, eq + 1) : "";
        if (!(kk in envSeen)) { envSeen[kk] = 1; envOrder[++nenv] = kk }
      } else if (name == "--user") { user = v; hasUser = 1 }
      continue
    }
    if (a ~ /^-[tTn]+$/) continue;
    if (startsWith(a, "-") && a != "-") fail("incus", "Error: unknown shorthand flag: " js(a), 1);
    pos[++np] = a
  }
  if (np < 2) fail("incus", "Error: Invalid number of arguments", 1);
  name = pos[1];
  if (ENVIRON["OFFHOST_STANDIN_INSTANCES"] != "") {
    found = 0; for (k = 1; k <= ninst; k++) if (instances[k] == name) found = 1;
    if (!found) fail("incus", "Error: Instance not found: " name, 1)
  }
  dir = hasCwd ? cwd : vmHome();
  for (k = 1; k <= nenv; k++) { envJson = envJson (k > 1 ? "," : "") js(envOrder[k]) ":" js(envVal[envOrder[k]]); envWords = envWords " " q(envOrder[k] "=" envVal[envOrder[k]]) }
  # The directory must exist (./_run.sh checks it before the log line is written).
  printf "[ -d %s ] || { printf '%%s\\n' %s >&2; exit 1; }\n", q(dir), q("incus: Error: cannot change directory to " js(dir) ": no such directory");
  logEntry("{\"tool\":\"incus\",\"instance\":" js(name) ",\"user\":" (hasUser ? js(user) : "null") ",\"argv\":" jsArr(pos, 2, np) ",\"cwd\":" js(dir) ",\"env\":{" envJson "}", 0);
  runCode(dir, envWords, pos, 2, np);
  exit 0
}
